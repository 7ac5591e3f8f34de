"""Markup from a source never becomes live markup: titles, quotes and URLs are escaped where the tools write
Markdown, a deliverable's raw HTML and non-web links are written as text, and the HTML view escapes too.

The rendering checks use markdown-it in CommonMark mode with raw HTML on and its own link validation off, so
they see what a permissive viewer (one that trusts the file) would show."""

from __future__ import annotations

import re

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all
from markdown_it import MarkdownIt

from research_engine import controller, decompose, escaping, report, view
from research_engine.artifacts import read_markdown
from research_engine.validate import validate_run

HOSTILE_TITLE = "<img src=x onerror=alert(1)> [click me](javascript:alert(2))"
HOSTILE_SENTENCE = (
    "The Freedonia grid operator counted 42 gigawatts of solar capacity <script>alert(3)</script> in 2023."
)


def rendered(markdown: str) -> str:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.validateLink = lambda url: True  # a permissive viewer: every link target is taken as given
    return md.render(markdown)


def assert_inert(html_text: str) -> None:
    assert not re.search(r"<(img|script|iframe|svg)\b", html_text, re.I), html_text
    assert not re.search(r"""(href|src)\s*=\s*["']?\s*(javascript|data|vbscript|file):""", html_text, re.I), (
        html_text
    )


@pytest.mark.parametrize(
    "markdown",
    [
        "<img src=x onerror=alert(1)>",
        "[a](javascript:alert(1)) ![b](javascript:alert(1)) [c]( <javascript:alert(1)> )",
        "[d](jav&#x61;script:alert(1)) [e](JAVASCRIPT:alert(1)) [f](data:text/html,<script>x</script>)",
        "<javascript:alert(1)> <vbscript:x> <file:///etc/passwd>",
        "[g][ref]\n\n[ref]: javascript:alert(1)",
        "<details><summary>x</summary><script>alert(1)</script></details>",
        "<!-- comment --><?php echo 1 ?>",
    ],
)
def test_a_hostile_document_renders_inert(markdown):
    assert_inert(rendered(escaping.document(markdown)))


def test_web_links_code_and_fragments_survive_the_sanitizer():
    markdown = (
        "See [the paper](https://example.org/a_(b)) and <https://example.org/c>, [doi](doi:10.1000/xyz), "
        "[below](#caveats) and `<img src=x>` in code.\n\n```\n<script>kept as code</script>\n```\n"
    )
    html_text = rendered(escaping.document(markdown))
    assert 'href="https://example.org/a_(b)"' in html_text and 'href="https://example.org/c"' in html_text
    assert 'href="https://doi.org/10.1000/xyz"' in html_text and 'href="#caveats"' in html_text
    assert "<code>&lt;img src=x&gt;</code>" in html_text and "&lt;script&gt;kept as code" in html_text


def test_escaped_text_and_links():
    assert_inert(rendered(escaping.text(HOSTILE_TITLE)))
    assert "javascript:alert(2)" in rendered(escaping.text(HOSTILE_TITLE))  # shown, as text
    assert escaping.link("javascript:alert(1)") == "javascript:alert(1)"
    assert escaping.link("doi:10.1/x") == "<https://doi.org/10.1/x>"
    assert escaping.link("https://e.org/a b<c>") == "<https://e.org/a%20b%3Cc%3E>"


# ---------------------------------------------------------------------------- through report finish


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file, depth="quick")


def test_a_hostile_title_and_sentence_reach_result_md_as_text(run, httpserver, tmp_path):
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    clm = grounded_claim(run, httpserver, sq, "/solar", HOSTILE_SENTENCE)
    verify_all(run)
    # A deliverable a model wrote, copying the page's markup and a link to a javascript: URL.
    deliverable = tmp_path / "memo.md"
    deliverable.write_text(
        f"# Solar\n\n{HOSTILE_SENTENCE} [{clm}] <img src=x onerror=alert(4)>\n\n"
        f"More in [the source](javascript:alert(5)) and <javascript:alert(6)> [{clm}].\n",
        encoding="utf-8",
    )
    assert controller.control(run)["action"] == "stop"
    report.finish(run, deliverable)
    result = run.path("result").read_text(encoding="utf-8")
    assert_inert(rendered(result))
    assert "&lt;script>alert(3)" in result  # the claim's text in the evidence map, escaped
    assert validate_run(run).ok, validate_run(run).problems


def test_a_hostile_page_title_in_the_references_and_the_source_record(run, httpserver, tmp_path):
    from core_testkit import allow_robots, fetch_into_run, page, serve

    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    allow_robots(httpserver)
    url = serve(
        httpserver,
        "/hostile",
        page(HOSTILE_TITLE, HOSTILE_SENTENCE, "A second paragraph keeps the page from being thin enough."),
    )
    ref = fetch_into_run(run, sq, url)
    from research_engine import claims

    clm = claims.add_claim(run, sq, HOSTILE_SENTENCE, [ref], [HOSTILE_SENTENCE])
    verify_all(run)
    assert controller.control(run)["action"] == "stop"
    deliverable = tmp_path / "memo.md"
    deliverable.write_text(f"# Solar\n\nThe operator counted 42 gigawatts [{clm}].\n", encoding="utf-8")
    report.finish(run, deliverable)
    result = run.path("result").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt; \\[click me\\](javascript:alert(2))" in result
    assert_inert(rendered(result))
    # The source record's heading (its title) is escaped; its passages are the stored text the grounding
    # gate reads, kept verbatim (docs/conventions.md).
    _, record_body = read_markdown(run.path("source", sq=sq, src="SRC-01"))
    heading = record_body.split("## Extracted material")[0]
    assert "&lt;img" in heading
    assert_inert(rendered(heading))
    assert_inert(rendered(read_markdown(run.path("draft"))[1]))  # the claims draft quotes the sentence
    # The HTML view escapes every string itself.
    view.write_view(run)
    page_html = run.path("view").read_text(encoding="utf-8")
    assert "<img src=x" not in page_html and "&lt;img src=x onerror=alert(1)&gt;" in page_html
    assert "<script>alert(3)" not in page_html
    assert 'href="javascript:' not in page_html
