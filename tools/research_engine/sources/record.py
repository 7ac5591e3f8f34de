"""Turning API answers into Documents and recording them (and search results) into a run.

- `work_document`: an OpenAlex work as a Document (title, a facts line, one
  passage per abstract sentence); its URL is the exact API request, without
  the api_key.
- `series_documents`: one Document per World Bank response page, one passage
  per point ("Japan, GDP (current US$), 2019: 5081769542379.77"); nulls are kept
  and said plainly.
- `record_work` / `record_series`: the Documents as `retrieve/SQ-NN/SRC-NN.md`
  through `retrieve.record` (raw bytes into `snapshots/`).
- `record_candidates` (and `record_search` / `record_works_search` for the two
  search kinds): a search's Candidates, the backend chain and the request
  facts appended to `select/SQ-NN.candidates.json` (never overwriting earlier
  queries), with every raw answer kept in `snapshots/`: where the candidates
  came from is part of the trust log.

The only writer of candidates files; `load_candidates` reads them back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from research_engine.documents import Document, number_passages
from research_engine.errors import BadInput
from research_engine.sources.candidate import Candidate, canonical_key_for
from research_engine.sources.endpoints import ApiResponse
from research_engine.sources.openalex import WorkFetch, WorkSearch, split_sentences
from research_engine.sources.worldbank import SeriesFetch, split_envelope
from research_engine.trace import Run, atomic_write_text, iso

if TYPE_CHECKING:
    from research_engine.sources.search import SearchOutcome

CANDIDATES_SCHEMA_VERSION = 1


def format_value(value: Any) -> str:
    """A World Bank value as written in the passage: the API's own digits, nulls said plainly."""
    if value is None:
        return "no value reported (null)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def work_document(fetch: WorkFetch, *, access_tier: str = "open") -> Document:
    work = fetch.work
    response = fetch.response
    chunks: list[tuple[str, str]] = [("heading", work.title or work.short_id)]
    facts = []
    if work.authors:
        shown = ", ".join(work.authors[:8]) + (" et al." if len(work.authors) > 8 else "")
        facts.append(f"Authors: {shown}.")
    if work.year is not None:
        facts.append(f"Published {work.year}" + (f" in {work.venue}." if work.venue else "."))
    if work.doi:
        facts.append(f"DOI: {work.doi}.")
    if work.cited_by_count is not None:
        facts.append(f"Cited by {work.cited_by_count} works (OpenAlex, at retrieval).")
    if work.type:
        facts.append(f"Type: {work.type}.")
    chunks.append(("data", " ".join(facts)))
    if work.abstract:
        chunks.extend(("paragraph", sentence) for sentence in split_sentences(work.abstract))
    else:
        chunks.append(("data", "OpenAlex holds no abstract for this work."))
    return api_document(
        response,
        "openalex",
        chunks,
        title=work.title,
        published=work.publication_date,
        canonical_url=f"https://doi.org/{work.doi}" if work.doi else work.id,
        canonical_key=canonical_key_for(f"https://doi.org/{work.doi}" if work.doi else work.id, work.doi),
        access_tier=access_tier,
        extraction={"extractor": "openalex-json"},
        metadata={
            "openalex_id": work.short_id,
            "doi": work.doi,
            "year": work.year,
            "authors": work.authors,
            "venue": work.venue,
            "type": work.type,
            "cited_by_count": work.cited_by_count,
            "is_oa": work.is_oa,
            "oa_url": work.oa_url,
            "has_abstract": work.abstract is not None,
            "rate_limit": fetch.rate_limit,
        },
    )


def api_document(response: ApiResponse, kind: str, chunks: list[tuple[str, str]], **fields: Any) -> Document:
    """A Document for one API exchange: its exact request URL, raw body and cache facts, the chunks as
    numbered passages; `fields` are the rest (title, canonical key, metadata...)."""
    return Document(
        kind=kind,
        requested_url=response.url,
        final_url=None,
        status=response.status,
        retrieved_at=response.retrieved_at,
        body=response.body,
        passages=number_passages(chunks),
        content_type=response.content_type,
        etag=response.etag,
        last_modified=response.last_modified,
        from_cache=response.from_cache,
        **fields,
    )


