"""An HTML page's blocks in document order, each with the element it stands for.

`html_blocks` walks any lxml HTML element once and returns every block of text: a heading with its
level, a paragraph or a run of text and inline elements between blocks, a list item, a table row, a
preformatted block (code), a definition list's term (`<dt>`) and the blocks of its description (`<dd>`),
both numbered with the description's number. Each block knows its element, its share of words that are
link text, and whether it lies in a figure. Page chrome (navigation, footers, asides, forms) is not read.
The gap fill (`extract.gaps`) decides from these which blocks trafilatura dropped wrongly, and what its
own passages were in the page; the fallbacks keep every block. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SKIP = frozenset({
    "script", "style", "noscript", "template", "head", "svg", "iframe", "select", "button",
    "nav", "footer", "aside", "form",  # page chrome
})  # fmt: skip
_BLOCKS = HEADINGS | frozenset({
    "address", "article", "blockquote", "body", "caption", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "header", "hr", "li", "main", "ol", "p", "pre", "section", "summary",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})  # fmt: skip
WORD_RE = re.compile(r"\w+")
NAVIGATION_LINK_SHARE = 0.9  # a block this much link text is a navigation bar ("[ << ] | [ < ] | [ Up ]")
# A block at least this much link text may be a bar of labelled links ("Next: X, Previous: Y, Up: Z"): only
# then are its other words read, so a paragraph with a link or two is not walked again.
LABELLED_BAR_SHARE = 0.5


@dataclass
class Block:
    """A block of a page's text. `kind`: heading | paragraph | list-item | table-row | code | term."""

    kind: str
    text: str
    element: Any = None
    level: int = 0  # a heading's level
    linked: float = -1.0  # the share of its words that are link text; -1: not counted yet (`link_share`)
    figure: bool = False  # inside a figure: a caption or a credit
    # The number of the description (`<dd>`) the block lies in, or that a term heads; 0: none.
    definition: int = 0

    @property
    def key(self) -> str:
        return words(self.text)

    @property
    def link_share(self) -> float:
        if self.linked < 0:
            self.linked = link_share(self.element, self.text) if self.element is not None else 0.0
        return self.linked


def html_blocks(root: Any) -> list[Block]:
    """Every block of text under `root`, in document order; scripts, styles, hidden decoration, navigation,
    footers, asides and forms are skipped."""
    blocks: list[Block] = []
    run: list[str] = []
    linked = figure = definition = 0
    item = False  # the next paragraph opens a list item
    numbers: dict[Any, int] = {}  # <dd> -> its number

    def number(dd: Any) -> int:
        return numbers.setdefault(dd, len(numbers) + 1)

    def add(kind: str, text: str, el: Any, level: int = 0, share: float = -1.0, term_of: int = 0) -> None:
        nonlocal item
        text = clean(text)
        if text:
            kind = "list-item" if item and kind == "paragraph" else kind
            blocks.append(Block(kind, text, el, level, share, figure > 0, term_of or definition))
            item = False

    def flush(container: Any) -> None:
        nonlocal linked
        text = clean("".join(run))
        run.clear()
        if text:
            share = min(1.0, linked / max(1, len(WORD_RE.findall(text))))
            if (
                LABELLED_BAR_SHARE <= share < 1
                and labels_only(container)
                and words(flat_text(container)) == words(text)
            ):
                share = 1.0  # "Next: ..., Previous: ..., Up: ...": links and their labels
            add("paragraph", text, container, share=share)
        linked = 0

    def walk(el: Any, container: Any) -> None:
        nonlocal linked, figure
        tag = el.tag
        if not isinstance(tag, str) or tag in _SKIP or el.get("aria-hidden") == "true" or _is_mark(el, tag):
            if el.tail:
                run.append(el.tail)
            return
        if tag in _BLOCKS:
            flush(container)
            if tag == "figure":
                figure += 1
                block(el, tag)
                figure -= 1
            else:
                block(el, tag)
            flush(el)
        else:
            if tag == "br":
                run.append(" ")
            elif tag == "a" and _is_link(el):  # (hidden links were skipped above)
                linked += _word_count(el)
            if el.text:
                run.append(el.text)
            for child in el:
                walk(child, container)
        if el.tail:
            run.append(el.tail)

    def block(el: Any, tag: str) -> None:
        nonlocal definition, item
        if tag in HEADINGS:
            add("heading", flat_text(el), el, int(tag[1]))
        elif tag == "dt":
            dd = _described_by(el)
            add("term", flat_text(el), el, term_of=number(dd) if dd is not None else 0)
        elif tag == "caption":
            add("paragraph", flat_text(el), el)
        elif tag == "pre":
            add("code", "".join(el.itertext()), el, share=0.0)
        elif tag == "tr" and _layout_row([c for c in el if c.tag in ("td", "th")]):
            for child in el:  # a page laid out in a table: its cells are containers, not a row's values
                walk(child, el)
        elif tag == "tr":
            cells = [c for c in el if c.tag in ("td", "th")]
            texts = [flat_text(c) for c in cells]
            pre = _framed_example(cells, texts)
            if pre is not None:  # a one-cell table framing an example (DocBook's screens) is the example
                add("code", "".join(pre.itertext()), pre, share=0.0)
            else:
                add("table-row", " | ".join(t for t in texts if t), el)
        elif tag == "li" and next(el.iterdescendants(*_BLOCKS), None) is None:
            add("list-item", flat_text(el), el)
        else:  # a container; a list item holding blocks (paragraphs, an example, a list) is read as one
            item = tag == "li"
            outer_definition = definition
            if tag == "dd":
                definition = number(el)
            if el.text:
                run.append(el.text)
            for child in el:
                walk(child, el)
            flush(el)
            definition, item = outer_definition, False

    walk(root, root)
    flush(root)
    return blocks


