"""validate: a fresh run passes; a schema-breaking edit or a tampered brief fails, naming the file."""

from __future__ import annotations

import json

from research_engine import trace
from research_engine.validate import validate_run


def test_freshly_locked_run_is_valid(locked_run):
    report = validate_run(locked_run)
    assert report.ok, report.problems
    assert report.checked_files >= 2


def test_schema_breaking_edit_to_run_json_names_the_file(locked_run, cli):
    path = locked_run.path("run")
    record = json.loads(path.read_text())
    record["status"] = "exploded"
    del record["cycles"]
    path.write_text(json.dumps(record))
    code, out, err, env = cli("validate", locked_run.root, "--json")
    assert code == 1
    files = {e["file"] for e in env["errors"]}
    assert files == {"run.json"}
    messages = " ".join(e["message"] for e in env["errors"])
    assert "status" in messages and "cycles" in messages


def test_edited_brief_breaks_the_digest_cross_reference(locked_run):
    path = locked_run.path("brief")
    path.write_text(path.read_text().replace("a cited memo", "a different memo"))
    report = validate_run(locked_run)
    assert not report.ok
    assert any(p.file == "run.json" and p.field == "brief_digest" for p in report.problems)


def test_truncated_run_json_is_reported_not_raised(locked_run):
    locked_run.path("run").write_text("{ not json")
    report = validate_run(locked_run)
    assert [p.file for p in report.problems] == ["run.json"]


def test_missing_brief_is_reported(locked_run):
    locked_run.path("brief").unlink()
    report = validate_run(trace.Run(locked_run.root))
    assert any(p.file == "brief.md" for p in report.problems)
