"""World Bank Indicators API v2: country-by-indicator series, indicator metadata, indicator discovery.

Owns the API's request shapes and its quirks:
- answers are `[metadata, rows]`; counts are sometimes strings; `rows` is
  `null` when a valid query has no data;
- errors arrive as HTTP 200 with a one-element `[{"message": [...]}]` envelope
  (so the status is never trusted alone), and some as HTTP 400 HTML pages;
- values inside a series can be null: points keep them, and `latest` is the most
  recent non-null point with its year;
- paging is followed until `page == pages`;
- there is no server-side indicator search: `search_indicators` fetches the
  whole catalogue once, caches it under the cache directory, and matches locally.

Never records anything into a run (see `sources.record`).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from research_engine import bounded
from research_engine.errors import BadInput, ResearchEngineError, UpstreamFailed
from research_engine.net import FetchResult, HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query
from research_engine.sources.endpoints import ApiResponse, open_client, transport_error
from research_engine.trace import atomic_write_text, iso
from research_engine.vocabulary import AccessTier, CandidateKind, SourceType

SOURCE = "worldbank"
PER_PAGE = 1000  # one page holds any single-country annual series (wbdata uses the same)
CATALOGUE_PER_PAGE = 1000  # ~19k indicators in 2021: ~20 pages, each well under the 5 MiB body cap
MAX_PAGES = 50
CATALOGUE_TTL_SECONDS = 30 * 24 * 3600  # the API itself sends Cache-Control max-age=2592000 (30 days)
_CODE_RE = re.compile(r"^[A-Za-z0-9]{2,3}$")
_INDICATOR_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_DATE_RE = re.compile(r"^(\d{4}(?:[MQ]\d{1,2})?|YTD)(?::(\d{4}(?:[MQ]\d{1,2})?))?$")


def as_int(value: Any) -> int | None:
    """World Bank counts are numbers on data calls and strings on metadata calls."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def error_messages(body: Any) -> list[dict[str, str]] | None:
    """The message list of the 200-with-message error envelope, or None when `body` is not one."""
    if isinstance(body, list) and len(body) == 1 and isinstance(body[0], dict) and "message" in body[0]:
        messages = body[0].get("message") or []
        return [m for m in messages if isinstance(m, dict)] or [
            {"id": "", "key": "error", "value": "unknown"}
        ]
    return None


