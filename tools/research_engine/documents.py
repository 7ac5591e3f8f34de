"""The shapes every adapter hands to the rest of the engine.

- `Chunk`: one block of a reader's output, before numbering: its kind, its text, a heading's level and an
  entry's term.
- `Passage`: a stable slice of extracted text (`p01`, `p02`, ...) with the path of headings above it.
- `Document`: fetched or queried material with its provenance (exact request
  URL, status, retrieved-at, sha256 of the raw body, access tier). A web page,
  an OpenAlex work and a World Bank series are all Documents; for APIs the URL
  is the API request, so anyone can re-issue it.

Nothing here does I/O; `retrieve` records Documents into a run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from research_engine.vocabulary import AccessTier


class Chunk(NamedTuple):
    """A block of a reader's output. An entry's `text` starts with its `term`; `level` is a heading's."""

    kind: str
    text: str
    level: int = 0
    term: str = ""


@dataclass
class Passage:
    """A numbered block of a source's text.

    `kind` is heading | paragraph | list-item | table-row | code | data | entry. An `entry` is a reference
    entry: a term (an option, a setting, a signature) with the first paragraph of its description, and
    `term` is the start of `text` that is the term. `level` is a heading's level, 1 (outermost) to 6, or 0
    when the reader did not know it. `heading_path` holds the texts of the headings above the passage,
    outermost first (a heading's own path excludes itself); the page title is metadata, not in it.
    """

    id: str
    text: str
    kind: str = "paragraph"
    level: int = 0
    term: str = ""
    heading_path: tuple[str, ...] = ()

    @property
    def description(self) -> str:
        """An entry's text after its term (what the term does); any other passage's whole text."""
        return self.text[len(self.term) :].lstrip() if self.term else self.text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text, "kind": self.kind}
        if self.kind == "heading":
            out["level"] = self.level
        if self.term:
            out["term"] = self.term
        out["heading_path"] = list(self.heading_path)
        return out


def number_passages(chunks: Iterable[Chunk | tuple[str, str]]) -> list[Passage]:
    """Chunks -> Passages with ids p01, p02, ... in document order, each with its heading path.

    Whitespace is collapsed; an empty chunk is dropped. Plain `(kind, text)` pairs are chunks with no
    level and no term.
    """
    out: list[Passage] = []
    for chunk in chunks:
        c = chunk if isinstance(chunk, Chunk) else Chunk(*chunk)
        text = " ".join(c.text.split())
        if not text:
            continue
        term = " ".join(c.term.split())
        if term and not text.startswith(term):
            term = ""  # never a term the text does not start with
        kind = "paragraph" if c.kind == "entry" and not term else c.kind
        out.append(
            Passage(
                id=f"p{len(out) + 1:02d}",
                text=text,
                kind=kind,
                level=c.level if kind == "heading" else 0,
                term=term if kind == "entry" else "",
            )
        )
    return with_heading_paths(out)


_BELOW_ALL = 7  # deeper than HTML's six heading levels


def with_heading_paths(passages: Sequence[Passage]) -> list[Passage]:
    """The passages with `heading_path` set from their headings' levels, in document order.

    A heading closes every open heading at its level or deeper. A heading of unknown level (0) stands
    beside the heading before it, or below every known level when none is open (the first heading of a
    reader that does not know levels must not become every later heading's parent); so a text whose levels
    are unknown (a trace written before levels were recorded) gives each passage its nearest heading.
    """
    open_headings: list[tuple[int, str]] = []
    out = []
    for p in passages:
        if p.kind == "heading":
            level = p.level or (open_headings[-1][0] if open_headings else _BELOW_ALL)
            while open_headings and open_headings[-1][0] >= level:
                open_headings.pop()
            path = tuple(text for _, text in open_headings)
            open_headings.append((level, p.text))
        else:
            path = tuple(text for _, text in open_headings)
        out.append(Passage(id=p.id, text=p.text, kind=p.kind, level=p.level, term=p.term, heading_path=path))
    return out


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Document:
    kind: str
    requested_url: str
    final_url: str | None
    status: int | None
    retrieved_at: str
    body: bytes
    passages: list[Passage]
    content_type: str | None = None
    title: str | None = None
    language: str | None = None
    published: str | None = None
    modified: str | None = None
    canonical_url: str | None = None
    canonical_key: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    access_tier: str = AccessTier.OPEN
    robots_meta: dict[str, bool] = field(default_factory=dict)
    extraction: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)  # kind-specific: authors, DOI, indicator, ...
    from_cache: bool = False

    @property
    def sha256(self) -> str:
        return sha256_hex(self.body)

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.passages)
