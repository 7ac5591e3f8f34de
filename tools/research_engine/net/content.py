"""Bodies: media-type families, capped streaming decompression, charset decoding that never raises.

- `family_of(media_type, body)`: which of html / text / json / pdf / xml a response is; a
  missing or generic (`application/octet-stream`) type is sniffed from the first bytes.
- `Decoder`: gzip / deflate decoding fed chunk by chunk with a hard output cap, so a
  compression bomb stops after `max_bytes` of output, not after it has filled memory.
- `binary_reason(body, charset)`: why a body is binary data whatever its header says (a known
  binary signature, or control bytes no text uses), None for text. A "text/html" JPEG is no page.
- `decode_text(body, declared, family)`: header charset, then BOM, then `<meta charset>` for
  HTML, then charset-normalizer, then UTF-8 with replacement. A lying header (says UTF-8,
  bytes are cp1252) falls through to detection instead of raising. Charsets that can smuggle
  markup past a reader (UTF-7 and its kin, `UNSAFE_CHARSETS`) are never honoured, declared
  or detected: such a body is read as UTF-8 with replacement.

No I/O here.
"""

from __future__ import annotations

import codecs
import re
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zlib import _Decompress  # typeshed's name for the decompressor object

FAMILIES: dict[str, tuple[str, ...]] = {
    "html": ("text/html", "application/xhtml+xml"),
    "text": ("text/plain", "text/markdown", "text/x-markdown", "text/csv"),
    "json": ("application/json", "text/json", "application/ld+json", "application/problem+json"),
    "pdf": ("application/pdf",),
    "docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",),
    "xml": ("application/xml", "text/xml", "application/atom+xml", "application/rss+xml"),
}
TEXTUAL = ("html", "text", "json", "xml")
GENERIC_TYPES = ("", "application/octet-stream", "binary/octet-stream", "application/unknown")


class TooLarge(Exception):
    """The decoded body passed the byte cap."""


class DecodeError(Exception):
    """A content-encoding we cannot (or did not ask to) decode, or corrupt compressed data."""


def parse_content_type(header: str | None) -> tuple[str, str | None]:
    """('text/html', 'utf-8') from 'text/html; charset="UTF-8"'; ('', None) when absent."""
    if not header:
        return "", None
    parts = header.split(";")
    media = parts[0].strip().lower()
    charset = None
    for param in parts[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'").lower() or None
    return media, charset


def declared_family(media: str) -> str | None:
    """The family a declared media type belongs to; None when the type is outside every family."""
    for family, types in FAMILIES.items():
        if media in types:
            return family
    if media.endswith("+json"):
        return "json"
    if media.endswith("+xml"):
        return "xml"
    return None


def sniff_family(body: bytes) -> str | None:
    """The family of an undeclared body from its first bytes (a small subset of WHATWG sniffing)."""
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"%pdf-"):
        return "pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<p>", b"<div", b"<h1")):
        return "html"
    if head.startswith(b"<?xml"):
        return "html" if b"<html" in head else "xml"
    if head.startswith((b"{", b"[")):
        return "json"
    if b"\x00" in body[:1024]:
        return None  # binary
    return "text" if body else None


# WHATWG MIME sniffing's "binary data bytes": control bytes that no text, in any charset, contains.
BINARY_BYTES = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
BINARY_SHARE = 0.01  # a head with at least this share of them is binary data
SNIFF_BYTES = 8192
# Signatures of binary formats (WHATWG sniffing tables and the formats' own specifications).
BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"RIFF", "a RIFF (WebP, WAV, AVI) file"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x7fELF", "an ELF executable"),
    (b"MZ", "a Windows executable"),
    (b"\x00\x00\x01\x00", "an icon"),
    (b"OggS", "an Ogg stream"),
    (b"ID3", "an MP3 file"),
    (b"%PDF-", "a PDF document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an OLE (old Office) document"),
    (b"wOFF", "a web font"),
    (b"wOF2", "a web font"),
)


def binary_reason(body: bytes, charset: str | None = None) -> str | None:
    """Why `body` is binary data rather than text (whatever its declared type), or None when it is text.

    A body with a UTF-16/32 byte order mark, or declared UTF-16/32, is judged by its decoded text."""
    head = body[:SNIFF_BYTES]
    if not head:
        return None
    declared = (_codec(charset) or "").replace("_", "-")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or declared.startswith(
        ("utf-16", "utf-32")
    ):
        return None
    stripped = head.lstrip(b" \t\r\n")
    for signature, what in BINARY_SIGNATURES:
        if stripped.startswith(signature):
            return f"the body is {what}"
    control = sum(1 for b in head if b in BINARY_BYTES)
    if control and control >= BINARY_SHARE * len(head):
        return f"the body is binary data ({control} control bytes in its first {len(head)})"
    return None


