"""The keyless sources' answers as Documents (arXiv, Crossref, Europe PMC, Wikipedia), recorded like any page.

Each Document's URL is the exact API request that answered (anyone can re-issue it) and its passages are
built from that answer alone, by `chunks_for(kind, response, metadata)`, so the verifier's re-fetch
rebuilds them the same way from its own copy:

- arXiv: the paper (title; authors, dates, id, category, DOI, journal reference; the abstract's
  sentences) from the id lookup. Its PDF, when chosen for the full text, is fetched as a page;
- Crossref: the work (title; authors, venue, year, type, publisher, DOI, landing page; the abstract's
  sentences when deposited; the reference list, one passage per reference);
- Europe PMC: the open-access full text (JATS: headings, paragraphs, list items, table rows) when the
  record has one, else the record (title, facts, the abstract's sentences);
- Wikipedia: the article's text, its sections as headings, one passage per paragraph.
"""

from __future__ import annotations

from typing import Any

from research_engine.documents import Document
from research_engine.errors import BadInput, BudgetSpent, ResearchEngineError
from research_engine.retrieve.api import api_document
from research_engine.retrieve.store import record
from research_engine.sources import arxiv, crossref, europepmc, wikipedia
from research_engine.sources.candidate import canonical_key_for
from research_engine.sources.endpoints import ApiResponse
from research_engine.sources.keyless import sentences
from research_engine.trace import Run
from research_engine.vocabulary import SourceKind

FULL_TEXT = "full-text"  # metadata["part"] of a Europe PMC full text


def _people(names: list[str]) -> str:
    return ", ".join(names[:8]) + (" et al." if len(names) > 8 else "")


def arxiv_chunks(paper: arxiv.Paper) -> list[tuple[str, str]]:
    facts = [f"Authors: {_people(paper.authors)}." if paper.authors else ""]
    facts.append(f"Submitted {paper.published[:10]} as arXiv:{paper.arxiv_id}" if paper.published else "")
    facts.append(f"({paper.primary_category})." if paper.primary_category else ".")
    facts += [
        f"DOI: {paper.doi}." if paper.doi else "",
        f"Journal reference: {paper.journal_ref}." if paper.journal_ref else "",
    ]
    chunks = [("heading", paper.title), ("data", " ".join(f for f in facts if f).replace(" .", "."))]
    return chunks + [("paragraph", s) for s in sentences(paper.summary)]


def crossref_chunks(work: crossref.Work) -> list[tuple[str, str]]:
    facts = [
        f"Authors: {_people(work.authors)}." if work.authors else "",
        f"Published {work.issued}" + (f" in {work.container}." if work.container else ".")
        if work.issued
        else "",
        f"Type: {work.type}." if work.type else "",
        f"Publisher: {work.publisher}." if work.publisher else "",
        f"DOI: {work.doi}.",
        f"Cited by {work.cited_by} works (Crossref, at retrieval)." if work.cited_by is not None else "",
        f"Landing page: {work.landing_url}" if work.landing_url else "",
    ]
    chunks: list[tuple[str, str]] = [("heading", work.title), ("data", " ".join(f for f in facts if f))]
    if work.abstract:
        chunks += [("paragraph", s) for s in sentences(work.abstract)]
    else:
        chunks.append(("data", "Crossref holds no abstract for this work."))
    if work.references:
        chunks.append(("heading", "References"))
        chunks += [("data", f"Reference {n}: {text}") for n, text in enumerate(work.references, 1)]
    return chunks


def europepmc_record_chunks(rec: europepmc.Record) -> list[tuple[str, str]]:
    ids = [
        f"PMID {rec.pmid}" if rec.pmid else "",
        f"PMCID {rec.pmcid}" if rec.pmcid else "",
        f"DOI {rec.doi}" if rec.doi else "",
    ]
    facts = [
        f"Authors: {rec.authors}" if rec.authors else "",
        f"Published {rec.year}" + (f" in {rec.journal}." if rec.journal else ".") if rec.year else "",
        "Identifiers: " + ", ".join(i for i in ids if i) + "." if any(ids) else "",
    ]
    chunks: list[tuple[str, str]] = [("heading", rec.title), ("data", " ".join(f for f in facts if f))]
    if rec.abstract:
        return chunks + [("paragraph", s) for s in sentences(rec.abstract)]
    return chunks + [("data", "Europe PMC holds no abstract for this record.")]


