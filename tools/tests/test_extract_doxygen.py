"""Doxygen's member documentation reads as the page shows it: each member's heading, its prototype once, its
description under it.

A Doxygen class page gives each member an `<h2 class="memtitle">` over a `<div class="memitem">` holding the
prototype (`div.memproto`: a `table.memname` nested in a row beside the labels "virtual", "static") and the
description (`div.memdoc`). trafilatura writes a table nested in a cell after the table holding it, keeps
some members' prototypes and drops others, and drops most member headings; the reader used to place the
labels' row before the prototype, put the prototype back a second time, and lose the headings, so one
member's description ("Allocate a CharReader via operator new().") read under the member before it.

The pages are Debian's, byte for byte (tools/tests/fixtures/docs/README.md): libjsoncpp-doc's and
libcppunit-doc's, two projects' Doxygen output that no benchmark set reads. The expectations are read off
the page's HTML, not typed from the reader's output.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from research_engine import libraries
from research_engine.documents import Passage
from research_engine.extract import extract_html
from research_engine.extract.blocks import flat_text, html_blocks
from research_engine.extract.sections import box_titles_as_labels

DOCS = Path(__file__).parent / "fixtures" / "docs"
PAGES = ["jsoncpp-1.9-class_json_1_1_char_reader_builder.html", "cppunit-1.15-class_test_namer.html"]


def read(name: str) -> list[Passage]:
    return extract_html((DOCS / name).read_bytes(), url=f"http://127.0.0.1/{name}").passages


def unspaced(text: str) -> str:
    """A prototype row as written, its cells' separators and spaces aside."""
    return re.sub(r"[\s|]", "", text)


def members(name: str) -> list[tuple[str, list[str], str]]:
    """(heading, prototype rows, first sentence of the description) of each member the page documents."""
    tree = libraries.lxml_html().fromstring((DOCS / name).read_bytes())
    out = []
    for title in tree.xpath('//h2[@class="memtitle"]'):
        item = title.getnext()
        while item.get("class") != "memitem":
            item = item.getnext()
        rows = [flat_text(row) for row in item.xpath('.//table[@class="memname"]//tr')]
        said = [flat_text(p) for p in item.xpath('./div[@class="memdoc"]/p[not(@class)]')]
        out.append((flat_text(title), [r for r in rows if r], said[0] if said else ""))
    return out


@pytest.mark.parametrize("name", PAGES)
def test_each_member_heading_is_a_heading(name):
    headings = {p.text for p in read(name) if p.kind == "heading"}
    for title, _, _ in members(name):
        assert title in headings, title


@pytest.mark.parametrize("name", PAGES)
def test_each_prototype_is_read_once(name):
    rows = Counter(unspaced(row) for _, prototype, _ in members(name) for row in prototype)
    read_rows = Counter(unspaced(p.text) for p in read(name))
    for row, times in rows.items():
        assert read_rows[row] == times, row


@pytest.mark.parametrize("name", PAGES)
def test_each_prototype_and_description_stand_under_their_member(name):
    passages = read(name)
    for title, prototype, description in members(name):
        start = next(i for i, p in enumerate(passages) if p.kind == "heading" and p.text == title)
        first_row = next(p for p in passages[start + 1 :] if unspaced(p.text) == unspaced(prototype[0]))
        assert first_row.heading_path[-1:] == (title,), (title, first_row)
        if description:
            said = next(p for p in passages[start + 1 :] if description in p.text)
            assert said.heading_path[-1:] == (title,), (title, said)


def test_a_description_reads_under_its_own_member_after_its_prototype():
    passages = read("jsoncpp-1.9-class_json_1_1_char_reader_builder.html")
    texts = [p.text for p in passages]
    heading = texts.index("newCharReader()")
    assert passages[heading].level == 2
    assert texts[heading + 1] == "CharReader * Json::CharReaderBuilder::newCharReader | ( | ) | const"
    allocate = texts.index("Allocate a CharReader via operator new().")
    assert heading < allocate
    assert passages[allocate].heading_path == ("newCharReader()",)
    # The destructor before it keeps its own prototype, once, and no description of newCharReader's.
    destructor = texts.index("~CharReaderBuilder()")
    assert texts.count("Json::CharReaderBuilder::~CharReaderBuilder | ( | )") == 1
    assert texts[destructor + 1] == "Json::CharReaderBuilder::~CharReaderBuilder | ( | )"


