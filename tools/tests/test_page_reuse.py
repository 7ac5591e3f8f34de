"""A page is read once per run: a URL the run already holds is recorded for another sub-question from the
same snapshot and extraction, with no second request at all, and References list the page once with every
source id that cites it. A real local server counts what it was asked."""

from __future__ import annotations

import pytest
import yaml

from research_engine import retrieve, trace
from research_engine.artifacts import read_markdown

PAGE = "/whatsnew/3.11.html"
HTML = (
    "<!doctype html><html lang='en'><head><title>What's new in Python 3.11</title></head><body><article>"
    "<h1>What's new in Python 3.11</h1><h2>Exception groups and except*</h2>"
    "<p>PEP 654 introduces language features that enable a program to raise and handle multiple unrelated "
    "exceptions simultaneously. The new except* syntax matches the exceptions of an exception group by type. "
    "A plain except clause still matches the whole group.</p></article></body></html>"
)


@pytest.fixture
def site(httpserver):
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request(PAGE).respond_with_data(HTML, content_type="text/html; charset=utf-8")
    return httpserver


def requests_for(server, path: str) -> int:
    return sum(1 for req, _ in server.log if req.path == path)


@pytest.fixture
def run(cli, tmp_path, site):
    brief = tmp_path / "brief.yaml"
    brief.write_text(
        yaml.safe_dump(
            {
                "objective": "What new ways of handling multiple exceptions did Python 3.11 introduce?",
                "deliverable": "a cited memo",
                "output_path": str(tmp_path / "runs"),
                "depth": "quick",
            }
        )
    )
    code, _, _, env = cli("brief", "lock", brief, "--allow-host", f"{site.host}:{site.port}", "--json")
    assert code == 0, env
    root = env["data"]["run_root"]
    for text in ("What does except* do?", "How does a plain except clause treat an exception group?"):
        code, _, _, env = cli("sq", "add", text, "--run", root, "--type", "technical", "--json")
        assert code == 0, env
    return root


def test_a_page_fetched_for_two_sub_questions_is_requested_once_and_referenced_once(cli, run, site, tmp_path):
    url = site.url_for(PAGE)
    code, _, _, first = cli("fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 0, first
    code, _, _, second = cli("fetch", url, "--run", run, "--sq", "SQ-02", "--json")
    assert code == 0, second
    assert requests_for(site, PAGE) == 1, "no second request at all"
    assert requests_for(site, "/robots.txt") == 1
    assert second["data"]["source"] == "SQ-02/SRC-01" and second["data"]["reused_from"] == "SQ-01/SRC-01"

    the_run = trace.open_run(run)
    meta_1, passages_1 = retrieve.load_source(the_run, "SQ-01/SRC-01")
    meta_2, passages_2 = retrieve.load_source(the_run, "SQ-02/SRC-01")
    assert meta_2["sha256"] == meta_1["sha256"] and meta_2["retrieved_at"] == meta_1["retrieved_at"]
    assert [(p.id, p.text) for p in passages_2] == [(p.id, p.text) for p in passages_1]
    assert meta_2["metadata"]["reused_from"] == "SQ-01/SRC-01" and meta_2["sub_question"] == "SQ-02"

    # The same page for the same sub-question again: the existing source, still no request.
    code, _, _, again = cli("fetch", url, "--run", run, "--sq", "SQ-02", "--json")
    assert code == 1 and again["errors"][0]["code"] == "duplicate-source"
    assert requests_for(site, PAGE) == 1

    # One claim per sub-question, both verified and cited: References name the page once, with both ids.
    claim_ids = []
    for sq, ref, span, text in (
        (
            "SQ-01",
            "SQ-01/SRC-01",
            "p02.s2",
            "The except* syntax matches an exception group's members by type.",
        ),
        ("SQ-02", "SQ-02/SRC-01", "p02.s3", "A plain except clause matches the whole exception group."),
    ):
        code, _, _, env = cli(
            "claims", "add", text, "--run", run, "--sq", sq, "--span", f"{ref}#{span}", "--json"
        )
        assert code == 0, env
        claim_ids.append(env["data"]["id"])
    assert cli("verify", "prepare", "--run", run, "--json")[0] == 0
    for clm in claim_ids:
        cli(
            "verify", "record", clm, "--run", run, "--verdict", "supported", "--reason", "as stated", "--json"
        )
    assert cli("verify", "close", "--run", run, "--json")[0] == 0
    code, _, _, env = cli("control", "--run", run, "--json")
    assert code == 0 and env["data"]["action"] == "stop", env
    draft = (
        "# Exception groups\n\n"
        f"The except* syntax matches an exception group's members by type ({claim_ids[0]}). "
        f"A plain except clause matches the whole exception group ({claim_ids[1]}).\n"
    )
    deliverable = tmp_path / "draft.md"
    deliverable.write_text(draft, encoding="utf-8")
    code, _, _, env = cli("report", "finish", deliverable, "--run", run, "--json")
    assert code == 0, env
    _, result = read_markdown(the_run.path("result"))
    references = result.split("## References", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in references.splitlines() if line.startswith("- ")]
    assert len(lines) == 1, references
    assert "**SQ-01/SRC-01**, **SQ-02/SRC-01**" in lines[0] and url in lines[0]


def test_a_page_whose_snapshot_is_gone_is_fetched_again(cli, run, site):
    url = site.url_for(PAGE)
    code, _, _, first = cli("fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 0, first
    meta, _ = retrieve.load_source(trace.open_run(run), "SQ-01/SRC-01")
    (trace.open_run(run).path("snapshot", digest=meta["sha256"])).unlink()
    code, _, _, second = cli("fetch", url, "--run", run, "--sq", "SQ-02", "--json")
    assert code == 0 and "reused_from" not in second["data"]
    assert requests_for(site, PAGE) == 2
