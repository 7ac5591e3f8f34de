"""PDF -> chunks: the text layer (pypdf), with paragraphs, headings and list items recovered from the layout.

pypdf's `extract_text` gives the page's text line by line; its `visitor_text` callback gives, for each
piece of that same text, where it sits and in which font and size (the pieces join to exactly the text
`extract_text` returns). From the lines and their geometry:

- the body size is the font size most characters are set in; a line set clearly larger (`HEADING_RATIO`)
  or wholly bold in a document whose body is not, short and not ending a sentence, is a heading (a heading
  wrapped over several lines is one heading);
- a paragraph ends where the gap to the next line is clearly wider than the usual line spacing
  (`PARAGRAPH_GAP` x the median gap), where the text moves up the page (a new column), at an indented
  first line, or where a heading or list item starts; a paragraph cut by a page break goes on when it did
  not end a sentence and the next page resumes in body text;
- a line opening with a bullet or an item number starts a list item; its indented continuation lines
  join it;
- running headers and footers (the same line, digits aside, at the top or bottom of most pages) and bare
  page numbers are dropped; a word hyphenated at a line end is joined; ligatures are unfolded.

A PDF without a text layer (a scan) yields no text and says so; an encrypted PDF that opens without a
password is read, one that needs a password is bad input. No OCR. Pure apart from reading its bytes.
"""

from __future__ import annotations

import io
import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from research_engine import libraries
from research_engine.errors import BadInput
from research_engine.extract.reading import Reading

HEADING_RATIO = 1.15  # a line this much larger than the body size is a heading
PARAGRAPH_GAP = 1.4  # a gap this many times the usual line spacing ends a paragraph
HEADING_MAX_CHARS = 160
REPEATED_SHARE = 0.5  # a top or bottom line on at least this share of pages (3 or more) is a running header
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_LIST_ITEM = re.compile(
    r"^\s*(?:[•◦▪▫●○■□‣⁃∙·\-–—*]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivxIVX]{1,4}[.)])\s+\S"
)
_PAGE_NUMBER = re.compile(
    r"^\s*(?:[-–—]\s*)?(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?(?:\s*[-–—])?\s*$", re.I
)
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
_SENTENCE_END = (".", "!", "?", ":", '."', ".”", ".)", "?”", '?"')


@dataclass
class Line:
    text: str
    page: int
    x: float
    y: float
    size: float
    bold: bool


def _fragments(page: Any) -> list[tuple[str, float, float, float, bool]]:
    """(text, x, y, font size, bold) of every piece of the page's text, in `extract_text` order."""
    pieces: list[tuple[str, float, float, float, bool]] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        scale = math.hypot(tm[1], tm[3]) * math.hypot(cm[1], cm[3]) or 1.0
        name = str((font or {}).get("/BaseFont") or "") if hasattr(font, "get") else ""
        pieces.append((text, x, y, float(size or 0) * scale, bool(_BOLD.search(name))))

    page.extract_text(visitor_text=visit)
    return pieces


def _page_lines(page: Any, number: int) -> list[Line]:
    lines: list[Line] = []
    text: list[str] = []
    meta: list[tuple[float, float, float, bool, int]] = []

    def close() -> None:
        joined = " ".join("".join(text).split())
        if joined and meta:
            sizes: Counter[float] = Counter()
            for _, _, size, _, chars in meta:
                sizes[round(size, 1)] += chars
            bold_chars = sum(chars for *_, bold, chars in meta if bold)
            total = sum(chars for *_, chars in meta) or 1
            x, y = meta[0][0], meta[0][1]
            lines.append(Line(joined, number, x, y, sizes.most_common(1)[0][0], bold_chars / total >= 0.8))
        text.clear()
        meta.clear()

    for piece, x, y, size, bold in _fragments(page):
        parts = piece.split("\n")
        for index, part in enumerate(parts):
            if index:
                close()
            if part:
                text.append(part)
                if part.strip():
                    meta.append((x, y, size, bold, len(part.strip())))
    close()
    return lines


def _running_lines(pages: list[list[Line]]) -> set[str]:
    """Texts (digits blanked) at the top or bottom of most pages: running headers and footers."""
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for lines in pages:
        edges = {re.sub(r"\d+", "#", line.text) for line in lines[:2] + lines[-2:]}
        seen.update(edges)
    floor = max(3, REPEATED_SHARE * len(pages))
    return {text for text, count in seen.items() if count >= floor}


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _join(left: str, right: str, vocabulary: set[str]) -> str:
    """Two lines of one paragraph joined with a space; a word broken at a line-end hyphen is rejoined: without
    the hyphen when the document writes it so elsewhere ("distri-" + "bution"), with it otherwise (a
    compound such as "rollback-" + "journal" keeps its hyphen)."""
    if not (re.search(r"[A-Za-z]-$", left) and right[:1].islower()):
        return f"{left} {right}"
    head = _WORD.findall(left)[-1][:-1].lower() if _WORD.findall(left) else ""
    tail = (_WORD.findall(right) or [""])[0].lower()
    return (
        left[:-1] + right
        if (head + tail) in vocabulary and f"{head}-{tail}" not in vocabulary
        else left + right
    )


