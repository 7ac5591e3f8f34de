"""arXiv (https://export.arxiv.org/api/query): Atom search and id lookup; the abstract page and PDF as leads.

- `search(query)`: `search_query=all:<words>` (each word an `all:` term joined with AND, so a multi-word
  question does not become one phrase), `start`/`max_results` paging;
- `lookup(ids)`: `id_list=` for one or more ids (`2101.00001`, `2101.00001v2`, `astro-ph/0601001`);
- `parse_feed`: the Atom feed of 2025-2026 and the legacy one alike, read by element name (the order
  changed); entry links told apart by `title="pdf"` or a `/pdf/` path (attributes came and went); the
  error entry (`<title>Error</title>`, HTTP 400 or 200) as bad input; an empty feed as no results.

arXiv asks for one request every 3 s and one connection at a time (`Settings.polite_intervals`), and for a
User-Agent that names the caller. Its metadata is CC0. Nothing here records into a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from research_engine import libraries
from research_engine.errors import BadInput, UpstreamFailed
from research_engine.net import HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query
from research_engine.sources.endpoints import ApiResponse, open_client
from research_engine.sources.keyless import Fetched, Found, get_body
from research_engine.terms import STOP_WORDS
from research_engine.vocabulary import AccessTier, CandidateKind

SOURCE = "arxiv"
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
MAX_RESULTS = 50
_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")
_WORD = re.compile(r"[A-Za-z0-9][\w.-]*")


@dataclass
class Paper:
    arxiv_id: str  # with its version, as the feed gives it ("1605.08386v1")
    title: str
    summary: str
    authors: list[str]
    published: str | None
    updated: str | None
    abs_url: str
    pdf_url: str | None
    doi: str | None
    journal_ref: str | None
    primary_category: str | None
    comment: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def bare_id(self) -> str:
        return re.sub(r"v\d+$", "", self.arxiv_id)


def _text(node: Any, tag: str) -> str | None:
    found = node.find(tag)
    return " ".join(found.text.split()) if found is not None and found.text else None


def parse_feed(body: bytes, web_base: str = "https://arxiv.org") -> tuple[list[Paper], int | None]:
    """(papers, totalResults) of an Atom answer; BadInput for arXiv's error entry."""
    etree = libraries.lxml_etree()
    try:
        root = etree.fromstring(body, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise UpstreamFailed(
            f"arXiv answered with something that is not Atom: {exc}", code="arxiv-unexpected"
        ) from exc
    total_text = _text(root, f"{OPENSEARCH}totalResults")
    papers: list[Paper] = []
    for entry in root.findall(f"{ATOM}entry"):
        entry_id = _text(entry, f"{ATOM}id") or ""
        if _text(entry, f"{ATOM}title") == "Error" and "/api/errors" in entry_id:
            raise BadInput(
                f"arXiv refused the request: {_text(entry, f'{ATOM}summary')}", code="arxiv-bad-request"
            )
        arxiv_id = entry_id.rsplit("/abs/", 1)[-1]
        pdf = None
        for link in entry.findall(f"{ATOM}link"):
            href = link.get("href") or ""
            if link.get("title") == "pdf" or "/pdf/" in urlsplit(href).path:
                pdf = href
        doi = _text(entry, f"{ARXIV}doi")
        primary = entry.find(f"{ARXIV}primary_category")
        papers.append(
            Paper(
                arxiv_id=arxiv_id,
                title=_text(entry, f"{ATOM}title") or arxiv_id,
                summary=_text(entry, f"{ATOM}summary") or "",
                authors=[a for a in (_text(x, f"{ATOM}name") for x in entry.findall(f"{ATOM}author")) if a],
                published=_text(entry, f"{ATOM}published"),
                updated=_text(entry, f"{ATOM}updated"),
                abs_url=f"{web_base}/abs/{arxiv_id}",
                pdf_url=f"{web_base}/pdf/{arxiv_id}" if pdf else None,
                doi=doi.lower() if doi else None,
                journal_ref=_text(entry, f"{ARXIV}journal_ref"),
                primary_category=primary.get("term") if primary is not None else None,
                comment=_text(entry, f"{ARXIV}comment"),
            )
        )
    return papers, int(total_text) if total_text and total_text.isdigit() else None


def error_message(body: bytes) -> str | None:
    """The message of arXiv's error entry (`<title>Error</title>`), if the body is one."""
    try:
        parse_feed(body)
    except BadInput as exc:
        return exc.message
    except UpstreamFailed:
        return None
    return None


def search_query(text: str) -> str:
    """`all:` terms joined with AND: the question's content words, at most six."""
    words = [w for w in _WORD.findall(text) if w.lower() not in STOP_WORDS and len(w) > 1]
    return " AND ".join(f"all:{w}" for w in list(dict.fromkeys(words))[:6])


def paper_candidate(paper: Paper, rank: int) -> Candidate:
    return Candidate(
        title=paper.title,
        url=paper.abs_url,
        snippet=paper.summary[:500],
        rank=rank,
        backend=SOURCE,
        kind=CandidateKind.ARXIV,
        published=paper.published,
        doi=paper.doi,
        year=int(paper.published[:4]) if paper.published and paper.published[:4].isdigit() else None,
        access_tier=AccessTier.OPEN,
        source_type="primary",  # a preprint: the authors' own report, not yet (or not only) peer reviewed
        extra={
            "arxiv_id": paper.arxiv_id,
            "pdf_url": paper.pdf_url,
            "authors": paper.authors[:10],
            "journal_ref": paper.journal_ref,
            "primary_category": paper.primary_category,
            "full_text": "pdf" if paper.pdf_url else None,
        },
    )


def query_url(settings: Settings) -> str:
    return f"{settings.base_url(SOURCE)}/query"


def search(query: str, *, limit: int = 10, client: HttpClient | None = None, settings: Settings) -> Found:
    """Papers matching the query's words, most relevant first (one page of at most `limit`)."""
    query = check_query(query)
    terms = search_query(query)
    if not terms:
        raise BadInput("the arXiv query has no content words", code="empty-query", field="query")
    params = {
        "search_query": terms,
        "start": "0",
        "max_results": str(max(1, min(limit, MAX_RESULTS))),
        "sortBy": "relevance",
        "sortOrder": "descending",
    }
    with open_client(client, settings) as http:
        response = get_body(
            http,
            query_url(settings),
            source=SOURCE,
            what=f"search {query!r}",
            settings=settings,
            params=params,
            accept=("xml",),
            explain=error_message,
        )
    papers, total = parse_feed(response.body, settings.base_url("arxiv_web"))
    candidates = [paper_candidate(p, rank) for rank, p in enumerate(papers[:limit], 1)]
    return Found(SOURCE, query, candidates, [response], total, {"search_query": terms})


def lookup(ids: list[str], *, client: HttpClient | None = None, settings: Settings) -> Fetched:
    """The papers with these arXiv ids (`id_list`); unknown ids are left out by arXiv itself."""
    cleaned = [i.strip().removeprefix("arXiv:") for i in ids if i and i.strip()]
    bad = [i for i in cleaned if not _ID.match(i)]
    if bad or not cleaned:
        raise BadInput(f"not an arXiv id: {', '.join(bad) or '(none)'}", code="bad-arxiv-id", field="id")
    with open_client(client, settings) as http:
        response = get_body(
            http,
            query_url(settings),
            source=SOURCE,
            what=f"paper {', '.join(cleaned)}",
            settings=settings,
            params={"id_list": ",".join(cleaned), "max_results": str(len(cleaned))},
            accept=("xml",),
            explain=error_message,
        )
    papers, _ = parse_feed(response.body, settings.base_url("arxiv_web"))
    if not papers:
        raise BadInput(f"arXiv has no paper {', '.join(cleaned)}", code="not-found")
    return Fetched(response, papers)


def paper_of(response: ApiResponse, web_base: str) -> Paper:
    """The first paper of a recorded lookup (the verifier re-reads a source this way)."""
    papers, _ = parse_feed(response.body, web_base)
    if not papers:
        raise BadInput("arXiv no longer lists this paper", code="not-found")
    return papers[0]
