"""Word (.docx) -> chunks, read with python-docx in document order.

Paragraphs and tables are walked as the body holds them (content controls opened, text boxes read after
their paragraph, footnotes and endnotes at the end under "Notes"): a paragraph
whose style is `Title` or `Heading N` (or a localized heading style based on one) is a heading; one
with list numbering (`w:numPr`, directly or through its style) or a `List ...` style is a list item;
any other non-empty paragraph is a paragraph. A table gives one row chunk per row, cells joined with
` | ` (as the HTML reader joins them), merged cells once. The core properties give the title (else the
`Title` paragraph, else the first heading), the created and modified dates and the language.
A file that is not a readable Word package is bad input, never a crash.

Pure apart from reading the bytes it is given.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

from research_engine import libraries
from research_engine.errors import BadInput
from research_engine.extract.reading import Reading


def _style_names(paragraph: Any) -> list[str]:
    """The paragraph's style and the styles it is based on, lower case (localized styles inherit)."""
    names: list[str] = []
    style = paragraph.style
    while style is not None and len(names) < 10:
        names.append(str(style.name or "").lower())
        style = style.base_style
    return names


def _numbered(paragraph: Any) -> bool:
    p_pr = paragraph._p.pPr  # python-docx exposes list numbering only through the XML
    if p_pr is not None and p_pr.numPr is not None:
        return True
    style = paragraph.style
    while style is not None:
        s_pr = style.element.pPr
        if s_pr is not None and s_pr.numPr is not None:
            return True
        style = style.base_style
    return False


def paragraph_kind(paragraph: Any) -> str:
    names = _style_names(paragraph)
    if any(n == "title" or n.startswith("heading") for n in names):
        return "heading"
    if any(n.startswith("list") for n in names) or _numbered(paragraph):
        return "list-item"
    return "paragraph"


def _table_rows(table: Any) -> list[str]:
    rows: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue  # a merged cell is listed once per grid column it spans
            seen.add(id(cell._tc))
            text = " ".join(cell.text.split())
            if text:
                cells.append(text)
        if cells:
            rows.append(" | ".join(cells))
    return rows


W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _blocks(document: Any, parent: Any) -> Any:
    """Paragraphs and tables in body order, content controls (`w:sdt`: a cover page, a table of contents)
    opened rather than skipped."""
    docx = libraries.docx()
    for child in parent.iterchildren():
        if child.tag == f"{W}p":
            yield docx.text.paragraph.Paragraph(child, document)
        elif child.tag == f"{W}tbl":
            yield docx.table.Table(child, document)
        elif child.tag == f"{W}sdt":
            content = child.find(f"{W}sdtContent")
            if content is not None:
                yield from _blocks(document, content)


def _boxed(paragraph: Any) -> list[str]:
    """The paragraphs of text boxes anchored in a paragraph (python-docx's `text` leaves them out)."""
    texts = ["".join(t.text or "" for t in box.iter(f"{W}t")) for box in paragraph._p.iter(f"{W}txbxContent")]
    return [" ".join(t.split()) for t in texts if t.strip()]


def _notes(document: Any) -> list[str]:
    """Footnote and endnote texts, in order (their separators and continuation marks left out)."""
    out: list[str] = []
    for rel in document.part.rels.values():
        if rel.reltype.endswith(("/footnotes", "/endnotes")) and not rel.is_external:
            root = libraries.lxml_etree().fromstring(rel.target_part.blob)
            for note in root:
                if note.get(f"{W}type") in (None, "normal"):
                    text = " ".join("".join(t.text or "" for t in note.iter(f"{W}t")).split())
                    if text:
                        out.append(text)
    return out


def docx_chunks(document: Any) -> tuple[list[tuple[str, str]], str | None]:
    """(chunks, the Title paragraph's text) of an open python-docx Document: the body in order, then its
    footnotes and endnotes."""
    docx = libraries.docx()
    chunks: list[tuple[str, str]] = []
    title: str | None = None
    for block in _blocks(document, document.element.body):
        if isinstance(block, docx.table.Table):
            chunks.extend(("table-row", row) for row in _table_rows(block))
            continue
        text = " ".join(block.text.split())
        if text:
            kind = paragraph_kind(block)
            if title is None and "title" in _style_names(block):
                title = text
            chunks.append((kind, text))
        chunks.extend(("paragraph", boxed) for boxed in _boxed(block))
    notes = _notes(document)
    if notes:
        chunks.append(("heading", "Notes"))
        chunks.extend(("paragraph", note) for note in notes)
    return chunks, title


def _utc(value: datetime | None) -> str | None:
    """A core-property date in ISO 8601: Word writes them in UTC (W3CDTF with `Z`); python-docx before 1.2
    hands them back without the zone."""
    if value is None:
        return None
    return (value.replace(tzinfo=UTC) if value.tzinfo is None else value).isoformat()


def read_docx(body: bytes) -> Reading:
    """A .docx file's bytes as a Reading; BadInput when they are not a readable Word document."""
    docx = libraries.docx()
    try:
        document = docx.Document(io.BytesIO(body))
        chunks, title_paragraph = docx_chunks(document)
        props = document.core_properties
    except Exception as exc:  # python-docx raises many kinds on a damaged package (zipfile, KeyError, lxml)
        raise BadInput(f"unreadable Word document: {type(exc).__name__}: {exc}", code="decode-error") from exc
    first_heading = next((text for kind, text in chunks if kind == "heading"), None)
    return Reading(
        chunks,
        f"python-docx-{getattr(docx, '__version__', '')}".rstrip("-"),
        title=(props.title or "").strip() or title_paragraph or first_heading,
        published=_utc(props.created),
        modified=_utc(props.modified),
        language=(props.language or "").strip() or None,
        metadata={"author": props.author or None, "subject": props.subject or None},
    )
