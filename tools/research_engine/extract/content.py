"""The main content of an HTML page as (kind, text) chunks, in document order.

trafilatura (`favor_precision=True`, comments off) removes the boilerplate; we walk the
XML tree it returns to keep the block structure (heading, paragraph, list item, table
row, code). When it finds nothing, readability-lxml's `summary(html_partial=True)` is
walked the same way, and when that is empty too every visible block of `<body>` is kept.
Inline markup (code, links, emphasis) stays inside its sentence. Two general rules
follow: a heading that heads nothing is dropped, and a leading heading that repeats the
title is dropped. Pure: no network, no writes.
"""

from __future__ import annotations

import re
from typing import Any

from research_engine import libraries


def main_content(tree: Any, url: str | None) -> tuple[list[tuple[str, str]], str]:
    trafilatura = libraries.trafilatura()

    doc = trafilatura.bare_extraction(
        tree, url=url, include_comments=False, favor_precision=True, with_metadata=False
    )
    body = getattr(doc, "body", None) if doc is not None else None
    if body is not None:
        chunks = _trafilatura_chunks(body)
        if chunks:
            return chunks, f"trafilatura-{trafilatura.__version__}+structure"
    chunks = _readability_chunks(tree)
    if chunks:
        readability = libraries.readability()

        return chunks, f"readability-lxml-{getattr(readability, '__version__', '')}".rstrip("-")
    return _html_block_chunks(_page_body(tree)), "all-blocks"


def _trafilatura_chunks(body: Any) -> list[tuple[str, str]]:
    """Walk trafilatura's XML (head, p, list/item, table/row/cell, code, quote) into chunks.

    Inline markup stays inside its sentence: trafilatura writes inline `<code>` (a name, a value, a
    keyword in running text) with the same tag as a code block, so a `code` element is a block only when
    its text spans lines or it stands alone between blocks; otherwise it is text of the passage around it,
    and a run of inline elements and their tails between two blocks is one passage ("shared_buffers
    (integer)", not three fragments).
    """
    chunks: list[tuple[str, str]] = []

    def walk(el: Any) -> None:
        tag = el.tag
        if tag == "head":
            chunks.append(("heading", _xml_text(el)))
        elif tag == "list":
            for item in el:
                if item.tag != "item":
                    walk(item)
                    continue
                chunks.append(("list-item", _xml_text(item, skip=("list", "table"))))
                for sub in item:
                    if sub.tag in ("list", "table"):
                        walk(sub)
        elif tag == "table":
            for row in el.iter("row"):
                cells = [_xml_text(cell) for cell in row if cell.tag == "cell"]
                chunks.append(("table-row", " | ".join(c for c in cells if c)))
        elif tag == "code" and _is_code_block(el):
            chunks.append(("code", _xml_text(el)))
        elif tag in ("p", "quote") and not any(_is_block(child) for child in el):
            chunks.append(("paragraph", _xml_text(el)))
        elif tag in _XML_BLOCKS or tag in ("body", "div", "doc", "main"):
            walk_mixed(el)
        else:  # an inline element reached on its own
            text = _xml_text(el)
            if text:
                chunks.append(("paragraph", text))

    def walk_mixed(el: Any) -> None:
        """Children in order: runs of text and inline elements become one paragraph each."""
        run: list[str] = [el.text or ""]

        def flush() -> None:
            text = clean(" ".join(run))
            if text:
                chunks.append(("paragraph", text))
            run.clear()

        for child in el:
            if _is_block(child) or (child.tag == "code" and _is_code_block(child)):
                flush()
                walk(child)
            else:
                run.append(_xml_text(child))
            run.append(child.tail or "")
        flush()

    walk(body)
    return [(kind, text) for kind, text in chunks if text]


def _is_code_block(el: Any) -> bool:
    text = "".join(el.itertext())
    return "\n" in text.strip() or el.get("lang") is not None


def _is_block(el: Any) -> bool:
    return el.tag in _XML_BLOCKS and el.tag != "code"


_XML_BLOCKS = frozenset({"head", "p", "list", "item", "table", "row", "cell", "code", "quote", "div"})


def _xml_text(el: Any, skip: tuple[str, ...] = ()) -> str:
    """Text of an element; line breaks become spaces so words never glue."""
    parts: list[str] = []

    def collect(node: Any, top: bool) -> None:
        if not top and node.tag in skip:
            if node.tail:
                parts.append(node.tail)
            return
        if node.tag in ("lb", "cell", "item", "p", "head"):
            parts.append(" ")
        if node.text:
            parts.append(node.text)
        for child in node:
            collect(child, False)
        if node.tail and not top:
            parts.append(node.tail)

    collect(el, True)
    return clean("".join(parts))


