"""Which reader a document needs, and the one shape every reader returns.

`kind_of(body, content_type, url)` names the document formats read outside the HTML reader: Markdown,
plain text, PDF and Word (.docx); None leaves the document to `page` (HTML, or a type it refuses).
`read(kind, body, text)` runs that reader and returns a `Reading`: (kind, text) chunks in document order
(`documents.number_passages` turns them into the same `Passage`s an HTML page gives: stable ids `p01`,
`p02`, ...), the title and dates the document states, and the reader's name and version. `page` builds
the `ExtractedPage` from it.

Same bytes -> same chunks: no time, randomness or network. Readers: `markdown`, `text`, `pdf`,
`docx`; their shape is `reading.Reading`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from research_engine.extract.docx import read_docx
from research_engine.extract.markdown import read_markdown
from research_engine.extract.pdf import read_pdf
from research_engine.extract.reading import Reading

__all__ = ["KINDS", "Reading", "kind_of", "read"]
from research_engine.extract.text import decode, read_text

MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
TEXT_TYPES = ("text/plain",)
PDF_TYPES = ("application/pdf", "application/x-pdf")
DOCX_TYPES = ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",)
GENERIC_TYPES = ("", "application/octet-stream", "binary/octet-stream", "application/zip")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
KINDS = ("markdown", "text", "pdf", "docx")


def _suffix(url: str | None) -> str:
    path = urlsplit(url or "").path.lower()
    return path[path.rfind(".") :] if "." in path.rsplit("/", 1)[-1] else ""


def kind_of(body: bytes, content_type: str | None, url: str | None = None) -> str | None:
    """The reader `body` needs: markdown, text, pdf or docx; None for HTML and types this module refuses."""
    mime = (content_type or "").split(";")[0].strip().lower()
    if mime in PDF_TYPES or (mime in GENERIC_TYPES and body[:1024].lstrip().startswith(b"%PDF-")):
        return "pdf"
    if mime in DOCX_TYPES or (mime in GENERIC_TYPES and _is_docx(body)):
        return "docx"
    if mime in MARKDOWN_TYPES or (mime in TEXT_TYPES and _suffix(url) in MARKDOWN_SUFFIXES):
        return "markdown"
    if mime in TEXT_TYPES:
        return "text"
    return None


def _is_docx(body: bytes) -> bool:
    """A ZIP package holding a Word main document part."""
    return body[:4] == b"PK\x03\x04" and b"word/" in body[:65536]


def read(kind: str, body: bytes, text: str | None = None) -> Reading:
    """Run the `kind` reader over `body` (`text`: the body as the fetcher decoded it, for text kinds)."""
    if kind == "pdf":
        return read_pdf(body)
    if kind == "docx":
        return read_docx(body)
    decoded = text if text is not None else decode(body)
    return read_markdown(decoded) if kind == "markdown" else read_text(decoded)
