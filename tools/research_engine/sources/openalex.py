"""OpenAlex (https://api.openalex.org): works search, one work by id or DOI, cursor paging.

Owns the OpenAlex request shapes and the parsing of its answers:
- `reconstruct_abstract`: `abstract_inverted_index` (word -> positions) back to text;
- `parse_work`: a Work record (id, DOI, title, year, abstract, authors, venue,
  cited_by_count, open-access URL) from the lenient JSON of 2025 and 2026;
- `get_work` and `search_works` over `research_engine.net`, with `mailto` when
  `Settings.mailto` is set and `api_key` when `Settings.openalex_api_key` is set;
- `check_response`: every recorded error shape (400 JSON `{error, message}`,
  401 bad key, 404 with an HTML body, 429 / exhausted allowance) as a clear
  domain error, never a crash.

Request URLs handed to the trace never contain the api_key. Never records
anything into a run (see `sources.record`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote

from research_engine.errors import BadInput, NotConfigured, ResearchEngineError, UpstreamFailed
from research_engine.net import FetchResult, HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query
from research_engine.sources.endpoints import (
    ApiResponse,
    open_client,
    rate_limit_headers,
    transport_error,
)
from research_engine.vocabulary import AccessTier, CandidateKind

SOURCE = "openalex"
# Root-level fields a search needs; keeps list responses small (select= is documented as root-level only).
SEARCH_SELECT = (
    "id,doi,title,display_name,publication_year,publication_date,type,cited_by_count,"
    "authorships,primary_location,best_oa_location,open_access,abstract_inverted_index,relevance_score"
)
MAX_PER_PAGE = 100  # the current docs say 1-100 (older ones 200)
MAX_PAGES = 50  # a runaway guard for cursor paging, far above any sensible pull

_DOI_RE = re.compile(r"(10\.\d{4,9}/\S+)", re.IGNORECASE)
_WORK_ID_RE = re.compile(r"^(?:https?://openalex\.org/)?(W\d+)$", re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def reconstruct_abstract(inverted_index: dict[str, list[int]] | None) -> str | None:
    """Text from OpenAlex's `abstract_inverted_index`: each word placed at each of its positions."""
    if not inverted_index:
        return None
    placed: dict[int, str] = {}
    for word, positions in inverted_index.items():
        for position in positions or ():
            placed[int(position)] = word
    if not placed:
        return None
    return " ".join(placed[i] for i in sorted(placed))


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s.strip()]


def normalize_doi(value: str | None) -> str | None:
    """'https://doi.org/10.1/X', 'doi:10.1/x', '10.1/x' -> '10.1/x' (DOIs are case-insensitive)."""
    if not value:
        return None
    match = _DOI_RE.search(value.strip())
    return match.group(1).lower() if match else None


def work_path(id_or_doi: str) -> str:
    """The `/works/...` path segment for an OpenAlex id (W123, openalex URL) or a DOI in any usual form."""
    value = (id_or_doi or "").strip()
    match = _WORK_ID_RE.match(value)
    if match:
        return match.group(1).upper()
    doi = normalize_doi(value)
    if doi:
        return "https://doi.org/" + quote(doi, safe="")
    raise BadInput(
        f"{id_or_doi!r} is neither an OpenAlex work id (W2741809807) nor a DOI (10.1234/...)",
        code="bad-work-id",
        field="id",
    )


@dataclass
class Work:
    id: str
    doi: str | None
    title: str | None
    year: int | None
    publication_date: str | None
    abstract: str | None
    authors: list[str]
    venue: str | None
    venue_type: str | None
    type: str | None
    cited_by_count: int | None
    is_oa: bool | None
    oa_url: str | None
    landing_url: str | None
    relevance_score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def short_id(self) -> str:
        return self.id.rsplit("/", 1)[-1]

    def source_type(self) -> str | None:
        """A hint for selection: journal articles and reviews are peer-reviewed, datasets are data."""
        if self.type in ("article", "review", "letter") and self.venue_type in ("journal", "conference"):
            return "peer"
        if self.type == "dataset":
            return "data"
        if self.type in ("preprint", "report", "dissertation"):
            return "primary"
        return None


