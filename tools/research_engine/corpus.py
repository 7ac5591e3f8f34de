"""A local corpus server: a directory of HTML pages served on loopback, with a search endpoint.

Owns two things over one directory of documents:

- the pages themselves, served read-only as static files (`GET /<path>`), with a
  permissive `/robots.txt`, content-derived ETags and no directory listings;
- a SearXNG-compatible JSON search endpoint, `GET /search?q=...&format=json
  [&pageno=N]`, ranking the pages with BM25 over their extracted text and
  answering in SearXNG's shape (`query`, `results[{url, title, content, engine,
  engines, positions, score, category, ...}]`, `answers`, `corrections`,
  `infoboxes`, `suggestions`, `unresponsive_engines`, `number_of_results`), so
  `SEARXNG_URL=http://127.0.0.1:PORT` makes it the engine's search backend.

It is a real search backend for researching a local document collection (and it
is what makes the shipped offline example possible). It never fetches anything,
never writes into the directory and binds to loopback unless told otherwise.

Why these choices:
- Pages and queries are cut by `research_engine.terms` (version numbers whole, light suffix
  folding), question words are stop words, and a title match adds a bonus field score: a query
  such as "threads processes asyncio" must match "threading", "Process-based parallelism".
- BM25 is our own ~40 lines (`Bm25Index`): the index also has to produce the
  snippet and be deterministic to the byte (ties broken by path), and rank-bm25
  would add a dependency for the scoring loop alone.
- Index text comes from lxml directly (the Sphinx `role=main` block when there is
  one, else `<body>` minus script/style/nav), not from `research_engine.extract`:
  indexing hundreds of pages through trafilatura takes tens of seconds, and the
  index only has to rank; the engine extracts the pages it fetches itself.
- The stdlib `ThreadingHTTPServer` is enough for loopback traffic from one run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import mimetypes
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from research_engine import bounded, libraries
from research_engine.errors import BadInput
from research_engine.net.content import decode_text
from research_engine.terms import fold, words

PAGE_SIZE = 10
ENGINE_NAME = "corpus"
SNIPPET_CHARS = 300
HTML_SUFFIXES = (".html", ".htm")

# A query term in the page title adds TITLE_BONUS x its IDF (a second, one-occurrence field, BM25F-style):
# body frequency saturates, so without it a page ABOUT threads ranks with any page that says "thread" often.
TITLE_BONUS = 1.5
# Function and question words that carry no topic; kept short on purpose (technical words like
# "not", "no", "all" stay searchable).
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "be",
        "was",
        "were",
        "by",
        "with",
        "as",
        "at",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "from",
        "into",
        "than",
        "then",
        "there",
        "their",
        "which",
        "who",
        "whom",
        "what",
        "when",
        "where",
        "how",
        "why",
        "can",
        "could",
        "should",
        "would",
        "may",
        "might",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "so",
        "if",
        "will",
        "shall",
        "must",
        "about",
        "between",
        "versus",
        "vs",
        "i",
        "we",
        "you",
        "my",
        "our",
        "your",
    ]
)


def tokenize(text: str) -> list[str]:
    """Words of `text` as the index sees them: stop words dropped, suffixes folded (`terms.fold`),
    version numbers ("3.11") and identifiers ("run_until_complete") kept whole."""
    return [fold(w) for w in words(text) if w not in _STOPWORDS]


@dataclass
class CorpusPage:
    path: str  # relative, POSIX, e.g. "library/threading.html"
    title: str
    text: str
    tokens: Counter[str] = field(default_factory=Counter)
    length: int = 0
    title_terms: frozenset[str] = frozenset()


_XML_DECLARATION_RE = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


def page_text(html: bytes) -> tuple[str, str]:
    """(title, main text) of an HTML page, fast enough to index hundreds of pages."""
    lxml_html = libraries.lxml_html()
    # Decoded the way the fetcher decodes a page (BOM, <meta charset>, UTF-8, detection): lxml alone reads
    # bytes without a declared charset as Latin-1, which garbles every UTF-8 page that does not declare one.
    text, _ = decode_text(html, None, "html")
    # lxml refuses a str that still declares its encoding (XHTML such as PostgreSQL's documentation opens
    # with `<?xml ... encoding="UTF-8"?>`); the text is decoded already, so the declaration goes.
    text = _XML_DECLARATION_RE.sub("", text, count=1)
    try:
        root = lxml_html.document_fromstring(text)
    except Exception:  # empty or unparsable pages carry no text
        return "", ""
    title = " ".join((root.findtext(".//title") or "").split())
    mains = root.xpath('//*[@role="main"]') or root.xpath("//main") or root.xpath("//body") or [root]
    main = mains[0]
    for bad in main.xpath(".//script|.//style|.//nav|.//noscript|.//*[contains(@class,'headerlink')]"):
        bad.drop_tree()
    return title, " ".join(main.text_content().split())


class Bm25Index:
    """Okapi BM25 over whole pages (k1=1.5, b=0.75) plus a title-field bonus; deterministic ranking."""

    def __init__(self, pages: list[CorpusPage], k1: float = 1.5, b: float = 0.75) -> None:
        self.pages = pages
        self.k1, self.b = k1, b
        self.doc_freq: Counter[str] = Counter()
        for page in pages:
            self.doc_freq.update(page.tokens.keys())
        self.avg_len = (sum(p.length for p in pages) / len(pages)) if pages else 0.0

    def idf(self, term: str) -> float:
        n, df = len(self.pages), self.doc_freq.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str) -> list[tuple[float, CorpusPage]]:
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self.pages:
            return []
        scored = []
        for page in self.pages:
            score = 0.0
            for term in terms:
                tf = page.tokens.get(term, 0)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * page.length / (self.avg_len or 1))
                    score += self.idf(term) * tf * (self.k1 + 1) / (tf + norm)
                if term in page.title_terms:
                    score += TITLE_BONUS * self.idf(term)
            if score > 0:
                scored.append((score, page))
        scored.sort(key=lambda item: (-item[0], item[1].path))
        return scored


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The window of `text` holding the most distinct query terms (SearXNG's `content`)."""
    terms = set(tokenize(query))
    sentences = re.split(r"(?<=[.!?])\s+", text)
    best, best_score = "", -1
    for i, sentence in enumerate(sentences):
        window = sentence
        j = i + 1
        while len(window) < width // 2 and j < len(sentences):
            window += " " + sentences[j]
            j += 1
        score = len(terms & set(tokenize(window)))
        if score > best_score:
            best, best_score = window, score
    best = best.strip()
    return best if len(best) <= width else best[: width - 1].rsplit(" ", 1)[0] + "…"


