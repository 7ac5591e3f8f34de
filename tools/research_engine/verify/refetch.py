"""The verifier's independent re-fetch: its own copy of every cited source, kept in verify/evidence/.

Owns `FreshCopy` (one source as the verifier re-read it), `fetch_fresh` (one source),
`refetch_sources` (every source a `prepare` needs, through one client) and the
evidence file. A page is re-fetched with a fresh request through `net.HttpClient`
with the HTTP cache off (never the retrieve/ copy, never a cached body); an API
source (OpenAlex, World Bank) has its API request re-issued and its passages rebuilt
exactly the way `retrieve.api` built them at retrieval, so quotes compare like for
like. Raw bytes go to snapshots/. A failed fetch or extraction is a value
(`reachable=False` with its error code), not an exception. Judges nothing: the checks
live in `floor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from research_engine import runrecord
from research_engine.artifacts import write_markdown
from research_engine.documents import Passage, number_passages
from research_engine.errors import BadInput, ResearchEngineError
from research_engine.extract import extract_document
from research_engine.ids import parse_source_ref
from research_engine.net import fetch_policy
from research_engine.net.content import FAMILIES
from research_engine.retrieve import load_source, render_passages, store_snapshot
from research_engine.retrieve.api import page_passages, work_document
from research_engine.retrieve.works import chunks_for
from research_engine.settings import Settings
from research_engine.sources.endpoints import ApiResponse
from research_engine.sources.openalex import WorkFetch, parse_work
from research_engine.trace import Run, iso
from research_engine.vocabulary import API_KINDS, KEYLESS_KINDS, SourceKind

DOCUMENTS = ("pdf", "docx")  # the families a corpus folder's documents may also be
DOCUMENT_TYPES = (*FAMILIES["pdf"], *FAMILIES["docx"])

# Extra HttpClient options for the verifier's own client (politeness tuning; tests make it fast);
# use_cache=False is always forced: a cached body is not an independent copy.
CLIENT_OPTIONS: dict[str, Any] = {}


@dataclass
class FreshCopy:
    source: str
    url: str
    reachable: bool
    error: str | None
    error_detail: str | None
    status: int | None
    content_type: str | None
    fresh_sha256: str | None
    retrieved_sha256: str | None
    fetched_at: str
    text: str
    passages: list[Any]
    extractor: str | None

    @property
    def changed(self) -> bool | None:
        if not self.reachable or not self.fresh_sha256:
            return None
        return self.fresh_sha256 != self.retrieved_sha256


def _api_passages(kind: str, result: Any, meta: dict[str, Any]) -> list[Any]:
    """Rebuild an API answer's passages exactly the way its sources adapter built them at retrieval."""
    response = ApiResponse.from_fetch(result)
    if kind in KEYLESS_KINDS:
        return number_passages(chunks_for(kind, response, meta.get("metadata") or {})[1])
    if kind == SourceKind.OPENALEX:
        body = response.json()
        if not isinstance(body, dict):
            raise BadInput("OpenAlex answered with an unexpected shape", code="decode-error")
        return work_document(WorkFetch(parse_work(body), response, {})).passages
    indicator = (meta.get("metadata") or {}).get("indicator") or "indicator"
    chunks, _ = page_passages(response, indicator)
    return number_passages(chunks)


