"""robots.txt (RFC 9309): parsing and matching, a thin wrapper over Protego.

Protego does the rule matching (longest match, `*` and `$`, percent-encoding before
comparison, `/robots.txt` implicitly allowed). Before it sees a file, this module fixes
the three places where Protego falls short of the RFC (see ../shared/corpora/README.md):

- a UTF-8 byte order mark, whole or truncated, before the first line is dropped;
- lines that are not robots.txt records (`Invalid-Unknown-Line: x`, `<br />`) are removed,
  so they cannot end a group of `User-agent` lines (RFC 9309 section 2.2: unknown records
  are ignored);
- user-agent matching is exact and case-insensitive on the product token (RFC 9309
  section 2.2.1): a group's `User-agent` value is read up to the first character that a
  product token cannot hold (`AB42bot` -> `ab`, `barbarbot*` -> `barbarbot`), and the
  crawler's token is its user-agent string up to the first `/` or space. Protego's
  substring matching would let `barbarbot-prod` pick the `barbarbot` group.

`RobotsPolicy` is what the client caches per origin: parsed rules, or the RFC's
"allow everything" (4xx) and "disallow everything" (5xx or unreachable) answers;
`policy_for_answer` turns the client's fetch of /robots.txt into one of them.
This module does no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from research_engine.errors import BadInput
from research_engine.net.result import FetchResult
from research_engine.vocabulary import FetchError

if TYPE_CHECKING:
    from protego import Protego

MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 section 2.5: parse at least 500 KiB
ROBOTS_TTL = 600.0  # seconds a fetched robots.txt (or a 4xx "allow all") is trusted
ROBOTS_ERROR_TTL = 120.0  # seconds a 5xx/unreachable "disallow all" lasts before a new try
CRAWL_DELAY_CAP = 30.0  # the longest Crawl-delay honoured, in seconds

_UA_FIELDS = {"user-agent", "useragent", "user agent"}
# Every record name Protego 0.7 understands (including its tolerated misspellings).
_KNOWN_FIELDS = _UA_FIELDS | {
    "allow",
    "disallow",
    "dissallow",
    "dissalow",
    "disalow",
    "diasllow",
    "disallaw",
    "sitemap",
    "sitemaps",
    "site-map",
    "crawl-delay",
    "crawl delay",
    "request-rate",
    "request rate",
    "visit-time",
    "visit time",
    "host",
}
_TOKEN_RE = re.compile(r"[A-Za-z_-]+")
_NO_GROUP = "research-engine-unmatched-group"
_BOMS = (b"\xef\xbb\xbf", b"\xef\xbb", b"\xef")


def product_token(user_agent: str) -> str:
    """The crawler's product token: its user-agent string up to the first '/' or whitespace, lowercased."""
    return re.split(r"[/\s]", user_agent.strip(), maxsplit=1)[0].lower()


def _group_token(value: str) -> str:
    match = _TOKEN_RE.match(value.strip())
    return match.group(0).lower() if match else ""


def _record_field(line: str) -> tuple[str | None, str]:
    """(known record name or None, value) for one line with its comment removed."""
    if ":" in line:
        name, value = line.split(":", 1)
        name = name.strip().lower()
        if name in _KNOWN_FIELDS:
            return name, value.strip()
    words = line.split()
    for count in (1, 2):
        name = " ".join(words[:count]).lower()
        if name in _KNOWN_FIELDS:
            return name, " ".join(words[count:])
    return None, ""


def decode_robots(body: bytes | str) -> str:
    """Text of a robots.txt body: BOM (whole or truncated) dropped, invalid UTF-8 replaced."""
    if isinstance(body, str):
        return body.lstrip("\ufeff")
    for bom in _BOMS:
        if body.startswith(bom):
            body = body[len(bom) :]
            break
    return body.decode("utf-8", errors="replace")


def rewrite_for(text: str, token: str) -> str:
    """The file as Protego should read it for the crawler `token` (see the module docstring)."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            out.append("")  # blank lines carry no meaning in RFC 9309, but keep line numbers
            continue
        name, value = _record_field(line)
        if name is None:
            continue
        if name in _UA_FIELDS:
            if value.strip() == "*":
                out.append("User-agent: *")
            elif value and _group_token(value) == token:
                out.append(f"User-agent: {token}")
            else:
                out.append(f"User-agent: {_NO_GROUP}")
            continue
        out.append(line)
    return "\n".join(out) + "\n"


@lru_cache(maxsize=256)
def _parsed(text: str, token: str) -> Protego:
    from protego import Protego  # noqa: PLC0415 - third-party parser, needed only when rules are matched

    return Protego.parse(rewrite_for(text, token))


@dataclass
class RobotsPolicy:
    """The robots.txt answer for one origin."""

    kind: str  # "rules" | "allow-all" | "disallow-all"
    text: str = ""
    reason: str = ""
    status: int | None = None
    fetched_at: float = 0.0
    expires_at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, body: bytes | str, **kw: Any) -> RobotsPolicy:
        return cls("rules", decode_robots(body), **kw)

    def allowed(self, url: str, user_agent: str) -> bool:
        if self.kind == "allow-all":
            return True
        if self.kind == "disallow-all":
            return False
        token = product_token(user_agent)
        return bool(_parsed(self.text, token).can_fetch(url, token))

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.kind != "rules":
            return None
        token = product_token(user_agent)
        delay = _parsed(self.text, token).crawl_delay(token)
        return float(delay) if delay is not None else None


def is_allowed(robots_txt: bytes | str, url: str, user_agent: str) -> bool:
    """Offline check of one URL against a robots.txt body (the `robots check` command).

    A URL that is not http(s) with a host is bad input: the parser would call it allowed."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise BadInput(f"not a valid URL: {url[:200]!r} ({exc})", code="bad-url", field="url") from exc
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise BadInput(f"not an http(s) URL with a host: {url[:200]!r}", code="bad-url", field="url")
    return RobotsPolicy.parse(robots_txt).allowed(url, user_agent)


def policy_for_answer(
    origin: str,
    result: FetchResult,
    *,
    now: float,
    ttl: float = ROBOTS_TTL,
    error_ttl: float = ROBOTS_ERROR_TTL,
) -> RobotsPolicy:
    """The policy an origin's /robots.txt fetch gives (RFC 9309 section 2.3.1).

    A body: its rules. Empty, or a 4xx other than 429: allow all. A 5xx, a 429, a timeout or
    any failure to reach it: disallow all, for `error_ttl` seconds only, then it is asked again.
    """
    if result.ok:
        return RobotsPolicy.parse(result.body, status=result.status, fetched_at=now, expires_at=now + ttl)
    if result.error == FetchError.EMPTY:
        return RobotsPolicy(
            "allow-all",
            reason="robots.txt is empty",
            status=result.status,
            fetched_at=now,
            expires_at=now + ttl,
        )
    status = result.status
    if result.error == FetchError.HTTP_STATUS and status and 400 <= status < 500 and status != 429:
        return RobotsPolicy(
            "allow-all",
            reason=f"robots.txt answered {status}",
            status=status,
            fetched_at=now,
            expires_at=now + ttl,
        )
    why = result.error_detail or result.error
    return RobotsPolicy(
        "disallow-all",
        status=status,
        fetched_at=now,
        expires_at=now + error_ttl,
        reason=f"robots.txt for {origin} is unreachable ({result.error}: {why}); "
        "RFC 9309 says to assume complete disallow for a while",
    )
