"""The one Candidate shape every search-like adapter yields.

A Candidate is a lead, not evidence: a title, a URL and a snippet a backend
returned for a query, plus whatever the backend knew (rank, engine, date, DOI,
citations, access tier, a source-type hint). The selection step scores
Candidates; nothing here judges them. `canonical_key` comes from
`research_engine.urls.canonical_key` (DOI first, then the normalized URL), so
one work found by two backends dedups to one key.

Nothing here does I/O.
"""

from __future__ import annotations

import html
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from research_engine.errors import BadInput
from research_engine.urls import canonical_key
from research_engine.vocabulary import CandidateKind, SourceType

_TAG_RE = re.compile(r"<[^>]+>")


def clean_text(value: Any) -> str:
    """Search snippets arrive with <b>/<strong> highlights and HTML entities: plain text out."""
    if value is None:
        return ""
    text = _TAG_RE.sub("", str(value))
    return " ".join(html.unescape(text).split())


MAX_QUERY_CHARS = 2000  # a search query or keyword list longer than this is refused (bad input), never sent


def check_query(text: str, what: str = "the search query") -> str:
    """`text` stripped; BadInput when it is empty or longer than MAX_QUERY_CHARS."""
    text = (text or "").strip()
    if not text:
        raise BadInput(f"{what} is empty", code="empty-query", field="query")
    if len(text) > MAX_QUERY_CHARS:
        raise BadInput(
            f"{what} is {len(text)} characters long; at most {MAX_QUERY_CHARS} are sent to a search",
            code="query-too-long",
            field="query",
        )
    return text


def canonical_key_for(url: str | None, doi: str | None = None) -> str | None:
    """The dedup key: `research_engine.urls.canonical_key` of the DOI when known, else of the URL."""

    if doi:
        return canonical_key(f"https://doi.org/{doi}")
    if not url:
        return None
    try:
        return canonical_key(url)
    except ValueError:  # a backend handed us something that is not a URL: no key rather than a crash
        return None


@dataclass
class Candidate:
    title: str
    url: str
    snippet: str
    rank: int
    backend: str  # searxng | brave | tavily | duckduckgo | openalex | worldbank
    kind: str = "web"  # web | openalex | worldbank
    engine: str | None = None  # the upstream engine, where the backend says (SearXNG)
    published: str | None = None  # as the backend gave it (ISO date or datetime)
    canonical_key: str | None = None
    doi: str | None = None
    year: int | None = None
    cited_by_count: int | None = None
    access_tier: str | None = None  # open | free-key | paid | gated, when the backend tells
    source_type: str | None = None  # peer | primary | press | practitioner | data; a hint only
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in tuple(CandidateKind):
            raise ValueError(f"unknown candidate kind {self.kind!r}")
        if self.source_type is not None and self.source_type not in tuple(SourceType):
            raise ValueError(f"unknown source type {self.source_type!r}")
        if self.canonical_key is None:
            self.canonical_key = canonical_key_for(self.url, self.doi)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})