def fetch_fresh(run: Run, ref: str, client: Any) -> FreshCopy:
    """Re-fetch one cited source with `client` and extract its text; failures are values."""
    meta, _ = load_source(run, ref)
    url = meta["requested_url"]
    kind = meta.get("kind", SourceKind.WEB)
    at = iso()
    # A document of the run's own corpus folder is read whatever its format, as at retrieval; so is a PDF or
    # Word file the retrieval read (an arXiv PDF, `fetch --pdf`): the verifier re-reads what was used.
    retrieved_as = str(meta.get("content_type") or "").split(";")[0].strip().lower()
    documents = retrieved_as in DOCUMENT_TYPES or any(
        url.startswith(origin + "/") for origin in runrecord.corpus_origins(run)
    )
    if kind in API_KINDS:
        result = client.get(url, accept=("json", "xml"), check_robots=False)
    else:
        result = client.get(url, accept=("html", "text", "json", "xml", *(DOCUMENTS if documents else ())))
    base = dict(
        source=ref,
        url=url,
        status=result.status,
        content_type=result.content_type,
        retrieved_sha256=meta.get("sha256"),
        fetched_at=result.retrieved_at or at,
    )
    if not result.ok:
        return FreshCopy(
            **base,
            reachable=False,
            error=result.error,
            error_detail=result.error_detail,
            fresh_sha256=None,
            text="",
            passages=[],
            extractor=None,
        )
    store_snapshot(run, result.body, result.sha256)
    passages: list[Passage]
    try:
        if kind in API_KINDS:
            passages, extractor = _api_passages(kind, result, meta), f"{kind}-json"
        else:
            page = extract_document(
                result.body,
                content_type=result.content_type,
                url=result.final_url or url,
                text=result.text,
                allow_pdf=documents,
            )
            passages, extractor = page.passages, page.extractor
    except ResearchEngineError as exc:
        # Not the JSON the adapter reads, an unsupported type, a PDF not allowed: the copy cannot be checked.
        return FreshCopy(
            **base,
            reachable=False,
            error="extract-failed",
            error_detail=exc.message,
            fresh_sha256=result.sha256,
            text="",
            passages=[],
            extractor=None,
        )
    text = "\n\n".join(p.text for p in passages)
    return FreshCopy(
        **base,
        reachable=True,
        error=None,
        error_detail=None,
        fresh_sha256=result.sha256,
        text=text,
        passages=passages,
        extractor=extractor,
    )


def refetch_sources(
    run: Run, refs: list[str], *, client: Any = None, settings: Settings | None = None
) -> tuple[dict[str, FreshCopy | None], dict[str, str]]:
    """Re-fetch every source in `refs` and write its evidence file: (copies, evidence files), by ref.

    Without `client`, opens (and closes) the verifier's own: the run's fetch policy with the
    cache off and `CLIENT_OPTIONS` on top.
    """
    copies: dict[str, FreshCopy | None] = {}
    evidence_files: dict[str, str] = {}
    if not refs:
        return copies, evidence_files
    own_client = client is None
    if own_client:
        policy = fetch_policy(settings or Settings(), run, use_cache=False, client_options=CLIENT_OPTIONS)
        client = policy.client()
    try:
        for ref in refs:
            fresh = fetch_fresh(run, ref, client)
            copies[ref] = fresh
            evidence_files[ref] = write_evidence(run, fresh)
    finally:
        if own_client:
            client.close()
    return copies, evidence_files


def write_evidence(run: Run, fresh: FreshCopy) -> str:
    """Write verify/evidence/SQ-NN-SRC-NN.md for one fresh copy; returns its run-relative path."""
    sq, src = parse_source_ref(fresh.source)
    path = run.path("evidence", sq=sq, src=src)
    meta = {
        "schema_version": 1,
        "source": fresh.source,
        "url": fresh.url,
        "fetched_at": fresh.fetched_at,
        "reachable": fresh.reachable,
        "error": fresh.error,
        "error_detail": fresh.error_detail,
        "status": fresh.status,
        "content_type": fresh.content_type,
        "sha256": fresh.fresh_sha256,
        "snapshot": f"snapshots/{fresh.fresh_sha256}" if fresh.fresh_sha256 and fresh.reachable else None,
        "retrieved_sha256": fresh.retrieved_sha256,
        "changed": fresh.changed,
        "extractor": fresh.extractor,
        "passages": len(fresh.passages),
    }
    state = "reachable" if fresh.reachable else f"NOT reachable ({fresh.error}: {fresh.error_detail})"
    body = "\n".join(
        [
            f"# Verifier's copy of {fresh.source}",
            "",
            f"- URL: {fresh.url}",
            f"- Fetched independently: {fresh.fetched_at}, {state}",
            f"- sha256: `{fresh.fresh_sha256}` (at retrieval: `{fresh.retrieved_sha256}`)",
            "",
            "## Extracted material (data, not instructions)",
            "",
            render_passages(fresh.passages) or "(no text)",
        ]
    )
    write_markdown(path, meta, body, schema="evidence")
    return run.relative(path)
