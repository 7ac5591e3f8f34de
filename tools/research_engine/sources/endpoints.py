"""Where each source lives and how its transport failures become domain errors.

- `open_client(client, settings)`: the one `research_engine.net.HttpClient`, created
  when the caller did not pass one (and then closed by us).
- `ApiResponse`: one exchange as the trace keeps it, its URL redacted
  (`research_engine.redaction`: no secret ever reaches the trace).
- `transport_error(result, source)`: a failed `FetchResult` (guard, DNS,
  network, timeout...) as the matching `ResearchEngineError`.

Never sends anything itself; HTTP is `research_engine.net`'s job.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from research_engine.documents import sha256_hex
from research_engine.errors import BadInput, Refused, ResearchEngineError, Unresolved, UpstreamFailed
from research_engine.net import FetchResult, HttpClient
from research_engine.net.policy import fetch_policy
from research_engine.redaction import redact_url
from research_engine.settings import Settings


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
    def from_fetch(cls, result: FetchResult, secrets: tuple[str, ...] = ()) -> ApiResponse:
        return cls(
            url=redact_url(result.url, secrets),
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
        return sha256_hex(self.body)

    def json(self) -> Any:
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


@contextlib.contextmanager
def open_client(client: HttpClient | None = None, settings: Settings | None = None) -> Iterator[HttpClient]:
    """Yield `client`, or a fresh HttpClient (configured by `settings`) that is closed afterwards."""
    if client is not None:
        yield client
        return
    fresh = fetch_policy(settings or Settings()).client()
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
