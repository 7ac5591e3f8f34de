"""`validate` sees what a second writer or a hand edit leaves behind: the same work recorded twice in one
sub-question, two claims on one quote of one source, ids out of sequence, and symbolic links inside the run
(which the tools refuse to write through)."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers_core import add_source, add_sq, make_document

from research_engine import claims, eventlog, ids, retrieve, trace, validate
from research_engine.errors import BadInput, CheckFailed

TEXT = "Opening words.\n\nThe survey counted 42 respondents in the sample.\n\nClosing words."
QUOTE = "The survey counted 42 respondents in the sample."


@pytest.fixture
def run(locked_run):
    sq = add_sq(locked_run, "How many answered the survey?")
    ref = add_source(locked_run, sq, TEXT, url="https://example.org/survey")
    claims.add_claim(locked_run, sq, "The survey counted 42 respondents.", [ref], [QUOTE], "medium")
    checked = validate.validate_run(locked_run)
    assert checked.ok, [p.message for p in checked.problems]
    return locked_run


def codes(run) -> set[str]:
    return {p.code for p in validate.validate_run(run).problems}


def test_a_source_copied_under_a_second_id_is_a_duplicate(run):
    """What two resumes recording the same page leave: SRC-02 is SRC-01 again, counters and run.json agree."""
    first = run.path("source", sq="SQ-01", src="SRC-01")
    second = run.path("source", sq="SQ-01", src="SRC-02")
    second.write_text(first.read_text().replace("SQ-01/SRC-01", "SQ-01/SRC-02"), encoding="utf-8")
    ids.allocate(run, "src", sq="SQ-01")  # the counter handed SRC-02 out
    record = json.loads(run.path("run").read_text())
    record["sources"].append({**record["sources"][0], "id": "SQ-01/SRC-02"})
    run.path("run").write_text(json.dumps(record), encoding="utf-8")
    assert "duplicate-source" in codes(run)


def test_recording_the_same_work_twice_in_a_sub_question_is_refused(run):
    with pytest.raises(CheckFailed) as caught:
        retrieve.record(run, "SQ-01", make_document(TEXT, "http://www.example.org/survey?utm_source=x"))
    assert caught.value.code == "duplicate-source" and caught.value.data["existing"] == "SQ-01/SRC-01"
    assert retrieve.list_sources(run) == ["SQ-01/SRC-01"]
    # Another sub-question may record the same work: it is evidence for another question.
    sq2 = add_sq(run, "Who ran the survey?")
    assert add_source(run, sq2, TEXT, url="https://example.org/survey") == f"{sq2}/SRC-01"
    assert validate.validate_run(run).ok


def test_the_same_claim_twice_on_one_quote_is_a_duplicate(run):
    # What two resumes consolidating the same sources leave: a second add of the same claim, a new id.
    claims.add_claim(run, "SQ-01", "The survey  counted 42 respondents.", ["SQ-01/SRC-01"], [QUOTE], "medium")
    problems = validate.validate_run(run).problems
    assert [p.field for p in problems if p.code == "duplicate-claim"] == ["CLM-02"]


def test_two_different_claims_may_rest_on_one_sentence(run):
    claims.add_claim(run, "SQ-01", "The survey used a sample.", ["SQ-01/SRC-01"], [QUOTE], "low")
    assert validate.validate_run(run).ok


def test_a_retired_claim_does_not_count_as_a_duplicate(run):
    claims.retire(run, "CLM-01", "added again after a correction")
    claims.add_claim(run, "SQ-01", "The survey counted 42 respondents.", ["SQ-01/SRC-01"], [QUOTE], "medium")
    assert validate.validate_run(run).ok


def test_ids_out_of_sequence_or_beyond_their_counter_are_reported(run):
    add_sq(run, "Second question?")
    path = run.path("sub_questions")
    text = path.read_text()
    # Swap the two sub-questions' ids, as a merge of two writers' files would.
    path.write_text(text.replace("SQ-01", "SQ-XX").replace("SQ-02", "SQ-01").replace("SQ-XX", "SQ-02"))
    problems = [p for p in validate.validate_run(run).problems if p.code == "id-sequence"]
    assert any("SQ-01 is out of sequence" in p.message for p in problems)


def test_a_claim_beyond_the_counter_is_reported(run):
    record = eventlog.read(run.path("claims_log")).records[0]
    eventlog.append(run.path("claims_log"), [{**record, "id": "CLM-07", "evidence": record["evidence"]}])
    problems = validate.validate_run(run).problems
    assert any(p.code == "cross-reference" and "counter" in p.message for p in problems)


# ---------------------------------------------------------------------------------- symbolic links


@pytest.mark.parametrize("directory", ["retrieve", "snapshots", "decompose", ".state"])
def test_a_symlinked_directory_is_refused_for_writes_and_reported_by_validate(run, tmp_path, directory):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(run.root / directory), elsewhere)
    (run.root / directory).symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.name for p in elsewhere.rglob("*"))
    with pytest.raises(BadInput) as caught:
        if directory == "retrieve":
            retrieve.record(run, "SQ-01", make_document("Other words entirely.", "https://example.org/b"))
        elif directory == "snapshots":
            retrieve.store_snapshot(run, b"bytes", "0" * 64)
        elif directory == "decompose":
            add_sq(run, "A third question?")
        else:
            ids.allocate(run, "clm")
    assert caught.value.code == "symlink-in-run" and caught.value.exit_code == 2
    assert sorted(p.name for p in elsewhere.rglob("*")) == before, "a write went through the link"
    report = validate.validate_run(trace.open_run(run.root))
    assert [p.code for p in report.problems] == ["symlink-in-run"]
    assert "outside the run" in report.problems[0].message


def test_a_symlinked_file_inside_the_run_is_refused_and_reported(run):
    # The lock file linked to run.json: filelock would truncate run.json when it opens its lock file.
    (run.root / ".lock").unlink(missing_ok=True)
    (run.root / ".lock").symlink_to(run.root / "run.json")
    size = (run.root / "run.json").stat().st_size
    with pytest.raises(BadInput):
        ids.allocate(run, "clm")
    assert (run.root / "run.json").stat().st_size == size
    problems = validate.validate_run(run).problems
    assert [(p.code, p.file) for p in problems] == [("symlink-in-run", ".lock")]
    assert "inside the run" in problems[0].message


def test_the_cli_validate_fails_on_an_injected_symlink(run, tmp_path, cli):
    target = tmp_path / "outside"
    target.mkdir()
    (run.root / "controller").rmdir()
    (run.root / "controller").symlink_to(target, target_is_directory=True)
    code, _, _, env = cli("validate", run.root, "--json")
    assert code == 1 and env["errors"][0]["code"] == "symlink-in-run"
