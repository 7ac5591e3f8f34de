"""brief: parsing in three forms, validation, defaults, intake questions, locking."""

from __future__ import annotations

import os

import pytest

from research_engine import brief
from research_engine.errors import BadInput


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_yaml_brief_passes_and_takes_defaults(brief_file):
    report = brief.check_file(brief_file())
    assert report.ok
    assert report.fields["depth"] == "standard"
    assert "depth" in report.defaulted and "objective" not in report.defaulted


def test_missing_objective_and_bad_depth_are_both_named(tmp_path):
    path = write(tmp_path, "b.yaml", "deliverable: memo\noutput_path: runs\ndepth: extreme\n")
    report = brief.check_file(path)
    assert not report.ok
    fields = {p.field for p in report.problems}
    assert {"objective", "depth"} <= fields


def test_wrong_types_are_reported_per_field(brief_file):
    report = brief.check_file(brief_file(claim_types="factual", budget={"provider_calls": "many"}, recency=5))
    fields = {p.field for p in report.problems}
    assert "claim_types" in fields and "budget.provider_calls" in fields and "recency" in fields


def test_unknown_fields_are_warned_and_kept(brief_file):
    report = brief.check_file(brief_file(audience="board members"))
    assert report.ok
    assert [w.field for w in report.warnings] == ["audience"]
    assert report.fields["audience"] == "board members"


def test_malformed_yaml_is_bad_input_with_location(tmp_path):
    path = write(tmp_path, "b.yaml", "objective: [unclosed\ndeliverable: x\n")
    with pytest.raises(BadInput) as err:
        brief.check_file(path)
    assert err.value.code == "malformed-yaml"
    assert "line" in err.value.message


def test_yaml_that_is_not_a_mapping_is_bad_input(tmp_path):
    with pytest.raises(BadInput) as err:
        brief.check_file(write(tmp_path, "b.yaml", "- just\n- a list\n"))
    assert err.value.code == "malformed-brief"


def test_unreadable_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput) as err:
        brief.check_file(tmp_path / "missing.yaml")
    assert err.value.code == "unreadable-brief"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_permission_denied_is_bad_input(tmp_path):
    path = write(tmp_path, "b.yaml", "objective: x\n")
    path.chmod(0)
    with pytest.raises(BadInput):
        brief.check_file(path)


def test_binary_file_is_bad_input(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BadInput):
        brief.check_file(path)


def test_front_matter_brief_uses_body_as_objective(tmp_path):
    path = write(
        tmp_path, "b.md", "---\ndeliverable: memo\noutput_path: runs\n---\n\n# How big is X?\n\nAnd why.\n"
    )
    report = brief.check_file(path)
    assert report.ok and report.source_format == "front-matter"
    assert report.fields["objective"] == "How big is X? And why."


def test_plain_markdown_request_becomes_objective_and_names_missing_fields(tmp_path):
    path = write(tmp_path, "request.md", "# Research\n\nCompare asyncio and threads in Python.\n")
    report = brief.check_file(path)
    assert report.source_format == "markdown"
    assert report.fields["objective"] == "Research Compare asyncio and threads in Python."
    assert {p.field for p in report.problems} == {"deliverable", "output_path"}


def test_intake_asks_at_most_five_questions_with_proposals(tmp_path):
    path = write(tmp_path, "request.md", "Compare asyncio and threads.\n")
    questions = brief.check_file(path).questions
    assert 1 <= len(questions) <= brief.MAX_QUESTIONS
    asked = [q["field"] for q in questions]
    assert "output_path" in asked
    assert all("proposed" in q for q in questions)
    assert next(q for q in questions if q["field"] == "output_path")["proposed"] == "runs"


def test_lock_writes_brief_md_with_every_field_and_marks_defaults(brief_file):
    locked = brief.lock(brief_file(depth="deep"))
    fields = brief.load_locked(locked.run_root)
    for name in brief.REQUIRED + brief.RECOMMENDED:
        assert name in fields
    assert fields["depth"] == "deep"
    assert "depth" not in fields["locked"]["defaults"]
    assert "recency" in fields["locked"]["defaults"]
    assert "*(default)*" in (locked.run_root / "brief.md").read_text()


def test_lock_slug_cannot_escape_output_directory(brief_file, tmp_path):
    out = tmp_path / "runs"
    locked = brief.lock(brief_file(objective="../../etc", output_path=str(out)))
    assert locked.run_root.parent == out.resolve()
    assert locked.run_root.name.endswith("-etc")


def test_lock_refuses_an_invalid_brief(tmp_path):
    path = write(tmp_path, "b.yaml", "objective: something to research\n")
    with pytest.raises(BadInput) as err:
        brief.lock(path)
    assert {p.field for p in err.value.problems} == {"deliverable", "output_path"}


def test_lock_output_path_option_fills_a_missing_output_path(tmp_path):
    path = write(tmp_path, "b.yaml", "objective: something to research\ndeliverable: memo\n")
    locked = brief.lock(path, str(tmp_path / "elsewhere"))
    assert locked.run_root.parent == (tmp_path / "elsewhere").resolve()


def test_lock_into_uncreatable_output_path_is_bad_input(brief_file, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("file")
    with pytest.raises(BadInput) as err:
        brief.lock(brief_file(output_path=str(blocker / "sub")))
    assert err.value.code == "output-path-unwritable"


def test_depth_sets_cycle_ceiling_in_run_json(brief_file):
    import json

    for depth, ceiling in {"quick": 1, "standard": 2, "deep": 3}.items():
        locked = brief.lock(brief_file(depth=depth))
        record = json.loads((locked.run_root / "run.json").read_text())
        assert record["cycle_ceiling"] == ceiling
