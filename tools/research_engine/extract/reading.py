"""The one shape every document reader returns (`formats.read`); `page` makes an `ExtractedPage` of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reading:
    """What a reader found: chunks in document order and what the document says of itself."""

    chunks: list[tuple[str, str]]
    extractor: str
    title: str | None = None
    published: str | None = None
    modified: str | None = None
    language: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. Markdown front matter, Word properties
