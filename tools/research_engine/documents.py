"""The shapes every adapter hands to the rest of the engine.

- `Passage`: a stable slice of extracted text (`p01`, `p02`, ...).
- `Document`: fetched or queried material with its provenance (exact request
  URL, status, retrieved-at, sha256 of the raw body, access tier). A web page,
  an OpenAlex work and a World Bank series are all Documents; for APIs the URL
  is the API request, so anyone can re-issue it.

Nothing here does I/O; `retrieve` records Documents into a run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from research_engine.vocabulary import AccessTier


@dataclass
class Passage:
    id: str
    text: str
    kind: str = "paragraph"  # heading | paragraph | list-item | table-row | code | data

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "kind": self.kind}


def number_passages(chunks: list[tuple[str, str]]) -> list[Passage]:
    """(kind, text) chunks -> Passages with ids p01, p02, ... in document order."""
    out: list[Passage] = []
    for kind, text in chunks:
        text = " ".join(text.split())
        if text:
            out.append(Passage(id=f"p{len(out) + 1:02d}", text=text, kind=kind))
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
