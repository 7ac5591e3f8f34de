"""A deliverable's Markdown as the blocks `report check` reads: paragraphs, list items, table rows and
quotes, each with the section it sits in and whether that section is a caveat area (a heading naming a gap,
caveat, limitation, refusal...), framing (method, scope, about) or the reference list.

Fenced code is skipped; a table's header row is not a block; a `> Caveat:` quote is a caveat area of its
own. The generated sections `report finish` writes follow `GENERATED_MARK` and are never checked again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
CAVEAT_WORDS = (
    "gap",
    "caveat",
    "limitation",
    "open question",
    "refused",
    "not established",
    "unresolved",
    "uncertain",
    "caution",
)
CAVEAT_QUOTE_RE = re.compile(r"^\s*(?:\*\*|__)?\[?!?(caveat|gap|refused|caution|warning)\b", re.I)
EXEMPT_WORDS = ("method", "scope", "about", "reference", "sources", "evidence map", "reproducibility")
REFERENCE_HEADINGS = ("references", "sources", "reference list")
GENERATED_MARK = "<!-- research-engine: generated sections below; do not edit -->"


@dataclass
class Block:
    kind: str  # paragraph | list-item | table-row | quote
    text: str
    line: int
    section: str
    caveat: bool
    exempt: bool
    references: bool


def _has_word(text: str, words: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(re.search(rf"\b{re.escape(w)}", low) for w in words)


def _starts_with(title: str, words: tuple[str, ...]) -> bool:
    low = re.sub(r"^[\d.\s]+", "", title.lower())  # "2. Method" -> "method"
    return low.startswith(words)


def parse_blocks(markdown: str) -> list[Block]:
    """Split a Markdown document into the blocks the checks look at, each with its section context."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    stack: list[tuple[int, str, bool, bool, bool]] = []  # (level, title, caveat, exempt, references)
    in_fence = False
    current: list[str] = []
    start = 0
    kind = "paragraph"

    def context() -> tuple[str, bool, bool, bool]:
        title = stack[-1][1] if stack else ""
        return (title, any(s[2] for s in stack), any(s[3] for s in stack), any(s[4] for s in stack))

    def flush() -> None:
        nonlocal current, kind
        if current:
            title, caveat, exempt, refs = context()
            text = " ".join(x.strip() for x in current)
            if kind == "quote":
                text = " ".join(re.sub(r"^\s*>\s?", "", x) for x in current).strip()
                caveat = caveat or bool(CAVEAT_QUOTE_RE.match(text))
            blocks.append(Block(kind, text, start + 1, title, caveat, exempt, refs))
        current, kind = [], "paragraph"

    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = HEADING_RE.match(line)
        if heading:
            flush()
            level, title = len(heading.group(1)), heading.group(2)
            while stack and stack[-1][0] >= level:
                stack.pop()
            refs = title.strip().lower().rstrip(":") in REFERENCE_HEADINGS
            # The document's title and a question ("SQ-03: What are the limitations of ...?") name what is
            # asked, not a section of caveats: under them every sentence is held to its citations.
            caveat = level > 1 and not title.rstrip().endswith("?") and _has_word(title, CAVEAT_WORDS)
            stack.append((level, title, caveat, _starts_with(title, EXEMPT_WORDS), refs))
            continue
        if not stripped or stripped == GENERATED_MARK:
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            if TABLE_SEP_RE.match(stripped):
                if blocks and blocks[-1].kind == "table-row":
                    blocks.pop()  # the row above a separator is the header
                continue
            title, caveat, exempt, refs = context()
            blocks.append(Block("table-row", stripped, i + 1, title, caveat, exempt, refs))
            continue
        if stripped.startswith(">"):
            if kind != "quote":
                flush()
                kind, start = "quote", i
            current.append(line)
            continue
        if kind == "quote":
            flush()
        if LIST_RE.match(line):
            flush()
            kind, start = "list-item", i
            current.append(LIST_RE.sub("", line, count=1))
            continue
        if not current:
            start = i
        current.append(line)
    flush()
    return blocks
