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


def _recorded_source(run):
    from research_engine import documents, retrieve

    doc = documents.Document(
        kind="web",
        requested_url="https://example.org/a",
        final_url=None,
        status=200,
        retrieved_at="2026-01-01T00:00:00Z",
        body=b"<p>" + b"x" * 300 + b"</p>",
        passages=documents.number_passages([("paragraph", "text " * 60)]),
    )
    return retrieve.record(run, "SQ-01", doc)


def test_recorded_source_validates(locked_run):
    _recorded_source(locked_run)
    report = validate_run(locked_run)
    assert report.ok, report.problems


def test_a_tampered_snapshot_is_caught(locked_run):
    import frontmatter

    _recorded_source(locked_run)
    meta = frontmatter.load(str(locked_run.path("source", sq="SQ-01", src="SRC-01"))).metadata
    (locked_run.root / meta["snapshot"]).write_bytes(b"other bytes")
    report = validate_run(locked_run)
    assert [(p.file, p.code) for p in report.problems] == [
        ("retrieve/SQ-01/SRC-01.md", "cross-reference"),  # the source's snapshot lost its digest
        (meta["snapshot"], "digest-mismatch"),  # and the store says which file was altered
    ]


def test_a_source_missing_from_run_json_is_caught(locked_run):
    _recorded_source(locked_run)
    record = json.loads(locked_run.path("run").read_text())
    record["sources"] = [{"id": "SQ-09/SRC-09", "url": "https://x", "access_tier": "open"}]
    locked_run.path("run").write_text(json.dumps(record))
    report = validate_run(locked_run)
    assert any(p.file == "retrieve/SQ-01/SRC-01.md" and p.field == "id" for p in report.problems)
