"""Wikipedia (MediaWiki Action API and REST): search, the page summary and the article's text as a source.

- `search(query)`: `action=query&list=search` (relevance order; snippets lose their `searchmatch`
  markup); the article URL `https://en.wikipedia.org/wiki/<Title>` is each candidate's;
- `summary(title)`: the REST page summary (`/api/rest_v1/page/summary/<Title>`: description, extract);
- `article(title)`: `action=query&prop=extracts&explaintext=1&exsectionformat=wiki&redirects=1`, the whole
  article as plain text; `article_chunks` reads its `== Section ==` headings and paragraphs.

The Action API answers errors with HTTP 200 and an `error` object; a missing page is the key "-1" with
`missing`; both become clear domain errors. Etiquette (API:Etiquette, the access policy): requests in
series, a User-Agent naming the client with a contact (`RESEARCH_ENGINE_MAILTO`), gzip accepted.
Wikipedia text is CC BY-SA: a source keeps its article URL for the attribution. Nothing here records
into a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from research_engine.errors import BadInput, UpstreamFailed
from research_engine.net import HttpClient
from research_engine.settings import Settings
from research_engine.sources.candidate import Candidate, check_query
from research_engine.sources.endpoints import ApiResponse, open_client
from research_engine.sources.keyless import Fetched, Found, get_json, json_of, plain
from research_engine.vocabulary import AccessTier, CandidateKind

SOURCE = "wikipedia"
MAX_LIMIT = 50
_SECTION = re.compile(r"^(={2,6})\s*(.*?)\s*\1\s*$")


@dataclass
class Article:
    pageid: int | None
    title: str
    text: str


def page_url(title: str) -> str:
    return f"https://en.wikipedia.org/wiki/{quote(title.replace(' ', '_'), safe='()_,:')}"


def api_url(settings: Settings) -> str:
    return f"{settings.base_url(SOURCE)}/w/api.php"


def _checked(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise UpstreamFailed("Wikipedia answered with an unexpected shape", code="wikipedia-unexpected")
    error = body.get("error")
    if isinstance(error, dict):
        raise BadInput(
            f"Wikipedia refused the request for {what}: {error.get('code')}: {error.get('info')}",
            code="wikipedia-bad-request",
        )
    return body


def search(query: str, *, limit: int = 10, client: HttpClient | None = None, settings: Settings) -> Found:
    query = check_query(query)
    params = {
        "action": "query",
        "format": "json",
        "list": "search",
        "srsearch": query,
        "srnamespace": "0",
        "srlimit": str(max(1, min(limit, MAX_LIMIT))),
        "srprop": "snippet|timestamp|wordcount",
    }
    with open_client(client, settings) as http:
        response, body = get_json(
            http, api_url(settings), source=SOURCE, what=f"search {query!r}", settings=settings, params=params
        )
    data = _checked(body, f"search {query!r}")
    hits = ((data.get("query") or {}).get("search")) or []
    candidates = [
        Candidate(
            title=str(hit["title"]),
            url=page_url(str(hit["title"])),
            snippet=plain(hit.get("snippet")),
            rank=rank,
            backend=SOURCE,
            kind=CandidateKind.WIKIPEDIA,
            published=hit.get("timestamp"),
            access_tier=AccessTier.OPEN,
            source_type="practitioner",  # a tertiary reference: background and definitions, not evidence
            extra={"pageid": hit.get("pageid"), "wordcount": hit.get("wordcount"), "full_text": "extract"},
        )
        for rank, hit in enumerate([h for h in hits if isinstance(h, dict) and h.get("title")][:limit], 1)
    ]
    info = (data.get("query") or {}).get("searchinfo") or {}
    return Found(
        SOURCE,
        query,
        candidates,
        [response],
        info.get("totalhits"),
        {"suggestion": info.get("suggestion")} if info.get("suggestion") else {},
    )


def summary(title: str, *, client: HttpClient | None = None, settings: Settings) -> Fetched:
    """The REST page summary: {title, description, extract, ...}."""
    path = quote(title.replace(" ", "_"), safe="()_,:")
    with open_client(client, settings) as http:
        response, body = get_json(
            http,
            f"{settings.base_url(SOURCE)}/api/rest_v1/page/summary/{path}",
            source=SOURCE,
            what=f"summary of {title!r}",
            settings=settings,
        )
    if not isinstance(body, dict) or not body.get("title"):
        raise UpstreamFailed(
            "Wikipedia answered a summary with an unexpected shape", code="wikipedia-unexpected"
        )
    return Fetched(response, body)


def article_params(title: str) -> dict[str, str]:
    return {
        "action": "query",
        "format": "json",
        "prop": "extracts",
        "explaintext": "1",
        "exsectionformat": "wiki",
        "redirects": "1",
        "titles": title,
    }


def article(title: str, *, client: HttpClient | None = None, settings: Settings) -> Fetched:
    """The article's whole text (plain, with `== Section ==` headings)."""
    with open_client(client, settings) as http:
        response, _ = get_json(
            http,
            api_url(settings),
            source=SOURCE,
            what=f"article {title!r}",
            settings=settings,
            params=article_params(title),
        )
    return Fetched(response, article_of(response))


def article_of(response: ApiResponse) -> Article:
    """The article of a recorded request (the verifier re-reads a source this way)."""
    data = _checked(json_of(response, SOURCE), "an article")
    pages = ((data.get("query") or {}).get("pages")) or {}
    page = next(iter(pages.values()), None) if isinstance(pages, dict) else (pages[0] if pages else None)
    if not isinstance(page, dict) or "missing" in page or not page.get("extract"):
        name = page.get("title") if isinstance(page, dict) else "the page"
        raise BadInput(f"Wikipedia has no article {name!r}", code="not-found")
    return Article(page.get("pageid"), str(page.get("title")), str(page["extract"]))


def article_chunks(text: str) -> list[tuple[str, str]]:
    """`== Section ==` lines as headings, other non-empty lines as paragraphs (the extract has one
    paragraph per line); the empty sections a plain-text extract leaves (lists, tables) are dropped."""
    chunks: list[tuple[str, str]] = []
    for line in text.split("\n"):
        match = _SECTION.match(line.strip())
        if match:
            chunks.append(("heading", match.group(2)))
        elif line.strip():
            chunks.append(("paragraph", line.strip()))
    return [
        c
        for i, c in enumerate(chunks)
        if c[0] != "heading" or (i + 1 < len(chunks) and chunks[i + 1][0] != "heading")
    ]
