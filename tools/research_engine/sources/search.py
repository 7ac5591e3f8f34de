"""Web search: four backends behind one interface, tried in a configurable order.

Backends (each "configured" only by its own variable, read into `Settings`; nothing unconfigured is
ever used):

| name       | configured by                | request                                      |
|------------|------------------------------|----------------------------------------------|
| brave      | BRAVE_API_KEY                | GET  /web/search, header X-Subscription-Token |
| tavily     | TAVILY_API_KEY               | POST /search, Authorization: Bearer           |
| searxng    | SEARXNG_URL                  | GET  /search?format=json (JSON must be enabled) |
| duckduckgo | RESEARCH_ENGINE_ALLOW_DDG=1  | GET  html.duckduckgo.com/html/ (brittle, HTML)  |

`search(query)` tries the configured backends in `RESEARCH_ENGINE_SEARCH_ORDER`
(default brave,tavily,searxng,duckduckgo: the keyed APIs are the most stable
and a user who set a key meant it to be used; SearXNG depends on the upstream
engines it scrapes; DuckDuckGo's HTML page is a last resort that blocks bots).
When a backend fails (network, 5xx, 429 after the client's retries, but also a
rejected key or a SearXNG without JSON) the next one is tried; every attempt
is kept in the returned chain, so the trust log can say where results came
from. No backend configured -> `NotConfigured` naming the variables.

The `parse_*` functions are pure (JSON or HTML in, Candidates out).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from research_engine import libraries
from research_engine.errors import BadInput, NotConfigured, UpstreamFailed
from research_engine.net import FetchResult, HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query, clean_text
from research_engine.sources.endpoints import ApiResponse, describe, is_transient, open_client

BACKENDS = ("brave", "tavily", "searxng", "duckduckgo")
DEFAULT_ORDER = BACKENDS
CONFIG_VARS = {
    "brave": "BRAVE_API_KEY",
    "tavily": "TAVILY_API_KEY",
    "searxng": "SEARXNG_URL",
    "duckduckgo": "RESEARCH_ENGINE_ALLOW_DDG",
}
HOW_TO_CONFIGURE = (
    "set SEARXNG_URL (a SearXNG instance with `json` in search.formats), BRAVE_API_KEY, or TAVILY_API_KEY; "
    "or RESEARCH_ENGINE_ALLOW_DDG=1 to allow DuckDuckGo's HTML endpoint (brittle, may block); "
    "RESEARCH_ENGINE_SEARCH_ORDER sets the order they are tried in"
)
MAX_LIMIT = 50
SEARXNG_MAX_PAGES = 3  # SearXNG has no page size; a few pages reach a useful limit
DDG_BLOCK_MARKERS = ("anomaly-modal", "bots use DuckDuckGo too", "anomaly.js")


class BackendFailed(Exception):
    """One backend's failure: the chain records it and moves on."""

    def __init__(self, code: str, detail: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status


@dataclass
class Attempt:
    backend: str
    outcome: str  # ok | empty | failed
    status: int | None = None
    error: str | None = None  # a short code
    detail: str | None = None  # a sentence
    results: int = 0
    transient: bool = False  # network, 5xx or 429: worth retrying later
    requests: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "outcome": self.outcome,
            "status": self.status,
            "error": self.error,
            "detail": self.detail,
            "results": self.results,
            "transient": self.transient,
            "requests": self.requests,
        }


@dataclass
class SearchOutcome:
    query: str
    backend: str | None  # the backend whose results these are
    candidates: list[Candidate]
    chain: list[Attempt]
    responses: list[ApiResponse]  # the raw answers of the backend that succeeded
    info: dict[str, Any] = field(default_factory=dict)  # backend extras: suggestions, unresponsive engines

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "backend": self.backend,
            "candidates": [c.to_dict() for c in self.candidates],
            "chain": [a.to_dict() for a in self.chain],
            "info": self.info,
        }


# --- pure parsers -------------------------------------------------------------------------------------


def _json_candidates(
    items: list[Any],
    limit: int,
    backend: str,
    fields: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    start_rank: int = 1,
) -> list[Candidate]:
    """The JSON backends' common walk: items that are objects with a url, at most `limit`, ranked in
    order, the title falling back to the URL; `fields(item)` gives the backend's own Candidate fields."""
    candidates: list[Candidate] = []
    for item in items:
        if len(candidates) >= limit:
            break
        if not isinstance(item, dict) or not item.get("url"):
            continue
        candidates.append(
            Candidate(
                title=clean_text(item.get("title")) or item["url"],
                url=item["url"],
                rank=start_rank + len(candidates),
                backend=backend,
                **fields(item),
            )
        )
    return candidates


