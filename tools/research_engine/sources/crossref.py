"""Crossref (https://api.crossref.org): works search and DOI lookup; metadata, landing page, reference list.

- `search(query)`: `/works?query=...&rows=N` (Crossref's relevance order);
- `lookup(doi)`: `/works/{doi}`, the DOI unescaped as Crossref documents it;
- `parse_work`: the lenient JSON (text fields are arrays, dates are `date-parts`, the abstract is JATS
  markup, often absent), with the reference list when the publisher deposited one.

The polite pool: with `RESEARCH_ENGINE_MAILTO` set, `mailto=` goes on every request and in the
User-Agent, as Crossref asks; its pacing is the client's (`Settings.polite_intervals`). The metadata is
facts Crossref claims no ownership of. Errors: the unknown DOI's plain-text 404 and the JSON validation
400 become clear domain errors (`keyless.get_body`). Nothing here records into a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from research_engine.errors import BadInput, UpstreamFailed
from research_engine.net import HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query
from research_engine.sources.endpoints import ApiResponse, open_client, rate_limit_headers
from research_engine.sources.keyless import Fetched, Found, get_json, json_of, plain
from research_engine.sources.openalex import normalize_doi
from research_engine.vocabulary import AccessTier, CandidateKind

SOURCE = "crossref"
MAX_ROWS = 100
PEER_TYPES = ("journal-article", "proceedings-article", "book-chapter")


@dataclass
class Work:
    doi: str
    title: str
    authors: list[str]
    container: str | None
    publisher: str | None
    type: str | None
    issued: str | None  # YYYY, YYYY-MM or YYYY-MM-DD
    abstract: str | None
    landing_url: str | None
    cited_by: int | None
    references: list[str] = field(default_factory=list)
    license: str | None = None

    @property
    def year(self) -> int | None:
        return int(self.issued[:4]) if self.issued and self.issued[:4].isdigit() else None


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return " ".join(str(value).split()) if value else None


def _date(parts: Any) -> str | None:
    try:
        first = ((parts or {}).get("date-parts") or [])[0]
        return "-".join(
            f"{int(p):02d}" if i else f"{int(p):04d}" for i, p in enumerate(first) if p is not None
        )
    except (TypeError, IndexError, ValueError, AttributeError):
        return None


def reference_text(ref: dict[str, Any]) -> str:
    """One reference as the publisher deposited it: its unstructured text, else its parts."""
    if ref.get("unstructured"):
        return plain(ref["unstructured"])
    parts = [
        ref.get("author"),
        ref.get("year") and f"({ref['year']})",
        ref.get("article-title"),
        ref.get("journal-title") or ref.get("volume-title"),
        ref.get("DOI") and f"doi:{ref['DOI']}",
    ]
    return ". ".join(str(p) for p in parts if p)


def parse_work(data: Any) -> Work:
    if not isinstance(data, dict) or not data.get("DOI"):
        raise UpstreamFailed("Crossref returned something that is not a work", code="crossref-unexpected")
    authors = []
    for person in data.get("author") or []:
        name = " ".join(p for p in (person.get("given"), person.get("family")) if p) or person.get("name")
        if name:
            authors.append(str(name))
    licenses = [lic.get("URL") for lic in data.get("license") or [] if isinstance(lic, dict)]
    return Work(
        doi=normalize_doi(str(data["DOI"])) or str(data["DOI"]).lower(),
        title=plain(_first(data.get("title"))) or str(data["DOI"]),
        authors=authors,
        container=_first(data.get("container-title")),
        publisher=data.get("publisher"),
        type=data.get("type"),
        issued=_date(data.get("issued")) or _date(data.get("published")),
        abstract=plain(data.get("abstract")) or None,
        landing_url=data.get("URL"),
        cited_by=data.get("is-referenced-by-count"),
        references=[
            t for t in (reference_text(r) for r in data.get("reference") or [] if isinstance(r, dict)) if t
        ],
        license=licenses[0] if licenses else None,
    )


def work_candidate(work: Work, rank: int) -> Candidate:
    return Candidate(
        title=work.title,
        url=f"https://doi.org/{work.doi}",
        snippet=(work.abstract or "")[:500],
        rank=rank,
        backend=SOURCE,
        kind=CandidateKind.CROSSREF,
        published=work.issued,
        doi=work.doi,
        year=work.year,
        cited_by_count=work.cited_by,
        access_tier=AccessTier.OPEN,  # the metadata record is open; the work itself may not be
        source_type="peer" if work.type in PEER_TYPES else None,
        extra={
            "container": work.container,
            "type": work.type,
            "authors": work.authors[:10],
            "landing_url": work.landing_url,
            "references": len(work.references),
            "has_abstract": work.abstract is not None,
            "full_text": None,
        },
    )


def _params(settings: Settings, **params: str) -> dict[str, str]:
    return {**params, **({"mailto": settings.mailto} if settings.mailto else {})}


def search(query: str, *, limit: int = 10, client: HttpClient | None = None, settings: Settings) -> Found:
    query = check_query(query)
    rows = str(max(1, min(limit, MAX_ROWS)))
    with open_client(client, settings) as http:
        response, body = get_json(
            http,
            f"{settings.base_url(SOURCE)}/works",
            source=SOURCE,
            what=f"works search {query!r}",
            settings=settings,
            params=_params(settings, query=query, rows=rows),
        )
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("items"), list):
        raise UpstreamFailed("Crossref answered a search without an item list", code="crossref-unexpected")
    works = [
        parse_work(item) for item in message["items"][:limit] if isinstance(item, dict) and item.get("DOI")
    ]
    candidates = [work_candidate(w, rank) for rank, w in enumerate(works, 1)]
    return Found(
        SOURCE,
        query,
        candidates,
        [response],
        message.get("total-results"),
        {"pool": response.headers.get("x-api-pool"), "rate_limit": rate_limit_headers(response.headers)},
    )


def work_url(doi: str, settings: Settings) -> str:
    return f"{settings.base_url(SOURCE)}/works/{quote(doi, safe='/')}"


def lookup(doi: str, *, client: HttpClient | None = None, settings: Settings) -> Fetched:
    """One work by DOI (any usual form: 10.x/y, doi:..., https://doi.org/...)."""
    found = normalize_doi(doi)
    if not found:
        raise BadInput(f"{doi!r} is not a DOI (10.1234/...)", code="bad-doi", field="doi")
    with open_client(client, settings) as http:
        response, body = get_json(
            http,
            work_url(found, settings),
            source=SOURCE,
            what=f"work {found}",
            settings=settings,
            params=_params(settings),
        )
    return Fetched(response, work_of(response))


def work_of(response: ApiResponse) -> Work:
    """The work of a recorded lookup (the verifier re-reads a source this way)."""
    body = json_of(response, SOURCE)
    return parse_work(body.get("message") if isinstance(body, dict) else None)
