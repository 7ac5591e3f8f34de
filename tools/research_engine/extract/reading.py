"""The one shape every document reader returns (`formats.read`); `page` makes an `ExtractedPage` of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from research_engine.documents import Chunk


@dataclass
class Reading:
    """What a reader found: chunks in document order and what the document says of itself."""

    chunks: Sequence[tuple[str, str] | Chunk]  # (kind, text), or a Chunk when the reader knows more (a level)
    extractor: str
    title: str | None = None
    published: str | None = None
    modified: str | None = None
    language: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. Markdown front matter, Word properties
