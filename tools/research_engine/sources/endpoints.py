"""Where each source lives and how its transport failures become domain errors.

- `base_url(name)`: the API base for openalex, worldbank, brave, tavily,
  duckduckgo, each overridable by an environment variable so tests and replays
  can point at a local server (SearXNG is configured by `SEARXNG_URL` itself).
- `open_client(client)`: the one `research_engine.net.HttpClient`, created when
  the caller did not pass one (and then closed by us).
- `redact_url(url)`: the request URL with secrets (`api_key`) removed; this is
  what goes into the trace.
- `transport_error(result, source)`: a failed `FetchResult` (guard, DNS,
  network, timeout...) as the matching `ResearchEngineError`.

Never sends anything itself; HTTP is `research_engine.net`'s job.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from research_engine.errors import Refused, ResearchEngineError, Unresolved, UpstreamFailed
from research_engine.net.client import SECRET_PARAMS

if TYPE_CHECKING:
    from research_engine.net import FetchResult, HttpClient

DEFAULT_BASES = {
    "openalex": "https://api.openalex.org",
    "worldbank": "https://api.worldbank.org/v2",
    "brave": "https://api.search.brave.com/res/v1",
    "tavily": "https://api.tavily.com",
    "duckduckgo": "https://html.duckduckgo.com/html/",
}
BASE_ENV = {
    "openalex": "RESEARCH_ENGINE_OPENALEX_URL",
    "worldbank": "RESEARCH_ENGINE_WORLDBANK_URL",
    "brave": "RESEARCH_ENGINE_BRAVE_URL",
    "tavily": "RESEARCH_ENGINE_TAVILY_URL",
    "duckduckgo": "RESEARCH_ENGINE_DUCKDUCKGO_URL",
}
# Query parameters that carry credentials: never written to the trace.


@dataclass
class ApiResponse:
    """One API exchange as the trace keeps it: the exact request URL (secrets removed) and raw body."""

    url: str
    status: int | None
    retrieved_at: str
    body: bytes
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    from_cache: bool = False

    @classmethod
    def from_fetch(cls, result: FetchResult) -> ApiResponse:
        return cls(
            url=redact_url(result.url),
            status=result.status,
            retrieved_at=result.retrieved_at,
            body=result.body,
            content_type=result.content_type,
            headers=dict(result.headers),
            etag=result.etag,
            last_modified=result.last_modified,
            from_cache=result.from_cache,
        )

    @property
    def sha256(self) -> str:
        from research_engine.documents import sha256_hex

        return sha256_hex(self.body)

    def json(self) -> Any:
        import json

        from research_engine.errors import BadInput

        try:
            return json.loads(self.body.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise BadInput(f"response from {self.url} is not JSON: {exc}", code="decode-error") from exc

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status": self.status,
            "retrieved_at": self.retrieved_at,
            "sha256": self.sha256,
            "content_type": self.content_type,
            "from_cache": self.from_cache,
        }


def env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def base_url(name: str) -> str:
    """The base URL of source `name`, from its override variable or the public default."""
    value = env(BASE_ENV[name]) or DEFAULT_BASES[name]
    # DuckDuckGo's base is the endpoint itself (`/html/`, trailing slash and all).
    return value if name == "duckduckgo" else value.rstrip("/")


def redact_url(url: str) -> str:
    """`url` without credential parameters (the trace must never hold a secret)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k.lower() not in SECRET_PARAMS]
    if len(kept) == len(pairs):
        return url
    return urlunsplit(parts._replace(query=urlencode(kept, safe=",:;|*")))


@contextlib.contextmanager
def open_client(client: HttpClient | None = None) -> Iterator[HttpClient]:
    """Yield `client`, or a fresh HttpClient that is closed afterwards."""
    if client is not None:
        yield client
        return
    from research_engine.net import HttpClient

    fresh = HttpClient()
    try:
        yield fresh
    finally:
        fresh.close()


def describe(result: FetchResult) -> str:
    detail = result.error_detail or result.error or "failed"
    status = f"HTTP {result.status}: " if result.status else ""
    return f"{status}{detail}"


def transport_error(result: FetchResult, source: str, **data: Any) -> ResearchEngineError:
    """A non-HTTP-status failure (guard, DNS, network, timeout, size...) as a domain error."""
    url = redact_url(result.url)
    message = f"{source}: {describe(result)} ({url})"
    payload = {"source": source, "url": url, "error": result.error, "status": result.status, **data}
    if result.error in ("refused-ssrf", "refused-scheme", "refused-robots"):
        if result.error == "refused-ssrf":
            message += "; loopback and private addresses need RESEARCH_ENGINE_ALLOW_PRIVATE=1"
        return Refused(message, code=result.error, data=payload)
    if result.error == "unresolved":
        return Unresolved(message, code="unresolved", data=payload)
    return UpstreamFailed(message, code=f"{source}-{result.error or 'failed'}", data=payload)


def is_transient(result: FetchResult) -> bool:
    """Network trouble, 5xx and 429: the kind of failure another backend may not share."""
    if result.error in ("network", "timeout", "empty"):
        return True
    return result.status is not None and (result.status >= 500 or result.status == 429)


def rate_limit_headers(headers: dict[str, str]) -> dict[str, str]:
    """The rate-limit headers a response carried (OpenAlex: x-ratelimit-*, ratelimit-*, retry-after)."""
    return {
        k: v
        for k, v in sorted(headers.items())
        if k.startswith("x-ratelimit-") or k.startswith("ratelimit-") or k == "retry-after"
    }
