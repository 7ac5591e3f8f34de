"""What a fetch gave: `FetchResult`, the error codes a failed one carries, and the failure builder.

A fetch never raises for network, HTTP or guard problems: it returns a `FetchResult` with
`ok=False` and one code from `ERROR_CODES` (`vocabulary.FetchError`), with a one-line
`error_detail`. This module builds results; it never sends a request or reads a run.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from research_engine.errors import BadInput
from research_engine.trace import iso
from research_engine.vocabulary import FetchError

ERROR_CODES: tuple[str, ...] = tuple(FetchError)


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started` (a `time.monotonic()` reading)."""
    return int((time.monotonic() - started) * 1000)


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


def failure(
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
    """A failed fetch of `url` (requested at `started`): one error code, a detail, what was seen."""
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
        elapsed_ms=elapsed_ms(started),
    )
