"""The trace viewer: a run built with the core tools, rendered, read in real headless Chromium."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from chromium_page import assert_reads_cleanly, open_page
from core_testkit import (
    allow_robots,
    fast_verifier,
    grounded_claim,
    locked_private_run,
    page,
    serve,
    verify_all,
)

from research_engine import controller, selection
from research_engine.view import gather, render, write_view
from research_engine.view.gather import split_result

GOOD = "The event loop runs asynchronous tasks and callbacks in a single thread."
PLANTED = "Each asyncio task runs on its own operating system thread <script>alert(1)</script> by design."
HOSTILE_TITLE = "<img src=x onerror=alert(2)> Tasks & threads"


@pytest.fixture
def built_run(brief_file, httpserver, monkeypatch):
    """Cycle 1 of a run: two claims, one refused (the page lost its quote), selection and loop logs."""
    fast_verifier(monkeypatch)
    run = locked_private_run(brief_file, objective="How does asyncio run tasks?")
    from helpers_core import add_sq

    sq = add_sq(run, "How does the asyncio event loop run tasks?", "technical")
    good = grounded_claim(run, httpserver, sq, "/loop", GOOD)
    planted = grounded_claim(run, httpserver, sq, "/threads", PLANTED)
    # The page changes after retrieval: the verifier's fresh copy no longer holds the quote.
    httpserver.clear_all_handlers()
    allow_robots(httpserver)
    serve(
        httpserver,
        "/loop",
        page(
            "Page /loop",
            GOOD,
            "A second paragraph keeps the page from being thin "
            "and says nothing else of note about the subject at hand.",
        ),
    )
    serve(
        httpserver,
        "/threads",
        page(
            "Page /threads",
            "This page was rewritten and now says something else "
            "entirely about cooperative multitasking in one thread.",
        ),
    )
    selection.log_selection(
        run,
        sq,
        [
            {
                "url": httpserver.url_for("/loop"),
                "title": "Event loop",
                "snippet": "the loop",
                "rank": 1,
                "backend": "searxng",
                "kind": "web",
                "source_type": "primary",
                "reason": "official documentation",
            },
            {
                "url": httpserver.url_for("/threads"),
                "title": HOSTILE_TITLE,
                "snippet": "threads",
                "rank": 2,
                "backend": "searxng",
                "kind": "web",
                "reason": "claims threads",
            },
        ],
    )
    verify_all(run)
    controller.control(run)
    return run, sq, good, planted


class _Text(HTMLParser):
    """What a reader sees: the visible text, the ids and the internal link targets."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        if tag in ("style", "title"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("style", "title"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def _read(html_text: str) -> _Text:
    parser = _Text()
    parser.feed(html_text)
    return parser


def test_the_page_escapes_every_piece_of_fetched_text(built_run):
    run, *_ = built_run
    html_text = render(gather(run))
    seen = _read(html_text)
    assert "script" not in seen.tags and "img" not in seen.tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html_text
    assert "&lt;img src=x onerror=alert(2)&gt;" in html_text


def test_every_internal_link_has_a_target(built_run):
    run, _, good, planted = built_run
    seen = _read(render(gather(run)))
    assert seen.links and not [link for link in seen.links if link not in seen.ids]
    assert {good, planted, "q-" + good + "-1", "q-" + planted + "-1"} <= seen.ids


def test_the_page_is_self_contained(built_run):
    run, *_ = built_run
    html_text = render(gather(run))
    assert "<script" not in html_text.replace("&lt;script", "")
    assert "<link" not in html_text and 'src="' not in html_text


def test_view_works_on_a_run_with_nothing_but_a_brief(locked_run):
    seen = _read(render(gather(locked_run)))
    text = " ".join(seen.text)
    assert "no sub-questions yet" in text and "no controller cycle yet" in text