def chunks_for(
    kind: str, response: ApiResponse, metadata: dict[str, Any]
) -> tuple[str | None, list[tuple[str, str]]]:
    """(title, chunks) of one recorded answer of a keyless source, exactly as at retrieval."""
    if kind == SourceKind.ARXIV:
        paper = arxiv.paper_of(response, str(metadata.get("web_base") or "https://arxiv.org"))
        return paper.title, arxiv_chunks(paper)
    if kind == SourceKind.CROSSREF:
        work = crossref.work_of(response)
        return work.title, crossref_chunks(work)
    if kind == SourceKind.EUROPEPMC:
        if metadata.get("part") == FULL_TEXT:
            return europepmc.jats_chunks(response.body)
        rec = europepmc.record_of(response)
        return rec.title, europepmc_record_chunks(rec)
    if kind == SourceKind.WIKIPEDIA:
        article = wikipedia.article_of(response)
        return article.title, wikipedia.article_chunks(article.text)
    raise BadInput(f"no reader for {kind} answers", code="unsupported-kind")


def work_document(kind: str, response: ApiResponse, metadata: dict[str, Any], **fields: Any) -> Document:
    title, chunks = chunks_for(kind, response, metadata)
    if not chunks:
        raise BadInput(f"the {kind} answer at {response.url} holds no text", code="decode-error")
    return api_document(
        response,
        kind,
        chunks,
        title=fields.pop("title", None) or title,
        extraction={"extractor": f"{kind}-api"},
        metadata=metadata,
        **fields,
    )


def record_keyless(
    run: Run, sq: str, cand: dict[str, Any], client: Any, settings: Any, query: str | None
) -> list[str]:
    """A chosen candidate of a keyless source retrieved and recorded; the refs recorded."""
    kind = cand["kind"]
    extra = cand.get("extra") or {}
    doi = cand.get("doi")
    key = canonical_key_for(cand["url"], doi)
    meta: dict[str, Any]
    if kind == SourceKind.ARXIV:
        web_base = settings.base_url("arxiv_web")
        fetched = arxiv.lookup(
            [str(extra.get("arxiv_id") or cand["url"].rsplit("/", 1)[-1])], client=client, settings=settings
        )
        paper = fetched.record[0]
        meta = {
            "arxiv_id": paper.arxiv_id,
            "doi": paper.doi,
            "pdf_url": paper.pdf_url,
            "web_base": web_base,
            "authors": paper.authors,
        }
        doc = work_document(
            kind,
            fetched.response,
            meta,
            published=paper.published,
            canonical_url=paper.abs_url,
            canonical_key=key,
        )
        return [record(run, sq, doc, query=query)]
    if kind == SourceKind.CROSSREF:
        fetched = crossref.lookup(doi or cand["url"], client=client, settings=settings)
        work = fetched.record
        meta = {
            "doi": work.doi,
            "landing_url": work.landing_url,
            "references": len(work.references),
            "license": work.license,
            "pool": fetched.response.headers.get("x-api-pool"),
        }
        doc = work_document(
            kind,
            fetched.response,
            meta,
            published=work.issued,
            canonical_url=f"https://doi.org/{work.doi}",
            canonical_key=key,
        )
        return [record(run, sq, doc, query=query)]
    if kind == SourceKind.EUROPEPMC:
        fetched = europepmc.lookup(str(extra.get("record")), client=client, settings=settings)
        rec = fetched.record
        meta = {
            "record": f"{rec.source}:{rec.id}",
            "pmid": rec.pmid,
            "pmcid": rec.pmcid,
            "doi": rec.doi,
        }
        response = fetched.response
        if rec.open_access and rec.pmcid:
            try:
                text = europepmc.full_text(rec.pmcid, client=client, settings=settings)
                if not europepmc.jats_chunks(text.body)[1]:
                    raise BadInput("the full text holds no paragraphs", code="decode-error")
                response, meta["part"] = text, FULL_TEXT
            except BudgetSpent:
                raise
            except ResearchEngineError as exc:  # not found, rate limited, not JATS: the record stands in
                meta["full_text_failed"] = exc.message
        doc = work_document(
            kind,
            response,
            meta,
            title=rec.title,
            published=rec.published,
            canonical_url=rec.page_url,
            canonical_key=key,
        )
        return [record(run, sq, doc, query=query)]
    if kind == SourceKind.WIKIPEDIA:
        fetched = wikipedia.article(cand["title"], client=client, settings=settings)
        article = fetched.record
        meta = {
            "pageid": article.pageid,
            "license": "CC BY-SA 4.0",
            "article": wikipedia.page_url(article.title),
        }
        doc = work_document(
            kind,
            fetched.response,
            meta,
            canonical_url=wikipedia.page_url(article.title),
            canonical_key=canonical_key_for(wikipedia.page_url(article.title)),
        )
        return [record(run, sq, doc, query=query)]
    raise BadInput(f"{kind} candidates are not retrieved by the headless engine", code="unsupported-kind")
