"""HttpClient: the one way the engine reads the network.

Every request, and every redirect hop, goes through the same steps:

    guard (guard.check_url: scheme, shape, host, resolve, every address checked)
      -> pin the checked addresses (transport: the socket connects to one of them,
         never to a second DNS answer)
      -> robots.txt for the origin (cached per origin; 4xx allow, 5xx/unreachable disallow)
      -> politeness gate (per-host interval and concurrency, global concurrency)
      -> send with conditional headers from the revalidation cache
      -> stream the body with byte caps (raw and decoded) and the total deadline (exchange)
      -> content-type gate, charset decoding
      -> retries under the client's `RetryPolicy`, on transient failures only; Retry-After
         pauses every request to the host

Failures are values: `get`, `post_json` and `get_many` never raise for network, HTTP or
guard problems; they return a `FetchResult` with `ok=False` and one of `ERROR_CODES`.

Secrets an upstream echoes back (a search backend or a page that repeats the API key or the
Authorization value in its body or headers) are scrubbed (`redaction.scrub_bytes`) from every
body and header value the client returns, before anything can store it: the digest, the
snapshot, the candidates and the extracted text all see `REDACTED`.

Opt-ins (`allow_private`, `allow_hosts`, `allow_addresses`, `ignore_robots`) are listed in
`HttpClient.overrides`, so a caller that owns a run can record them in its trace, and logged: as warnings,
except a private address reached on a host the user named (`allow_hosts`) or by a client that says it
need not warn (`warn_private=False`: a replay, which contacts nothing), logged at INFO. `allow_private` is
warned about once a process (a run opens several clients), and the private addresses it then reaches are
logged at INFO: the one warning has said so.
This module wires the steps together; it never writes into a run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from research_engine import __version__
from research_engine.errors import BudgetSpent
from research_engine.net import politeness
from research_engine.net.answers import Answers, CachedCopy, Fetch
from research_engine.net.cache import RevalidationCache
from research_engine.net.exchange import REDIRECT_STATUSES, Exchange, exchange
from research_engine.net.guard import GuardVerdict, Resolver, check_url, parse_allow_host
from research_engine.net.politeness import Gate, HostLedger
from research_engine.net.result import FetchResult, failure
from research_engine.net.retry import RETRY_AFTER_STATUSES, RetryPolicy
from research_engine.net.robots import (
    CRAWL_DELAY_CAP,
    MAX_ROBOTS_BYTES,
    ROBOTS_ERROR_TTL,
    ROBOTS_TTL,
    RobotsPolicy,
    policy_for_answer,
)
from research_engine.net.transport import PinnedAddresses, TransportHook, open_http
from research_engine.redaction import redact_text
from research_engine.vocabulary import FetchError

log = logging.getLogger("research_engine.net")

USER_AGENT = f"research-engine/{__version__} (+https://github.com/research-engine/research-engine)"
MAX_REDIRECTS = 5
_ACCEPT_HEADER = {
    "html": "text/html,application/xhtml+xml;q=0.9",
    "text": "text/plain;q=0.8",
    "json": "application/json",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xml": "application/xml;q=0.8,text/xml;q=0.8",
}


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


def _origin_key(url: str) -> str:
    """`host:port` when the URL names a port, else the host: how a service's published pacing is keyed."""
    try:
        parts = urlsplit(url)
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return ""
    return f"{host}:{port}" if port is not None else host


@dataclass(frozen=True)
class _Hop:
    """A hop the guard and robots.txt let through: the normalized target and the pause robots asks for."""

    target: str
    verdict: GuardVerdict
    crawl_delay: float | None


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _first_warning(kind: str) -> bool:
    """True the first time a process warns about `kind`: an opt-in is said once, not once a client."""
    with _warned_lock:
        first = kind not in _warned
        _warned.add(kind)
        return first