def test_chromium_shows_claims_verdicts_the_refusal_quotes_and_sources(built_run, tmp_path):
    run, sq, good, planted = built_run
    path = write_view(run)
    assert path == run.root / "view.html"
    seen = open_page(path, tmp_path, "built-run")
    assert_reads_cleanly(seen)
    dom, visible = seen.dom, seen.dom.visible
    assert good in dom.ids and planted in dom.ids
    assert f"supported {good} {GOOD}" in visible
    assert f"REFUSED {planted}" in visible and "Refused by the verifier: not established." in visible
    assert GOOD in visible and "alert(1)" in visible  # the quote, and the planted markup shown as text
    source_anchor = f"src-{sq}-SRC-01"
    assert source_anchor in dom.ids and source_anchor in dom.links
    assert f"q-{good}-1" in dom.links and f"q-{good}-1" in dom.ids
    assert "re-research" in visible  # the loop log's decision
    assert "official documentation" in visible  # the selection log's stated reason
    assert "provider_calls" in visible  # budgets


HOSTILE_DELIVERABLE = """---
schema_version: 1
run_id: x
---

# Threads <img src=x onerror="document.title='pwned'">

## Answer

The loop runs tasks in one thread [CLM-01]; see SQ-01/SRC-01 and `git add <file>` and git add &lt;file>.
<script>document.title='pwned'</script> [click](javascript:document.title='pwned') [rel](notes.md)
[doc](doi:10.1000/xyz) <http://example.org/page> ![pixel](http://example.org/p.png) [CLM-77]

<!-- research-engine: generated sections below; do not edit -->

## References

- **SQ-01/SRC-01** Event loop. <http://example.org/loop>
"""


def test_chromium_renders_a_hostile_deliverable_as_text_with_only_web_and_card_links(built_run, tmp_path):
    run, sq, good, _ = built_run
    data = gather(run)
    data["result"] = split_result(HOSTILE_DELIVERABLE.replace("CLM-01", good).replace("SQ-01", sq))
    page = tmp_path / "hostile.html"
    page.write_text(render(data), encoding="utf-8")
    seen = open_page(page, tmp_path, "hostile-deliverable")
    assert_reads_cleanly(seen)
    dom, visible = seen.dom, seen.dom.visible
    assert "pwned" not in seen.html.split("<body")[0]  # the title was never rewritten by a script
    assert "git add <file> and git add <file>" in visible  # a code span and an entity, each escaped once
    assert "<script>document.title='pwned'</script>" in visible
    assert f"[{good}]" in visible and good in dom.links and f"src-{sq}-SRC-01" in dom.links
    assert "[CLM-77]" in visible and "CLM-77" not in dom.links  # no card, so no link
    assert "https://doi.org/10.1000/xyz" in dom.hrefs and "http://example.org/page" in dom.hrefs
    assert not [h for h in dom.hrefs if "javascript" in h or h.endswith("notes.md")]
    assert "http://example.org/p.png" in dom.hrefs  # an image is a link to it, never loaded (no <img>)
    assert "research-engine: generated sections" not in visible
    assert visible.index("Answer") < visible.index("Sub-questions and claims")


def test_view_command_writes_view_html_in_the_run_or_where_asked(cli, locked_run, tmp_path):
    code, _, _, env = cli("view", str(locked_run.root), "--json")
    assert code == 0 and env["data"]["path"] == str(locked_run.root / "view.html")
    assert (locked_run.root / "view.html").read_text().startswith("<!doctype html>")
    elsewhere = tmp_path / "page.html"
    code, out, _, _ = cli("view", str(locked_run.root), "--output", str(elsewhere))
    assert code == 0 and elsewhere.is_file() and str(elsewhere) in out


def test_view_of_a_directory_that_is_not_a_run_is_bad_input(cli, tmp_path):
    code, _, _, env = cli("view", str(tmp_path), "--json")
    assert code == 2 and env["errors"][0]["code"] == "unknown-run"
