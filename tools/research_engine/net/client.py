"""HttpClient: the one way the engine reads the network.

Every request, and every redirect hop, goes through the same steps:

    guard (guard.check_url: scheme, shape, host, resolve, every address checked)
      -> pin the checked addresses (PinnedBackend: the socket connects to one of them,
         never to a second DNS answer)
      -> robots.txt for the origin (cached per origin; 4xx allow, 5xx/unreachable disallow)
      -> politeness gate (per-host interval and concurrency, global concurrency)
      -> send with conditional headers from the revalidation cache
      -> stream the body with byte caps (raw and decoded) and the total deadline
      -> content-type gate, charset decoding
      -> retries with backoff and jitter on transient failures only; Retry-After honoured

Failures are values: `get`, `post_json` and `get_many` never raise for network, HTTP or
guard problems; they return a `FetchResult` with `ok=False` and one of `ERROR_CODES`.

Opt-ins (`allow_private`, `allow_addresses`, `ignore_robots`) are logged as warnings and
listed in `HttpClient.overrides`, so a caller that owns a run can record them in its trace.
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urljoin, urlsplit

from research_engine import __version__
from research_engine.documents import sha256_hex
from research_engine.errors import BadInput
from research_engine.net import content as bodies
from research_engine.net.cache import CacheEntry, RevalidationCache
from research_engine.net.guard import GuardVerdict, Resolver, check_url
from research_engine.net.politeness import Gate
from research_engine.net.robots import MAX_ROBOTS_BYTES, RobotsPolicy
from research_engine.redaction import redact_text
from research_engine.trace import iso

if TYPE_CHECKING:
    import httpx  # imported where it is used: the CLI starts without it

log = logging.getLogger("research_engine.net")

ERROR_BODY_MAX = 64 * 1024  # enough for an API's {error, message}; error pages are not sources

USER_AGENT = f"research-engine/{__version__} (+https://github.com/research-engine/research-engine)"
MAX_REDIRECTS = 5
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
TRANSIENT_STATUSES = (429, 500, 502, 503, 504)
RETRY_AFTER_CAP = 60.0  # never wait longer than this for a Retry-After inside one fetch
ROBOTS_TTL = 600.0  # seconds a fetched robots.txt (or a 4xx "allow all") is trusted
ROBOTS_ERROR_TTL = 120.0  # seconds a 5xx/unreachable "disallow all" lasts before a new try
CRAWL_DELAY_CAP = 30.0
ERROR_CODES = (
    "refused-ssrf",
    "refused-scheme",
    "refused-robots",
    "unresolved",
    "http-status",
    "timeout",
    "too-large",
    "unsupported-type",
    "decode-error",
    "network",
    "too-many-redirects",
    "redirect-loop",
    "empty",
)
_ACCEPT_HEADER = {
    "html": "text/html,application/xhtml+xml;q=0.9",
    "text": "text/plain;q=0.8",
    "json": "application/json",
    "pdf": "application/pdf",
    "xml": "application/xml;q=0.8,text/xml;q=0.8",
}


@dataclass
class FetchResult:
    ok: bool
    url: str
    final_url: str | None
    status: int | None
    error: str | None
    error_detail: str | None
    content_type: str | None
    charset: str | None
    headers: dict[str, str]
    body: bytes
    text: str | None
    sha256: str | None
    retrieved_at: str
    from_cache: bool
    etag: str | None
    last_modified: str | None
    redirects: list[str]
    retry_after: float | None
    elapsed_ms: int

    def json(self) -> Any:
        """The body parsed as JSON; BadInput(code="decode-error") when it is not JSON."""
        import json

        where = self.final_url or self.url
        if not self.ok:
            raise BadInput(
                f"{where}: no body to parse ({self.error}: {self.error_detail})", code="decode-error"
            )
        try:
            return json.loads(self.text if self.text is not None else self.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadInput(f"{where} did not return valid JSON: {exc}", code="decode-error") from exc

    def to_dict(self, *, with_text: bool = False) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("body", "text")}
        out["bytes"] = len(self.body)
        if with_text:
            out["text"] = self.text
        return out


# ---------------------------------------------------------------- connecting only to checked addresses


def _pinned_transport(pins: dict[tuple[str, int], list[str]], lock: threading.Lock) -> httpx.BaseTransport:
    """An httpx transport whose sockets go only to addresses the guard checked for (host, port)."""
    import httpcore
    import httpx

    class PinnedBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.SyncBackend()

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            with lock:
                addresses = list(pins.get((host.lower(), int(port)), ()))
            if not addresses:
                raise httpcore.ConnectError(
                    f"{host}:{port} was not checked by the SSRF guard; not connecting"
                )
            last: Exception | None = None
            for address in addresses:
                try:
                    return self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    last = exc
            assert last is not None  # addresses is not empty, so every attempt failed with an error
            raise last

        def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
            raise httpcore.ConnectError("unix sockets are never used")

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    def _mapped(exc: Exception, request: httpx.Request) -> Exception:
        cls = getattr(httpx, type(exc).__name__, None)
        if not (isinstance(cls, type) and issubclass(cls, httpx.TransportError)):
            cls = httpx.TransportError
        return cls(str(exc), request=request)

    class Stream(httpx.SyncByteStream):
        def __init__(self, inner: Iterable[bytes], request: httpx.Request) -> None:
            self._inner = inner
            self._request = request

        def __iter__(self) -> Iterator[bytes]:
            try:
                yield from self._inner
            except httpcore.TimeoutException as exc:
                raise _mapped(exc, self._request) from exc
            except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
                raise _mapped(exc, self._request) from exc

        def close(self) -> None:
            if hasattr(self._inner, "close"):
                self._inner.close()

    class PinnedTransport(httpx.BaseTransport):
        def __init__(self) -> None:
            self._pool = httpcore.ConnectionPool(
                ssl_context=httpx.create_ssl_context(trust_env=False),
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=5.0,
                network_backend=PinnedBackend(),
            )

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            core_request = httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=request.url.raw_scheme,
                    host=request.url.raw_host,
                    port=request.url.port,
                    target=request.url.raw_path,
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
            try:
                response = self._pool.handle_request(core_request)
            except (
                httpcore.TimeoutException,
                httpcore.NetworkError,
                httpcore.ProtocolError,
                httpcore.UnsupportedProtocol,
            ) as exc:
                raise _mapped(exc, request) from exc
            # A sync pool's body is a sync iterable; httpx's own HTTPTransport asserts the same.
            assert isinstance(response.stream, Iterable)
            return httpx.Response(
                status_code=response.status,
                headers=response.headers,
                stream=Stream(response.stream, request),
                extensions=response.extensions,
            )

        def close(self) -> None:
            self._pool.close()

    return PinnedTransport()


# ---------------------------------------------------------------- one exchange


@dataclass
class _Exchange:
    """What one request/response exchange produced (before redirect and cache handling)."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None
    detail: str | None = None
    transient: bool = False
    retry_after: float | None = None
    media: str = ""
    charset: str | None = None
    family: str | None = None
    never_sent: bool = False  # the connection failed: the server cannot have processed the request


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _with_params(url: str, params: dict | None) -> str:
    if not params:
        return url
    base, _, fragment = url.partition("#")
    joiner = "&" if "?" in base else "?"
    query = urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
    return f"{base}{joiner}{query}" + (f"#{fragment}" if fragment else "")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _host_key(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


class HttpClient:
    """The engine's HTTP client. Thread-safe; use one per process (or per run) and close it."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        ignore_robots: bool = False,
        user_agent: str | None = None,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        resolver: Resolver | None = None,
        timeout: float = 20.0,
        deadline: float = 60.0,
        max_bytes: int = 5 * 2**20,
        max_retries: int = 2,
        per_host_interval: float = 1.0,
        per_host_concurrency: int = 2,
        global_concurrency: int = 8,
        transport_hook: Callable[[Any], Any] | None = None,
        allow_addresses: Collection[str] = (),
        backoff_base: float = 0.5,
        robots_ttl: float = ROBOTS_TTL,
        robots_error_ttl: float = ROBOTS_ERROR_TTL,
        secrets: Sequence[str] = (),
    ) -> None:
        import httpx

        self.allow_private = bool(allow_private)
        self.secrets = tuple(secrets)  # known credential values, scrubbed from logs and overrides
        self.allow_addresses = frozenset(allow_addresses)
        self.ignore_robots = ignore_robots
        self.user_agent = user_agent or USER_AGENT
        self.cache = RevalidationCache(cache_dir) if use_cache else None
        self.resolver = resolver
        self.timeout = timeout
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.max_retries = max(0, max_retries)
        self.backoff_base = backoff_base
        self.per_host_concurrency = max(1, per_host_concurrency)
        self.robots_ttl = robots_ttl
        self.robots_error_ttl = robots_error_ttl
        self.gate = Gate(
            interval=per_host_interval, per_host=per_host_concurrency, global_limit=global_concurrency
        )
        self.overrides: list[dict[str, Any]] = []
        self.stats: dict[str, int] = defaultdict(
            int
        )  # requests, full_downloads, not_modified, robots_fetches
        self._pins: dict[tuple[str, int], list[str]] = {}
        self._pins_lock = threading.Lock()
        self._robots: dict[str, RobotsPolicy] = {}
        self._robots_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self._state_lock = threading.Lock()
        self._noted: set[tuple[str, str]] = set()
        if self.allow_private:
            log.warning("private and loopback addresses are allowed for this client (explicit opt-in)")
        transport = _pinned_transport(self._pins, self._pins_lock)
        if transport_hook is not None:
            transport = transport_hook(transport)
        # trust_env=False: an environment proxy would connect somewhere the guard never checked.
        self._http = httpx.Client(
            transport=transport,
            trust_env=False,
            follow_redirects=False,
            headers={"User-Agent": self.user_agent, "Accept-Encoding": "gzip, deflate"},
        )

    # ------------------------------------------------------------ public API

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def get(
        self,
        url: str,
        *,
        params: dict | None = None,
        headers: dict | None = None,
        accept: tuple[str, ...] = ("html", "text"),
        check_robots: bool = True,
        revalidate: bool = True,
    ) -> FetchResult:
        """GET `url` through every guard; never raises for network, HTTP or guard problems."""
        requested = _with_params(url, params)
        try:
            return self._fetch(
                "GET",
                requested,
                headers=headers,
                accept=accept,
                check_robots=check_robots,
                revalidate=revalidate,
                max_bytes=self.max_bytes,
            )
        except Exception as exc:  # a bug must not break a batch; one line, the traceback with -v
            log.error("internal error fetching %s: %s", self._redact(requested), exc)
            log.info("traceback", exc_info=True)
            return self._failure(requested, time.monotonic(), "network", f"internal error: {exc}")

    def post_json(
        self, url: str, payload: dict, *, headers: dict | None = None, accept: tuple[str, ...] = ("json",)
    ) -> FetchResult:
        """POST a JSON payload (search APIs such as Tavily); no robots check, no cache."""
        try:
            return self._fetch(
                "POST",
                url,
                headers=headers,
                accept=accept,
                check_robots=False,
                revalidate=False,
                max_bytes=self.max_bytes,
                payload=payload,
            )
        except Exception as exc:  # as in get(): one line, the traceback with -v
            log.error("internal error posting to %s: %s", self._redact(url), exc)
            log.info("traceback", exc_info=True)
            return self._failure(url, time.monotonic(), "network", f"internal error: {exc}")

    def get_many(self, urls: list[str], **kw: Any) -> list[FetchResult]:
        """Fetch many URLs concurrently, politely (per-host queues), results in input order."""
        results: list[FetchResult | None] = [None] * len(urls)
        queues: dict[str, deque[int]] = defaultdict(deque)
        for index, url in enumerate(urls):
            queues[_host_key(url)].append(index)
        lock = threading.Lock()

        def drain(key: str) -> None:
            while True:
                with lock:
                    if not queues[key]:
                        return
                    index = queues[key].popleft()
                results[index] = self.get(urls[index], **kw)

        # One worker per host slot: a slow or paused host never holds up the others.
        workers = [
            key for key, queue in queues.items() for _ in range(min(self.per_host_concurrency, len(queue)))
        ]
        if not workers:
            return []
        with ThreadPoolExecutor(max_workers=min(len(workers), 64), thread_name_prefix="fetch") as pool:
            list(pool.map(drain, workers))
        return [r for r in results if r is not None]

    def check(self, url: str) -> GuardVerdict:
        """The guard's verdict for `url` with this client's resolver and opt-ins."""
        return check_url(
            url,
            allow_private=self.allow_private,
            resolver=self.resolver,
            allow_addresses=self.allow_addresses,
        )

    # ------------------------------------------------------------ internals

    def _redact(self, text: str) -> str:
        return redact_text(text, self.secrets)

    def _count(self, name: str) -> None:
        with self._state_lock:
            self.stats[name] += 1

    def _note(self, kind: str, key: str, **details: Any) -> None:
        with self._state_lock:
            if (kind, key) in self._noted:
                return
            self._noted.add((kind, key))
            self.overrides.append(
                {
                    "kind": kind,
                    **{k: self._redact(str(v)) if isinstance(v, str) else v for k, v in details.items()},
                }
            )
        log.warning("%s: %s", kind, ", ".join(f"{k}={self._redact(str(v))}" for k, v in details.items()))

    def _failure(
        self,
        url: str,
        started: float,
        error: str,
        detail: str | None,
        *,
        status: int | None = None,
        final_url: str | None = None,
        headers: dict[str, str] | None = None,
        redirects: list[str] | None = None,
        retry_after: float | None = None,
        content_type: str | None = None,
        body: bytes = b"",
    ) -> FetchResult:
        return FetchResult(
            ok=False,
            url=url,
            final_url=final_url,
            status=status,
            error=error,
            error_detail=detail,
            content_type=content_type or None,
            charset=None,
            headers=dict(headers or {}),
            body=body,
            text=body.decode("utf-8", "replace") if body else None,
            sha256=None,
            retrieved_at=iso(),
            from_cache=False,
            etag=None,
            last_modified=None,
            redirects=list(redirects or []),
            retry_after=retry_after,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )

    def _guard(self, url: str) -> GuardVerdict:
        verdict = self.check(url)
        if verdict.allowed and verdict.host is not None and verdict.port is not None:
            with self._pins_lock:
                self._pins[(verdict.host, verdict.port)] = list(verdict.addresses)
            if verdict.private:
                self._note(
                    "private-address",
                    f"{verdict.host}:{verdict.port}",
                    url=url,
                    host=verdict.host,
                    addresses=list(verdict.addresses),
                )
        return verdict

    def _fetch(
        self,
        method: str,
        url: str,
        *,
        headers: dict | None,
        accept: tuple[str, ...] | None,
        check_robots: bool,
        revalidate: bool,
        max_bytes: int,
        payload: dict | None = None,
        deadline: float | None = None,
    ) -> FetchResult:
        started = time.monotonic()
        deadline = deadline if deadline is not None else started + self.deadline
        redirects: list[str] = []
        seen: set[str] = set()
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            verdict = self._guard(current)
            if not verdict.allowed:
                return self._failure(
                    url,
                    started,
                    verdict.code or "refused-ssrf",
                    verdict.reason,
                    redirects=redirects,
                    final_url=current if redirects else None,
                )
            target = verdict.url or current
            seen.add(target)
            crawl_delay = None
            if check_robots:
                if self.ignore_robots:
                    self._note("robots-ignored", _origin(target), url=target, origin=_origin(target))
                else:
                    policy = self._robots_for(target, deadline)
                    if not policy.allowed(target, self.user_agent):
                        why = policy.reason or "robots.txt disallows this URL for research-engine"
                        return self._failure(
                            url, started, "refused-robots", why, redirects=redirects, final_url=target
                        )
                    delay = policy.crawl_delay(self.user_agent)
                    crawl_delay = min(delay, CRAWL_DELAY_CAP) if delay else None

            cached = None
            send_headers = dict(headers or {})
            if accept:
                send_headers.setdefault(
                    "Accept",
                    ",".join(_ACCEPT_HEADER[f] for f in accept if f in _ACCEPT_HEADER) + ",*/*;q=0.1",
                )
            if self.cache is not None and method == "GET" and revalidate:
                cached = self.cache.lookup(target)
                if cached is not None:
                    send_headers.update(cached[0].conditional_headers())

            exchange = self._send(
                method, target, verdict, send_headers, payload, accept, max_bytes, deadline, crawl_delay
            )

            if exchange.status in REDIRECT_STATUSES and exchange.error is None:
                location = exchange.headers.get("location")
                if not location:
                    return self._failure(
                        url,
                        started,
                        "http-status",
                        f"redirect {exchange.status} without Location",
                        status=exchange.status,
                        final_url=target,
                        headers=exchange.headers,
                        redirects=redirects,
                    )
                following = urljoin(target, location.strip())
                normal = check_url(following, resolve=False, allow_private=True).url or following
                if normal in seen or following in seen:
                    redirects.append(following)
                    return self._failure(
                        url,
                        started,
                        "redirect-loop",
                        f"redirect loop back to {following}",
                        status=exchange.status,
                        final_url=target,
                        headers=exchange.headers,
                        redirects=redirects,
                    )
                redirects.append(following)
                if exchange.status == 303 or (exchange.status in (301, 302) and method == "POST"):
                    method, payload = "GET", None
                current = following
                continue

            if exchange.status == 304 and cached is not None and exchange.error is None:
                entry, body = cached
                self._count("not_modified")
                if accept and entry.content_type is not None:
                    family = bodies.declared_family(entry.content_type) or bodies.sniff_family(body)
                    if family not in accept:
                        return self._failure(
                            url,
                            started,
                            "unsupported-type",
                            f"cached content type {entry.content_type} is not one of {accept}",
                            status=304,
                            final_url=target,
                            redirects=redirects,
                        )
                family = bodies.declared_family(entry.content_type or "") or bodies.sniff_family(body)
                text = (
                    bodies.decode_text(body, entry.charset, family)[0] if family in bodies.TEXTUAL else None
                )
                merged = {**entry.headers, **exchange.headers}
                return FetchResult(
                    ok=True,
                    url=url,
                    final_url=target,
                    status=304,
                    error=None,
                    error_detail=None,
                    content_type=entry.content_type,
                    charset=entry.charset,
                    headers=merged,
                    body=body,
                    text=text,
                    sha256=sha256_hex(body),
                    retrieved_at=iso(),
                    from_cache=True,
                    etag=exchange.headers.get("etag") or entry.etag,
                    last_modified=exchange.headers.get("last-modified") or entry.last_modified,
                    redirects=redirects,
                    retry_after=None,
                    elapsed_ms=int((time.monotonic() - started) * 1000),
                )

            if exchange.error is not None:
                return self._failure(
                    url,
                    started,
                    exchange.error,
                    exchange.detail,
                    status=exchange.status,
                    final_url=target,
                    headers=exchange.headers,
                    redirects=redirects,
                    retry_after=exchange.retry_after,
                    content_type=exchange.media,
                    body=exchange.body if exchange.error == "http-status" else b"",
                )

            body = exchange.body
            text = None
            charset = exchange.charset
            if exchange.family in bodies.TEXTUAL:
                text, charset = bodies.decode_text(body, exchange.charset, exchange.family)
            etag = exchange.headers.get("etag")
            last_modified = exchange.headers.get("last-modified")
            retrieved_at = iso()
            media = exchange.media or None
            if self.cache is not None and method == "GET" and exchange.status == 200:
                self.cache.store(
                    CacheEntry(
                        url=target,
                        body_sha256=sha256_hex(body),
                        stored_at=retrieved_at,
                        etag=etag,
                        last_modified=last_modified,
                        content_type=media,
                        charset=charset,
                        status=200,
                        headers=exchange.headers,
                    ),
                    body,
                )
            return FetchResult(
                ok=True,
                url=url,
                final_url=target,
                status=exchange.status,
                error=None,
                error_detail=None,
                content_type=media,
                charset=charset if text is not None else exchange.charset,
                headers=exchange.headers,
                body=body,
                text=text,
                sha256=sha256_hex(body),
                retrieved_at=retrieved_at,
                from_cache=False,
                etag=etag,
                last_modified=last_modified,
                redirects=redirects,
                retry_after=None,
                elapsed_ms=int((time.monotonic() - started) * 1000),
            )
        return self._failure(
            url,
            started,
            "too-many-redirects",
            f"more than {MAX_REDIRECTS} redirects",
            final_url=current,
            redirects=redirects,
        )

    def _send(
        self,
        method: str,
        url: str,
        verdict: GuardVerdict,
        headers: dict[str, str],
        payload: dict | None,
        accept: tuple[str, ...] | None,
        max_bytes: int,
        deadline: float,
        crawl_delay: float | None,
    ) -> _Exchange:
        """One exchange with bounded retries on transient failures."""
        host = verdict.host or _host_key(url)
        attempt = 0
        while True:
            try:
                with self.gate.slot(host, deadline=deadline, interval=crawl_delay):
                    exchange = self._exchange(method, url, headers, payload, accept, max_bytes, deadline)
            except TimeoutError as exc:
                return _Exchange(error="timeout", detail=str(exc))
            if not exchange.transient or attempt >= self.max_retries:
                return exchange
            if method == "POST" and exchange.status not in (429, 503) and not exchange.never_sent:
                return exchange  # a POST that may have been processed is not repeated
            if exchange.retry_after is not None:
                if (
                    exchange.retry_after > RETRY_AFTER_CAP
                    or time.monotonic() + exchange.retry_after > deadline
                ):
                    return exchange
                self.gate.pause(host, exchange.retry_after)  # the gate makes every request to host wait
                wait = 0.0
            else:
                wait = random.uniform(0.5, 1.0) * self.backoff_base * (2**attempt)
                if time.monotonic() + wait > deadline:
                    return exchange
            log.info(
                "retrying %s after %s (attempt %d)",
                self._redact(url),
                exchange.error or exchange.status,
                attempt + 1,
            )
            if wait:
                time.sleep(wait)
            attempt += 1

    def _exchange(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        payload: dict | None,
        accept: tuple[str, ...] | None,
        max_bytes: int,
        deadline: float,
    ) -> _Exchange:
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return _Exchange(
                error="timeout", detail="the fetch deadline passed before the request could start"
            )
        limit = min(self.timeout, remaining)
        self._count("requests")
        try:
            request = self._http.build_request(
                method, url, headers=headers, json=payload, timeout=httpx.Timeout(limit)
            )
            response = self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            return _Exchange(
                error="timeout", detail=f"{type(exc).__name__}: {exc or 'timed out'}", transient=True
            )
        except httpx.TransportError as exc:
            return _Exchange(
                error="network",
                detail=f"{type(exc).__name__}: {exc}",
                transient=True,
                never_sent=isinstance(exc, httpx.ConnectError),
            )
        except httpx.InvalidURL as exc:
            return _Exchange(error="refused-ssrf", detail=f"malformed URL: {exc}")
        with contextlib.closing(response):
            return self._read(response, accept, max_bytes, deadline)

    def _read(
        self, response: Any, accept: tuple[str, ...] | None, max_bytes: int, deadline: float
    ) -> _Exchange:
        import httpx

        status = response.status_code
        headers = {k.lower(): v for k, v in response.headers.items()}
        media, charset = bodies.parse_content_type(headers.get("content-type"))
        out = _Exchange(status=status, headers=headers, media=media, charset=charset)
        if status in REDIRECT_STATUSES or status == 304:
            return out
        if not 200 <= status < 300:
            out.error, out.detail = "http-status", f"HTTP {status}"
            out.transient = status in TRANSIENT_STATUSES
            if status in (429, 503):
                out.retry_after = _retry_after(headers.get("retry-after"))
            # Keep a small error body: APIs explain themselves there ({error, message}).
            out.body = self._read_error_body(response, deadline)
            return out
        family = None if media in bodies.GENERIC_TYPES else bodies.declared_family(media)
        if accept and media not in bodies.GENERIC_TYPES and family not in accept:
            out.error = "unsupported-type"
            out.detail = f"content type {media!r} is not one of the accepted kinds {', '.join(accept)}"
            return out
        declared_length = headers.get("content-length", "")
        if (
            declared_length.isdigit()
            and int(declared_length) > max_bytes
            and not headers.get("content-encoding")
        ):
            out.error, out.detail = (
                "too-large",
                f"declared length {declared_length} exceeds {max_bytes} bytes",
            )
            return out
        try:
            decoder = bodies.Decoder(headers.get("content-encoding"), max_bytes)
            chunks: list[bytes] = []
            raw = 0
            for chunk in response.iter_raw():
                raw += len(chunk)
                if raw > max_bytes:
                    raise bodies.TooLarge(f"body exceeds {max_bytes} bytes")
                chunks.append(decoder.feed(chunk))
                if time.monotonic() > deadline:
                    out.error, out.detail = (
                        "timeout",
                        "the fetch deadline passed while the body was still arriving",
                    )
                    return out
            chunks.append(decoder.flush())
        except bodies.TooLarge as exc:
            out.error, out.detail = "too-large", str(exc)
            return out
        except bodies.DecodeError as exc:
            out.error, out.detail = "decode-error", str(exc)
            return out
        except httpx.TimeoutException as exc:
            if time.monotonic() >= deadline - 0.05:
                out.error, out.detail = (
                    "timeout",
                    "the fetch deadline passed while the body was still arriving",
                )
            else:
                out.error, out.detail, out.transient = "timeout", f"read timed out: {exc}", True
            return out
        except httpx.TransportError as exc:
            out.error, out.detail, out.transient = "network", f"{type(exc).__name__}: {exc}", True
            return out
        body = b"".join(chunks)
        self._count("full_downloads")
        if not body:
            out.error, out.detail = "empty", "the response body is empty"
            return out
        if family is None:
            family = bodies.sniff_family(body)
            if accept and family not in accept:
                shown = media or "missing"
                out.error = "unsupported-type"
                out.detail = f"content type {shown} and the body does not look like {', '.join(accept)}"
                return out
        out.body, out.family = body, family
        if not media and family:
            out.media = bodies.FAMILIES[family][0]
        return out

    def _read_error_body(self, response: Any, deadline: float) -> bytes:
        """At most ERROR_BODY_MAX decoded bytes of an error response; b"" if it cannot be read."""
        try:
            # The decoder's own cap is a bomb guard; we stop reading well before it.
            decoder = bodies.Decoder(response.headers.get("content-encoding"), ERROR_BODY_MAX * 16)
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_raw():
                chunks.append(decoder.feed(chunk))
                size += len(chunks[-1])
                if size >= ERROR_BODY_MAX or time.monotonic() > deadline:
                    break
            else:
                chunks.append(decoder.flush())
            return b"".join(chunks)[:ERROR_BODY_MAX]
        except Exception:  # an unreadable error body must not hide the status itself
            return b""

    def _robots_for(self, url: str, deadline: float) -> RobotsPolicy:
        origin = _origin(url)
        with self._robots_locks[origin]:
            now = time.monotonic()
            policy = self._robots.get(origin)
            if policy is not None and policy.expires_at > now:
                return policy
            self._count("robots_fetches")
            result = self._fetch(
                "GET",
                f"{origin}/robots.txt",
                headers=None,
                accept=None,
                check_robots=False,
                revalidate=True,
                max_bytes=MAX_ROBOTS_BYTES,
                deadline=deadline,
            )
            now = time.monotonic()
            if result.ok:
                policy = RobotsPolicy.parse(
                    result.body, status=result.status, fetched_at=now, expires_at=now + self.robots_ttl
                )
            elif result.error == "empty":
                policy = RobotsPolicy(
                    "allow-all",
                    reason="robots.txt is empty",
                    status=result.status,
                    fetched_at=now,
                    expires_at=now + self.robots_ttl,
                )
            elif (
                result.error == "http-status"
                and result.status
                and 400 <= result.status < 500
                and result.status != 429
            ):
                policy = RobotsPolicy(
                    "allow-all",
                    reason=f"robots.txt answered {result.status}",
                    status=result.status,
                    fetched_at=now,
                    expires_at=now + self.robots_ttl,
                )
            else:
                why = result.error_detail or result.error
                policy = RobotsPolicy(
                    "disallow-all",
                    status=result.status,
                    fetched_at=now,
                    expires_at=now + self.robots_error_ttl,
                    reason=f"robots.txt for {origin} is unreachable ({result.error}: {why}); "
                    "RFC 9309 says to assume complete disallow for a while",
                )
            self._robots[origin] = policy
            return policy