def parse_searxng(
    body: Any, limit: int = MAX_LIMIT, start_rank: int = 1, backend: str = "searxng"
) -> tuple[list[Candidate], dict[str, Any]]:
    """SearXNG's JSON envelope -> Candidates and info (suggestions, unresponsive engines, answers).

    `engines` and `positions` are kept as given and never paired by index
    (their orders are unrelated); `number_of_results` is optional and ignored.
    """
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise BackendFailed("unexpected-shape", "SearXNG answered without a results list")

    def fields(item: dict[str, Any]) -> dict[str, Any]:
        return {
            "snippet": clean_text(item.get("content")),
            "engine": item.get("engine"),
            "published": item.get("publishedDate") or None,
            "extra": {
                "engines": sorted(item.get("engines") or []),
                "positions": list(item.get("positions") or []),
                "score": item.get("score"),
                "category": item.get("category"),
            },
        }

    candidates = _json_candidates(body["results"], limit, backend, fields, start_rank=start_rank)
    info = {
        "suggestions": sorted(body.get("suggestions") or []),
        "unresponsive_engines": [list(e) for e in body.get("unresponsive_engines") or []],
        "answers": [
            a.get("answer") for a in body.get("answers") or [] if isinstance(a, dict) and a.get("answer")
        ],
    }
    return candidates, info


def parse_brave(body: Any, limit: int = MAX_LIMIT) -> tuple[list[Candidate], dict[str, Any]]:
    """Brave's web search answer (`web.results`) -> Candidates; snippets lose their <strong> tags."""
    if not isinstance(body, dict):
        raise BackendFailed("unexpected-shape", "Brave answered with an unexpected shape")
    if body.get("type") == "ErrorResponse" or "error" in body or "errors" in body:
        raise BackendFailed("api-error", brave_error_text(body))
    results = ((body.get("web") or {}).get("results")) or []

    def fields(item: dict[str, Any]) -> dict[str, Any]:
        return {
            "snippet": clean_text(item.get("description")),
            "published": item.get("page_age") or None,
            "extra": {
                "age": item.get("age"),
                "language": item.get("language"),
                "site": (item.get("profile") or {}).get("long_name"),
            },
        }

    candidates = _json_candidates(results, limit, "brave", fields)
    more = (body.get("query") or {}).get("more_results_available")
    return candidates, {"more_results_available": more}


def brave_error_text(body: Any) -> str:
    if isinstance(body, dict):
        listed = body.get("errors")
        errors = listed if isinstance(listed, list) else [body.get("error")]
        texts = [
            f"{e.get('code') or e.get('status')}: {e.get('detail') or ''}".strip(": ")
            for e in errors
            if isinstance(e, dict)
        ]
        if texts:
            return "Brave: " + "; ".join(texts)
    return "Brave answered with an error"


def parse_tavily(body: Any, limit: int = MAX_LIMIT) -> tuple[list[Candidate], dict[str, Any]]:
    """Tavily's `results` -> Candidates (rank is Tavily's order; its score goes to extra)."""
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise BackendFailed("unexpected-shape", tavily_error_text(body))

    def fields(item: dict[str, Any]) -> dict[str, Any]:
        return {
            "snippet": clean_text(item.get("content")),
            "published": item.get("published_date") or None,
            "extra": {"score": item.get("score")},
        }

    candidates = _json_candidates(body["results"], limit, "tavily", fields)
    return candidates, {"answer": body.get("answer"), "request_id": body.get("request_id")}


def tavily_error_text(body: Any) -> str:
    if isinstance(body, dict):
        detail = body.get("detail")
        if isinstance(detail, dict) and detail.get("error"):
            return f"Tavily: {detail['error']}"
        if isinstance(detail, str):
            return f"Tavily: {detail}"
    return "Tavily answered without a results list"