def _readability_chunks(tree: Any) -> list[tuple[str, str]]:
    lxml_html = libraries.lxml_html()
    Document = libraries.readability().Document

    try:
        summary = Document(lxml_html.tostring(tree, encoding="unicode")).summary(html_partial=True)
    except Exception:  # readability raises bare Unparseable/ValueError on odd pages: fall through
        return []
    if not summary or not summary.strip():
        return []
    return _html_block_chunks(lxml_html.fromstring(summary))


_SKIP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "head",
        "nav",
        "footer",
        "aside",
        "form",
        "button",
        "select",
        "svg",
        "iframe",
    }
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HTML_BLOCKS = _HEADINGS | frozenset({
    "address", "article", "blockquote", "body", "caption", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "header", "hr", "li", "main", "ol", "p", "pre", "section", "summary",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})  # fmt: skip


def _html_block_chunks(root: Any) -> list[tuple[str, str]]:
    """Any lxml HTML element -> (kind, text) chunks at block boundaries."""
    chunks: list[tuple[str, str]] = []
    buffer: list[str] = []

    def flush(kind: str = "paragraph") -> None:
        text = clean("".join(buffer))
        buffer.clear()
        if text:
            chunks.append((kind, text))

    def walk(el: Any) -> None:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if tag in _SKIP_TAGS or not tag:
            if el.tail:
                buffer.append(el.tail)
            return
        if tag in _HEADINGS or tag in ("li", "pre", "dt", "dd", "caption"):
            flush()
            kind = {"li": "list-item", "pre": "code"}.get(tag, "heading" if tag in _HEADINGS else "paragraph")
            chunks.append((kind, clean(" ".join(el.itertext()))))
            nested = [c for c in el.iter("ul", "ol", "table") if c is not el] if tag == "li" else []
            if nested:  # keep nested lists/tables as their own chunks; drop the duplicated text
                chunks[-1] = (kind, clean(_text_without(el, nested)))
                for sub in nested:
                    if not any(a in nested for a in sub.iterancestors()):
                        walk_children(sub)
        elif tag == "tr":
            flush()
            cells = [
                clean(" ".join(c.itertext())) for c in el if isinstance(c.tag, str) and c.tag in ("td", "th")
            ]
            chunks.append(("table-row", " | ".join(c for c in cells if c)))
        elif tag == "br":
            buffer.append(" ")
        elif tag in _HTML_BLOCKS:
            flush()
            if el.text:
                buffer.append(el.text)
            walk_children(el)
            flush()
        else:
            if el.text:
                buffer.append(el.text)
            walk_children(el)
        if el.tail:
            buffer.append(el.tail)

    def walk_children(el: Any) -> None:
        for child in el:
            walk(child)

    walk(root)
    flush()
    return [(kind, text) for kind, text in chunks if text]


def _text_without(el: Any, nested: list[Any]) -> str:
    parts: list[str] = []

    def collect(node: Any) -> None:
        if node in nested:
            return
        if isinstance(node.tag, str) and node.text:
            parts.append(node.text)
        for child in node:
            collect(child)
            if child.tail:
                parts.append(child.tail)

    collect(el)
    return " ".join(parts)


def _page_body(tree: Any) -> Any:
    bodies = tree.xpath("//body")
    return bodies[0] if bodies else tree


def drop_empty_sections(chunks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop headings that head nothing (followed by another heading or the end).

    Runs of bare headings are related-article lists, newsletter boxes and
    teasers, not content. Measured on the dev split: +0.002 F1 (precision).
    Never empties a page that has only headings.
    """
    kept = [
        (kind, text)
        for i, (kind, text) in enumerate(chunks)
        if kind != "heading" or (i + 1 < len(chunks) and chunks[i + 1][0] != "heading")
    ]
    return kept if kept else chunks


def drop_title_heading(chunks: list[tuple[str, str]], title: str | None) -> list[tuple[str, str]]:
    """Drop a leading heading that repeats the page title: the title is metadata, not body."""
    if len(chunks) > 1 and chunks[0][0] == "heading" and title:
        head, full = _words(chunks[0][1]), _words(title)
        if head and (head in full or full in head):
            return chunks[1:]
    return chunks


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def clean(text: str | None) -> str:
    """Whitespace collapsed to single spaces; "" for None."""
    return " ".join(text.split()) if text else ""
