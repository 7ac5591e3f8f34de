"""API answers as Documents, recorded into a run like any page.

- `work_document`: an OpenAlex work as a Document (title, a facts line, one
  passage per abstract sentence); its URL is the exact API request, without
  the api_key.
- `series_documents`: one Document per World Bank response page, one passage
  per point ("Japan, GDP (current US$), 2019: 5081769542379.77"); nulls are kept
  and said plainly.
- `record_work` / `record_series`: the Documents as `retrieve/SQ-NN/SRC-NN.md`
  through `retrieve.store.record` (raw bytes into `snapshots/`).

Search results are candidates, not sources: `selection.candidates` records them.
"""

from __future__ import annotations

from typing import Any

from research_engine.documents import Document, number_passages
from research_engine.retrieve.store import record
from research_engine.sources.candidate import canonical_key_for
from research_engine.sources.endpoints import ApiResponse
from research_engine.sources.openalex import WorkFetch, split_sentences
from research_engine.sources.worldbank import SeriesFetch, split_envelope
from research_engine.trace import Run
from research_engine.vocabulary import AccessTier, SourceKind


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
        SourceKind.OPENALEX,
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
                SourceKind.WORLDBANK,
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
    run: Run, sq: str, fetch: WorkFetch, *, access_tier: str = AccessTier.OPEN, query: str | None = None
) -> str:
    return record(run, sq, work_document(fetch, access_tier=access_tier), query=query)


def record_series(run: Run, sq: str, fetch: SeriesFetch, *, query: str | None = None) -> list[str]:
    return [record(run, sq, doc, query=query) for doc in series_documents(fetch)]