def unwrap_ddg_link(href: str) -> str | None:
    """DuckDuckGo result links: `//duckduckgo.com/l/?uddg=<target>&rut=...` -> target; direct links pass.

    Returns None for ads (`duckduckgo.com/y.js`) and for links that lead nowhere outside DuckDuckGo.
    """
    if not href:
        return None
    absolute = urljoin("https://duckduckgo.com/", href)
    parts = urlsplit(absolute)
    host = (parts.hostname or "").lower()
    if host.endswith("duckduckgo.com"):
        if parts.path.startswith("/l/"):
            targets = parse_qs(parts.query).get("uddg")
            target = targets[0] if targets else None
            return unwrap_ddg_link(target) if target else None
        return None  # y.js ads and internal pages
    if parts.scheme not in ("http", "https"):
        return None
    return absolute


def ddg_blocked(text: str, status: int | None) -> bool:
    """The bot challenge: HTTP 202 and/or the anomaly page markers."""
    return status == 202 or any(marker in text for marker in DDG_BLOCK_MARKERS)


def parse_duckduckgo(text: str, limit: int = MAX_LIMIT) -> tuple[list[Candidate], dict[str, Any]]:
    """Organic results of DuckDuckGo's HTML page; ads (`result--ad`, y.js links) are skipped."""
    lxml_html = libraries.lxml_html()

    if not text.strip():
        raise BackendFailed("empty", "DuckDuckGo answered with an empty page")
    tree = lxml_html.fromstring(text)
    candidates: list[Candidate] = []
    ads = 0
    for block in tree.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " result ")]'):
        classes = set((block.get("class") or "").split())
        if "result--ad" in classes:
            ads += 1
            continue
        links = block.xpath('.//a[contains(concat(" ", normalize-space(@class), " "), " result__a ")]')
        if not links:
            continue
        url = unwrap_ddg_link(links[0].get("href") or "")
        if not url:
            ads += 1
            continue
        snippet_nodes = block.xpath(
            './/*[contains(concat(" ", normalize-space(@class), " "), " result__snippet ")]'
        )
        candidates.append(
            Candidate(
                title=clean_text(links[0].text_content()) or url,
                url=url,
                snippet=clean_text(snippet_nodes[0].text_content()) if snippet_nodes else "",
                rank=len(candidates) + 1,
                backend="duckduckgo",
            )
        )
        if len(candidates) >= limit:
            break
    return candidates, {"ads_skipped": ads}


# --- configuration ------------------------------------------------------------------------------------


def is_configured(name: str, settings: Settings) -> bool:
    return bool(
        {
            "brave": settings.brave_api_key,
            "tavily": settings.tavily_api_key,
            "searxng": settings.searxng_url,
            "duckduckgo": settings.allow_ddg,
        }[name]
    )


def search_order(settings: Settings) -> list[str]:
    """The backends to consider, in order (RESEARCH_ENGINE_SEARCH_ORDER or the default)."""
    raw = settings.search_order
    if not raw:
        return list(DEFAULT_ORDER)
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise BadInput(
            f"RESEARCH_ENGINE_SEARCH_ORDER names unknown backends {unknown}; known: {', '.join(BACKENDS)}",
            code="bad-search-order",
            field="RESEARCH_ENGINE_SEARCH_ORDER",
        )
    return list(dict.fromkeys(names))


def configured_backends(settings: Settings) -> list[str]:
    return [name for name in search_order(settings) if is_configured(name, settings)]


def status(settings: Settings) -> dict[str, Any]:
    """Which backends are configured and the order they would be tried in (no secrets)."""
    return {
        "order": search_order(settings),
        "configured": configured_backends(settings),
        "backends": {
            name: {"configured": is_configured(name, settings), "variable": CONFIG_VARS[name]}
            for name in BACKENDS
        },
    }


# --- requests -----------------------------------------------------------------------------------------


def searxng_endpoint(settings: Settings) -> str:
    """SearXNG's search URL: `SEARXNG_URL` itself when it names `/search`, else that path under it."""
    return settings.searxng_endpoint


def backend_endpoint(name: str, settings: Settings) -> str:
    """The URL a backend's searches go to (its query string aside)."""
    return {
        "searxng": lambda: searxng_endpoint(settings),
        "brave": lambda: f"{settings.base_url('brave')}/web/search",
        "tavily": lambda: f"{settings.base_url('tavily')}/search",
        "duckduckgo": lambda: settings.base_url("duckduckgo"),
    }[name]()


# Backends whose requests honour robots.txt (not a documented API: a crawl, like a page fetch).
CRAWLED_BACKENDS = ("duckduckgo",)


