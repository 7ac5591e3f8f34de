"""The files of a corpus folder: which are documents, how each is read for the index, why one is skipped.

- `list_folder(root)`: every document file under `root` (by suffix, `FORMATS`; "NEWS", "README.gz" and
  the like are plain text), with its size and
  modification time, and the files skipped with a reason: a symlink out of the folder, a file over the
  size cap, an unreadable entry. Hidden entries (`.git`) and Sphinx build internals (`_sources`,
  `_static`) are not documents and are left out silently.
- `read_for_index(root, entry)`: (title, text) of one document (HTML, Markdown, plain text, PDF, Word),
  through the same readers `extract` uses for a fetched copy; `Unreadable` with the reason when it
  cannot be read (an encrypted or scanned PDF, a corrupt Word file, binary data behind a text extension).
- `media_type(path)`: the Content-Type the server sends for a document; `read_document(path)`: its bytes,
  a gzip-compressed text document ("changelog.html.gz", as Debian ships larger ones) decompressed.

HTML is read with lxml directly (`page_text`), not through trafilatura: indexing hundreds of pages
through trafilatura takes tens of seconds, and the index only has to rank; the engine extracts the pages
it fetches itself. Never writes anything.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from research_engine import bounded, libraries
from research_engine.bounded import CAPS
from research_engine.errors import BadInput, ResearchEngineError
from research_engine.extract import formats
from research_engine.net.content import (
    BINARY_BYTES,
    BINARY_SHARE,
    BINARY_SIGNATURES,
    SNIFF_BYTES,
    DecodeError,
    Decoder,
    TooLarge,
    binary_reason,
    decode_text,
)

log = logging.getLogger("research_engine.corpus")

# Suffix -> (format, media type sent by the server).
FORMATS: dict[str, tuple[str, str]] = {
    ".html": ("html", "text/html; charset=utf-8"),
    ".htm": ("html", "text/html; charset=utf-8"),
    ".xhtml": ("html", "application/xhtml+xml"),
    ".md": ("markdown", "text/markdown; charset=utf-8"),
    ".markdown": ("markdown", "text/markdown; charset=utf-8"),
    ".txt": ("text", "text/plain; charset=utf-8"),
    ".text": ("text", "text/plain; charset=utf-8"),
    ".rst": ("text", "text/plain; charset=utf-8"),
    ".adoc": ("text", "text/plain; charset=utf-8"),
    ".org": ("text", "text/plain; charset=utf-8"),
    ".pdf": ("pdf", "application/pdf"),
    ".docx": ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
}
TEXTUAL_FORMATS = ("html", "markdown", "text")
# Document formats a folder often holds that the corpus does not read: listed as skipped, with what to do.
UNREAD = {
    ".doc": "an old binary Word document: save it as .docx",
    ".rtf": "Rich Text: save it as .docx",
    ".odt": "an OpenDocument text: save it as .docx",
    ".pages": "a Pages document: export it as .docx or PDF",
    ".pptx": "a slide deck: export it as PDF",
    ".ppt": "a slide deck: export it as PDF",
    ".epub": "an e-book: convert it to HTML or PDF",
}
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
PLAIN_TEXT_SUFFIX = ".txt"
# The documentation a package names by convention, without a suffix, for its users (GNU's NEWS, a README,
# an FAQ): plain text. Other names without a suffix are programs, data and build files; a ChangeLog is the
# developers' log of every commit, whose volume of words outranked the pages that answer (measured on
# Privoxy's documentation), and AUTHORS, THANKS and TODO answer no user's question.
PLAIN_TEXT_NAMES = frozenset({"news", "readme", "changes", "history", "faq", "install"})
SIZE_CAP = CAPS["corpus document"]


class Unreadable(Exception):
    """A file the index cannot read; the message is the reason logged."""


@dataclass(frozen=True)
class Entry:
    rel: str  # relative POSIX path, e.g. "papers/wal.pdf"
    size: int
    mtime_ns: int

    @property
    def format(self) -> str:
        return FORMATS[document_suffix(self.rel)][0]


@dataclass(frozen=True)
class Skipped:
    rel: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.rel, "reason": self.reason}


def document_suffix(name: str) -> str:
    """The suffix that says a document's format; a compressed text file's is the one before ".gz" (Debian
    ships its larger documentation compressed: "changelog.html.gz", "NEWS.txt.gz"). A user's documentation
    file named by convention with no suffix ("NEWS", "README.gz": `PLAIN_TEXT_NAMES`) is plain text; its
    bytes are checked as any text file's."""
    path = Path(name)
    if path.suffix.lower() == ".gz":
        inner = Path(path.stem).suffix.lower()
        if not inner:
            return PLAIN_TEXT_SUFFIX if path.stem.casefold() in PLAIN_TEXT_NAMES else ".gz"
        return inner if FORMATS.get(inner, ("",))[0] in TEXTUAL_FORMATS else ".gz"
    if not path.suffix and path.name.casefold() in PLAIN_TEXT_NAMES:
        return PLAIN_TEXT_SUFFIX
    return path.suffix.lower()


