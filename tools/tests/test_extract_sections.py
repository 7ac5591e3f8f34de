"""Sections of a structured document that trafilatura drops come back (issue 12, extraction).

trafilatura discards an element whose id holds a boilerplate word ("cookie", "related", "tags", "nav"...),
and prunes short blocks from among long ones. Documentation names its sections after their headings and
writes short reference entries, so Django's `SESSION_COOKIE_AGE` setting and the `select_related()`
reference vanished from the pages that answer questions about them. The real pages are Debian's, byte for byte
(tools/tests/fixtures/docs/README.md); the negative cases are small pages built here, since the point is
what must stay out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from research_engine import libraries
from research_engine.extract import extract_html
from research_engine.extract.content import main_content

DOCS = Path(__file__).parent / "fixtures" / "docs"


def passages(html: bytes | str) -> list[tuple[str, str]]:
    return [(p.kind, p.text) for p in extract_html(html, url="http://127.0.0.1/page.html").passages]


def index_of(found: list[tuple[str, str]], text: str, kind: str | None = None) -> int:
    hits = [i for i, (k, t) in enumerate(found) if text in t and (kind is None or k == kind)]
    assert hits, f"{text!r} not among {[t[:60] for _, t in found]}"
    return hits[0]


def test_a_section_whose_id_holds_a_boilerplate_word_is_kept_with_its_heading():
    # <div class="section" id="s-denial-of-service-possibility-with-strip-tags">: "tags" is in trafilatura's
    # discard vocabulary, and the h2 holds inline code.
    found = passages((DOCS / "django-3.2-releases-1.6.11.html").read_bytes())
    heading = index_of(found, "Denial-of-service possibility with strip_tags()", "heading")
    first = index_of(found, "Last year strip_tags() was changed to work iteratively.")
    remedy = index_of(found, "To remedy this issue, strip_tags() will now return the original input")
    second = index_of(found, "Mitigated possible XSS attack via user-supplied redirect URLs", "heading")
    later = index_of(found, "Django relies on user input in some cases")
    assert heading < first < remedy < second < later  # in document order
    assert not [t for _, t in found if t.strip(" ¶") == "strip_tags()"]  # no stray fragment of the heading


def test_a_short_reference_entry_between_kept_entries_comes_back_in_place():
    found = passages((DOCS / "django-3.2-ref-applications.html").read_bytes())
    entry = index_of(found, "Returns an iterable of AppConfig instances.")
    later = index_of(found, "Returns an AppConfig for the application")
    assert index_of(found, "get_app_configs") <= entry < later


def test_the_callers_tree_keeps_its_ids():
    tree = libraries.lxml_html().fromstring((DOCS / "django-3.2-releases-1.6.11.html").read_bytes())
    before = [el.get("id") for el in tree.iter() if isinstance(el.tag, str) and el.get("id")]
    main_content(tree, "http://127.0.0.1/page.html")
    assert [el.get("id") for el in tree.iter() if isinstance(el.tag, str) and el.get("id")] == before
    assert "s-denial-of-service-possibility-with-strip-tags" in before


def article_page(between: str, after: str = "") -> str:
    paragraphs = "".join(
        f"<p>Paragraph {n} of the article explains the measured effect of the policy on regional output, "
        f"with figures from survey round {n} and the agency's own commentary on what changed since then.</p>"
        for n in range(1, 7)
    )
    half = len(paragraphs) // 2
    cut = paragraphs.index("<p>", half)
    return (
        "<html><head><title>Policy effects</title></head><body>"
        "<header><nav><a href='/'>Home</a></nav></header>"
        f"<article><h1>Policy effects</h1>{paragraphs[:cut]}{between}{paragraphs[cut:]}{after}</article>"
        "<footer><p>Copyright 2026 Example News. All rights reserved.</p></footer></body></html>"
    )


@pytest.mark.parametrize(
    ("between", "stray"),
    [
        ('<div class="ad-slot"><p>Advertisement</p></div>', "Advertisement"),
        (
            '<section id="related-stories"><h2>Related stories</h2><ul>'
            + "".join(f"<li><a href=/s{n}>Another story about regional output {n}</a></li>" for n in range(5))
            + "</ul></section>",
            "Another story about regional output",
        ),
        ('<figure><img src="a.png"><figcaption>Photo: Agency archive</figcaption></figure>', "Photo: Agency"),
    ],
)
def test_boilerplate_built_unlike_the_content_beside_it_stays_out(between, stray):
    found = passages(article_page(between))
    assert index_of(found, "Paragraph 6 of the article")  # the article itself is there
    assert not [t for _, t in found if stray in t]
    assert not [t for _, t in found if "Copyright 2026" in t or t == "Home"]


def test_a_loose_label_joins_the_paragraph_it_stands_before():
    # <div class="versionchanged"><span class="title">Changed in Django 3.1:</span> <p>Support for async views
    # was added.</p></div>: trafilatura kept the paragraph and dropped the version it is about.
    found = passages((DOCS / "django-3.2-topics-async.html").read_bytes())
    assert ("paragraph", "Changed in Django 3.1: Support for async views was added.") in found
    assert not [t for _, t in found if t == "Support for async views was added."]


def test_headings_trafilatura_drops_come_back_where_they_stand():
    # trafilatura keeps none of this Sphinx page's 31 headings; each comes back right over its own text,
    # not piled after the last passage it kept.
    found = passages((DOCS / "django-3.2-ref-csrf.html").read_bytes())
    for heading, first in [
        ("How to use it", "To take advantage of CSRF protection in your views"),
        ("Rejected requests", "By default, a ‘403 Forbidden’ response is sent to the user"),
        ("Limitations", "Subdomains within a site will be able to set cookies"),
    ]:
        at = index_of(found, heading, "heading")
        assert found[at + 1][1].startswith(first), (heading, found[at + 1])
    headings = [i for i, (kind, _) in enumerate(found) if kind == "heading"]
    order = [t for k, t in found if k == "heading"]
    assert order.index("How to use it") < order.index("Rejected requests") < order.index("Limitations")
    assert len(headings) >= 20


def test_a_section_heading_right_over_its_first_subsection_heading_stays():
    found = passages((DOCS / "django-3.2-ref-csrf.html").read_bytes())
    at = index_of(found, "Scenarios", "heading")
    assert found[at + 1] == ("heading", "CSRF protection should be disabled for just a few views")
    assert found[at + 2][0] == "paragraph"


def test_a_list_announced_by_a_kept_sentence_comes_back_with_its_items():
    # "... attempts to support a smaller, but far more common, subset:" and the three items trafilatura
    # dropped.
    found = passages((DOCS / "django-3.2-releases-1.4.3.html").read_bytes())
    at = index_of(found, "but far more common, subset:")
    assert [k for k, _ in found[at + 1 : at + 4]] == ["list-item"] * 3
    assert found[at + 2][1] == "IP addresses – both IPv4 and IPv6 – are permitted."
