"""The page reader's entry points: bytes of a supported type -> `ExtractedPage`.

`extract_document` decides the kind (HTML, plain text, PDF when allowed) from the
content type and the first bytes; `extract_html` reads metadata (`extract.metadata`)
and the main content (`extract.content`); `extract_pdf` reads a PDF's text layer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from research_engine import libraries
from research_engine.documents import Chunk, Passage, number_passages
from research_engine.errors import BadInput, Refused
from research_engine.extract import formats
from research_engine.extract.cleanup import (
    drop_empty_sections,
    drop_generator_stamps,
    drop_permalink_marks,
    drop_title_heading,
)
from research_engine.extract.content import main_content
from research_engine.extract.metadata import read_metadata

THIN_CHARS = 200

_HTML_TYPES = ("text/html", "application/xhtml+xml", "application/xml+xhtml")
_TEXT_TYPES = ("text/plain", "text/markdown", "text/x-markdown", "text/csv")
_PDF_TYPES = ("application/pdf", "application/x-pdf")


@dataclass
class ExtractedPage:
    title: str | None = None
    canonical_url: str | None = None
    language: str | None = None
    published: str | None = None
    modified: str | None = None
    robots_meta: dict[str, bool] = field(default_factory=lambda: {"noindex": False, "nofollow": False})
    passages: list[Passage] = field(default_factory=list)
    thin: bool = True
    extractor: str = ""

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.passages)

    @property
    def chars(self) -> int:
        return sum(len(p.text) for p in self.passages)

    def extraction_figures(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "chars": self.chars,
            "passages": len(self.passages),
            "thin": self.thin,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "canonical_url": self.canonical_url,
            "language": self.language,
            "published": self.published,
            "modified": self.modified,
            "robots_meta": dict(self.robots_meta),
            "thin": self.thin,
            "extraction": self.extraction_figures(),
            "passages": [p.to_dict() for p in self.passages],
        }


def extract_html(html: str | bytes, *, url: str | None = None) -> ExtractedPage:
    """HTML (text or raw bytes; bytes are decoded by sniffing) -> ExtractedPage."""
    try:
        tree = libraries.trafilatura_utils().load_html(html)
    except (TypeError, ValueError):
        tree = None
    if tree is None:
        # Not parseable as HTML at all (e.g. empty): keep whatever text there is.
        raw = html.decode("utf-8", errors="replace") if isinstance(html, bytes) else html
        page = _finish(ExtractedPage(), _text_chunks(_strip_tags(raw)), "plain-text")
        return page
    page = ExtractedPage()
    read_metadata(tree, url, page)
    chunks, how = main_content(tree, url, page.title)
    chunks = drop_generator_stamps(drop_permalink_marks(chunks))
    chunks = drop_title_heading(drop_empty_sections(chunks), page.title)
    return _finish(page, chunks, how)


def extract_document(
    body: bytes,
    *,
    content_type: str | None,
    url: str | None = None,
    text: str | None = None,
    allow_pdf: bool = False,
) -> ExtractedPage:
    """Bytes of any supported type -> ExtractedPage.

    `text` is the body already decoded by the fetcher (its charset detection
    wins over ours). PDF is read only when `allow_pdf` is true; otherwise a PDF
    is refused. Unsupported content types are bad input.
    """
    kind = formats.kind_of(body, content_type, url) or _kind_of(body, content_type)
    if kind in ("pdf", "docx") and not allow_pdf:
        what = "PDF" if kind == "pdf" else "Word document"
        raise Refused(f"{what} extraction is off; allow it explicitly (--pdf)", code="pdf-not-allowed")
    if kind in formats.KINDS:  # Markdown, plain text, PDF, Word: their own readers (`extract.formats`)
        return from_reading(formats.read(kind, body, text))
    if kind == "html":
        return extract_html(text if text is not None else body, url=url)
    if kind == "text":
        decoded = text if text is not None else _decode_text(body)
        return _finish(ExtractedPage(), _text_chunks(decoded), "plain-text")
    raise BadInput(f"cannot extract text from content type {content_type!r}", code="unsupported-type")


def extract_pdf(body: bytes) -> ExtractedPage:
    """PDF bytes -> ExtractedPage: the text layer with its layout read (`extract.pdf`), no OCR."""
    return from_reading(formats.read("pdf", body))


def from_reading(reading: formats.Reading) -> ExtractedPage:
    """The page a document reader's `Reading` describes."""
    page = ExtractedPage(
        title=reading.title, language=reading.language, published=reading.published, modified=reading.modified
    )
    return _finish(page, reading.chunks, reading.extractor)


def _finish(page: ExtractedPage, chunks: Sequence[Chunk | tuple[str, str]], extractor: str) -> ExtractedPage:
    page.passages = number_passages(chunks)
    page.extractor = extractor
    page.thin = page.chars < THIN_CHARS
    return page


def _text_chunks(text: str) -> list[Chunk]:
    """Plain text -> paragraphs at blank lines."""
    return [
        Chunk("paragraph", block)
        for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
        if block.strip()
    ]


def _strip_tags(text: str) -> str:
    return re.sub(r"<[^>]*>", " ", text)


def _decode_text(body: bytes) -> str:
    for encoding in ("utf-8-sig",):
        try:
            return body.decode(encoding)
        except UnicodeDecodeError:
            pass
    best = libraries.charset_normalizer().from_bytes(body).best()
    return str(best) if best is not None else body.decode("utf-8", errors="replace")


def _kind_of(body: bytes, content_type: str | None) -> str:
    mime = (content_type or "").split(";")[0].strip().lower()
    if mime in _PDF_TYPES:
        return "pdf"
    if mime in _HTML_TYPES:
        return "html"
    if mime in _TEXT_TYPES:
        return "text"
    if mime and mime not in ("application/octet-stream", "binary/octet-stream"):
        return "unsupported"
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<body" in head or b"<p>" in head:
        return "html"
    if b"\x00" in body[:4096]:
        return "unsupported"
    return "text"