class Corpus:
    """The documents under one directory, indexed for search."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise BadInput(f"corpus directory {self.root} does not exist", code="bad-corpus", field="dir")
        pages: list[CorpusPage] = []
        for path in sorted(self.root.rglob("*")):
            if path.suffix.lower() not in HTML_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(self.root).as_posix()
            if rel.startswith("_") or "/_" in rel:  # Sphinx build internals (_sources, _static)
                continue
            title, text = page_text(bounded.read_bytes(path, "corpus document"))
            tokens = Counter(tokenize(f"{title} {text}"))
            pages.append(
                CorpusPage(rel, title or rel, text, tokens, sum(tokens.values()), frozenset(tokenize(title)))
            )
        if not pages:
            raise BadInput(
                f"corpus directory {self.root} holds no HTML pages", code="bad-corpus", field="dir"
            )
        self.index = Bm25Index(pages)

    def file_for(self, url_path: str) -> Path | None:
        """The file a URL path names, never outside the root; None when there is none."""
        rel = unquote(url_path).lstrip("/")
        target = (self.root / rel).resolve()
        if target != self.root and self.root not in target.parents:
            return None
        if target.is_dir():
            target = target / "index.html"
        return target if target.is_file() else None

    def search(self, query: str, base_url: str, pageno: int = 1) -> dict[str, Any]:
        ranked = self.index.search(query)
        start = (pageno - 1) * PAGE_SIZE
        results = []
        for position, (score, page) in enumerate(ranked[start : start + PAGE_SIZE], start + 1):
            url = f"{base_url}/{page.path}"
            parts = urlsplit(url)
            results.append(
                {
                    "url": url,
                    "title": page.title,
                    "content": snippet(page.text, query),
                    "engine": ENGINE_NAME,
                    "template": "default.html",
                    "parsed_url": [parts.scheme, parts.netloc, parts.path, "", "", ""],
                    "img_src": "",
                    "thumbnail": "",
                    "priority": "",
                    "engines": [ENGINE_NAME],
                    "positions": [position],
                    "score": round(score, 4),
                    "category": "general",
                    "publishedDate": None,
                }
            )
        return {
            "query": query,
            "number_of_results": len(ranked),
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }


def _host_port(address: object) -> tuple[str, int]:
    """A TCP server's address as (host, port); typeshed types `server_address` for every socket family."""
    if not isinstance(address, tuple):
        raise TypeError(f"not a TCP server address: {address!r}")
    return str(address[0]), int(address[1])


def _handler_for(corpus: Corpus) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "research-engine-corpus"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature

            logging.getLogger("research_engine.corpus").debug(format, *args)

        def _send(
            self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            self._send(status, body, "application/json")

        def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
            self.do_GET()

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            parts = urlsplit(self.path)
            if parts.path == "/robots.txt":
                self._send(200, b"User-agent: *\nAllow: /\n", "text/plain; charset=utf-8")
                return
            if parts.path == "/search":
                self._search(parse_qs(parts.query))
                return
            target = corpus.file_for(parts.path)
            if target is None:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            try:
                body = bounded.read_bytes(target, "corpus document")
            except BadInput:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if self.headers.get("If-None-Match") == etag:
                self._send(304, b"", "text/plain", {"ETag": etag})
                return
            ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if ctype.startswith("text/"):
                ctype += "; charset=utf-8"
            self._send(200, body, ctype, {"ETag": etag})

        def _search(self, params: dict[str, list[str]]) -> None:
            query = (params.get("q") or [""])[0].strip()
            if (params.get("format") or ["html"])[0] != "json":
                self._send(403, b"<html><body>JSON format only</body></html>", "text/html; charset=utf-8")
                return
            if not query:
                self._json(400, {"error": "missing query: q"})
                return
            try:
                pageno = int((params.get("pageno") or ["1"])[0])
                if pageno < 1:
                    raise ValueError
            except ValueError:
                self._json(400, {"error": "invalid pageno"})
                return
            host = self.headers.get("Host") or "{}:{}".format(*_host_port(self.server.server_address))
            self._json(200, corpus.search(query, f"http://{host}", pageno))

    return Handler


class CorpusServer:
    """The corpus on a background thread: `with CorpusServer(dir) as server: server.url`."""

    def __init__(
        self, root: str | Path, host: str = "127.0.0.1", port: int = 0, corpus: Corpus | None = None
    ) -> None:
        self.corpus = corpus or Corpus(root)
        try:
            self.httpd = ThreadingHTTPServer((host, port), _handler_for(self.corpus))
        except OSError as exc:
            raise BadInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}", code="bad-port") from exc
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = _host_port(self.httpd.server_address)
        return f"http://{host}:{port}"

    def start(self) -> CorpusServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="corpus-server", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> CorpusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