def page_passages(response: ApiResponse, what: str) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    meta, rows = split_envelope(response.json(), what)
    chunks: list[tuple[str, str]] = []
    for row in rows:
        country = (row.get("country") or {}).get("value") or row.get("countryiso3code") or "?"
        indicator = (row.get("indicator") or {}).get("value") or (row.get("indicator") or {}).get("id") or "?"
        chunks.append(
            ("data", f"{country}, {indicator}, {row.get('date')}: {format_value(row.get('value'))}")
        )
    return chunks, meta


def series_documents(fetch: SeriesFetch) -> list[Document]:
    """One Document per response page: each page is one exact, re-issuable request."""
    docs: list[Document] = []
    names = sorted({s.country_name or s.country for s in fetch.series})
    indicator_name = next((s.indicator_name for s in fetch.series if s.indicator_name), fetch.indicator)
    for number, response in enumerate(fetch.pages, 1):
        chunks, meta = page_passages(response, fetch.indicator)
        no_data = [s.note for s in fetch.series if not s.points and s.note]
        if number == 1:
            chunks[:0] = [("data", note) for note in no_data if note]
        if not chunks:
            chunks = [
                ("data", f"No data for {fetch.indicator} in {fetch.span} for {', '.join(fetch.countries)}.")
            ]
        page_note = f", page {number} of {meta.get('pages')}" if len(fetch.pages) > 1 else ""
        docs.append(
            api_document(
                response,
                "worldbank",
                chunks,
                title=f"World Bank: {indicator_name}, {', '.join(names) or ', '.join(fetch.countries)} "
                f"({fetch.span}{page_note})",
                modified=meta.get("lastupdated"),
                canonical_key=canonical_key_for(response.url),
                access_tier="open",
                extraction={"extractor": "worldbank-json"},
                metadata={
                    "indicator": fetch.indicator,
                    "countries": fetch.countries,
                    "span": fetch.span,
                    "page": meta.get("page"),
                    "pages": meta.get("pages"),
                    "source": meta.get("sourcename"),
                    "lastupdated": meta.get("lastupdated"),
                    "latest": {s.country: (s.latest.to_dict() if s.latest else None) for s in fetch.series},
                },
            )
        )
    return docs


def record_work(
    run: Run, sq: str, fetch: WorkFetch, *, access_tier: str = "open", query: str | None = None
) -> str:
    from research_engine import retrieve

    return retrieve.record(run, sq, work_document(fetch, access_tier=access_tier), query=query)


def record_series(run: Run, sq: str, fetch: SeriesFetch, *, query: str | None = None) -> list[str]:
    from research_engine import retrieve

    return [retrieve.record(run, sq, doc, query=query) for doc in series_documents(fetch)]