def _is_heading(line: Line, body: float, body_bold: bool) -> bool:
    text = line.text
    if len(text) > HEADING_MAX_CHARS or text.endswith((".", ",", ";")) or not any(c.isalpha() for c in text):
        return False
    if line.size >= body * HEADING_RATIO:
        return True
    return line.bold and not body_bold and abs(line.size - body) < 0.5 and len(text.split()) <= 15


def layout_chunks(pages: list[list[Line]]) -> list[tuple[str, str]]:
    """The (kind, text) chunks of a PDF's lines, page after page."""
    running = _running_lines(pages)
    lines = [
        line
        for page in pages
        for number, line in enumerate(page)
        if re.sub(r"\d+", "#", line.text) not in running
        # A bare number is a page number only at the page's top or bottom (a table cell elsewhere).
        and not (_PAGE_NUMBER.match(line.text) and (number < 2 or number >= len(page) - 2))
    ]
    if not lines:
        return []
    weights: Counter[float] = Counter()
    bold_weight = 0
    for line in lines:
        weights[line.size] += len(line.text)
        bold_weight += len(line.text) if line.bold else 0
    body = weights.most_common(1)[0][0]
    vocabulary = {word.lower() for line in lines for word in _WORD.findall(line.text)}
    body_bold = bold_weight > 0.5 * sum(weights.values())
    gaps = [
        a.y - b.y
        for a, b in zip(lines, lines[1:], strict=False)
        if a.page == b.page and abs(a.size - body) < 0.5 and 0 < a.y - b.y < 3 * body
    ]
    spacing = statistics.median(gaps) if gaps else body * 1.2

    chunks: list[list[Any]] = []  # [kind, text, last line, x of the first line]
    for line in lines:
        heading = _is_heading(line, body, body_bold)
        item = bool(_LIST_ITEM.match(line.text)) and not heading
        last = chunks[-1] if chunks else None
        if last is not None:
            kind, text, prev, _ = last
            same_page = prev.page == line.page
            gap = prev.y - line.y if same_page else 0.0
            near = (0 < gap <= PARAGRAPH_GAP * spacing) if same_page else False
            if kind == "heading" and heading and near and abs(prev.size - line.size) < 0.5:
                last[1], last[2] = _join(text, line.text, vocabulary), line
                continue
            if not heading and not item and kind in ("paragraph", "list-item"):
                indented = (
                    line.x > prev.x + 0.8 * body and kind == "paragraph" and text.endswith(_SENTENCE_END)
                )
                if kind == "list-item":
                    indented = False
                    near = near and line.x > float(last[3]) + 1.0  # continuations are indented
                carried = not same_page and not text.endswith(_SENTENCE_END) and abs(line.size - body) < 0.5
                if (near and not indented) or carried:
                    last[1], last[2] = _join(text, line.text, vocabulary), line
                    continue
        chunks.append(
            ["heading" if heading else "list-item" if item else "paragraph", line.text, line, line.x]
        )
    return [(kind, text.translate(_LIGATURES).replace("\u00ad", "")) for kind, text, _, _ in chunks]


def read_pdf(body: bytes) -> Reading:
    """PDF bytes as a Reading; BadInput when unreadable, encrypted behind a password, or without text."""
    pypdf = libraries.pypdf()
    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BadInput("encrypted PDF: it needs a password", code="encrypted-pdf")
        pages = [_page_lines(page, number) for number, page in enumerate(reader.pages, 1)]
        info = reader.metadata
    except BadInput:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files (and DependencyError for AES)
        raise BadInput(f"unreadable PDF: {type(exc).__name__}: {exc}", code="decode-error") from exc
    chunks = layout_chunks(pages)
    if not chunks:
        raise BadInput(
            "the PDF has no text layer (a scanned document?); it cannot be read without OCR",
            code="no-text-layer",
        )
    title = " ".join(str(getattr(info, "title", None) or "").split()) if info is not None else ""
    first_heading = next((text for kind, text in chunks if kind == "heading"), None)
    return Reading(
        chunks,
        f"pypdf-{pypdf.__version__}+layout",
        title=title or first_heading,
        published=_date(info, "creation_date"),
        modified=_date(info, "modification_date"),
        metadata={"pages": len(pages)},
    )


def _date(info: Any, attr: str) -> str | None:
    try:
        value = getattr(info, attr, None) if info is not None else None
    except Exception:  # pypdf raises on malformed date strings; a missing date is fine
        return None
    return value.isoformat() if value is not None else None