def _json(response: ApiResponse, backend: str) -> Any:
    try:
        return json.loads(response.body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BackendFailed("decode-error", f"{backend} answered with a body that is not JSON") from exc


def _http_failure(result: FetchResult, backend: str) -> BackendFailed:
    """A failed FetchResult as this backend's failure, with the body's own explanation where there is one."""
    status_code = result.status
    body: Any = None
    if result.body:
        try:
            body = json.loads(result.body.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError):
            body = None
    if status_code is None:
        return BackendFailed(result.error or "network", describe(result))
    if backend == "searxng":
        if status_code == 403:
            return BackendFailed(
                "json-disabled",
                "SearXNG answered 403 (an HTML page): its JSON format is disabled; add `json` to "
                "search.formats in the instance's settings.yml",
                403,
            )
        if isinstance(body, dict) and body.get("error"):
            return BackendFailed("http-status", f"SearXNG HTTP {status_code}: {body['error']}", status_code)
    if backend == "brave" and isinstance(body, dict):
        return BackendFailed("http-status", f"HTTP {status_code}: {brave_error_text(body)}", status_code)
    if backend == "tavily" and isinstance(body, dict):
        return BackendFailed("http-status", f"HTTP {status_code}: {tavily_error_text(body)}", status_code)
    kind = "rate-limited" if status_code == 429 else "http-status"
    return BackendFailed(kind, f"{backend}: {describe(result)}", status_code)


def _searxng_pages(
    endpoint: str, name: str, query: str, limit: int, fetch: Callable[..., ApiResponse]
) -> tuple[list[Candidate], dict[str, Any], list[ApiResponse]]:
    """SearXNG's JSON search (a SearXNG or a corpus server), a few pages deep, deduplicated by URL."""
    candidates: list[Candidate] = []
    info: dict[str, Any] = {}
    seen: set[str] = set()
    responses: list[ApiResponse] = []
    for page in range(1, SEARXNG_MAX_PAGES + 1):
        params = {"q": query, "format": "json", **({"pageno": str(page)} if page > 1 else {})}
        try:
            response = fetch(endpoint, params=params, accept=("json",), check_robots=False)
            responses.append(response)
            page_candidates, page_info = parse_searxng(
                _json(response, name), limit, start_rank=1, backend=name
            )
        except BackendFailed as failure:
            if page == 1:
                raise
            info["paging_stopped"] = f"page {page}: {failure.detail}"  # keep what earlier pages gave
            break
        if page == 1:
            info = page_info
            if not page_candidates and page_info["unresponsive_engines"]:
                failed = ", ".join(
                    f"{e[0]} ({e[1]})" for e in page_info["unresponsive_engines"] if len(e) == 2
                )
                raise BackendFailed(
                    "engines-failed", f"SearXNG returned nothing; its engines failed: {failed}"
                )
        new = [c for c in page_candidates if c.url not in seen]  # SearXNG does not dedup across pages
        for c in new:
            seen.add(c.url)
            c.rank = len(candidates) + 1
            c.extra["page"] = page
            candidates.append(c)
        if len(candidates) >= limit or not page_candidates:
            break
    return candidates[:limit], info, responses


def _run_backend(
    name: str, query: str, limit: int, http: HttpClient, attempt: Attempt, settings: Settings
) -> tuple[list[Candidate], dict[str, Any], list[ApiResponse]]:
    responses: list[ApiResponse] = []
    secrets = settings.secrets

    def fetch(url: str, **kw: Any) -> ApiResponse:
        if kw.pop("post", None) is not None:
            result = http.post_json(url, kw.pop("payload"), headers=kw.get("headers"))
        else:
            result = http.get(url, **kw)
        attempt.status = result.status
        attempt.requests.append({"url": ApiResponse.from_fetch(result, secrets).url, "status": result.status})
        if not result.ok:
            attempt.transient = is_transient(result)
            raise _http_failure(result, name)
        response = ApiResponse.from_fetch(result, secrets)
        responses.append(response)
        return response

    if name == "searxng":
        return _searxng_pages(searxng_endpoint(settings), name, query, limit, fetch)
    if name == "brave":
        response = fetch(
            backend_endpoint(name, settings),
            params={"q": query, "count": str(min(limit, 20))},
            headers={"X-Subscription-Token": settings.brave_api_key or "", "Accept": "application/json"},
            accept=("json",),
            check_robots=False,
        )
        candidates, info = parse_brave(_json(response, name), limit)
        return candidates, info, responses
    if name == "tavily":
        payload = {"query": query, "max_results": min(limit, 20), "search_depth": "basic", "topic": "general"}
        response = fetch(
            backend_endpoint(name, settings),
            post=True,
            payload=payload,
            headers={"Authorization": f"Bearer {settings.tavily_api_key or ''}"},
        )
        candidates, info = parse_tavily(_json(response, name), limit)
        return candidates, info, responses
    if name == "duckduckgo":
        # Not a documented API: robots.txt is honoured like any crawl (the default of net.get).
        response = fetch(backend_endpoint(name, settings), params={"q": query}, accept=("html",))
        text = response.body.decode("utf-8", errors="replace")
        if ddg_blocked(text, response.status):
            raise BackendFailed(
                "blocked", f"DuckDuckGo answered with its bot challenge (HTTP {response.status}); try later"
            )
        candidates, info = parse_duckduckgo(text, limit)
        return candidates, info, responses
    raise BadInput(f"unknown search backend {name!r}", code="unknown-backend")


def search(
    query: str,
    *,
    backend: str | None = None,
    limit: int = 10,
    client: HttpClient | None = None,
    settings: Settings,
) -> SearchOutcome:
    """Ranked Candidates for `query` from the first configured backend that answers."""
    query = check_query(query)
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"--limit must be between 1 and {MAX_LIMIT}", code="bad-limit", field="limit")
    if backend is not None:
        backend = backend.strip().lower()
        if backend not in BACKENDS:
            raise BadInput(
                f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}",
                code="unknown-backend",
                field="backend",
            )
        if not is_configured(backend, settings):
            raise NotConfigured(
                f"search backend {backend} is not configured: set {CONFIG_VARS[backend]}"
                + ("=1" if backend == "duckduckgo" else ""),
                code="search-not-configured",
                field=CONFIG_VARS[backend],
            )
        names = [backend]
    else:
        names = configured_backends(settings)
        if not names:
            raise NotConfigured(
                f"no web search backend is configured: {HOW_TO_CONFIGURE}", code="search-not-configured"
            )
    chain: list[Attempt] = []
    with open_client(client, settings) as http:
        for name in names:
            attempt = Attempt(backend=name, outcome="failed")
            chain.append(attempt)
            try:
                candidates, info, responses = _run_backend(name, query, limit, http, attempt, settings)
            except BackendFailed as failure:
                attempt.error = failure.code
                attempt.detail = failure.detail
                attempt.status = failure.status if failure.status is not None else attempt.status
                continue
            attempt.outcome = "ok" if candidates else "empty"
            attempt.results = len(candidates)
            return SearchOutcome(query, name, candidates, chain, responses, info)
    summary = "; ".join(f"{a.backend}: {a.detail}" for a in chain)
    raise UpstreamFailed(
        f"every configured search backend failed ({summary})",
        code="search-failed",
        data={"query": query, "chain": [a.to_dict() for a in chain]},
    )


