"""Secrets never reach the trace, the cassette or a log: the one rule for what is secret and how it goes.

What is secret:
- query parameters named like credentials (`api_key`, `token`, `access_token`, `key`,
  `signature`, `session`, `x_api_key`, ...: `SECRET_PARAM`);
- headers named like credentials (`authorization`, `cookie`, `set-cookie`,
  `x-subscription-token`, `x-api-key`, ...: `SECRET_HEADER`);
- JSON body fields named like credentials (`api_key`, `client_secret`, ...: `SECRET_FIELD`);
- the VALUES of every credential the process knows (`Settings.secrets`: configured API
  keys and credential-looking environment variables), wherever they appear, including
  in a body an upstream echoed back.

How it goes:
- from a URL, secret parameters and userinfo are DROPPED (a stored URL stays fetchable:
  the verifier re-issues an API request without the key, never with a placeholder);
- a secret header's value becomes `REDACTED`;
- a known secret value anywhere in text or bytes becomes `REDACTED`.

Every writer of URLs, headers or bodies to the run, the cassette or a log goes
through these functions. Pure; no I/O; reads no environment (secrets are passed in).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"

SECRET_PARAM = re.compile(
    r"^(?:.*[_.-])?(?:api_?key|apikey|key|token|access_token|auth|secret|password|passwd|pwd|"
    r"signature|sig|session|sessionid|sessid|cookie|credentials?)$",
    re.IGNORECASE,
)
SECRET_HEADER = re.compile(
    r"^(?:authorization|proxy-authorization|cookie|set-cookie)$"
    r"|(?:^|-)(?:api-?key|key|token|secret|password|signature|auth|credentials?|session)$",
    re.IGNORECASE,
)
SECRET_FIELD = re.compile(
    r"^(?:api_?key|key|token|access_token|secret|client_secret|password)$", re.IGNORECASE
)
# Log lines and error messages: `name=value` pairs whose name is a secret parameter.
_PAIR = re.compile(r"(?i)\b([a-z0-9_.-]+)=([^&\s\"']+)")


def _variants(secret: str) -> list[str]:
    """A secret as it may appear: itself and its URL-encoded forms."""
    return list(dict.fromkeys((secret, quote(secret, safe=""), quote_plus(secret))))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every known secret value replaced by REDACTED (longest first)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            for form in _variants(secret):
                text = text.replace(form, REDACTED)
    return text


def scrub_bytes(body: bytes, secrets: Iterable[str]) -> bytes:
    """`body` with every known secret value (UTF-8 and URL-encoded) replaced by REDACTED."""
    out = body
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            for form in _variants(secret):
                out = out.replace(form.encode("utf-8"), REDACTED.encode("ascii"))
    return out


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """`url` without secret query parameters and userinfo, with known secret values scrubbed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return scrub(url, secrets)
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if not SECRET_PARAM.match(k)]
        if len(kept) != len(pairs):
            parts = parts._replace(query=urlencode(kept, safe=",:;|*/"))
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1])
    return scrub(urlunsplit(parts), secrets)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """A log line or message with `secret_param=value` pairs and known secret values REDACTED."""
    text = _PAIR.sub(
        lambda m: f"{m.group(1)}={REDACTED}" if SECRET_PARAM.match(m.group(1)) else m.group(0), text
    )
    return scrub(text, secrets)


def redact_headers(
    headers: Mapping[str, Any] | Iterable[tuple[str, Any]], secrets: Iterable[str] = ()
) -> dict[str, str]:
    """Lower-cased headers (repeated ones joined) with secret headers REDACTED and secret values scrubbed."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    secrets = tuple(secrets)
    out: dict[str, str] = {}
    for name, value in items:
        name = str(name).lower()
        shown = REDACTED if SECRET_HEADER.search(name) else scrub(str(value), secrets)
        out[name] = f"{out[name]}, {shown}" if name in out else shown
    return out


def drop_secret_fields(data: Any) -> Any:
    """A JSON object without its credential fields (top level: where request bodies carry keys)."""
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if not SECRET_FIELD.match(str(k))}
    return data