def record_candidates(
    run: Run,
    sq: str,
    *,
    command: str,
    query: str,
    candidates: list[Candidate],
    responses: list[ApiResponse],
    backend: str | None,
    chain: list[dict[str, Any]] | None = None,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append one query's candidates to `select/SQ-NN.candidates.json`; returns the appended entry."""
    from research_engine import retrieve, schemas

    path = run.path("candidates", sq=sq)  # validates the SQ id
    requests = []
    for response in responses:
        retrieve.store_snapshot(run, response.body, response.sha256)
        requests.append({**response.to_dict(), "snapshot": f"snapshots/{response.sha256}"})
    with run.lock():
        document = read_candidates_file(run, sq) or {
            "schema_version": CANDIDATES_SCHEMA_VERSION,
            "sub_question": sq,
            "queries": [],
            "candidates": [],
        }
        entry = {
            "id": f"Q-{len(document['queries']) + 1:02d}",
            "at": iso(),
            "command": command,
            "query": query,
            "backend": backend,
            "chain": chain or [],
            "requests": requests,
            "info": info or {},
            "candidates": [c.to_dict() for c in candidates],
        }
        document["queries"].append(entry)
        # The flattened view `select` reads directly ({"candidates": [...]}), each tagged with its query.
        document["candidates"] = [
            {**c, "extra": {**c.get("extra", {}), "query_id": q["id"]}}
            for q in document["queries"]
            for c in q["candidates"]
        ]
        problems = schemas.validate(document, "candidate-log", file=run.relative(path))
        if problems:
            raise BadInput(
                f"refusing to write an invalid candidates file: {problems[0].message}",
                code="invalid-artifact",
            )
        atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return entry


def record_search(
    run: Run, sq: str, outcome: SearchOutcome, *, query: str, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A web search's outcome as one query's candidates (`info` adds to the backend's own extras)."""
    return record_candidates(
        run,
        sq,
        command="search",
        query=query,
        candidates=outcome.candidates,
        responses=outcome.responses,
        backend=outcome.backend,
        chain=[a.to_dict() for a in outcome.chain],
        info={**outcome.info, **(info or {})},
    )


def record_works_search(
    run: Run, sq: str, found: WorkSearch, *, query: str, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An OpenAlex works search as one query's candidates, with its filter, total and rate limit."""
    return record_candidates(
        run,
        sq,
        command="openalex search",
        query=query,
        candidates=found.candidates(),
        responses=found.pages,
        backend="openalex",
        info={
            "filter": found.filter,
            "total_count": found.total_count,
            "rate_limit": found.rate_limit,
            **(info or {}),
        },
    )


def recorded_query(run: Run, sq: str, client: Any, entry: dict[str, Any]) -> dict[str, str]:
    """What a command that recorded `entry` reports under data["recorded"]; notes the client's overrides."""
    note_overrides(run, client)
    return {"file": run.relative(run.path("candidates", sq=sq)), "query_id": entry["id"]}


def read_candidates_file(run: Run, sq: str) -> dict[str, Any] | None:
    path = run.path("candidates", sq=sq)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BadInput(f"{path} is not valid JSON: {exc}", code="malformed-artifact") from exc


def load_candidates(run: Run, sq: str) -> list[Candidate]:
    """Every candidate recorded for `sq`, in query order (extra.query_id names the query)."""
    document = read_candidates_file(run, sq) or {}
    return [Candidate.from_dict(item) for item in document.get("candidates", [])]


def open_target(run_path: str | None, sq: str | None) -> Run | None:
    """The run to record into for `--run RUN --sq SQ-NN` (both or neither), or None."""
    import re

    from research_engine.trace import open_run

    if run_path is None and sq is None:
        return None
    if run_path is None or sq is None:
        raise BadInput(
            "--run and --sq go together: name the run and the sub-question to record under",
            code="bad-option",
            field="run" if run_path is None else "sq",
        )
    if not re.fullmatch(r"SQ-[0-9]{2,}", sq):
        raise BadInput(f"--sq {sq!r} is not a sub-question id (SQ-01)", code="bad-id", field="sq")
    return open_run(run_path)


def note_overrides(run: Run, client: Any) -> None:
    """Put the client's explicit opt-ins (private addresses, ignored robots) into run.json's events."""
    from research_engine import runrecord
    from research_engine.sources.endpoints import redact_url

    for override in getattr(client, "overrides", []) or []:
        # The client notes the URL it fetched, api_key and all: secrets never reach the trace.
        details = {
            k: redact_url(v) if isinstance(v, str) and "://" in v else v
            for k, v in override.items()
            if k != "kind"
        }
        runrecord.add_event(run, str(override.get("kind", "override")), **details)


def check_candidates(run: Run, report: Any) -> None:
    """validate.py checker: each `select/SQ-NN.candidates.json` matches its schema; its snapshots exist."""
    from research_engine.schemas import validate

    for path in sorted((run.root / "select").glob("SQ-*.candidates.json")):
        report.checked_files += 1
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            report.add(path, f"not valid JSON: {exc}", "malformed-artifact")
            continue
        report.extend(validate(document, "candidate-log"), path)
        if not isinstance(document, dict):
            continue
        if document.get("sub_question") != path.name.split(".")[0]:
            report.add(
                path,
                f"sub_question {document.get('sub_question')!r} does not match the file name",
                "cross-reference",
                "sub_question",
            )
        for entry in document.get("queries", []) if isinstance(document.get("queries"), list) else []:
            for request in entry.get("requests", []) if isinstance(entry, dict) else []:
                snapshot = request.get("snapshot") if isinstance(request, dict) else None
                if isinstance(snapshot, str) and not (run.root / snapshot).is_file():
                    report.add(path, f"{entry.get('id')}: snapshot {snapshot} is missing", "cross-reference")