CORPUS = "corpus"  # the backend name of a `run --corpus DIR` folder's search


def search_corpus(
    query: str, endpoint: str, *, limit: int = 10, client: HttpClient | None = None, settings: Settings
) -> SearchOutcome:
    """Ranked Candidates for `query` from one corpus folder's search (`endpoint`, SearXNG's shape)."""
    query = check_query(query)
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"--limit must be between 1 and {MAX_LIMIT}", code="bad-limit", field="limit")
    attempt = Attempt(backend=CORPUS, outcome="failed")

    def fetch(url: str, **kw: Any) -> ApiResponse:
        result = http.get(url, **kw)
        attempt.status = result.status
        attempt.requests.append({"url": result.url, "status": result.status})
        if not result.ok:
            attempt.transient = is_transient(result)
            raise _http_failure(result, CORPUS)
        return ApiResponse.from_fetch(result, settings.secrets)

    with open_client(client, settings) as http:
        try:
            candidates, info, responses = _searxng_pages(endpoint, CORPUS, query, limit, fetch)
        except BackendFailed as failure:
            attempt.error, attempt.detail = failure.code, failure.detail
            raise UpstreamFailed(
                f"the corpus search failed ({failure.detail})",
                code="search-failed",
                data={"query": query, "chain": [attempt.to_dict()]},
            ) from None
    attempt.outcome = "ok" if candidates else "empty"
    attempt.results = len(candidates)
    return SearchOutcome(query, CORPUS, candidates, [attempt], responses, info)