def parse_work(data: dict[str, Any]) -> Work:
    """A Work from one OpenAlex work object; absent or null fields stay None."""
    if not isinstance(data, dict) or not data.get("id"):
        raise UpstreamFailed("OpenAlex returned something that is not a work", code="openalex-unexpected")
    primary = data.get("primary_location") or {}
    source = primary.get("source") or {}
    best_oa = data.get("best_oa_location") or {}
    open_access = data.get("open_access") or {}
    authors = [
        (a.get("author") or {}).get("display_name") or a.get("raw_author_name")
        for a in data.get("authorships") or []
    ]
    return Work(
        id=data["id"],
        doi=normalize_doi(data.get("doi")),
        title=data.get("title") or data.get("display_name"),
        year=data.get("publication_year"),
        publication_date=data.get("publication_date"),
        abstract=reconstruct_abstract(data.get("abstract_inverted_index")),
        authors=[a for a in authors if a],
        venue=source.get("display_name"),
        venue_type=source.get("type"),
        type=data.get("type"),
        cited_by_count=data.get("cited_by_count"),
        is_oa=open_access.get("is_oa"),
        oa_url=open_access.get("oa_url") or best_oa.get("pdf_url") or best_oa.get("landing_page_url"),
        landing_url=primary.get("landing_page_url"),
        relevance_score=data.get("relevance_score"),
    )


def access_tier(settings: Settings) -> str:
    """OpenAlex records are open; with a key the access is the free-key tier."""
    return AccessTier.FREE_KEY if settings.openalex_api_key else AccessTier.OPEN


def work_candidate(work: Work, rank: int, tier: str = AccessTier.OPEN) -> Candidate:
    url = f"https://doi.org/{work.doi}" if work.doi else work.id
    snippet = work.abstract or ""
    return Candidate(
        title=work.title or work.short_id,
        url=url,
        snippet=snippet[:500],
        rank=rank,
        backend=SOURCE,
        kind=CandidateKind.OPENALEX,
        published=work.publication_date,
        doi=work.doi,
        year=work.year,
        cited_by_count=work.cited_by_count,
        access_tier=tier,
        source_type=work.source_type(),
        extra={
            "openalex_id": work.short_id,
            "venue": work.venue,
            "type": work.type,
            "authors": work.authors[:10],
            "is_oa": work.is_oa,
            "oa_url": work.oa_url,
            "relevance_score": work.relevance_score,
            "has_abstract": work.abstract is not None,
        },
    )


def common_params(settings: Settings) -> dict[str, str]:
    params: dict[str, str] = {}
    if settings.mailto:
        params["mailto"] = settings.mailto
    if settings.openalex_api_key:
        params["api_key"] = settings.openalex_api_key
    return params


def check_response(result: FetchResult, what: str, settings: Settings) -> ApiResponse:
    """The response as an ApiResponse when it is a 2xx JSON answer; otherwise a clear domain error."""
    response = ApiResponse.from_fetch(result, settings.secrets)
    limits = rate_limit_headers(result.headers)
    data = {"source": SOURCE, "url": response.url, "status": result.status, "rate_limit": limits}
    if result.ok:
        return response
    if result.status is None:
        raise transport_error(result, SOURCE)
    server = _error_text(result)
    if result.status == 429 or (result.status == 403 and "pagination" not in server.lower()):
        wait = f"; retry after {result.retry_after:.0f}s" if result.retry_after else ""
        key_hint = (
            ""
            if settings.openalex_api_key
            else "; keyless use has a tiny daily allowance: set OPENALEX_API_KEY (free)"
        )
        raise UpstreamFailed(
            f"OpenAlex rate limit or daily allowance exhausted (HTTP {result.status}) "
            f"for {what}{wait}{key_hint}",
            code="openalex-rate-limited",
            data=data,
        )
    if result.status == 401:
        raise NotConfigured(
            f"OpenAlex rejected OPENALEX_API_KEY (HTTP 401: {server or 'invalid key'})",
            code="openalex-invalid-key",
            field="OPENALEX_API_KEY",
            data=data,
        )
    if result.status == 404:
        raise BadInput(f"OpenAlex has no {what} (HTTP 404)", code="not-found", data=data)
    if 400 <= result.status < 500:
        raise BadInput(
            f"OpenAlex refused the request for {what} (HTTP {result.status}): {server or 'no message'}",
            code="openalex-bad-request",
            data=data,
        )
    raise UpstreamFailed(
        f"OpenAlex failed for {what} (HTTP {result.status}){': ' + server if server else ''}",
        code="openalex-upstream",
        data=data,
    )


def _error_text(result: FetchResult) -> str:
    """'error: message' from a JSON error body; '' for HTML or empty bodies (the 404 is HTML)."""
    try:
        body = json.loads(result.body.decode("utf-8")) if result.body else None
    except (UnicodeDecodeError, ValueError):
        return ""
    if isinstance(body, dict):
        parts = [str(body[k]) for k in ("error", "message") if body.get(k)]
        return ": ".join(parts)
    return ""