class Decoder:
    """Content-Encoding decoding with an output cap; feed raw chunks, get decoded chunks."""

    def __init__(self, encoding: str | None, max_bytes: int) -> None:
        enc = (encoding or "identity").strip().lower()
        self.max_bytes = max_bytes
        self.produced = 0
        self._z: _Decompress | None
        if enc in ("identity", ""):
            self._z = None
        elif enc in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":
            self._z = zlib.decompressobj()
            self._deflate_probe = True
        else:
            raise DecodeError(f"content-encoding {enc!r} was not requested and cannot be decoded")
        self.encoding = enc

    def feed(self, chunk: bytes) -> bytes:
        out = chunk if self._z is None else self._decompress(self._z, chunk)
        self.produced += len(out)
        if self.produced > self.max_bytes:
            raise TooLarge(f"decoded body exceeds {self.max_bytes} bytes")
        return out

    def _decompress(self, z: _Decompress, chunk: bytes) -> bytes:
        room = self.max_bytes - self.produced + 1  # one byte past the cap proves the overflow
        try:
            out = z.decompress(chunk, room)
        except zlib.error as exc:
            if self.encoding == "deflate" and self.produced == 0 and getattr(self, "_deflate_probe", False):
                # Some servers send raw deflate without the zlib header.
                self._deflate_probe = False
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self._decompress(self._z, chunk)
            raise DecodeError(f"corrupt {self.encoding} data: {exc}") from exc
        if z.unconsumed_tail:
            # Output was cut at the cap while input remains: the body is too large.
            raise TooLarge(f"decoded body exceeds {self.max_bytes} bytes")
        return out

    def flush(self) -> bytes:
        if self._z is None:
            return b""
        try:
            out = self._z.flush()
        except zlib.error as exc:
            raise DecodeError(f"corrupt {self.encoding} data: {exc}") from exc
        self.produced += len(out)
        if self.produced > self.max_bytes:
            raise TooLarge(f"decoded body exceeds {self.max_bytes} bytes")
        return out


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.I)
_BOM_CODECS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


# Charsets a reader must not honour: they let markup hide in bytes that look like something else (UTF-7's
# "+ADw-script+AD4-"; ISO-2022-KR and HZ switch character sets in band). WHATWG's Encoding Standard
# supports none of them (the last two map to its "replacement" encoding).
UNSAFE_CHARSETS = frozenset({"utf-7", "hz", "iso2022_kr"})


def _codec(name: str | None) -> str | None:
    """The codec `name` stands for (Python's name), None when unknown or unsafe (`UNSAFE_CHARSETS`)."""
    if not name:
        return None
    try:
        found = codecs.lookup(name).name
    except LookupError:
        return None
    return None if found in UNSAFE_CHARSETS else found


def _strict(body: bytes, charset: str | None) -> str | None:
    if not charset:
        return None
    try:
        return body.decode(charset)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_text(body: bytes, declared: str | None, family: str | None) -> tuple[str, str]:
    """(text, charset used); never raises. JSON defaults to UTF-8 (RFC 8259)."""
    for bom, bom_codec in _BOM_CODECS:
        if body.startswith(bom):
            text = _strict(body[len(bom) :], bom_codec)
            if text is not None:
                return text, bom_codec
    candidates: list[str | None] = [_codec(declared)]
    if family == "html":
        match = _META_CHARSET.search(body[:4096])
        if match:
            candidates.append(_codec(match.group(1).decode("ascii", "replace")))
    if family == "json":
        candidates.append("utf-8")
    for name in candidates:
        # A declared ISO-8859-1 "decodes" anything; browsers read it as windows-1252.
        if name == "iso8859-1":
            name = "cp1252"
        text = _strict(body, name)
        if text is not None:
            return text, name or "utf-8"
    text = _strict(body, "utf-8")
    if text is not None:
        return text, "utf-8"
    try:
        from charset_normalizer import from_bytes  # noqa: PLC0415 - heavy; only a body no declared charset decodes

        matches = list(from_bytes(body[:200_000]))
        matches = [m for m in matches if _codec(m.encoding) is not None]  # never a detected UTF-7
        if matches:
            best = matches[0]
            # Short Western text is ambiguous between the single-byte Latin code pages; windows-1252
            # is by far the most common on the web, so it wins a near tie.
            near = [m.encoding for m in matches if m.chaos <= best.chaos + 0.1]
            name = "cp1252" if "cp1252" in near else best.encoding
            return body.decode(name, errors="replace"), name
    except Exception:  # detection is best effort; replacement below never fails
        pass
    return body.decode("utf-8", errors="replace"), "utf-8"
