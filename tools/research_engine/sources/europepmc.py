"""Europe PMC (https://www.ebi.ac.uk/europepmc/webservices/rest): search, one record, open-access full text.

- `search(query)`: `/search?query=...&format=json&resultType=core`, paged with `cursorMark` (`*` first,
  then `nextCursorMark`, stopping when it is absent or echoes the cursor sent, or `limit` is reached);
  `page=` is ignored by the service and never sent;
- `lookup(source, id)`: the record by its key (`EXT_ID:<id> AND SRC:<source>`, resultType core);
- `full_text(pmcid)`: `/{PMCID}/fullTextXML`, the open-access article as JATS XML; `jats_chunks` reads
  its title, abstract, section headings, paragraphs, list items and table rows in order.

Flags are "Y"/"N" strings; text may hold HTML entities and `<h4>` section marks (`keyless.plain`).
Europe PMC publishes no rate limit; we pace at one request a second (`Settings.polite_intervals`), as
its own client library does. Nothing here records into a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from research_engine import libraries
from research_engine.errors import BadInput, UpstreamFailed
from research_engine.net import HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query
from research_engine.sources.endpoints import ApiResponse, open_client
from research_engine.sources.keyless import Fetched, Found, get_body, get_json, json_of, plain
from research_engine.sources.openalex import normalize_doi
from research_engine.vocabulary import AccessTier, CandidateKind

SOURCE = "europepmc"
MAX_PAGE = 100
MAX_PAGES = 5


@dataclass
class Record:
    source: str  # MED, PMC, PPR, ...
    id: str
    pmid: str | None
    pmcid: str | None
    doi: str | None
    title: str
    authors: str | None
    journal: str | None
    year: int | None
    abstract: str | None
    open_access: bool
    cited_by: int | None
    published: str | None

    @property
    def page_url(self) -> str:
        return f"https://europepmc.org/article/{self.source}/{self.id}"


def parse_record(data: Any) -> Record:
    if not isinstance(data, dict) or not data.get("id"):
        raise UpstreamFailed(
            "Europe PMC returned something that is not a record", code="europepmc-unexpected"
        )
    journal = ((data.get("journalInfo") or {}).get("journal") or {}).get("title") or data.get("journalTitle")
    year = str(data.get("pubYear") or "")
    return Record(
        source=str(data.get("source") or "MED"),
        id=str(data["id"]),
        pmid=data.get("pmid"),
        pmcid=data.get("pmcid"),
        doi=normalize_doi(data.get("doi")),
        title=plain(data.get("title")) or str(data["id"]),
        authors=plain(data.get("authorString")) or None,
        journal=plain(journal) or None,
        year=int(year) if year.isdigit() else None,
        abstract=plain(data.get("abstractText")) or None,
        open_access=data.get("isOpenAccess") == "Y" and bool(data.get("pmcid")),
        cited_by=data.get("citedByCount"),
        published=data.get("firstPublicationDate"),
    )


def record_candidate(record: Record, rank: int) -> Candidate:
    return Candidate(
        title=record.title,
        url=record.page_url,
        snippet=(record.abstract or "")[:500],
        rank=rank,
        backend=SOURCE,
        kind=CandidateKind.EUROPEPMC,
        published=record.published,
        doi=record.doi,
        year=record.year,
        cited_by_count=record.cited_by,
        access_tier=AccessTier.OPEN,
        source_type="peer" if record.source in ("MED", "PMC") else "primary",
        extra={
            "record": f"{record.source}:{record.id}",
            "pmcid": record.pmcid,
            "journal": record.journal,
            "authors": record.authors,
            "full_text": "jats" if record.open_access else None,
        },
    )


def _search_pages(
    http: HttpClient, query: str, limit: int, settings: Settings, what: str
) -> tuple[list[Record], list[ApiResponse], int | None]:
    records: list[Record] = []
    responses: list[ApiResponse] = []
    total: int | None = None
    cursor = "*"
    for _ in range(MAX_PAGES):
        params = {
            "query": query,
            "format": "json",
            "resultType": "core",
            "pageSize": str(max(1, min(limit - len(records), MAX_PAGE))),
            "cursorMark": cursor,
            "synonym": "FALSE",
        }
        response, body = get_json(
            http,
            f"{settings.base_url(SOURCE)}/search",
            source=SOURCE,
            what=what,
            settings=settings,
            params=params,
        )
        responses.append(response)
        if not isinstance(body, dict):
            raise UpstreamFailed("Europe PMC answered with an unexpected shape", code="europepmc-unexpected")
        total = body.get("hitCount") if total is None else total
        rows = ((body.get("resultList") or {}).get("result")) or []
        records.extend(parse_record(row) for row in rows[: limit - len(records)])
        following = body.get("nextCursorMark")
        if not rows or not following or following == cursor or len(records) >= limit:
            break
        cursor = str(following)
    return records, responses, total


def search(query: str, *, limit: int = 10, client: HttpClient | None = None, settings: Settings) -> Found:
    query = check_query(query)
    with open_client(client, settings) as http:
        records, responses, total = _search_pages(http, query, limit, settings, f"search {query!r}")
    candidates = [record_candidate(r, rank) for rank, r in enumerate(records, 1)]
    return Found(SOURCE, query, candidates, responses, total)


def lookup(key: str, *, client: HttpClient | None = None, settings: Settings) -> Fetched:
    """One record by `SOURCE:ID` (`MED:39466770`, `PMC:PMC7989237`)."""
    source, _, ident = key.partition(":")
    if not source or not ident or not source.isalpha() or not ident.replace("PMC", "").isalnum():
        raise BadInput(
            f"{key!r} is not a Europe PMC record (SOURCE:ID, e.g. MED:39466770)", code="bad-record"
        )
    with open_client(client, settings) as http:
        records, responses, _ = _search_pages(
            http, f"EXT_ID:{ident} AND SRC:{source.upper()}", 1, settings, f"record {key}"
        )
    if not records:
        raise BadInput(f"Europe PMC has no record {key}", code="not-found")
    return Fetched(responses[0], records[0])


def record_of(response: ApiResponse) -> Record:
    """The record of a recorded lookup (the verifier re-reads a source this way)."""
    body = json_of(response, SOURCE)
    rows = ((body.get("resultList") or {}).get("result")) if isinstance(body, dict) else None
    if not rows:
        raise BadInput("Europe PMC no longer lists this record", code="not-found")
    return parse_record(rows[0])


def full_text_url(pmcid: str, settings: Settings) -> str:
    return f"{settings.base_url(SOURCE)}/{pmcid}/fullTextXML"


def full_text(pmcid: str, *, client: HttpClient | None = None, settings: Settings) -> ApiResponse:
    """The open-access article as JATS XML."""
    with open_client(client, settings) as http:
        return get_body(
            http,
            full_text_url(pmcid, settings),
            source=SOURCE,
            what=f"full text {pmcid}",
            settings=settings,
            accept=("xml",),
        )


_BLOCKS = {"title": "heading", "p": "paragraph", "list-item": "list-item", "tr": "table-row"}


def jats_chunks(body: bytes) -> tuple[str | None, list[tuple[str, str]]]:
    """(article title, chunks) of a JATS article: abstract and body, headings, paragraphs, items, rows."""
    etree = libraries.lxml_etree()
    try:
        root = etree.fromstring(body, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise BadInput(f"the full text is not JATS XML: {exc}", code="decode-error") from exc
    title_node = root.find(".//article-meta/title-group/article-title")
    title = " ".join("".join(title_node.itertext()).split()) if title_node is not None else None
    chunks: list[tuple[str, str]] = []
    for part in [*root.findall(".//article-meta/abstract"), *root.findall(".//body")]:
        for node in part.iter("title", "p", "list-item", "tr"):
            if node.tag == "p" and node.getparent() is not None and node.getparent().tag == "list-item":
                continue  # read as its list item
            if node.tag == "tr":
                text = " | ".join(
                    " ".join("".join(c.itertext()).split()) for c in node if c.tag in ("td", "th")
                )
            else:
                text = " ".join("".join(node.itertext()).split())
            if text:
                chunks.append((_BLOCKS[node.tag], text))
    return title, chunks
