"""research_engine.net: the one HTTP client (SSRF guard, robots.txt, politeness, retries, caps, cache).

Public API (implementation in private modules):

    HttpClient      get / post_json / get_many / close; failures are values, never exceptions
    FetchPolicy     what a client may fetch (private addresses, robots, PDF, cache); `fetch_policy`
                    builds it from the settings, the run and a command's flags
    RetryPolicy     when a failed call is retried and how long to wait (attempts, backoff, jitter,
                    the Retry-After cap, transient statuses, an injectable sleep)
    FetchResult     what a fetch gave: status, final URL, headers, body, text, digests, error code
    ERROR_CODES     the codes a failed FetchResult carries (`vocabulary.FetchError`)
    check_url       the SSRF guard's decision for one URL (optionally resolving the host)
    GuardVerdict    that decision: allowed, reason, code, host, addresses
    USER_AGENT      research-engine/<version> (+https://github.com/research-engine/research-engine)

Modules: `guard` (SSRF), `transport` (sockets only to the guard's addresses), `robots`
(RFC 9309 over Protego), `politeness` (per-host gate), `retry` (the retry policy), `exchange`
(one request/response under the caps), `content` (decompression caps, content types,
charsets), `cache` (ETag/Last-Modified store), `result` (FetchResult and its error codes),
`client` (the steps wired together), `policy` (the options a client is opened with). Nothing
in this package writes into a run; callers record what they fetched through
`research_engine.retrieve`.
"""

from __future__ import annotations

from research_engine.net.client import USER_AGENT, HttpClient
from research_engine.net.guard import GuardVerdict, check_url
from research_engine.net.policy import FetchPolicy, fetch_policy
from research_engine.net.result import ERROR_CODES, FetchResult
from research_engine.net.retry import RetryPolicy

__all__ = [
    "ERROR_CODES",
    "USER_AGENT",
    "FetchPolicy",
    "FetchResult",
    "GuardVerdict",
    "HttpClient",
    "RetryPolicy",
    "check_url",
    "fetch_policy",
]
