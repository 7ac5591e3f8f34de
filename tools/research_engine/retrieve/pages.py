"""Web pages into a run: fetch through `net.HttpClient`, read with `extract`, record with provenance.

The one way a page becomes a source, for the `fetch` command and the headless
engine alike:

- `fetch_document(client, url)` returns `(Document | None, FetchResult)`: the Document
  (kind "web") when the fetch succeeded and the body could be read, else None with the
  FetchResult saying why. A thin page (under `extract.THIN_CHARS` characters of body
  text) still comes back as a Document with `extraction["thin"] = True`.
- `retrieve_pages(run, sq, pages, client)` fetches many pages politely and concurrently
  (`HttpClient.get_many`) and records each readable, non-thin one as the next
  `SQ-NN/SRC-NN`; every page comes back as a `Retrieved` saying what happened. One
  failing page never stops the others.
- A page is read once per run: a URL the run already holds as a web source (under any
  sub-question; the same canonical key as that source's request or final URL) is not
  requested again. Its snapshot and extraction are recorded as this sub-question's source
  (`metadata.reused_from` names the first), and the Retrieved says `reused_from`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from research_engine import bounded, runrecord
from research_engine.documents import Document
from research_engine.errors import CheckFailed, ResearchEngineError
from research_engine.extract import extract_document
from research_engine.net import FetchResult
from research_engine.retrieve.store import DUPLICATE_SOURCE, load_source, record, source_path
from research_engine.trace import Run
from research_engine.urls import canonical_key
from research_engine.vocabulary import AccessTier, SourceKind

log = logging.getLogger(__name__)

THIN = "thin"  # the failure code of a page with too little text to be a source
# What a fetch accepts when documents are allowed (`--pdf`, or a corpus folder's own files).
DOCUMENT_ACCEPT = ("html", "text", "pdf", "docx")


@dataclass
class PageRequest:
    """One page to retrieve: its URL and what the selection knew about it."""

    url: str
    query: str | None = None
    access_tier: str = AccessTier.OPEN
    title: str | None = None  # used when the page itself has none


@dataclass
class Retrieved:
    """What became of one page: recorded as `ref`, or not, and why."""

    request: PageRequest
    result: FetchResult
    document: Document | None
    ref: str | None = None
    error: str | None = None  # a FetchResult error code, "decode-error", "thin" or "duplicate-source"
    detail: str | None = None
    duplicate_of: str | None = None  # the source already recorded for the same work (duplicate-source)
    reused_from: str | None = None  # the run's earlier source of the same page: nothing was requested

    @property
    def ok(self) -> bool:
        return self.ref is not None

    @property
    def why(self) -> str:
        return f"{self.error}: {self.detail or ''}".strip(": ")


def _read(result: FetchResult, *, allow_pdf: bool) -> tuple[Document | None, str | None]:
    """The page as a Document, or None and why it could not be read."""
    final = result.final_url or result.url
    try:
        page = extract_document(
            result.body, content_type=result.content_type, url=final, text=result.text, allow_pdf=allow_pdf
        )
    except ResearchEngineError as exc:
        return None, f"{exc.code}: {exc.message}"
    except Exception as exc:  # noqa: BLE001 - a page the reader cannot take is one failed source, not a failed run
        why = f"unreadable: the page reader failed on it ({type(exc).__name__}: {exc})"
        log.warning("%s: %s", final, why)
        log.debug("the reader's traceback for %s", final, exc_info=True)  # with -vv
        return None, why
    return document_from(result, page), None


def fetch_document(
    client: Any, url: str, *, allow_pdf: bool = False, check_robots: bool = True, revalidate: bool = True
) -> tuple[Document | None, FetchResult]:
    """Fetch `url` and extract it; failures are values (None plus the FetchResult that says why)."""
    accept = DOCUMENT_ACCEPT if allow_pdf else ("html", "text")
    result = client.get(url, accept=accept, check_robots=check_robots, revalidate=revalidate)
    if not result.ok:
        return None, result
    doc, why = _read(result, allow_pdf=allow_pdf)
    if doc is None:
        result.ok, result.error, result.error_detail = False, "decode-error", why
    return doc, result


def retrieve_pages(
    run: Run,
    sq: str,
    pages: list[PageRequest],
    client: Any,
    *,
    allow_pdf: bool = False,
    timed: Callable[[str], AbstractContextManager[Any]] | None = None,
    keep_thin: bool = False,
) -> list[Retrieved]:
    """Fetch `pages` and record each readable, non-thin one under `sq`; one Retrieved per page, in order.

    `timed("extract")`, when given, wraps each extraction (the engine books its time). `keep_thin` records
    a short document too: a user's own short note is content, where a thin web page is boilerplate. A page
    the run already holds is recorded again from its snapshot, with no request."""
    accept = DOCUMENT_ACCEPT if allow_pdf else ("html", "text")
    held = {i: ref for i, p in enumerate(pages) if (ref := source_of_url(run, p.url)) is not None}
    wanted = [p.url for i, p in enumerate(pages) if i not in held]
    fetched = iter(client.get_many(wanted, accept=accept) if wanted else [])
    out: list[Retrieved] = []
    for i, request in enumerate(pages):
        if i in held:
            out.append(_reuse_page(run, sq, request, held[i]))
        else:
            result = next(fetched)
            out.append(
                _record_page(run, sq, request, result, allow_pdf=allow_pdf, timed=timed, keep_thin=keep_thin)
            )
    return out


def source_of_url(run: Run, url: str) -> str | None:
    """The run's first web source read from `url` (its canonical key is the source's, or that of the URL
    the source was requested or ended at), under any sub-question; None when the run holds none."""
    try:
        key = canonical_key(url)
    except ResearchEngineError:
        return None
    for item in runrecord.read(run).get("sources") or []:
        if item.get("kind") != SourceKind.WEB:
            continue
        keys = {item.get("canonical_key")}
        with contextlib.suppress(ResearchEngineError, ValueError):
            keys.add(canonical_key(str(item.get("url") or "")))
        if key not in keys or not source_path(run, str(item.get("id"))).is_file():
            continue
        with contextlib.suppress(ResearchEngineError):  # a snapshot that is gone is fetched again
            if run.path("snapshot", digest=str(item.get("sha256") or "")).is_file():
                return str(item["id"])
    return None


def _reuse_page(run: Run, sq: str, request: PageRequest, ref: str) -> Retrieved:
    """Record the run's source `ref` again, as `sq`'s: the same snapshot and extraction, no request."""
    meta, passages = load_source(run, ref)
    body = bounded.read_bytes(run.path("snapshot", digest=meta["sha256"]), "snapshot")
    extraction = {k: v for k, v in (meta.get("extraction") or {}).items() if k not in ("chars", "passages")}
    doc = Document(
        kind=meta["kind"],
        requested_url=meta["requested_url"],
        final_url=meta.get("final_url"),
        status=meta.get("status"),
        retrieved_at=meta["retrieved_at"],
        body=body,
        passages=passages,
        content_type=meta.get("content_type"),
        title=meta.get("title"),
        language=meta.get("language"),
        published=meta.get("published"),
        modified=meta.get("modified"),
        canonical_url=meta.get("canonical_url"),
        canonical_key=meta.get("canonical_key"),
        etag=meta.get("etag"),
        last_modified=meta.get("last_modified"),
        access_tier=meta.get("access_tier") or AccessTier.OPEN,
        robots_meta=dict(meta.get("robots_meta") or {}),
        extraction=extraction,
        metadata={**(meta.get("metadata") or {}), "reused_from": ref},
        from_cache=bool(meta.get("from_cache")),
    )
    result = FetchResult(
        ok=True,
        url=request.url,
        final_url=doc.final_url,
        status=doc.status,
        error=None,
        error_detail=None,
        content_type=doc.content_type,
        charset=(meta.get("metadata") or {}).get("charset"),
        headers={},
        body=body,
        text=None,
        sha256=meta["sha256"],
        retrieved_at=doc.retrieved_at,
        from_cache=doc.from_cache,
        etag=doc.etag,
        last_modified=doc.last_modified,
        redirects=[],
        retry_after=None,
        elapsed_ms=0,
    )
    try:
        new = record(run, sq, doc, query=request.query)
    except CheckFailed as exc:
        if exc.code != DUPLICATE_SOURCE:
            raise
        why, existing = exc.message, exc.data["existing"]
        return Retrieved(request, result, doc, error=DUPLICATE_SOURCE, detail=why, duplicate_of=existing)
    return Retrieved(request, result, doc, ref=new, reused_from=ref)


def _record_page(
    run: Run,
    sq: str,
    request: PageRequest,
    result: FetchResult,
    *,
    allow_pdf: bool,
    timed: Callable[[str], AbstractContextManager[Any]] | None,
    keep_thin: bool = False,
) -> Retrieved:
    if not result.ok:
        return Retrieved(request, result, None, error=result.error, detail=result.error_detail)
    with timed("extract") if timed is not None else contextlib.nullcontext():
        doc, why = _read(result, allow_pdf=allow_pdf)
    if doc is None:
        result.ok, result.error, result.error_detail = False, "decode-error", why
        return Retrieved(request, result, None, error="decode-error", detail=why)
    if doc.extraction.get("thin") and not (keep_thin and doc.passages):
        return Retrieved(request, result, doc, error=THIN, detail="too little text to be a source")
    doc.requested_url = request.url
    doc.access_tier = request.access_tier or AccessTier.OPEN
    doc.title = doc.title or request.title
    try:
        ref = record(run, sq, doc, query=request.query)
    except CheckFailed as exc:
        if exc.code != DUPLICATE_SOURCE:
            raise
        # Another URL of the sub-question led to the same work: nothing new to record.
        return Retrieved(
            request,
            result,
            doc,
            error=DUPLICATE_SOURCE,
            detail=exc.message,
            duplicate_of=exc.data["existing"],
        )
    return Retrieved(request, result, doc, ref=ref)


def document_from(result: Any, page: Any) -> Document:
    """A kind "web" Document from a successful FetchResult and the page extracted from its body."""
    final = result.final_url or result.url
    try:
        key = canonical_key(final)
    except ResearchEngineError:
        key = None
    return Document(
        kind=SourceKind.WEB,
        requested_url=result.url,
        final_url=final,
        status=result.status,
        retrieved_at=result.retrieved_at,
        body=result.body,
        passages=list(page.passages),
        content_type=result.content_type,
        title=page.title,
        language=page.language,
        published=page.published,
        modified=page.modified,
        canonical_url=page.canonical_url,
        canonical_key=key,
        etag=result.etag,
        last_modified=result.last_modified,
        access_tier=AccessTier.OPEN,
        robots_meta=dict(page.robots_meta),
        extraction=page.extraction_figures(),
        metadata={
            "charset": result.charset,
            "redirects": list(result.redirects),
            "elapsed_ms": result.elapsed_ms,
        },
        from_cache=result.from_cache,
    )
