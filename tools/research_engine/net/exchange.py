"""One request/response exchange: send, stream the body under the caps, classify what came back.

`exchange` sends one request through the client's httpx client and reads the answer
into an `Exchange`: the status and headers, the body (read under the raw and decoded
byte caps and the total deadline), the content family and charset, or one error code
with a detail, whether the failure is transient, and the server's Retry-After. A
non-2xx answer keeps at most `ERROR_BODY_MAX` bytes of its body (APIs explain themselves
there); error pages are never sources.

Redirects, the revalidation cache, retries and the guard are the client's: this module
never follows a Location, never waits and never checks a URL. httpx is imported only
when an exchange runs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from research_engine.net import content as bodies
from research_engine.net.retry import RETRY_AFTER_STATUSES, parse_retry_after
from research_engine.vocabulary import FetchError

if TYPE_CHECKING:
    import httpx

ERROR_BODY_MAX = 64 * 1024  # enough for an API's {error, message}; error pages are not sources
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
DEADLINE_PASSED = "the fetch deadline passed while the body was still arriving"


@dataclass
class Exchange:
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

    def failed(self, error: FetchError, detail: str, *, transient: bool = False) -> Exchange:
        self.error, self.detail, self.transient = error, detail, transient
        return self


def exchange(
    http: httpx.Client,
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    payload: dict | None,
    accept: tuple[str, ...] | None,
    max_bytes: int,
    deadline: float,
    timeout: float,
    transient_statuses: Collection[int],
    count: Callable[[str], None],
    truncate: bool = False,
) -> Exchange:
    """Send one request and read its answer; `count` is told of each request sent and body downloaded.

    `truncate`: a body longer than `max_bytes` is cut there instead of refused (robots.txt: RFC 9309
    section 2.5 parses the first 500 KiB)."""
    import httpx  # noqa: PLC0415 - heavy; only a client that fetches needs it

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return Exchange().failed(
            FetchError.TIMEOUT, "the fetch deadline passed before the request could start"
        )
    count("requests")
    try:
        request = http.build_request(
            method, url, headers=headers, json=payload, timeout=httpx.Timeout(min(timeout, remaining))
        )
        response = http.send(request, stream=True)
    except httpx.TimeoutException as exc:
        detail = f"{type(exc).__name__}: {exc or 'timed out'}"
        return Exchange().failed(FetchError.TIMEOUT, detail, transient=True)
    except httpx.TransportError as exc:
        out = Exchange(never_sent=isinstance(exc, httpx.ConnectError))
        return out.failed(FetchError.NETWORK, f"{type(exc).__name__}: {exc}", transient=True)
    except httpx.InvalidURL as exc:
        return Exchange().failed(FetchError.REFUSED_SSRF, f"malformed URL: {exc}")
    with contextlib.closing(response):
        return _read(response, accept, max_bytes, deadline, transient_statuses, count, truncate)


def _read(
    response: httpx.Response,
    accept: tuple[str, ...] | None,
    max_bytes: int,
    deadline: float,
    transient_statuses: Collection[int],
    count: Callable[[str], None],
    truncate: bool = False,
) -> Exchange:
    status = response.status_code
    headers = {k.lower(): v for k, v in response.headers.items()}
    media, charset = bodies.parse_content_type(headers.get("content-type"))
    out = Exchange(status=status, headers=headers, media=media, charset=charset)
    if status in REDIRECT_STATUSES or status == 304:
        return out
    if not 200 <= status < 300:
        out.failed(FetchError.HTTP_STATUS, f"HTTP {status}", transient=status in transient_statuses)
        if status in RETRY_AFTER_STATUSES:
            out.retry_after = parse_retry_after(headers.get("retry-after"))
        # Keep a small error body: APIs explain themselves there ({error, message}).
        out.body = _read_error_body(response, deadline)
        return out
    family = None if media in bodies.GENERIC_TYPES else bodies.declared_family(media)
    if accept and media not in bodies.GENERIC_TYPES and family not in accept:
        kinds = ", ".join(accept)
        return out.failed(
            FetchError.UNSUPPORTED_TYPE, f"content type {media!r} is not one of the accepted kinds {kinds}"
        )
    declared_length = headers.get("content-length", "")
    too_long = declared_length.isdigit() and int(declared_length) > max_bytes
    if too_long and not truncate and not headers.get("content-encoding"):
        return out.failed(
            FetchError.TOO_LARGE, f"declared length {declared_length} exceeds {max_bytes} bytes"
        )
    body = (_read_head if truncate else _read_body)(response, out, max_bytes, deadline)
    if out.error is not None:
        return out
    count("full_downloads")
    if not body:
        return out.failed(FetchError.EMPTY, "the response body is empty")
    if family is None:
        family = bodies.sniff_family(body)
        if accept and family not in accept:
            shown = media or "missing"
            return out.failed(
                FetchError.UNSUPPORTED_TYPE,
                f"content type {shown} and the body does not look like {', '.join(accept)}",
            )
    binary = bodies.binary_reason(body, charset) if family in bodies.TEXTUAL else None
    if binary is not None:
        # Whatever the header says: a JPEG labelled text/html is no page (nor a source).
        shown = media or "no content type"
        return out.failed(FetchError.UNSUPPORTED_TYPE, f"{binary}, though it is labelled {shown}")
    out.body, out.family = body, family
    if not media and family:
        out.media = bodies.FAMILIES[family][0]
    return out


def _read_body(response: httpx.Response, out: Exchange, max_bytes: int, deadline: float) -> bytes:
    """The decoded body, read under the raw and decoded caps and the deadline; on failure `out` says why."""
    import httpx  # noqa: PLC0415 - heavy; only a client that fetches needs it

    try:
        decoder = bodies.Decoder(response.headers.get("content-encoding"), max_bytes)
        chunks: list[bytes] = []
        raw = 0
        for chunk in response.iter_raw():
            raw += len(chunk)
            if raw > max_bytes:
                raise bodies.TooLarge(f"body exceeds {max_bytes} bytes")
            chunks.append(decoder.feed(chunk))
            if time.monotonic() > deadline:
                out.failed(FetchError.TIMEOUT, DEADLINE_PASSED)
                return b""
        chunks.append(decoder.flush())
    except bodies.TooLarge as exc:
        out.failed(FetchError.TOO_LARGE, str(exc))
    except bodies.DecodeError as exc:
        out.failed(FetchError.DECODE_ERROR, str(exc))
    except httpx.TimeoutException as exc:
        if time.monotonic() >= deadline - 0.05:
            out.failed(FetchError.TIMEOUT, DEADLINE_PASSED)
        else:
            out.failed(FetchError.TIMEOUT, f"read timed out: {exc}", transient=True)
    except httpx.TransportError as exc:
        out.failed(FetchError.NETWORK, f"{type(exc).__name__}: {exc}", transient=True)
    else:
        return b"".join(chunks)
    return b""


def _read_head(response: httpx.Response, out: Exchange, max_bytes: int, deadline: float) -> bytes:
    """The first `max_bytes` decoded bytes of the body; what follows is never read."""
    import httpx  # noqa: PLC0415 - heavy; only a client that fetches needs it

    try:
        # The decoder's cap is the bomb guard; reading stops as soon as the head is complete.
        decoder = bodies.Decoder(response.headers.get("content-encoding"), max_bytes * 4)
        chunks: list[bytes] = []
        size = raw = 0
        for chunk in response.iter_raw():
            raw += len(chunk)
            chunks.append(decoder.feed(chunk))
            size += len(chunks[-1])
            if size >= max_bytes or raw > max_bytes * 4:
                break
            if time.monotonic() > deadline:
                out.failed(FetchError.TIMEOUT, DEADLINE_PASSED)
                return b""
        else:
            chunks.append(decoder.flush())
    except bodies.TooLarge as exc:
        out.failed(FetchError.TOO_LARGE, str(exc))
    except bodies.DecodeError as exc:
        out.failed(FetchError.DECODE_ERROR, str(exc))
    except httpx.TimeoutException as exc:
        out.failed(FetchError.TIMEOUT, f"read timed out: {exc}", transient=True)
    except httpx.TransportError as exc:
        out.failed(FetchError.NETWORK, f"{type(exc).__name__}: {exc}", transient=True)
    else:
        return b"".join(chunks)[:max_bytes]
    return b""


def _read_error_body(response: Any, deadline: float) -> bytes:
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
