"""The deliverable's Markdown as the page shows it: CommonMark, source text never markup, only web and card
links, every known claim and source id a link to its card."""

from __future__ import annotations

from research_engine.view.deliverable import render_markdown


def _html(text: str) -> str:
    return render_markdown(text, claims={"CLM-01"}, sources={"SQ-01/SRC-02"}, questions={"SQ-01"})


def test_a_cited_claim_is_a_link_to_its_card_and_an_unknown_one_stays_text():
    out = _html("Readers never block writers [CLM-01], nor [CLM-09].")
    assert '<a href="#CLM-01" class="clm">[CLM-01]</a>' in out and "[CLM-09]" in out
    assert 'href="#CLM-09"' not in out


def test_source_and_sub_question_ids_link_to_their_cards_outside_code_only():
    out = _html("**SQ-01** from SQ-01/SRC-02, not `SQ-01/SRC-02`")
    assert '<a href="#SQ-01" class="ref">SQ-01</a>' in out
    assert '<a href="#src-SQ-01-SRC-02" class="ref">SQ-01/SRC-02</a>' in out
    assert "<code>SQ-01/SRC-02</code>" in out


def test_raw_html_is_text_and_an_entity_is_escaped_once():
    out = _html("<script>alert(1)</script> git add &lt;file> and `git add <file>`")
    assert "<script" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "git add &lt;file&gt; and <code>git add &lt;file&gt;</code>" in out


def test_only_web_doi_and_fragment_links_survive():
    out = _html(
        "[a](javascript:alert(1)) [b](notes.md) [c](doi:10.1/x) [d](https://e.org) [e](#h-x) <ftp://f>"
    )
    assert 'href="javascript' not in out and 'href="notes.md"' not in out and 'href="ftp' not in out
    assert 'href="https://doi.org/10.1/x"' in out and 'href="https://e.org"' in out and 'href="#h-x"' in out


def test_an_image_is_never_loaded_and_headings_get_ids():
    out = _html("# Answer\n\n![pixel](https://e.org/p.png)")
    assert "<img" not in out and '<h1 id="h-answer">Answer</h1>' in out


def test_a_table_renders_as_a_table():
    assert "<table>" in _html("| a | b |\n|---|---|\n| 1 | 2 |")
