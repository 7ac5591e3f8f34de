"""Web pages as Documents: fetch through `net.HttpClient`, read with `extract`, keep the provenance.

`fetch_document(client, url)` returns `(Document | None, FetchResult)`: the Document (kind
"web") when the fetch succeeded and the body could be read, else None with the FetchResult
saying why. A thin page (under `extract.THIN_CHARS` characters of body text) still comes
back as a Document with `extraction["thin"] = True`; whether to record it is the caller's
decision (the `fetch` command refuses to record thin pages as sources).

This module never writes into a run; `retrieve.record` does.
"""

from __future__ import annotations

from typing import Any

from research_engine.documents import Document
from research_engine.errors import ResearchEngineError


def fetch_document(
    client: Any, url: str, *, allow_pdf: bool = False, check_robots: bool = True, revalidate: bool = True
) -> tuple[Document | None, Any]:
    """Fetch `url` and extract it; failures are values (None plus the FetchResult that says why)."""
    from research_engine.extract import extract_document

    accept = ("html", "text", "pdf") if allow_pdf else ("html", "text")
    result = client.get(url, accept=accept, check_robots=check_robots, revalidate=revalidate)
    if not result.ok:
        return None, result
    final = result.final_url or result.url
    try:
        page = extract_document(
            result.body, content_type=result.content_type, url=final, text=result.text, allow_pdf=allow_pdf
        )
    except ResearchEngineError as exc:
        result.ok, result.error, result.error_detail = False, "decode-error", f"{exc.code}: {exc.message}"
        return None, result
    return document_from(result, page), result


def document_from(result: Any, page: Any) -> Document:
    """A kind "web" Document from a successful FetchResult and the page extracted from its body."""
    from research_engine.urls import canonical_key

    final = result.final_url or result.url
    try:
        key = canonical_key(final)
    except ResearchEngineError:
        key = None
    return Document(
        kind="web",
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
        access_tier="open",
        robots_meta=dict(page.robots_meta),
        extraction=page.extraction_figures(),
        metadata={
            "charset": result.charset,
            "redirects": list(result.redirects),
            "elapsed_ms": result.elapsed_ms,
        },
        from_cache=result.from_cache,
    )