def read_document(path: Path) -> bytes:
    """A document's bytes, decompressed when its name ends in ".gz" (never past the size cap)."""
    body = bounded.read_bytes(path, "corpus document")
    if path.suffix.lower() != ".gz":
        return body
    decoder = Decoder("gzip", SIZE_CAP)
    try:
        return decoder.feed(body)
    except (TooLarge, DecodeError) as exc:
        raise BadInput(f"{path.name}: {exc}") from exc


def media_type(path: Path) -> str | None:
    known = FORMATS.get(document_suffix(path.name))
    return known[1] if known else None


def _hidden(rel: str) -> bool:
    """Dot entries (`.git`, `.DS_Store`) and Sphinx build internals (`_sources`, `_static`)."""
    return any(part.startswith((".", "_")) for part in rel.split("/"))


def list_folder(root: Path) -> tuple[list[Entry], list[Skipped]]:
    """The document files under `root` (sorted by path) and the ones skipped, each with its reason."""
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if _hidden(rel):
                continue
            suffix = document_suffix(name)
            if suffix in UNREAD:
                skipped.append(Skipped(rel, f"not a format the corpus reads ({UNREAD[suffix]})"))
                continue
            if suffix not in FORMATS:
                continue
            reason = None
            try:
                if path.is_symlink():
                    target = path.resolve()
                    if target != root and root not in target.parents:
                        reason = "a symlink pointing outside the folder"
                info = path.stat()
            except OSError as exc:
                reason = reason or f"cannot be read: {exc.strerror or exc}"
                info = None
            if reason is None and info is not None and info.st_size > SIZE_CAP:
                reason = f"{info.st_size} bytes, over the size cap of {SIZE_CAP} bytes"
            if reason is not None or info is None:
                skipped.append(Skipped(rel, reason or "cannot be read"))
                continue
            entries.append(Entry(rel, info.st_size, info.st_mtime_ns))
    entries.sort(key=lambda e: e.rel)
    skipped.sort(key=lambda s: s.rel)
    for item in skipped:
        log.warning("corpus: skipped %s: %s", item.rel, item.reason)
    return entries, skipped


_XML_DECLARATION_RE = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


def page_text(html: bytes) -> tuple[str, str]:
    """(title, main text) of an HTML page, fast enough to index hundreds of pages."""
    lxml_html = libraries.lxml_html()
    # Decoded the way the fetcher decodes a page (BOM, <meta charset>, UTF-8, detection): lxml alone reads
    # bytes without a declared charset as Latin-1, which garbles every UTF-8 page that does not declare one.
    text, _ = decode_text(html, None, "html")
    # lxml refuses a str that still declares its encoding (XHTML such as PostgreSQL's documentation opens
    # with `<?xml ... encoding="UTF-8"?>`); the text is decoded already, so the declaration goes.
    text = _XML_DECLARATION_RE.sub("", text, count=1)
    try:
        root = lxml_html.document_fromstring(text)
    except Exception:  # empty or unparsable pages carry no text
        return "", ""
    title = " ".join((root.findtext(".//title") or "").split())
    mains = root.xpath('//*[@role="main"]') or root.xpath("//main") or root.xpath("//body") or [root]
    main = mains[0]
    for bad in main.xpath(".//script|.//style|.//nav|.//noscript|.//*[contains(@class,'headerlink')]"):
        bad.drop_tree()
    return title, " ".join(main.text_content().split())


# Bytes no text holds (WHATWG's binary data bytes, as in `net.content`), deleted in C to count them.
_TEXT_BYTES = bytes(b for b in range(256) if b not in BINARY_BYTES)


def _binary(body: bytes) -> str | None:
    """Why `body` is binary data, by the fetcher's rule; a quick count first (nearly every file is text)."""
    head = body[:SNIFF_BYTES]
    suspicious = len(head.translate(None, _TEXT_BYTES)) >= BINARY_SHARE * len(head) or head.startswith(
        tuple(signature for signature, _ in BINARY_SIGNATURES)
    )
    return binary_reason(body) if suspicious or head[:2] in (b"\xff\xfe", b"\xfe\xff") else None


def read_for_index(root: Path, entry: Entry) -> tuple[str, str]:
    """(title, text) of one document; `Unreadable` with the reason when it cannot be read."""
    try:
        body = read_document(root / entry.rel)
    except ResearchEngineError as exc:
        raise Unreadable(exc.message) from exc
    kind = entry.format
    if kind in TEXTUAL_FORMATS:
        why = _binary(body)
        if why is not None:
            raise Unreadable(f"binary data ({why}) behind a text document's name")
    if kind == "html":
        return page_text(body)
    if not body.strip():
        raise Unreadable("an empty file")
    try:
        reading = formats.read(kind, body)
    except ResearchEngineError as exc:
        raise Unreadable(exc.message) from exc
    text = " ".join(" ".join(chunk[1].split()) for chunk in reading.chunks)
    if not text:
        raise Unreadable("no text in it")
    return reading.title or "", text
