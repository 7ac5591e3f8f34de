"""The url, robots and fetch commands, end to end through the CLI against a local server."""

from __future__ import annotations

import json

import pytest
from pytest_httpserver import HTTPServer

ARTICLE = (
    "<html lang='en'><head><title>Threads and processes</title></head><body><article>"
    "<h1>Threads and processes</h1>"
    + "".join(
        f"<p>Paragraph {i} explains how the interpreter schedules concurrent work in detail.</p>"
        for i in range(8)
    )
    + "</article></body></html>"
)


@pytest.fixture(scope="module")
def site():
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.start()
    srv.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nDisallow: /private\n", content_type="text/plain"
    )
    srv.expect_request("/article").respond_with_data(
        ARTICLE, content_type="text/html; charset=utf-8", headers={"ETag": '"a1"'}
    )
    srv.expect_request("/private/x").respond_with_data(ARTICLE, content_type="text/html")
    srv.expect_request("/thin").respond_with_data(
        "<html><body><p>Too short.</p></body></html>", content_type="text/html"
    )
    yield srv
    srv.stop()


@pytest.fixture
def locked_run(locked_run):
    """The locked run with three sub-questions: a command records only under a sub-question of the run."""
    from research_engine import decompose

    for text in ("What is Python?", "Who maintains it?", "What research cites it?"):
        decompose.add(locked_run, text, "factual")
    return locked_run


def test_url_check_exit_codes(cli):
    assert cli("url", "check", "http://0x7f000001/", "--no-resolve")[0] == 3
    assert cli("url", "check", "https://en.wikipedia.org/wiki/URL", "--no-resolve")[0] == 0
    code, _, _, envelope = cli("url", "check", "https://user:pw@en.wikipedia.org/", "--no-resolve", "--json")
    assert code == 3 and envelope["errors"][0]["code"] == "refused-ssrf"


def test_url_check_unresolvable_host_exits_4(cli):
    assert cli("url", "check", "https://no-such-host.invalid/")[0] == 4


def test_url_canonical_prints_the_key(cli):
    code, out, _, _ = cli("url", "canonical", "https://doi.org/10.1000/ABC")
    assert code == 0 and out.strip() == "doi:10.1000/abc"


def test_robots_check_reads_the_given_file(cli, tmp_path):
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: research-engine\nDisallow: /no\n", encoding="utf-8")
    assert cli("robots", "check", "https://example.org/no/x", "--robots-file", robots)[0] == 3
    assert cli("robots", "check", "https://example.org/yes", "--robots-file", robots)[0] == 0
    assert (
        cli("robots", "check", "https://example.org/no", "--robots-file", robots, "--user-agent", "otherbot")[
            0
        ]
        == 0
    )


def test_fetch_refuses_loopback_without_opt_in(cli, site):
    code, _, _, envelope = cli("fetch", site.url_for("/article"), "--json")
    assert code == 3 and envelope["errors"][0]["code"] == "refused-ssrf"


def test_fetch_prints_the_extracted_document(cli, site):
    code, out, _, _ = cli("fetch", site.url_for("/article"), "--allow-private", "--ignore-robots")
    assert code == 0 and "[p01]" in out and "schedules concurrent work" in out


def test_fetch_robots_disallow_exits_3(cli, site):
    code, _, _, envelope = cli("fetch", site.url_for("/private/x"), "--allow-private", "--json")
    assert code == 3 and envelope["errors"][0]["code"] == "refused-robots"


def test_fetch_into_a_run_records_source_snapshot_and_the_overrides(cli, site, locked_run):
    code, _, _, envelope = cli(
        "fetch",
        site.url_for("/private/x"),
        "--run",
        locked_run.root,
        "--sq",
        "SQ-01",
        "--query",
        "threads",
        "--allow-private",
        "--ignore-robots",
        "--json",
    )
    assert code == 0, envelope
    assert envelope["data"]["source"] == "SQ-01/SRC-01"
    from research_engine import retrieve, runrecord

    meta, passages = retrieve.load_source(locked_run, "SQ-01/SRC-01")
    assert meta["requested_url"] == site.url_for("/private/x") and meta["status"] == 200
    assert meta["query"] == "threads" and passages
    assert (locked_run.root / meta["snapshot"]).read_bytes() == ARTICLE.encode()
    kinds = [e["kind"] for e in runrecord.read(locked_run)["events"]]
    assert "private-address" in kinds and "robots-ignored" in kinds


def test_fetch_does_not_record_a_thin_page(cli, site, locked_run):
    code, _, _, envelope = cli(
        "fetch",
        site.url_for("/thin"),
        "--run",
        locked_run.root,
        "--sq",
        "SQ-01",
        "--allow-private",
        "--ignore-robots",
        "--json",
    )
    assert code == 1 and envelope["errors"][0]["code"] == "thin-page"
    assert not (locked_run.root / "retrieve" / "SQ-01").exists() or not list(
        (locked_run.root / "retrieve" / "SQ-01").glob("SRC-*.md")
    )


def test_fetch_run_without_sq_is_bad_input(cli, locked_run):
    assert cli("fetch", "https://example.org/", "--run", locked_run.root)[0] == 2


def test_fetch_json_carries_the_fetch_facts(cli, site):
    code, _, _, envelope = cli(
        "fetch", site.url_for("/article"), "--allow-private", "--ignore-robots", "--json"
    )
    fetched = envelope["data"]["fetch"]
    assert code == 0 and fetched["status"] == 200 and fetched["etag"] == '"a1"'
    assert json.dumps(envelope)  # serializable
    assert envelope["data"]["document"]["title"] == "Threads and processes"


def test_fetch_document_gives_a_web_document_or_none_with_the_reason(site, tmp_path):
    from research_engine.net import HttpClient
    from research_engine.retrieve.pages import fetch_document

    with HttpClient(
        allow_private=True, ignore_robots=True, per_host_interval=0, cache_dir=tmp_path
    ) as client:
        doc, result = fetch_document(client, site.url_for("/article"))
        assert doc is not None and doc.kind == "web" and doc.sha256 == result.sha256
        assert doc.title == "Threads and processes" and doc.canonical_key.startswith("url:")
        missing, failed = fetch_document(client, "http://169.254.169.254/latest/meta-data/")
        assert missing is None and failed.error == "refused-ssrf"


def test_a_page_the_reader_fails_on_is_one_failed_source_not_a_failed_run(site, tmp_path, monkeypatch):
    # A reader bug on one page (an IndexError in extraction) is injected: the page is one source that could
    # not be read, with the reason, and the caller goes on; it never becomes the run's internal error.
    from research_engine.net import HttpClient
    from research_engine.retrieve import pages

    def broken_reader(*args: object, **kwargs: object) -> object:
        raise IndexError("list index out of range")

    monkeypatch.setattr(pages, "extract_document", broken_reader)
    with HttpClient(
        allow_private=True, ignore_robots=True, per_host_interval=0, cache_dir=tmp_path
    ) as client:
        doc, result = pages.fetch_document(client, site.url_for("/article"))
    assert doc is None and result.error == "decode-error"
    assert "page reader failed" in (result.error_detail or "") and "IndexError" in (result.error_detail or "")
