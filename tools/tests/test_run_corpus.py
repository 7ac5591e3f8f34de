"""`run BRIEF --corpus DIR`: a folder researched with no other flag, server or variable, and replayed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from engine_web import BRIEF, CountingCorpusServer, write_mini_web

from research_engine import claims, retrieve, runrecord, trace, validate

pytestmark = pytest.mark.slow


def brief_at(tmp_path: Path, **fields) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "brief.yaml"
    data = {**BRIEF, "depth": "quick", "output_path": str(tmp_path / "runs"), **fields}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def folder_state(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def test_a_corpus_run_needs_nothing_else_and_replays(tmp_path, cli):
    folder = write_mini_web(tmp_path / "docs")
    before = folder_state(folder)
    code, out, _, env = cli("run", brief_at(tmp_path), "--corpus", folder, "--record", "--json")
    assert code == 0, out
    run = trace.open_run(env["data"]["run_root"])
    record = runrecord.read(run)
    (entry,) = record["corpus"]
    assert entry["path"] == str(folder.resolve()) and len(entry["digest"]) == 64
    assert entry["documents"] == 5 and entry["skipped"] == 0
    host = entry["url"].removeprefix("http://")
    assert record["allow_hosts"] == [host] and host.startswith("127.0.0.1:")  # that server, nothing else
    assert record.get("allow_private") is not True
    assert record["gather"] == {"sources": ["web"], "web": ["corpus"]}
    logged = json.loads(run.path("candidates", sq="SQ-01").read_text())
    assert {q["command"] for q in logged["queries"]} == {"corpus search"}
    sources = [retrieve.load_source(run, ref)[0] for ref in retrieve.list_sources(run)]
    assert sources and all(m["requested_url"].startswith(entry["url"] + "/") for m in sources)
    assert claims.active_claims(run)
    assert validate.validate_run(run).ok
    assert folder_state(folder) == before  # the folder is never written to

    code, out, _, replayed = cli("replay", run.root, "--json")
    assert code == 0, out
    assert replayed["data"]["identical"] is True and replayed["data"]["cassette_misses"] == []


def test_a_corpus_beside_a_configured_backend_searches_both(tmp_path, cli, monkeypatch):
    web = write_mini_web(tmp_path / "web")
    folder = write_mini_web(tmp_path / "docs")
    with CountingCorpusServer(web) as other:
        monkeypatch.setenv("SEARXNG_URL", other.url)
        host = other.url.removeprefix("http://")
        code, out, _, env = cli(
            "run", brief_at(tmp_path), "--corpus", folder, "--allow-host", host, "--dry-run", "--json"
        )
        assert code == 0, out
        assert other.seen["/search"] > 0
    run = trace.open_run(env["data"]["run_root"])
    assert runrecord.read(run)["gather"]["web"] == ["corpus", "searxng"]
    logged = json.loads(run.path("candidates", sq="SQ-01").read_text())
    assert {q["command"] for q in logged["queries"]} == {"search", "corpus search"}


def test_a_missing_corpus_folder_is_bad_input_and_leaves_no_run(tmp_path, cli):
    code, out, _, env = cli("run", brief_at(tmp_path), "--corpus", tmp_path / "absent", "--json")
    assert code == 2, out
    assert env["errors"][0]["code"] == "bad-corpus"
    assert not (tmp_path / "runs").exists()


FORMAT_BRIEFS = {
    "wal.pdf": "How does a checkpoint move content from the WAL file back into the SQLite database file?",
    "locking.docx": "What does SQLite do when a database file has a hot journal before reading from it?",
    "isolation.md": "What isolation does SQLite give between two separate database connections?",
    "corruption.txt": "How can a file descriptor that was closed and reopened corrupt an SQLite database?",
    "tempfiles.html": "What temporary files does SQLite use for statement journals?",
}


@pytest.mark.parametrize("name", sorted(FORMAT_BRIEFS))
def test_each_format_is_found_quoted_verified_and_replayed(name, tmp_path, cli):
    from test_corpus_formats import mixed_folder

    from research_engine import report

    folder = mixed_folder(tmp_path / "docs")
    brief = brief_at(tmp_path, objective=FORMAT_BRIEFS[name], claim_types=["technical"])
    code, out, _, env = cli("run", brief, "--corpus", folder, "--record", "--json")
    assert code == 0, out
    run = trace.open_run(env["data"]["run_root"])
    ledger, verdicts = report.claim_state(run)
    cited = set()
    for claim in ledger.values():
        if claim["status"] != "active" or (verdicts.get(claim["id"]) or {}).get("verdict") != "supported":
            continue
        for evidence in claim["evidence"]:
            meta, passages = retrieve.load_source(run, evidence["source"])
            assert evidence["quote"] in " ".join(p.text for p in passages)
            cited.add(meta["requested_url"].rsplit("/", 1)[-1])
    assert name in cited, (name, cited)
    code, out, _, replayed = cli("replay", run.root, "--json")
    assert code == 0, out
    assert replayed["data"]["identical"] is True


def test_folders_served_once_by_a_caller_serve_several_runs(tmp_path):
    """The library piece `batch` calls: a caller serves the folders once and runs use them; the servers
    outlive each run and stop when the caller is done."""
    import httpx

    from research_engine.corpus.session import serve_corpora
    from research_engine.engine import loop
    from research_engine.settings import Settings

    folder = write_mini_web(tmp_path / "docs")
    with serve_corpora([folder], cache_root=tmp_path / "cache") as served:
        roots = []
        for number in (1, 2):
            brief = brief_at(tmp_path / f"b{number}")
            options = loop.EngineOptions(dry_run=True)
            outcome = loop.run(brief, options, settings=Settings(), served=served)
            roots.append(outcome.run_root)
            assert httpx.get(f"{served.urls[0]}/robots.txt").status_code == 200  # still serving
        records = [runrecord.read(trace.open_run(r))["corpus"] for r in roots]
        assert records[0] == records[1] == served.records()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{served.urls[0]}/robots.txt", timeout=2)


def test_a_busy_port_on_resume_is_a_clear_error(tmp_path):
    import socket

    from research_engine.corpus.session import start_corpora
    from research_engine.errors import BadInput

    folder = write_mini_web(tmp_path / "docs")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(BadInput) as caught:
            start_corpora([folder], ports=[taken.getsockname()[1]])
    assert caught.value.code == "corpus-port-busy" and "free the port and resume" in caught.value.message


def test_a_short_note_in_the_folder_is_a_source(tmp_path, cli):
    folder = write_mini_web(tmp_path / "docs")
    note = "The build server runs the nightly tests at 02:00 UTC.\n"
    (folder / "note.txt").write_text(note, encoding="utf-8")
    brief = brief_at(tmp_path, objective="When does the build server run the nightly tests?")
    code, out, _, env = cli("run", brief, "--corpus", folder, "--json")
    assert code in (0, 8), out
    run = trace.open_run(env["data"]["run_root"])
    urls = [retrieve.load_source(run, ref)[0]["requested_url"] for ref in retrieve.list_sources(run)]
    assert any(u.endswith("/note.txt") for u in urls), urls


def test_a_question_the_documentation_does_not_cover_gets_no_answer(tmp_path, cli):
    # Real reference pages that say "configure" of their own things (Flask's config, Django's applications,
    # SQLAlchemy's pooling): a how-to about something they never mention is not answered by that verb.
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("flask-2.2-config", "django-3.2-ref-applications", "sqlalchemy-1.4-core-pooling"):
        page = Path(__file__).parent / "fixtures" / "docs" / f"{name}.html"
        (folder / page.name).write_bytes(page.read_bytes())
    brief = brief_at(tmp_path, objective="How do I configure a Kubernetes pod disruption budget?")
    code, out, _, env = cli("run", brief, "--corpus", folder, "--json")
    assert code == 0, out
    run = trace.open_run(env["data"]["run_root"])
    assert runrecord.read(run)["stop_reason"] != "criterion-met"
    assert claims.active_claims(run)  # their sentences about configuring, shown as what they are
    result = run.path("result").read_text(encoding="utf-8")
    assert "## Answer" not in result and "no sub-question has a supported answer" in result
    assert "Gap: no supported claim answers SQ-01" in result
    code, out, _, _ = cli("run", brief, "--corpus", folder)  # for a person: why it stopped, in words
    assert code == 0 and "(governor: the cycle ceiling came before the criterion was met)" in out