def split_envelope(body: Any, what: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(metadata, rows) of a `[metadata, rows]` answer; rows is [] when the API sent null."""
    messages = error_messages(body)
    if messages is not None:
        text = "; ".join(
            f"{m.get('key', '')}: {m.get('value', '')} (id {m.get('id', '?')})" for m in messages
        )
        ids = {str(m.get("id")) for m in messages}
        if ids & {"105"}:  # "service currently unavailable"
            raise UpstreamFailed(
                f"World Bank API unavailable for {what}: {text}", code="worldbank-unavailable"
            )
        raise BadInput(
            f"World Bank rejected {what}: {text}",
            code="worldbank-invalid-value",
            data={"source": SOURCE, "messages": messages},
        )
    if not isinstance(body, list) or len(body) != 2 or not isinstance(body[0], dict):
        raise UpstreamFailed(
            f"World Bank answered {what} with an unexpected shape", code="worldbank-unexpected"
        )
    rows = body[1]
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        raise UpstreamFailed(
            f"World Bank answered {what} with rows that are not a list", code="worldbank-unexpected"
        )
    meta = dict(body[0])
    for key in ("page", "pages", "per_page", "total"):
        meta[key] = as_int(meta.get(key))
    return meta, [r for r in rows if isinstance(r, dict)]


def check_response(result: FetchResult, what: str, settings: Settings) -> ApiResponse:
    """A 2xx answer as an ApiResponse; HTTP errors (including the 400 HTML page) as domain errors."""
    secrets = settings.secrets
    if result.ok:
        return ApiResponse.from_fetch(result, secrets)
    if result.status is None:
        raise transport_error(result, SOURCE)
    data = {"source": SOURCE, "url": ApiResponse.from_fetch(result, secrets).url, "status": result.status}
    kind = "an HTML error page" if (result.content_type or "").endswith("html") else "an error"
    if 400 <= result.status < 500 and result.status != 429:
        raise BadInput(
            f"World Bank refused {what} (HTTP {result.status}, {kind}): check the country, indicator, "
            "date and source values",
            code="worldbank-bad-request",
            data=data,
        )
    raise UpstreamFailed(
        f"World Bank failed for {what} (HTTP {result.status})", code="worldbank-upstream", data=data
    )


def _body(response: ApiResponse, what: str) -> Any:
    try:
        return response.json()
    except ResearchEngineError as exc:
        raise UpstreamFailed(
            f"World Bank answered {what} with a body that is not JSON", code="worldbank-unexpected"
        ) from exc


def fetch_pages(
    path: str, params: dict[str, str], what: str, client: HttpClient, settings: Settings
) -> tuple[list[ApiResponse], dict[str, Any], list[dict[str, Any]]]:
    """Every page of a `[metadata, rows]` listing: (responses, first page's metadata, all rows)."""
    responses: list[ApiResponse] = []
    rows: list[dict[str, Any]] = []
    first_meta: dict[str, Any] = {}
    page = 1
    while True:
        result = client.get(
            f"{settings.base_url(SOURCE)}{path}",
            params={**params, "page": str(page)},
            accept=("json",),
            check_robots=False,
        )
        response = check_response(result, what, settings)
        meta, page_rows = split_envelope(_body(response, what), what)
        responses.append(response)
        rows.extend(page_rows)
        if page == 1:
            first_meta = meta
        pages = meta.get("pages") or 0
        if page >= pages or not page_rows:
            break
        if page >= MAX_PAGES:
            first_meta["truncated"] = True
            break
        page += 1
    return responses, first_meta, rows


# --- series -------------------------------------------------------------------------------------


@dataclass
class Point:
    year: int | str  # an int for annual data; "2013Q1" / "2012M01" stay strings
    value: float | int | None

    def to_dict(self) -> dict[str, Any]:
        return {"year": self.year, "value": self.value}


@dataclass
class Series:
    country: str  # ISO3 where the API gave one, else the code asked for
    country_name: str | None
    indicator: str
    indicator_name: str | None
    points: list[Point]
    latest: Point | None
    note: str | None = None  # "no data ..." said plainly

    def to_dict(self) -> dict[str, Any]:
        return {
            "country": self.country,
            "country_name": self.country_name,
            "indicator": self.indicator,
            "indicator_name": self.indicator_name,
            "points": [p.to_dict() for p in self.points],
            "latest": self.latest.to_dict() if self.latest else None,
            "note": self.note,
        }


def parse_year(date: Any) -> int | str:
    text = str(date)
    return int(text) if text.isdigit() else text


def latest_non_null(points: list[Point]) -> Point | None:
    """The most recent point whose value is not null (rows arrive newest first, but sort anyway)."""
    valued = [p for p in points if p.value is not None]
    if not valued:
        return None
    return max(valued, key=lambda p: str(p.year).zfill(8))


def group_series(rows: list[dict[str, Any]], countries: list[str], indicator: str, span: str) -> list[Series]:
    """One Series per (country, indicator) in the rows, plus an explicit no-data Series for each
    requested country that got no rows at all."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        country = row.get("countryiso3code") or (row.get("country") or {}).get("id") or "?"
        ind = (row.get("indicator") or {}).get("id") or indicator
        group = grouped.setdefault((country, ind), [])
        if all(
            r.get("date") != row.get("date") for r in group
        ):  # a repeated row (paging overlap) counts once
            group.append(row)
    out: list[Series] = []
    seen_codes: set[str] = set()
    for (country, ind), group in grouped.items():
        first = group[0]
        seen_codes.update({country.upper(), str((first.get("country") or {}).get("id") or "").upper()})
        points = sorted(
            (Point(parse_year(r.get("date")), r.get("value")) for r in group),
            key=lambda p: str(p.year).zfill(8),
        )
        latest = latest_non_null(points)
        note = None if latest else f"{country}: every value in {span} is null (no data reported)"
        out.append(
            Series(
                country=country,
                country_name=(first.get("country") or {}).get("value"),
                indicator=ind,
                indicator_name=(first.get("indicator") or {}).get("value"),
                points=points,
                latest=latest,
                note=note,
            )
        )
    for code in countries:
        if code.lower() == "all" or code.upper() in seen_codes:
            continue
        out.append(
            Series(
                country=code.upper(),
                country_name=None,
                indicator=indicator,
                indicator_name=None,
                points=[],
                latest=None,
                note=f"{code.upper()}: no data for {indicator} in {span}",
            )
        )
    return out


@dataclass
class SeriesFetch:
    countries: list[str]
    indicator: str
    span: str
    series: list[Series]
    pages: list[ApiResponse]
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "countries": self.countries,
            "indicator": self.indicator,
            "span": self.span,
            "series": [s.to_dict() for s in self.series],
            "requests": [p.to_dict() for p in self.pages],
            "source": {k: self.metadata.get(k) for k in ("sourceid", "sourcename", "lastupdated")},
        }


def parse_countries(countries: str | list[str]) -> list[str]:
    items = countries if isinstance(countries, list) else re.split(r"[;,\s]+", countries)
    codes = [c.strip() for c in items if c and c.strip()]
    if not codes:
        raise BadInput("name at least one country code (ISO3 such as JPN, ISO2, or all)", code="bad-country")
    for code in codes:
        if code.lower() != "all" and not _CODE_RE.match(code):
            raise BadInput(
                f"{code!r} is not a country code (ISO3 such as JPN, ISO2, or all)", code="bad-country"
            )
    return codes


def check_indicator(code: str) -> str:
    code = (code or "").strip()
    if not code or len(code) > 64 or not _INDICATOR_RE.match(code):
        raise BadInput(f"{code!r} is not an indicator code (such as NY.GDP.MKTP.CD)", code="bad-indicator")
    return code


def fetch_series(
    countries: str | list[str],
    indicator: str,
    *,
    date: str | None = None,
    mrv: int | None = None,
    client: HttpClient | None = None,
    settings: Settings,
) -> SeriesFetch:
    """The series of `indicator` for each country (`JPN;USA`), following every page."""
    codes = parse_countries(countries)
    indicator = check_indicator(indicator)
    if date and mrv is not None:
        raise BadInput("give --date or --mrv, not both", code="bad-option")
    params: dict[str, str] = {"format": "json", "per_page": str(PER_PAGE)}
    span = "all years"
    if date:
        if not _DATE_RE.match(date.strip()):
            raise BadInput(
                f"--date {date!r} is not a year or a range like 2000:2020", code="bad-date", field="date"
            )
        params["date"] = date.strip()
        span = date.strip()
    if mrv is not None:
        if mrv < 1:
            raise BadInput("--mrv must be at least 1", code="bad-mrv", field="mrv")
        params["mrv"] = str(mrv)
        span = f"the {mrv} most recent periods"
    joined = ";".join(c.upper() if c.lower() != "all" else "all" for c in codes)
    path = f"/country/{quote(joined, safe=';')}/indicator/{quote(indicator, safe='.;')}"
    what = f"{indicator} for {joined}"
    with open_client(client, settings) as http:
        pages, meta, rows = fetch_pages(path, params, what, http, settings)
    return SeriesFetch(codes, indicator, span, group_series(rows, codes, indicator, span), pages, meta)


# --- indicators -----------------------------------------------------------------------------------


@dataclass
class Indicator:
    id: str
    name: str
    unit: str | None
    source: str | None
    source_note: str | None
    source_organization: str | None
    topics: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def url(self, base: str) -> str:
        """The indicator's metadata request under the API base `base` (`Settings.base_url`)."""
        return f"{base}/indicator/{quote(self.id, safe='.')}?format=json"


def parse_indicator(row: dict[str, Any]) -> Indicator:
    return Indicator(
        id=str(row.get("id") or ""),
        name=str(row.get("name") or "").strip(),
        unit=row.get("unit") or None,
        source=(row.get("source") or {}).get("value"),
        source_note=row.get("sourceNote") or None,
        source_organization=row.get("sourceOrganization") or None,
        topics=[str(t.get("value") or "").strip() for t in row.get("topics") or [] if isinstance(t, dict)],
    )


@dataclass
class IndicatorFetch:
    indicator: Indicator
    response: ApiResponse

    def to_dict(self) -> dict[str, Any]:
        return {"indicator": self.indicator.to_dict(), "request": self.response.to_dict()}


def indicator_metadata(code: str, *, client: HttpClient | None = None, settings: Settings) -> IndicatorFetch:
    code = check_indicator(code)
    what = f"indicator {code}"
    with open_client(client, settings) as http:
        result = http.get(
            f"{settings.base_url(SOURCE)}/indicator/{quote(code, safe='.')}",
            params={"format": "json"},
            accept=("json",),
            check_robots=False,
        )
    response = check_response(result, what, settings)
    _, rows = split_envelope(_body(response, what), what)
    if not rows:
        raise BadInput(f"World Bank has no indicator {code}", code="not-found")
    return IndicatorFetch(parse_indicator(rows[0]), response)


def catalogue_path(settings: Settings) -> Path:
    return settings.cache_root / "worldbank" / "indicators.json"


def load_catalogue(
    *, refresh: bool = False, client: HttpClient | None = None, settings: Settings
) -> dict[str, Any]:
    """The indicator catalogue, from the cache when fresh, else fetched (every page) and cached."""
    path = catalogue_path(settings)
    if not refresh and path.is_file():
        try:
            cached = bounded.load_json(bounded.read_bytes(path), "indicator catalogue cache")
            if time.time() - float(cached.get("fetched_epoch", 0)) < CATALOGUE_TTL_SECONDS:
                cached["from_cache"] = True
                return dict(cached)
        except (BadInput, OSError, ValueError, AttributeError, TypeError):
            pass  # a damaged cache is simply refetched
    with open_client(client, settings) as http:
        pages, meta, rows = fetch_pages(
            "/indicator",
            {"format": "json", "per_page": str(CATALOGUE_PER_PAGE)},
            "the indicator list",
            http,
            settings,
        )
    catalogue = {
        "fetched_at": iso(),
        "fetched_epoch": time.time(),
        "requests": [p.to_dict() for p in pages],
        "total": meta.get("total"),
        "truncated": bool(meta.get("truncated")),
        "indicators": [parse_indicator(r).to_dict() for r in rows if r.get("id")],
    }
    atomic_write_text(path, json.dumps(catalogue, ensure_ascii=False))
    catalogue["from_cache"] = False
    return catalogue


def match_indicators(indicators: list[dict[str, Any]], keywords: str, limit: int = 20) -> list[Indicator]:
    """Indicators whose name, code or note holds every keyword; name hits rank first, then shorter names."""
    words = [w for w in re.findall(r"[\w$%.]+", keywords.lower()) if w]
    if not words:
        raise BadInput("name at least one keyword", code="empty-query", field="keywords")
    if limit < 1:
        raise BadInput("--limit must be at least 1", code="bad-limit", field="limit")
    scored: list[tuple[int, int, str, dict[str, Any]]] = []
    for row in indicators:
        name = str(row.get("name") or "").lower()
        code = str(row.get("id") or "").lower()
        note = str(row.get("source_note") or "").lower()
        score = 0
        for word in words:
            if word in name or word in code:
                score += 3
            elif word in note:
                score += 1
            else:
                score = -1
                break
        if score > 0:
            scored.append((-score, len(name), code, row))
    scored.sort(key=lambda item: item[:3])
    return [_indicator_from_row(r) for *_, r in scored[:limit]]


def _indicator_from_row(row: dict[str, Any]) -> Indicator:
    """A cached catalogue row (an `Indicator.to_dict()` read back from JSON); a missing field is None."""
    fields: dict[str, Any] = {k: row.get(k) for k in Indicator.__dataclass_fields__}
    return Indicator(**fields)


def indicator_candidate(indicator: Indicator, rank: int, base: str) -> Candidate:
    return Candidate(
        title=indicator.name,
        url=indicator.url(base),
        snippet=(indicator.source_note or "")[:500],
        rank=rank,
        backend=SOURCE,
        kind=CandidateKind.WORLDBANK,
        access_tier=AccessTier.OPEN,
        source_type=SourceType.DATA,
        extra={
            "indicator": indicator.id,
            "source": indicator.source,
            "source_organization": indicator.source_organization,
            "topics": indicator.topics,
        },
    )


@dataclass
class IndicatorSearch:
    keywords: str
    matches: list[Indicator]
    catalogue_size: int
    from_cache: bool
    fetched_at: str | None
    base_url: str
    catalogue_path: Path

    def candidates(self) -> list[Candidate]:
        return [indicator_candidate(ind, i, self.base_url) for i, ind in enumerate(self.matches, 1)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "keywords": self.keywords,
            "indicators": [m.to_dict() for m in self.matches],
            "catalogue_size": self.catalogue_size,
            "catalogue_from_cache": self.from_cache,
            "catalogue_fetched_at": self.fetched_at,
            "catalogue_path": str(self.catalogue_path),
        }


def search_indicators(
    keywords: str,
    *,
    limit: int = 20,
    refresh: bool = False,
    client: HttpClient | None = None,
    settings: Settings,
) -> IndicatorSearch:
    """Indicators matching `keywords`, searched locally in the cached catalogue."""
    if not keywords or not keywords.strip():
        raise BadInput("name at least one keyword", code="empty-query", field="keywords")
    keywords = check_query(keywords, "the keyword list")
    if limit < 1:
        raise BadInput("--limit must be at least 1", code="bad-limit", field="limit")
    catalogue = load_catalogue(refresh=refresh, client=client, settings=settings)
    indicators = catalogue.get("indicators") or []
    return IndicatorSearch(
        keywords=keywords,
        matches=match_indicators(indicators, keywords, limit),
        catalogue_size=len(indicators),
        from_cache=bool(catalogue.get("from_cache")),
        fetched_at=catalogue.get("fetched_at"),
        base_url=settings.base_url(SOURCE),
        catalogue_path=catalogue_path(settings),
    )
