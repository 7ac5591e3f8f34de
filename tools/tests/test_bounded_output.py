"""Output that fits a model's context: the `--json` envelopes of the commands that read sources are bounded
(docs/conventions.md: at most 20,000 characters) and say where the rest is; the files keep everything.

The large page is Debian's PostgreSQL 15 release notes (tools/tests/fixtures/docs/, 115 KB of HTML, 719
passages), served by a real local server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pytest_httpserver import HTTPServer

from research_engine import retrieve, trace
from research_engine.excerpts import ENVELOPE_CHARS

DOCS = Path(__file__).parent / "fixtures" / "docs"
RELEASE_NOTES = DOCS / "postgresql-15-release-15.html"


@pytest.fixture(scope="module")
def docs_site():
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.start()
    srv.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    for page in DOCS.glob("*.html"):
        srv.expect_request(f"/{page.name}").respond_with_data(
            page.read_bytes(), content_type="text/html; charset=utf-8"
        )
    yield srv
    srv.stop()


@pytest.fixture
def run(cli, tmp_path, docs_site):
    brief = tmp_path / "brief.yaml"
    brief.write_text(
        yaml.safe_dump(
            {
                "objective": "What changed in PostgreSQL 15?",
                "deliverable": "a cited memo",
                "output_path": str(tmp_path / "runs"),
            }
        ),
        encoding="utf-8",
    )
    host = f"127.0.0.1:{docs_site.port}"
    code, _, _, env = cli("brief", "lock", brief, "--allow-host", host, "--json")
    assert code == 0, env
    root = env["data"]["run_root"]
    question = "Which PostgreSQL release added the MERGE command?"
    code, _, _, env = cli("sq", "add", question, "--run", root, "--type", "technical", "--json")
    assert code == 0, env
    return root


def printed(cli, *args: str) -> tuple[int, str, dict]:
    code, out, _, env = cli(*args)
    return code, out, env


def test_fetch_run_json_of_a_100_kb_page_prints_at_most_the_bound_and_says_where_the_rest_is(
    cli, run, docs_site
):
    assert RELEASE_NOTES.stat().st_size > 100_000
    url = f"http://127.0.0.1:{docs_site.port}/{RELEASE_NOTES.name}"
    code, out, env = printed(cli, "fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 0, env
    assert len(out) <= ENVELOPE_CHARS, len(out)
    rest = env["data"]["rest"]
    source = env["data"]["source"]
    meta, passages = retrieve.load_source(trace.open_run(run), source)
    assert rest["of"] == len(passages) == meta["extraction"]["passages"] > 500  # the file holds every one
    assert Path(rest["file"]) == retrieve.source_path(trace.open_run(run), source)
    assert rest["shown"] == len(env["data"]["document"]["passages"]) < rest["of"]
    assert rest["next"].startswith(f"research-engine source show {source} --run {run} --page 1")
    # The passages shown are those about the sub-question, with their sentences by id.
    shown = env["data"]["document"]["passages"]
    texts = [" ".join(view["sentences"].values()) for view in shown]
    assert any("MERGE" in text for text in texts)
    by_id = {p.id: p for p in passages}
    for view in shown:
        assert " ".join(view["sentences"].values()) == by_id[view["id"]].text
        assert list(view["sentences"]) == [f"s{i}" for i in range(1, len(view["sentences"]) + 1)]


def test_source_show_pages_through_every_passage_each_page_within_the_bound(cli, run, docs_site):
    url = f"http://127.0.0.1:{docs_site.port}/{RELEASE_NOTES.name}"
    code, _, env = printed(cli, "fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    source = env["data"]["source"]
    seen: list[str] = []
    page, pages = 1, None
    while True:
        code, out, env = printed(cli, "source", "show", source, "--run", run, "--page", str(page), "--json")
        assert code == 0, env
        assert len(out) <= ENVELOPE_CHARS, (page, len(out))
        pages = env["data"]["rest"]["pages"]
        seen += [view["id"] for view in env["data"]["passages"]]
        if "next" not in env["data"]["rest"]:
            break
        assert env["data"]["rest"]["next"].endswith(f"--page {page + 1} --json")
        page += 1
    _, passages = retrieve.load_source(trace.open_run(run), source)
    assert page == pages > 1
    assert seen == [p.id for p in passages]  # every passage once, in document order
    code, out, env = printed(cli, "source", "show", source, "--run", run, "--page", str(pages + 1), "--json")
    assert code == 0 and env["data"]["passages"] == []


def test_source_show_for_a_question_shows_the_matching_passages_with_their_headings(cli, run, docs_site):
    url = f"http://127.0.0.1:{docs_site.port}/postgresql-15-runtime-config-resource.html"
    code, _, env = printed(cli, "fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    source = env["data"]["source"]
    question = "What is the default value of shared_buffers?"
    code, out, env = printed(cli, "source", "show", source, "--run", run, "--for", question, "--json")
    assert code == 0 and len(out) <= ENVELOPE_CHARS
    text = json.dumps(env["data"]["passages"])
    assert "128MB" in text
    assert "chosen_by" in env["data"]["rest"]


def test_fetch_full_prints_every_passage_for_scripts(cli, docs_site):
    url = f"http://127.0.0.1:{docs_site.port}/{RELEASE_NOTES.name}"
    code, out, env = printed(
        cli, "fetch", url, "--allow-host", f"127.0.0.1:{docs_site.port}", "--full", "--json"
    )
    assert code == 0 and len(out) > ENVELOPE_CHARS
    assert len(env["data"]["document"]["passages"]) == env["data"]["document"]["extraction"]["passages"]
    code, out, env = printed(cli, "fetch", url, "--allow-host", f"127.0.0.1:{docs_site.port}", "--json")
    assert code == 0 and len(out) <= ENVELOPE_CHARS
    assert "--full" in env["data"]["rest"]["more"]


def test_a_bad_source_reference_is_bad_input(cli, run):
    code, _, env = printed(cli, "source", "show", "SQ-01/SRC-09", "--run", run, "--json")
    assert code == 2 and env["errors"][0]["code"] == "unknown-source"
    code, _, env = printed(cli, "source", "show", "SRC-01", "--run", run, "--json")
    assert code == 2 and env["errors"][0]["code"] == "bad-source-ref"


def test_claims_list_and_verify_prepare_stay_within_the_bound_with_many_claims_on_a_large_page(
    cli, run, docs_site
):
    from research_engine import claims

    url = f"http://127.0.0.1:{docs_site.port}/{RELEASE_NOTES.name}"
    code, _, env = printed(cli, "fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    source = env["data"]["source"]
    the_run = trace.open_run(run)
    _, passages = retrieve.load_source(the_run, source)
    long_ones = [p for p in passages if len(p.text) > 80][:90]
    for p in long_ones:
        claims.add_claim(the_run, "SQ-01", p.text, [source], [p.text])
    assert len(long_ones) >= 60

    seen: list[str] = []
    page = 1
    while True:
        code, out, env = printed(cli, "claims", "list", "--run", run, "--page", str(page), "--json")
        assert code == 0 and len(out) <= ENVELOPE_CHARS, (page, len(out))
        seen += [c["id"] for c in env["data"]["claims"]]
        assert env["data"]["counts"]["active"] == len(long_ones)
        if "next" not in env["data"]["rest"]:
            break
        page += 1
    assert page > 1 and len(seen) == len(set(seen)) == len(long_ones)
    assert env["data"]["rest"]["file"].endswith("consolidate/claims.jsonl")

    code, out, env = printed(cli, "verify", "prepare", "--run", run, "--json")
    assert code == 0 and len(out) <= ENVELOPE_CHARS, len(out)
    assert env["data"]["rest"]["worksheet"].endswith("verify/worksheet.md")
    assert env["data"]["rest"]["of"] == len(long_ones) > env["data"]["rest"]["shown"]
    assert all(row["floor"] == "supported" for row in env["data"]["claims"])


def test_search_json_is_bounded_with_snippets_clipped_and_results_cut_when_they_must_be(
    cli, run, httpserver, monkeypatch
):
    long = "word " * 600
    results = [
        {"url": f"http://docs.example/page-{i}", "title": f"Page {i} " + "title " * 30, "content": long}
        for i in range(50)
    ]
    httpserver.expect_request("/search").respond_with_json({"query": "q", "results": results})
    monkeypatch.setenv("SEARXNG_URL", httpserver.url_for("/"))
    monkeypatch.setenv("RESEARCH_ENGINE_SEARCH_ORDER", "searxng")
    host = f"{httpserver.host}:{httpserver.port}"
    code, out, env = printed(
        cli, "search", "q", "--limit", "50", "--run", run, "--sq", "SQ-01", "--allow-host", host, "--json"
    )
    assert code == 0 and len(out) <= ENVELOPE_CHARS, len(out)
    shown = env["data"]["candidates"]
    assert all(len(c["snippet"]) <= 300 for c in shown)
    assert shown[0]["ref"] == "Q-01#1"
    assert env["data"]["rest"]["of"] == 50 > env["data"]["rest"]["shown"] == len(shown)
    assert env["data"]["rest"]["file"].endswith("select/SQ-01.candidates.json")
    recorded = json.loads((Path(run) / "select" / "SQ-01.candidates.json").read_text())
    assert len(recorded["candidates"]) == 50 and recorded["candidates"][0]["snippet"].startswith("word word")
