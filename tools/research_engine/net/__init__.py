"""research_engine.net: the one HTTP client (SSRF guard, robots.txt, politeness, caps, revalidation cache).

Public API (implementation in private modules):

    HttpClient      get / post_json / get_many / close; failures are values, never exceptions
    FetchPolicy     what a client may fetch (private addresses, robots, PDF, cache); `fetch_policy`
                    builds it from the settings, the run and a command's flags
    FetchResult     what a fetch gave: status, final URL, headers, body, text, digests, error code
    check_url       the SSRF guard's decision for one URL (optionally resolving the host)
    GuardVerdict    that decision: allowed, reason, code, host, addresses
    USER_AGENT      research-engine/<version> (+https://github.com/research-engine/research-engine)

Modules: `guard` (SSRF), `robots` (RFC 9309 over Protego), `politeness` (per-host gate),
`content` (decompression caps, content types, charsets), `cache` (ETag/Last-Modified store),
`client` (everything wired together). Nothing in this package writes into a run; callers
record what they fetched through `research_engine.retrieve`.
"""

from __future__ import annotations

from research_engine.net.client import ERROR_CODES, USER_AGENT, FetchResult, HttpClient
from research_engine.net.guard import GuardVerdict, check_url
from research_engine.net.policy import FetchPolicy, fetch_policy

__all__ = [
    "ERROR_CODES",
    "USER_AGENT",
    "FetchPolicy",
    "FetchResult",
    "GuardVerdict",
    "HttpClient",
    "check_url",
    "fetch_policy",
]