def _json_object(response: ApiResponse) -> dict[str, Any]:
    try:
        body = response.json()
    except ResearchEngineError as exc:
        raise UpstreamFailed(
            f"OpenAlex answered {response.url} with a body that is not JSON", code="openalex-unexpected"
        ) from exc
    if not isinstance(body, dict):
        raise UpstreamFailed(
            f"OpenAlex answered {response.url} with an unexpected shape", code="openalex-unexpected"
        )
    return body


@dataclass
class WorkFetch:
    work: Work
    response: ApiResponse
    rate_limit: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "work": self.work.to_dict(),
            "request": self.response.to_dict(),
            "rate_limit": self.rate_limit,
        }


def get_work(
    id_or_doi: str,
    *,
    select: str | None = None,
    client: HttpClient | None = None,
    settings: Settings,
) -> WorkFetch:
    """One work by OpenAlex id or DOI (singletons are free of charge on OpenAlex)."""
    path = work_path(id_or_doi)
    params = common_params(settings)
    if select:
        params["select"] = select
    with open_client(client, settings) as http:
        result = http.get(
            f"{settings.base_url(SOURCE)}/works/{path}", params=params, accept=("json",), check_robots=False
        )
    response = check_response(result, f"work {id_or_doi}", settings)
    return WorkFetch(parse_work(_json_object(response)), response, rate_limit_headers(result.headers))


@dataclass
class WorkSearch:
    query: str | None
    filter: str | None
    works: list[Work]
    pages: list[ApiResponse]
    total_count: int | None
    rate_limit: dict[str, str]
    truncated: bool  # stopped at `limit` (or the page guard) while more results existed
    access_tier: str = AccessTier.OPEN

    def candidates(self) -> list[Candidate]:
        return [work_candidate(w, i, self.access_tier) for i, w in enumerate(self.works, 1)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "filter": self.filter,
            "total_count": self.total_count,
            "returned": len(self.works),
            "truncated": self.truncated,
            "works": [w.to_dict() for w in self.works],
            "requests": [p.to_dict() for p in self.pages],
            "rate_limit": self.rate_limit,
        }


def build_filter(filter_: str | None, year_from: int | None) -> str | None:
    parts = [filter_.strip()] if filter_ and filter_.strip() else []
    if year_from is not None:
        parts.append(f"from_publication_date:{int(year_from):04d}-01-01")
    return ",".join(parts) or None


def search_works(
    query: str | None,
    *,
    filter_: str | None = None,
    year_from: int | None = None,
    limit: int = 25,
    select: str | None = SEARCH_SELECT,
    client: HttpClient | None = None,
    settings: Settings,
) -> WorkSearch:
    """Works matching `query` (the `search=` parameter) and/or `filter=`, cursor-paged up to `limit`.

    Paging stops when `next_cursor` is null, when a page comes back empty (a
    final empty page is normal), or when `limit` works are in hand.
    """
    if not (query and query.strip()) and not filter_ and year_from is None:
        raise BadInput("an OpenAlex search needs a query or a filter", code="empty-query", field="query")
    if query and query.strip():
        query = check_query(query)
    if limit < 1:
        raise BadInput("--limit must be at least 1", code="bad-limit", field="limit")
    if year_from is not None and not 1 <= year_from <= 9999:
        raise BadInput(f"--year-from {year_from} is not a year", code="bad-year", field="year_from")
    filter_value = build_filter(filter_, year_from)
    params: dict[str, str] = {}
    if query and query.strip():
        params["search"] = query.strip()
    if filter_value:
        params["filter"] = filter_value
    if select:
        params["select"] = select
    params["per_page"] = str(min(limit, MAX_PER_PAGE))
    params.update(common_params(settings))

    works: list[Work] = []
    pages: list[ApiResponse] = []
    total: int | None = None
    limits: dict[str, str] = {}
    cursor: str | None = "*"
    truncated = False
    with open_client(client, settings) as http:
        while cursor is not None:
            if len(pages) >= MAX_PAGES:
                truncated = True
                break
            result = http.get(
                f"{settings.base_url(SOURCE)}/works",
                params={**params, "cursor": cursor},
                accept=("json",),
                check_robots=False,
            )
            response = check_response(result, f"works search {query or filter_value!r}", settings)
            limits = rate_limit_headers(result.headers) or limits
            pages.append(response)
            body = _json_object(response)
            meta = body.get("meta") or {}
            if total is None and meta.get("count") is not None:
                total = int(meta["count"])
            results = body.get("results") or []
            for item in results:
                if len(works) >= limit:
                    break
                works.append(parse_work(item))
            cursor = meta.get("next_cursor")
            if not results:
                break
            if len(works) >= limit:
                truncated = cursor is not None and (total is None or total > len(works))
                break
    return WorkSearch(query, filter_value, works, pages, total, limits, truncated, access_tier(settings))
