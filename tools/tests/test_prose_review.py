"""Recorded, not only enforced: `report finish` writes the support record beside result.md, `validate`
holds it to the text, and in the skill bundle the verifier judges each sentence before the deliverable is
finished (`report check --prose-worksheet`, `verify prose`)."""

from __future__ import annotations

import json

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all

from research_engine import controller, decompose, prose_review, report, runrecord, support_record
from research_engine.errors import CheckFailed
from research_engine.validate import validate_run

FACT_A = "The Freedonia grid operator counted 42 gigawatts of solar capacity in 2023."
FACT_B = "Freedonia's wind farms produced 12 terawatt hours of electricity in 2022."
DRAFT = (
    "# Freedonia's renewables\n\n"
    "In 2023 the grid operator counted 42 gigawatts of solar capacity [CLM-01]. "
    "Wind farms produced 12 terawatt hours of electricity in 2022 [CLM-02].\n"
)


@pytest.fixture
def run(brief_file, monkeypatch, httpserver):
    fast_verifier(monkeypatch)
    the_run = locked_private_run(brief_file, depth="quick")
    sq = decompose.add(the_run, "How much renewable power does Freedonia have?", "quantitative")
    grounded_claim(the_run, httpserver, sq, "/solar", FACT_A)
    grounded_claim(the_run, httpserver, sq, "/wind", FACT_B)
    verify_all(the_run)
    controller.control(the_run)
    return the_run


def draft_file(tmp_path, text=DRAFT):
    path = tmp_path / "draft.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_finish_records_each_sentence_with_the_claims_behind_it(run, tmp_path):
    report.finish(run, draft_file(tmp_path))
    record = json.loads(run.path("support").read_text(encoding="utf-8"))
    assert record["mode"] == "mechanical" and record["judged_by"] is None
    assert [(s["id"], s["claims"], s["check"]) for s in record["sentences"]] == [
        ("S-01", ["CLM-01"], "pass"),
        ("S-02", ["CLM-02"], "pass"),
    ]
    result = run.path("result").read_text(encoding="utf-8")
    assert "(carries \u201cIn 2023 the grid operator counted 42 gigawatts" in result
    assert "Prose: 2 sentence(s) resting on 2 claim(s)" in result
    assert runrecord.read(run)["prose"]["support"] == "synthesis/support.json"
    assert validate_run(run).ok, validate_run(run).problems


def test_validate_holds_the_support_record_to_the_deliverable(run, tmp_path):
    report.finish(run, draft_file(tmp_path))
    path = run.path("support")
    record = json.loads(path.read_text(encoding="utf-8"))
    record["sentences"][0]["claims"] = ["CLM-02"]
    path.write_text(json.dumps(record), encoding="utf-8")
    problems = [p.message for p in validate_run(run).problems]
    assert any("S-01 is not result.md's sentence" in m for m in problems), problems


def test_the_prose_worksheet_shows_each_sentence_with_its_quotes(run, tmp_path, cli):
    code, _, _, env = cli("report", "check", str(draft_file(tmp_path)), "--run", str(run.root),
                          "--prose-worksheet", "--json")  # fmt: skip
    assert code == 0, env
    assert env["data"]["prose_worksheet"]["unjudged"] == ["S-01", "S-02"]
    body = run.path("prose_worksheet").read_text(encoding="utf-8")
    assert "## S-01 (line 3): floor supported, verdict not judged" in body
    assert f"quote: \u201c{FACT_A}\u201d" in body
    assert run.path("result_draft").read_text(encoding="utf-8") == DRAFT


def test_finish_refuses_prose_the_verifier_has_not_passed_and_records_who_judged(run, tmp_path, cli):
    draft = draft_file(tmp_path)
    cli("report", "check", str(draft), "--run", str(run.root), "--prose-worksheet", "--json")
    with pytest.raises(CheckFailed) as unjudged:
        report.finish(run, draft)
    assert unjudged.value.code == "prose-not-passed"
    prose_review.record(run, "S-01", "supported", "the quote holds it", "research-verifier")
    prose_review.record(run, "S-02", "refuse", "the quote says 2022, read as output", "research-verifier")
    with pytest.raises(CheckFailed) as refused:
        report.finish(run, draft)
    assert "S-02" in " ".join(refused.value.data["problems"])
    prose_review.record(run, "S-02", "partial", "holds for wind farms only", "research-verifier")
    report.finish(run, draft)
    record = support_record.load(run)
    assert record["mode"] == "verifier" and record["judged_by"] == "research-verifier"
    assert [s["verdict"] for s in record["sentences"]] == ["supported", "partial"]
    assert validate_run(run).ok, validate_run(run).problems


def test_prose_judged_by_another_agent_is_not_finished(run, tmp_path, cli):
    draft = draft_file(tmp_path)
    cli("report", "check", str(draft), "--run", str(run.root), "--prose-worksheet", "--json")
    for sid in ("S-01", "S-02"):
        prose_review.record(run, sid, "supported", "looks fine", "general-purpose")
    with pytest.raises(CheckFailed) as exc:
        report.finish(run, draft)
    assert "not the research-verifier agent" in " ".join(exc.value.data["problems"])


def test_the_check_is_a_floor_the_verifiers_verdict_cannot_lower(run, tmp_path, cli):
    draft = draft_file(tmp_path, DRAFT.replace("42 gigawatts", "45 gigawatts"))
    code, _, _, env = cli(
        "report", "check", str(draft), "--run", str(run.root), "--prose-worksheet", "--json"
    )
    assert code == 1 and env["data"]["prose_worksheet"]["sentences"] == 2
    code, _, _, env = cli("verify", "prose", "S-01", "--run", str(run.root), "--verdict", "supported",
                          "--reason", "fine", "--agent", "research-verifier", "--json")  # fmt: skip
    assert code == 1 and env["errors"][0]["code"] == "verdict-below-floor"
    assert prose_review.load(run)["sentences"][0]["verdict"] == "refuse"


def test_a_mended_draft_keeps_the_verdicts_of_its_unchanged_sentences(run, tmp_path, cli):
    draft = draft_file(tmp_path)
    cli("report", "check", str(draft), "--run", str(run.root), "--prose-worksheet", "--json")
    prose_review.record(run, "S-01", "supported", "holds", "research-verifier")
    prose_review.record(run, "S-02", "refuse", "says more than the quote", "research-verifier")
    mended = draft_file(tmp_path, DRAFT.replace("Wind farms produced", "Freedonia's wind farms produced"))
    code, _, _, env = cli(
        "report", "check", str(mended), "--run", str(run.root), "--prose-worksheet", "--json"
    )
    assert code == 0 and env["data"]["prose_worksheet"]["unjudged"] == ["S-02"]
    assert env["data"]["prose_worksheet"]["kept"] == ["S-01"]


def test_the_evidence_map_shows_a_sentence_without_its_citation_or_source_aside():
    # The extractive writer's line "- New in version 1.3. [CLM-10] (source: SQ-02/SRC-04)" had shown in the
    # map as "New in version 1.3. (source: )": the source's ref was cut from the aside, the aside kept.
    from research_engine import support

    line = support.Sentence(3, "New in version 1.3. [CLM-10] (source: SQ-02/SRC-04)", ["CLM-10"])
    assert support_record.resting_on([line]) == {"CLM-10": ["New in version 1.3."]}
    note = support_record.evidence_note(["New in version 1.3."])
    assert note == " (carries \u201cNew in version 1.3.\u201d)"