@pytest.mark.parametrize(
    "name, group",
    [
        ("jsoncpp-1.9-class_json_1_1_char_reader_builder.html", "Member Function Documentation"),
        ("jsoncpp-1.9-class_json_1_1_char_reader_builder.html", "Detailed Description"),
        ("cppunit-1.15-class_test_namer.html", "Constructor & Destructor Documentation"),
        ("cppunit-1.15-class_test_namer.html", "Member Data Documentation"),
    ],
)
def test_group_headers_are_headings(name, group):
    assert [p for p in read(name) if p.kind == "heading" and p.text == group]


def test_a_prototype_nested_beside_its_labels_is_read_in_place():
    # The member table as Doxygen writes it: trafilatura gives the labels' row ("virtual") before the
    # prototype nested in the cell beside it.
    member = (
        '<h2 class="memtitle">{name}()</h2><div class="memitem"><div class="memproto"><table class="mlabels">'
        '<tr><td class="mlabels-left"><table class="memname"><tr><td class="memname">{proto}</td><td>(</td>'
        '<td class="paramname"></td><td>)</td><td></td></tr></table></td><td class="mlabels-right">'
        '<span class="mlabels"><span class="mlabel">{label}</span></span></td></tr></table></div>'
        '<div class="memdoc">{doc}</div></div>'
    )
    html = (
        "<html><head><title>JsonCpp: Json::Reader Class Reference</title></head><body>"
        "<h1>Json::Reader Class Reference</h1>"
        "<p>Build a reader implementation with the settings that the caller chooses.</p>"
        + member.format(name="~Reader", proto="Json::Reader::~Reader", label="override", doc="")
        + '<h2 class="groupheader">Member Function Documentation</h2>'
        + member.format(
            name="newReader",
            proto="Reader * Json::Reader::newReader",
            label="virtual",
            doc="<p>Allocate a Reader via operator new().</p><p>Defined in reader.cpp.</p>",
        )
        + "</body></html>"
    )
    passages = extract_html(html, url="http://127.0.0.1/reader.html").passages
    texts = [p.text for p in passages]
    assert texts.count("Json::Reader::~Reader | ( | )") == 1
    assert texts.index("~Reader()") < texts.index("Json::Reader::~Reader | ( | )") < texts.index("override")
    assert [p.text for p in passages if p.kind == "heading"][-2:] == [
        "Member Function Documentation",
        "newReader()",
    ]
    new_reader = texts.index("Reader * Json::Reader::newReader | ( | )")
    assert texts.index("newReader()") < new_reader < texts.index("virtual")
    assert passages[texts.index("Allocate a Reader via operator new().")].heading_path == ("newReader()",)


def test_the_last_of_several_sections_keeps_its_heading_though_the_page_goes_on_after_them():
    # All members stand in one <div class="contents">, the page's footer after it: the last member's heading
    # heads its member, where a box's title (DocBook's <div class="note"><h3>Note</h3>) heads nothing after
    # the box.
    html = (
        '<html><body><div class="contents"><h2>first()</h2><div class="memitem"><p>Does the first thing.</p>'
        '</div><h2>last()</h2><div class="memitem"><p>Does the last thing.</p></div></div>'
        "<table><tr><td>Send comments to the developers</td></tr></table>"
        '<div class="section"><div class="note"><h3>Note</h3><p>A remark.</p></div>'
        "<p>The section goes on.</p></div></body></html>"
    )
    blocks = box_titles_as_labels(html_blocks(libraries.lxml_html().fromstring(html)))
    kinds = {b.text: b.kind for b in blocks}
    assert kinds["first()"] == kinds["last()"] == "heading"
    assert kinds["Note"] == "paragraph"