# What a data table's cell does not hold: a page laid out in a table (libxml2's pages: a column of navigation
# links beside a cell holding a nested table of paragraphs and lists) puts headings, tables, or paragraphs and
# lists together in its cells.
_LAYOUT_INSIDE = HEADINGS | frozenset({"table"})
_PROSE_BLOCKS = frozenset({"p", "ul", "ol", "dl", "pre", "blockquote"})


def _layout_row(cells: list[Any]) -> bool:
    """A row of a layout table: a cell holds a heading or a table, or one cell alone holds paragraphs and
    lists (a frame around prose; DocBook's one-cell example frames hold a `<pre>` only, read apart)."""
    if any(next(c.iterdescendants(*_LAYOUT_INSIDE), None) is not None for c in cells):
        return True
    if len(cells) != 1:
        return False
    kinds = {d.tag for d in cells[0].iterdescendants(*_PROSE_BLOCKS)}
    return len(kinds - {"pre"}) >= 2


def _framed_example(cells: list[Any], texts: list[str]) -> Any:
    """The `<pre>` a row's one cell holds and nothing else (the same words), or None."""
    if len([t for t in texts if t]) != 1:
        return None
    cell, text = next((c, t) for c, t in zip(cells, texts, strict=True) if t)
    pres = list(cell.iter("pre"))
    if len(pres) != 1:
        return None
    return pres[0] if words(" ".join(pres[0].itertext())) == words(text) else None


def _described_by(dt: Any) -> Any:
    """The `<dd>` after a `<dt>` (past the other terms it shares), or None."""
    nxt = dt.getnext()
    while nxt is not None and (not isinstance(nxt.tag, str) or nxt.tag.lower() == "dt"):
        nxt = nxt.getnext()
    return nxt if nxt is not None and nxt.tag.lower() == "dd" else None


def link_share(el: Any, text: str) -> float:
    """The share of `text`'s words that are the text of links inside `el` (marks such as "¶" are no words).
    A bar of links whose other words only label them ("Next: ..., Previous: ..., Up: ... [Contents]", as
    texinfo heads every node) is all navigation."""
    n = len(WORD_RE.findall(text))
    links = [a for a in el.iter("a") if _is_link(a) and a.get("aria-hidden") != "true"]
    linked = sum(_word_count(a) for a in links)
    if links and LABELLED_BAR_SHARE * n <= linked < n and labels_only(el):
        return 1.0
    return min(1.0, linked / n) if n else 0.0


# The words that label a link in a navigation bar.
NAVIGATION_LABELS = frozenset({"next", "previous", "prev", "up", "top", "home", "contents", "index"})


def labels_only(el: Any) -> bool:
    """Whether every word of `el` outside its links is a navigation label."""
    outside: list[str] = []

    def walk(node: Any) -> None:
        outside.append(node.text or "")
        for child in node:
            if not (isinstance(child.tag, str) and child.tag == "a" and _is_link(child)):
                walk(child)
            outside.append(child.tail or "")

    walk(el)
    said = WORD_RE.findall(" ".join(outside).lower())
    return bool(said) and all(w in NAVIGATION_LABELS for w in said)


def _is_link(a: Any) -> bool:
    """An `<a>` with an `href`: one without is a place to link to, not a link (DocBook wraps each heading's
    words in `<a name="...">`)."""
    return a.get("href") is not None


def _word_count(el: Any) -> int:
    return len(WORD_RE.findall(" ".join(el.itertext())))


def _is_mark(el: Any, tag: str) -> bool:
    """A permalink mark: a link to a place on the page whose text is no word ("¶", "#", "§")."""
    if tag != "a" or not (el.get("href") or "").startswith("#"):
        return False
    return not WORD_RE.search("".join(el.itertext()))


def flat_text(el: Any) -> str:
    """The text of `el` as one line: inline markup joins its words as written, a line break or a block
    inside keeps them apart; scripts, hidden decoration and permalink marks are skipped."""
    parts: list[str] = []

    def collect(node: Any) -> None:
        tag = node.tag.lower() if isinstance(node.tag, str) else ""
        if tag and tag not in _SKIP and node.get("aria-hidden") != "true" and not _is_mark(node, tag):
            apart = tag == "br" or tag in _BLOCKS
            if apart:
                parts.append(" ")
            if node.text:
                parts.append(node.text)
            for child in node:
                collect(child)
            if apart:
                parts.append(" ")
        if node is not el and node.tail:
            parts.append(node.tail)

    collect(el)
    return clean("".join(parts))


def words(text: str) -> str:
    """The lower-cased words of `text`, one space apart: what two texts are compared on."""
    return " ".join(WORD_RE.findall(text.lower()))


def clean(text: str | None) -> str:
    """Whitespace collapsed to single spaces; "" for None."""
    return " ".join(text.split()) if text else ""
