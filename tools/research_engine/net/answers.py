"""How one exchange becomes a `FetchResult`: a redirect followed or refused, a 304 answered from the
revalidation cache, a failure, a success (decoded, scrubbed of known secrets, stored for revalidation).

`Answers` is the part of `HttpClient` that turns what `exchange` read into results; it expects the client's
`secrets`, `cache` and `_count`. Secrets an upstream echoes back are scrubbed (`redaction.scrub_bytes`)
from every body and header value here, before anything can store them. No I/O but the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from research_engine.documents import sha256_hex
from research_engine.net import content as bodies
from research_engine.net.cache import CacheEntry, RevalidationCache
from research_engine.net.exchange import Exchange
from research_engine.net.guard import check_url
from research_engine.net.result import FetchResult, elapsed_ms, failure
from research_engine.redaction import scrub, scrub_bytes
from research_engine.trace import iso
from research_engine.vocabulary import FetchError

CachedCopy = tuple[CacheEntry, bytes]


@dataclass
class Fetch:
    """One fetch across its hops: what was asked for, when, by what deadline, and the redirects so far."""

    url: str
    started: float
    deadline: float
    redirects: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def failed(self, error: str, detail: str | None, **seen: Any) -> FetchResult:
        return failure(self.url, self.started, error, detail, redirects=self.redirects, **seen)


class Answers:
    """Results from exchanges (mixed into `HttpClient`)."""

    secrets: tuple[str, ...]
    cache: RevalidationCache | None

    def _count(self, name: str) -> None:  # the client's counter
        raise NotImplementedError

    def _redirect(self, fetch: Fetch, target: str, answer: Exchange) -> str | FetchResult:
        """Where a redirect leads (recorded in `fetch.redirects`), or the failure it ends in."""
        seen = {"status": answer.status, "final_url": target, "headers": answer.headers}
        location = answer.headers.get("location")
        if not location:
            return fetch.failed(FetchError.HTTP_STATUS, f"redirect {answer.status} without Location", **seen)
        following = urljoin(target, location.strip())
        normal = check_url(following, resolve=False, allow_private=True).url or following
        fetch.redirects.append(following)
        if normal in fetch.seen or following in fetch.seen:
            return fetch.failed(FetchError.REDIRECT_LOOP, f"redirect loop back to {following}", **seen)
        return following

    def _cached_answer(
        self, fetch: Fetch, target: str, answer: Exchange, cached: CachedCopy, accept: tuple[str, ...] | None
    ) -> FetchResult:
        """A 304: the stored copy answers, if it is still of a kind the caller accepts."""
        entry, body = cached
        body = scrub_bytes(body, self.secrets) if self.secrets else body
        self._count("not_modified")
        if accept and entry.content_type is not None:
            family = bodies.declared_family(entry.content_type) or bodies.sniff_family(body)
            if family not in accept:
                detail = f"cached content type {entry.content_type} is not one of {accept}"
                return fetch.failed(FetchError.UNSUPPORTED_TYPE, detail, status=304, final_url=target)
        family = bodies.declared_family(entry.content_type or "") or bodies.sniff_family(body)
        text = bodies.decode_text(body, entry.charset, family)[0] if family in bodies.TEXTUAL else None
        return FetchResult(
            ok=True,
            url=fetch.url,
            final_url=target,
            status=304,
            error=None,
            error_detail=None,
            content_type=entry.content_type,
            charset=entry.charset,
            headers={**entry.headers, **answer.headers},
            body=body,
            text=text,
            sha256=sha256_hex(body),
            retrieved_at=iso(),
            from_cache=True,
            etag=answer.headers.get("etag") or entry.etag,
            last_modified=answer.headers.get("last-modified") or entry.last_modified,
            redirects=fetch.redirects,
            retry_after=None,
            elapsed_ms=elapsed_ms(fetch.started),
        )

    def _scrub(self, answer: Exchange) -> Exchange:
        """`answer` with every known secret value scrubbed from its body and header values."""
        if self.secrets:
            answer.body = scrub_bytes(answer.body, self.secrets)
            answer.headers = {k: scrub(v, self.secrets) for k, v in answer.headers.items()}
        return answer

    def _failed_answer(self, fetch: Fetch, target: str, answer: Exchange) -> FetchResult:
        """A failed exchange as a result; an HTTP error keeps its (small) body, as APIs explain there."""
        answer = self._scrub(answer)
        assert answer.error is not None
        return fetch.failed(
            answer.error,
            answer.detail,
            status=answer.status,
            final_url=target,
            headers=answer.headers,
            retry_after=answer.retry_after,
            content_type=answer.media,
            body=answer.body if answer.error == FetchError.HTTP_STATUS else b"",
        )

    def _answer(self, fetch: Fetch, method: str, target: str, answer: Exchange) -> FetchResult:
        """A successful exchange as a result: text decoded, a validated 200 stored for revalidation."""
        answer = self._scrub(answer)
        body = answer.body
        text, charset = None, answer.charset
        if answer.family in bodies.TEXTUAL:
            text, charset = bodies.decode_text(body, answer.charset, answer.family)
        etag = answer.headers.get("etag")
        last_modified = answer.headers.get("last-modified")
        retrieved_at = iso()
        media = answer.media or None
        digest = sha256_hex(body)
        if self.cache is not None and method == "GET" and answer.status == 200:
            entry = CacheEntry(
                url=target,
                body_sha256=digest,
                stored_at=retrieved_at,
                etag=etag,
                last_modified=last_modified,
                content_type=media,
                charset=charset,
                status=200,
                headers=answer.headers,
            )
            self.cache.store(entry, body)
        return FetchResult(
            ok=True,
            url=fetch.url,
            final_url=target,
            status=answer.status,
            error=None,
            error_detail=None,
            content_type=media,
            charset=charset if text is not None else answer.charset,
            headers=answer.headers,
            body=body,
            text=text,
            sha256=digest,
            retrieved_at=retrieved_at,
            from_cache=False,
            etag=etag,
            last_modified=last_modified,
            redirects=fetch.redirects,
            retry_after=None,
            elapsed_ms=elapsed_ms(fetch.started),
        )
