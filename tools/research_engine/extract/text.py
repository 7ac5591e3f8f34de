"""Plain text -> chunks: paragraphs at blank lines, hard-wrapped lines joined, headings and list items kept.

A block (lines between blank lines) is a paragraph whose lines are joined with spaces, since exported
text wraps its lines at a fixed width. Within that rule, the shapes plain text uses for structure are
kept: a heading underlined with `===` or `---` (setext) or opened with `#`; a short line standing alone
that is written in capitals or numbered like a section ("2.1 Checkpointing"); an outline's starred line
("* Noteworthy changes in release 2.4.7", "** New features:", as GNU's NEWS files write them); and list
items (`-`, `*`, `•`, `1.`, `a)`), each its own chunk with its wrapped continuation lines. A form feed is
a blank line.

Pure: no I/O.
"""

from __future__ import annotations

import re

from research_engine import libraries
from research_engine.documents import Chunk
from research_engine.extract.reading import Reading

_LIST_ITEM = re.compile(r"^\s*(?:[-*+•◦▪–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+\S")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_HASH_HEADING = re.compile(r"^\s*(?P<marks>#{1,6})\s+(?P<title>\S.*?)\s*#*\s*$")
# An outline heading, as GNU's NEWS files and Emacs' Org write them ("* Noteworthy changes in release 2.4.7",
# "** New features:"): stars from the line's first column. Two or more mark a heading; one only in a text
# that also has those (else it is a bullet).
_OUTLINE_HEADING = re.compile(r"^(?P<marks>\*+)\s+(?P<title>\S.*?)\s*$")
_OUTLINE_SUBHEADING = re.compile(r"^\*\*+\s+\S", re.MULTILINE)
_SECTION_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVX]+\.|Chapter \d+|Section \d+(?:\.\d+)*)\s+\S")
HEADING_MAX_WORDS = 12


def decode(body: bytes) -> str:
    """Bytes as text: UTF-8 (with or without a BOM), else the charset charset-normalizer detects."""
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    best = libraries.charset_normalizer().from_bytes(body).best()
    return str(best) if best is not None else body.decode("utf-8", errors="replace")


# A help page's tag (Vim's "*standard-plugin*"): an anchor written in the text, not a word of it.
HELP_TAG_RE = re.compile(r"(?<!\S)\*[^*\s]+\*(?!\S)")


def _heading_line(line: str) -> bool:
    """A short line that names a section: capitals, or numbered like one, with no closing punctuation."""
    text = line.strip()
    words = text.split()
    if not words or len(words) > HEADING_MAX_WORDS or text[-1] in ".,;:!?)":
        return False
    # a help page's tags beside its heading are anchors, not words ("GLOBAL PLUGINS  *standard-plugin*")
    letters = [c for c in HELP_TAG_RE.sub(" ", text) if c.isalpha()]
    if len(letters) >= 3 and all(c.isupper() for c in letters):
        return True
    return bool(_SECTION_NUMBER.match(text)) and text[0] not in "-*+•"


def _block_chunks(lines: list[str], outline: bool = False) -> list[tuple[str, str] | Chunk]:
    chunks: list[tuple[str, str] | Chunk] = []
    current: list[str] = []
    kind = "paragraph"

    def flush() -> None:
        nonlocal current, kind
        if current:
            chunks.append((kind, " ".join(part.strip() for part in current)))
        current, kind = [], "paragraph"

    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if _UNDERLINE.match(line) and chunks == [] and current and len(current) == 1:
            kind = "heading"  # setext: the line above was the heading
            flush()
            continue
        heading = _HASH_HEADING.match(line) or (_OUTLINE_HEADING.match(line) if outline else None)
        if heading:
            flush()
            # its marks are its level, so what is under "** New features:" is also under its release
            chunks.append(Chunk("heading", heading.group("title"), level=len(heading.group("marks"))))
            continue
        if _LIST_ITEM.match(line):
            flush()
            kind = "list-item"
            current = [line]
            continue
        if kind == "list-item" and line.startswith((" ", "\t")):
            current.append(line)  # the wrapped continuation of a list item
            continue
        if not current and _heading_line(line) and following.strip() and not _UNDERLINE.match(following):
            chunks.append(("heading", line.strip()))
            continue
        if kind == "list-item":
            flush()
        current.append(line)
    flush()
    return chunks


def text_chunks(text: str) -> list[tuple[str, str] | Chunk]:
    """The (kind, text) chunks of plain text, in order."""
    normalized = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    chunks: list[tuple[str, str] | Chunk] = []
    outline = _OUTLINE_SUBHEADING.search(normalized) is not None
    for block in re.split(r"\n\s*\n", normalized):
        lines = [line.rstrip() for line in block.split("\n") if line.strip()]
        if len(lines) == 1 and _heading_line(lines[0]) and len(lines[0].split()) <= HEADING_MAX_WORDS:
            chunks.append(("heading", lines[0].strip()))
        elif lines:
            chunks.extend(_block_chunks(lines, outline))
    return chunks


def read_text(text: str) -> Reading:
    """Plain text as a Reading (a text file states no title or dates)."""
    return Reading(text_chunks(text), "plain-text")
