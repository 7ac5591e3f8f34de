"""What `run` says: quiet by default (a summary, sizes in KB/MB, the events in the run's event log), loud with
-v; a search backend the guard refuses stops the run before anything is locked (exit 3, the --allow-host
hint, no run directory); a run that searched nothing is labelled no-sources and says what was refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from research_engine import trace
from research_engine.artifacts import read_markdown
from research_engine.errors import ExitCode
from research_engine.runrecord import human_bytes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = next(p for p in sorted((ROOT / "examples").iterdir()) if (p / "run.json").is_file())


def _run_example(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    """README's main job, in a real process whose stderr is a pipe (not a terminal)."""
    args = [str(EXAMPLE / "brief.md"), "--replay", str(EXAMPLE / "cassette"), "--output-path", str(tmp_path)]
    return subprocess.run(
        [sys.executable, "-m", "research_engine", "run", *args, *extra],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
    )


@pytest.mark.slow
def test_run_on_the_committed_example_is_quiet_without_v_and_loud_with_it(tmp_path):
    quiet = _run_example(tmp_path / "quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "event=" not in quiet.stderr and "WARNING" not in quiet.stderr, quiet.stderr
    assert quiet.stderr.strip() == ""  # a replay's recorded host is not warned about
    fetched = json.loads((EXAMPLE / "run.json").read_text())["budgets"]["spent"]["fetched_bytes"]
    assert f"fetched_bytes {human_bytes(fetched)}/50 MB" in quiet.stdout  # sizes read as sizes
    assert str(fetched) not in quiet.stdout
    run_root = Path(quiet.stdout.splitlines()[0])
    logged = (run_root / ".state" / "events.log").read_text(encoding="utf-8")
    assert "event=stage stage=retrieve cycle=1 sq=SQ-02" in logged and "event=decision" in logged
    loud = _run_example(tmp_path / "loud", "-v")
    assert loud.returncode == 0, loud.stderr
    assert "research-engine event=stage stage=decompose" in loud.stderr


def _brief(tmp_path: Path) -> Path:
    path = tmp_path / "brief.yaml"
    fields = {
        "objective": "How does SQLite let readers and writers work at the same time?",
        "deliverable": "a cited memo",
        "depth": "quick",
        "output_path": str(tmp_path / "runs"),
    }
    path.write_text(yaml.safe_dump(fields), encoding="utf-8")
    return path


def test_a_refused_search_backend_stops_run_before_anything_is_written(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9")  # loopback, and not allowed
    code, _, err, _ = cli("run", str(_brief(tmp_path)), "--sources", "web")
    assert code == ExitCode.REFUSED == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the search backend is refused")
    assert "searxng at http://127.0.0.1:9/search: loopback address 127.0.0.1" in lines[0]
    assert "--allow-host 127.0.0.1:9" in lines[0] and "no run was started" in lines[0]
    assert not (tmp_path / "runs").exists()  # no run, so no misleading deliverable
    code, out, _, env = cli("run", str(_brief(tmp_path)), "--json")
    assert code == 3 and env["errors"][0]["code"] == "search-refused"


def test_a_bad_brief_is_still_reported_before_a_refused_backend(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9")
    brief = tmp_path / "brief.yaml"
    brief.write_text("deliverable: a memo\n", encoding="utf-8")
    code, *_ = cli("run", str(brief))
    assert code == ExitCode.BAD_INPUT


def test_an_allowed_backend_that_answers_no_search_gives_a_no_sources_deliverable(
    tmp_path, monkeypatch, cli, httpserver
):
    httpserver.expect_request("/search").respond_with_json({"error": "engine down"}, status=400)
    monkeypatch.setenv("SEARXNG_URL", f"http://127.0.0.1:{httpserver.port}")
    code, out, _, env = cli(
        "run",
        str(_brief(tmp_path)),
        "--sources",
        "web",
        "--allow-host",
        f"127.0.0.1:{httpserver.port}",
        "--json",
    )
    assert code == ExitCode.NO_FINDING, out
    run = trace.open_run(env["data"]["run_root"])
    meta, body = read_markdown(run.path("result"))
    assert meta["reproducibility"] == "no-sources" and meta["no_finding"] is True
    assert "Nothing was searched: every search request was refused or failed" in body
    assert "searxng http-status: SearXNG HTTP 400: engine down" in body
    record = json.loads(run.path("run").read_text(encoding="utf-8"))
    assert record["reproducibility"]["label"] == "no-sources"


def test_a_question_typed_where_the_brief_goes_is_told_what_a_brief_is(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    code, _, err, _ = cli("run", "How does SQLite let readers and writers work at the same time?")
    assert code == ExitCode.BAD_INPUT
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: brief not found: How does SQLite")
    assert "objective, deliverable and output_path" in lines[0] and "research-engine brief check" in lines[0]
    code, _, err, _ = cli("run", "missing-brief.yaml")  # a path: no hint about questions
    assert code == ExitCode.BAD_INPUT and "brief check" not in err
