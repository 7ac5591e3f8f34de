"""What the four keyless sources (arXiv, Crossref, Europe PMC, Wikipedia) share.

- `Found`: one search's outcome: Candidates, the raw answers (kept as snapshots), the total the service
  reported, extras for the trust log;
- `Fetched`: one record looked up by id (a work, a paper, an article), its raw answer and parsed form;
- `get_json` / `get_body`: one request through `net.HttpClient`, its failure turned into the domain error
  every adapter raises alike: a 429 or 503 (after the client's Retry-After wait and retries) is
  `<source>-rate-limited`, other 5xx and network trouble `UpstreamFailed`, 404 `not-found`, other 4xx
  `BadInput`; a body that is not the JSON asked for is `UpstreamFailed`;
- `headers(settings)`: the User-Agent with the contact address the services ask for (Wikipedia's API
  etiquette, Crossref's polite pool), when `RESEARCH_ENGINE_MAILTO` gives one.

Each service's pacing is the client's (`Settings.polite_intervals`: arXiv one request every 3 s).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from research_engine.errors import BadInput, UpstreamFailed
from research_engine.net import FetchResult, HttpClient
from research_engine.net.client import USER_AGENT
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate
from research_engine.sources.endpoints import ApiResponse, rate_limit_headers, transport_error

RATE_LIMITED = (429, 503)
_TAG = re.compile(r"<[^>]+>")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass
class Found:
    source: str
    query: str
    candidates: list[Candidate]
    responses: list[ApiResponse]
    total: int | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Fetched:
    response: ApiResponse
    record: Any  # the parsed record (the adapter's own dataclass)


def headers(settings: Settings, accept: str | None = None) -> dict[str, str]:
    out = {"User-Agent": settings.contact_agent(USER_AGENT)}
    if accept:
        out["Accept"] = accept
    return out


def plain(value: Any) -> str:
    """Markup (JATS, HTML, `<span class="searchmatch">`) and entities out, whitespace collapsed."""
    if value is None:
        return ""
    return " ".join(html.unescape(_TAG.sub(" ", str(value))).split())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _failure(
    result: FetchResult,
    source: str,
    what: str,
    settings: Settings,
    explain: Callable[[bytes], str | None] | None,
) -> Exception:
    response = ApiResponse.from_fetch(result, settings.secrets)
    data = {"source": source, "url": response.url, "status": result.status}
    if result.status is None:
        return transport_error(result, source)
    limits = rate_limit_headers(result.headers)
    if result.status in RATE_LIMITED:
        wait = f"; it asked to retry after {result.retry_after:.0f}s" if result.retry_after else ""
        return UpstreamFailed(
            f"{source} is rate limiting or unavailable (HTTP {result.status}) for {what}{wait}",
            code=f"{source}-rate-limited",
            data={**data, "rate_limit": limits, "retry_after": result.retry_after},
        )
    said = (explain(result.body) if explain and result.body else None) or (
        plain(result.body[:300].decode("utf-8", "replace")) if result.body else ""
    )
    detail = f": {said}" if said else ""
    if result.status == 404:
        return BadInput(f"{source} has no {what} (HTTP 404){detail}", code="not-found")
    if 400 <= result.status < 500:
        return BadInput(
            f"{source} refused the request for {what} (HTTP {result.status}){detail}",
            code=f"{source}-bad-request",
            data=data,
        )
    return UpstreamFailed(
        f"{source} failed for {what} (HTTP {result.status})", code=f"{source}-upstream", data=data
    )


def get_body(
    http: HttpClient,
    url: str,
    *,
    source: str,
    what: str,
    settings: Settings,
    params: dict[str, str] | None = None,
    accept: tuple[str, ...] = ("json",),
    header: str | None = None,
    explain: Callable[[bytes], str | None] | None = None,
) -> ApiResponse:
    """One GET to an API; the answer when it is a 2xx, else the domain error (module docstring);
    `explain` reads the service's own message out of an error body."""
    result = http.get(
        url, params=params, accept=accept, headers=headers(settings, header), check_robots=False
    )
    if not result.ok:
        raise _failure(result, source, what, settings, explain)
    return ApiResponse.from_fetch(result, settings.secrets)


def json_of(response: ApiResponse, source: str) -> Any:
    try:
        return json.loads(response.body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UpstreamFailed(
            f"{source} answered {response.url} with a body that is not JSON", code=f"{source}-unexpected"
        ) from exc


def get_json(http: HttpClient, url: str, **kw: Any) -> tuple[ApiResponse, Any]:
    response = get_body(http, url, **kw)
    return response, json_of(response, kw["source"])