class HttpClient(Answers):
    """The engine's HTTP client. Thread-safe; use one per process (or per run) and close it.

    `retry` decides retries and waits; `max_retries` and `backoff_base` are shorthands that
    replace those two fields of it. The policy's `sleep` is the one the client waits with
    (backoff, Retry-After and politeness pauses), so a test that injects it never waits.
    """

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
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        backoff_base: float | None = None,
        per_host_interval: float = 1.0,
        per_host_concurrency: int = 2,
        global_concurrency: int = 8,
        transport_hook: TransportHook | None = None,
        allow_addresses: Collection[str] = (),
        allow_hosts: Collection[str] = (),
        robots_ttl: float = ROBOTS_TTL,
        robots_error_ttl: float = ROBOTS_ERROR_TTL,
        secrets: Sequence[str] = (),
        meter: Any = None,
        warn_private: bool = True,
        host_ledger: HostLedger | None = None,
        host_intervals: dict[str, float] | None = None,
    ) -> None:
        self.allow_private = bool(allow_private)
        # A private address reached under the broad opt-in is worth a warning; a host the user named, or any
        # host of a replay (served from its cassette, never contacted), is noted at INFO only.
        self.warn_private = warn_private
        # Hosts that publish their own pacing (arXiv: one request every 3 s): seconds between two requests.
        self.host_intervals = {h.lower(): float(s) for h, s in (host_intervals or {}).items()}
        # Told of every request before it is sent (`sending(method, url)`, which may refuse it by raising
        # BudgetSpent) and of every body once read (`received(method, url, size)`): a run's budget meter
        # (`spend.RunMeter`, the headless engine's `Meter`). None: nothing is told.
        self.meter = meter
        self.secrets = tuple(secrets)  # known credential values, scrubbed from logs and overrides
        self.allow_addresses = frozenset(allow_addresses)
        # HOST or HOST:PORT entries allowed despite a private address (the user's own SearXNG or corpus).
        self.allow_hosts = tuple(allow_hosts)
        self._allowed_hosts = tuple(parse_allow_host(entry) for entry in self.allow_hosts)
        self.ignore_robots = ignore_robots
        self.user_agent = user_agent or USER_AGENT
        self.cache = RevalidationCache(cache_dir) if use_cache else None
        self.resolver = resolver
        self.timeout = timeout
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.retry = _shorthands(retry or RetryPolicy(), max_retries, backoff_base)
        self.per_host_concurrency = max(1, per_host_concurrency)
        self.robots_ttl = robots_ttl
        self.robots_error_ttl = robots_error_ttl
        self.gate = Gate(
            interval=per_host_interval,
            per_host=per_host_concurrency,
            global_limit=global_concurrency,
            sleep=self.retry.sleep,
            # Shared with the other processes of a batch when one is given or installed (net.politeness).
            ledger=host_ledger if host_ledger is not None else politeness.installed(),
        )
        self.overrides: list[dict[str, Any]] = []
        # requests, full_downloads, not_modified, robots_fetches
        self.stats: dict[str, int] = defaultdict(int)
        self._pins = PinnedAddresses()
        self._robots: dict[str, RobotsPolicy] = {}
        self._robots_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self._state_lock = threading.Lock()
        self._noted: set[tuple[str, str]] = set()
        if self.allow_private:
            log.log(
                logging.WARNING if warn_private and _first_warning("allow-private") else logging.INFO,
                "private and loopback addresses are allowed for this client (explicit opt-in)",
            )
        elif self.allow_hosts:
            log.info("private addresses allowed for these hosts only: %s", ", ".join(self.allow_hosts))
        self._http = open_http(self._pins, user_agent=self.user_agent, transport_hook=transport_hook)

    # ------------------------------------------------------------ public API

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()
        closing = getattr(self.meter, "close", None)
        if callable(closing):
            closing()  # a run's meter brings run.json up to its spend ledger

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
        except BudgetSpent:
            raise  # the meter refused the request: the caller's run is over budget, not the network
        except Exception as exc:  # a bug must not break a batch; one line, the traceback with -v
            log.error("internal error fetching %s: %s", self._redact(requested), exc)
            log.info("traceback", exc_info=True)
            return failure(requested, time.monotonic(), FetchError.NETWORK, f"internal error: {exc}")

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
        except BudgetSpent:
            raise
        except Exception as exc:  # as in get(): one line, the traceback with -v
            log.error("internal error posting to %s: %s", self._redact(url), exc)
            log.info("traceback", exc_info=True)
            return failure(url, time.monotonic(), FetchError.NETWORK, f"internal error: {exc}")

    def get_many(self, urls: list[str], **kw: Any) -> list[FetchResult]:
        """Fetch many URLs concurrently, politely (per-host queues), results in input order."""
        results: list[FetchResult | None] = [None] * len(urls)
        queues: dict[str, deque[int]] = defaultdict(deque)
        for index, url in enumerate(urls):
            queues[_host_key(url)].append(index)
        lock = threading.Lock()
        stopping = threading.Event()

        def drain(key: str) -> None:
            while not stopping.is_set():
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
            try:
                list(pool.map(drain, workers))
            except BaseException:
                # Ctrl-C or SIGTERM: no queued URL starts (a polite queue takes an interval per URL and
                # would outlast a stopping worker's grace); the fetches under way end on their deadline.
                stopping.set()
                raise
        return [r for r in results if r is not None]

    def check(self, url: str) -> GuardVerdict:
        """The guard's verdict for `url` with this client's resolver and opt-ins."""
        return check_url(
            url,
            allow_private=self.allow_private,
            resolver=self.resolver,
            allow_addresses=self.allow_addresses,
            allow_hosts=self._allowed_hosts,
        )

    def robots_refusal(self, url: str) -> str | None:
        """Why robots.txt keeps this client from `url` (it is fetched, then kept), or None when it may go
        there or robots.txt is ignored."""
        if self.ignore_robots:
            return None
        policy = self._robots_for(url, time.monotonic() + self.deadline)
        if policy.allowed(url, self.user_agent):
            return None
        return policy.reason or "robots.txt disallows this URL for research-engine"

    # ------------------------------------------------------------ bookkeeping

    def _redact(self, text: str) -> str:
        return redact_text(text, self.secrets)

    def _count(self, name: str) -> None:
        with self._state_lock:
            self.stats[name] += 1

    def _note(self, kind: str, key: str, *, loud: bool = True, **details: Any) -> None:
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
        log.log(
            logging.WARNING if loud else logging.INFO,
            "%s: %s",
            kind,
            ", ".join(f"{k}={self._redact(str(v))}" for k, v in details.items()),
        )

    # ------------------------------------------------------------ one fetch, step by step

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
        metered: bool = True,
        truncate: bool = False,
    ) -> FetchResult:
        started = time.monotonic()
        fetch = Fetch(url, started, deadline if deadline is not None else started + self.deadline)
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            hop = self._open_hop(fetch, current, check_robots)
            if isinstance(hop, FetchResult):
                return hop
            send_headers, cached = self._request_headers(method, hop.target, headers, accept, revalidate)
            answer = self._send(
                method,
                hop,
                send_headers,
                payload,
                accept,
                max_bytes,
                fetch.deadline,
                metered=metered,
                truncate=truncate,
            )
            if answer.status in REDIRECT_STATUSES and answer.error is None:
                following = self._redirect(fetch, hop.target, answer)
                if isinstance(following, FetchResult):
                    return following
                if answer.status == 303 or (answer.status in (301, 302) and method == "POST"):
                    method, payload = "GET", None
                current = following
                continue
            if answer.status == 304 and cached is not None and answer.error is None:
                return self._cached_answer(fetch, hop.target, answer, cached, accept)
            if answer.error is not None:
                return self._failed_answer(fetch, hop.target, answer)
            return self._answer(fetch, method, hop.target, answer)
        return fetch.failed(
            FetchError.TOO_MANY_REDIRECTS, f"more than {MAX_REDIRECTS} redirects", final_url=current
        )

    def _open_hop(self, fetch: Fetch, url: str, check_robots: bool) -> _Hop | FetchResult:
        """Guard `url` (pinning its addresses) and consult robots.txt; the hop, or the refusal."""
        verdict = self._guard(url)
        if not verdict.allowed:
            final_url = url if fetch.redirects else None
            return fetch.failed(verdict.code or FetchError.REFUSED_SSRF, verdict.reason, final_url=final_url)
        target = verdict.url or url
        fetch.seen.add(target)
        if not check_robots:
            return _Hop(target, verdict, None)
        if self.ignore_robots:
            self._note("robots-ignored", _origin(target), url=target, origin=_origin(target))
            return _Hop(target, verdict, None)
        policy = self._robots_for(target, fetch.deadline)
        if not policy.allowed(target, self.user_agent):
            why = policy.reason or "robots.txt disallows this URL for research-engine"
            return fetch.failed(FetchError.REFUSED_ROBOTS, why, final_url=target)
        delay = policy.crawl_delay(self.user_agent)
        return _Hop(target, verdict, min(delay, CRAWL_DELAY_CAP) if delay else None)

    def _guard(self, url: str) -> GuardVerdict:
        verdict = self.check(url)
        if verdict.allowed and verdict.host is not None and verdict.port is not None:
            self._pins.pin(verdict.host, verdict.port, verdict.addresses)
            if verdict.private:
                self._note(
                    "private-address",
                    f"{verdict.host}:{verdict.port}",
                    loud=self.warn_private and not verdict.named and not self.allow_private,
                    url=url,
                    host=verdict.host,
                    addresses=list(verdict.addresses),
                )
        return verdict

    def _request_headers(
        self,
        method: str,
        target: str,
        headers: dict | None,
        accept: tuple[str, ...] | None,
        revalidate: bool,
    ) -> tuple[dict[str, str], CachedCopy | None]:
        """The headers to send (Accept, the cache's validators) and the cached copy they refer to."""
        send_headers = dict(headers or {})
        if accept:
            kinds = ",".join(_ACCEPT_HEADER[f] for f in accept if f in _ACCEPT_HEADER)
            send_headers.setdefault("Accept", kinds + ",*/*;q=0.1")
        cached = None
        if self.cache is not None and method == "GET" and revalidate:
            cached = self.cache.lookup(target)
            if cached is not None:
                send_headers.update(cached[0].conditional_headers())
        return send_headers, cached

    # ------------------------------------------------------------ one exchange, retried

    def _send(
        self,
        method: str,
        hop: _Hop,
        headers: dict[str, str],
        payload: dict | None,
        accept: tuple[str, ...] | None,
        max_bytes: int,
        deadline: float,
        *,
        metered: bool = True,
        truncate: bool = False,
    ) -> Exchange:
        """One exchange through the politeness gate, retried as the retry policy allows; `metered`
        exchanges are told to the meter (robots.txt, which the client fetches for itself, is not)."""
        meter = self.meter if metered else None
        host = hop.verdict.host or _host_key(hop.target)
        attempt = 0
        while True:
            try:
                # A host the user named with --allow-host is their own service (a local SearXNG or
                # corpus): no public host to be polite to, so no pause between its requests.
                with self.gate.slot(
                    host, deadline=deadline, interval=self._interval(host, hop), exempt=hop.verdict.named
                ):
                    if meter is not None:
                        meter.sending(method, hop.target)
                    answer = exchange(
                        self._http,
                        method,
                        hop.target,
                        headers=headers,
                        payload=payload,
                        accept=accept,
                        max_bytes=max_bytes,
                        deadline=deadline,
                        timeout=self.timeout,
                        transient_statuses=self.retry.transient_statuses,
                        count=self._count,
                        truncate=truncate,
                    )
            except TimeoutError as exc:
                return Exchange().failed(FetchError.TIMEOUT, str(exc))
            if meter is not None and answer.body:
                meter.received(method, hop.target, len(answer.body))
            if not answer.transient:
                return answer
            if method == "POST" and answer.status not in RETRY_AFTER_STATUSES and not answer.never_sent:
                return answer  # a POST that may have been processed is not repeated
            wait = self.retry.delay(attempt, answer.retry_after, time_left=deadline - time.monotonic())
            if wait is None:
                return answer
            log.info(
                "retrying %s after %s (attempt %d)",
                self._redact(hop.target),
                answer.error or answer.status,
                attempt + 1,
            )
            if answer.retry_after is not None:
                self.gate.pause(host, wait)  # every request to the host waits, this retry included
            elif wait:
                self.retry.sleep(wait)
            attempt += 1

    def _interval(self, host: str, hop: _Hop) -> float | None:
        """The spacing this host asks for: its robots.txt crawl-delay or its published pacing."""
        published = self.host_intervals.get(_origin_key(hop.target), self.host_intervals.get(host))
        asked = [s for s in (hop.crawl_delay, published) if s is not None]
        return max(asked) if asked else None

    # ------------------------------------------------------------ robots.txt

    def _robots_for(self, url: str, deadline: float) -> RobotsPolicy:
        origin = _origin(url)
        with self._robots_locks[origin]:
            policy = self._robots.get(origin)
            if policy is not None and policy.expires_at > time.monotonic():
                return policy
            self._count("robots_fetches")
            answer = self._fetch(
                "GET",
                f"{origin}/robots.txt",
                headers=None,
                accept=None,
                check_robots=False,
                revalidate=True,
                max_bytes=MAX_ROBOTS_BYTES,
                deadline=deadline,
                metered=False,
                truncate=True,  # RFC 9309 2.5: a longer file is parsed up to its first 500 KiB
            )
            policy = policy_for_answer(
                origin, answer, now=time.monotonic(), ttl=self.robots_ttl, error_ttl=self.robots_error_ttl
            )
            self._robots[origin] = policy
            return policy


def _shorthands(retry: RetryPolicy, max_retries: int | None, backoff_base: float | None) -> RetryPolicy:
    """`retry` with the `max_retries` / `backoff_base` keyword shorthands applied."""
    changes: dict[str, Any] = {}
    if max_retries is not None:
        changes["attempts"] = max(0, max_retries)
    if backoff_base is not None:
        changes["backoff_base"] = backoff_base
    return retry.replace(**changes) if changes else retry
