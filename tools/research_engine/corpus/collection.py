"""One corpus folder, indexed for search: `Corpus(root)`.

Lists the folder (`corpus.files`), reads every document for the index (skipping what cannot be read,
with the reason logged and kept in `skipped`; unchanged documents come from the index cache, `corpus.cache`,
when a cache directory is given), builds the BM25 index, and answers searches in
SearXNG's JSON shape. `digest` names the folder's content (every document's path, size and
modification time): run.json records it beside the folder's path.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from research_engine.corpus import cache
from research_engine.corpus.files import Entry, Skipped, Unreadable, list_folder, read_for_index
from research_engine.corpus.index import Bm25Index, CorpusPage, snippet
from research_engine.errors import BadInput

PAGE_SIZE = 10
ENGINE_NAME = "corpus"

log = logging.getLogger("research_engine.corpus")


def listing_digest(entries: list[Entry]) -> str:
    """sha256 over the sorted (path, size, mtime) of every document: changes when any file does."""
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(f"{entry.rel}\0{entry.size}\0{entry.mtime_ns}\n".encode())
    return digest.hexdigest()


class Corpus:
    """The documents under one directory, indexed for search."""

    def __init__(self, root: str | Path, *, cache_root: Path | None = None) -> None:
        self.cache_root = cache_root  # where the index of this folder's content is kept between starts
        self.cache_hits = 0  # documents taken from that cache, unchanged since it was written
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise BadInput(f"corpus directory {self.root} does not exist", code="bad-corpus", field="dir")
        entries, self.skipped = list_folder(self.root)
        self.digest = listing_digest(entries)
        pages = self._read(entries)
        if not pages:
            raise BadInput(
                f"corpus directory {self.root} holds no readable documents "
                "(HTML, Markdown, text, PDF or Word files)",
                code="bad-corpus",
                field="dir",
            )
        self.index = Bm25Index(pages)
        self.documents = frozenset(page.path for page in pages)

    def _read(self, entries: list[Entry]) -> list[CorpusPage]:
        """Every document read for the index: from the cache when unchanged, else from the file."""
        cached = cache.load(self.cache_root, self.root) if self.cache_root is not None else {}
        records: dict[str, dict[str, Any]] = {}
        pages: list[CorpusPage] = []
        for entry in entries:
            record = cache.fresh(cached, entry)
            if record is not None:
                self.cache_hits += 1
                if "skipped" not in record:
                    pages.append(cache.page_from(entry.rel, record))
            else:
                try:
                    title, text = read_for_index(self.root, entry)
                except Unreadable as exc:
                    record = cache.skip_record(entry, str(exc))
                else:
                    page = CorpusPage.of(entry.rel, title, text)
                    record = cache.page_record(entry, page)
                    pages.append(page)
            records[entry.rel] = record
            if "skipped" in record:
                self.skipped.append(Skipped(entry.rel, str(record["skipped"])))
                log.warning("corpus: skipped %s: %s", entry.rel, record["skipped"])
        self.skipped.sort(key=lambda s: s.rel)
        if self.cache_root is not None:
            shards = cache.dirty_shards(cached, records)
            if shards:
                cache.save(self.cache_root, self.root, records, shards)
        return pages

    def record(self) -> dict[str, Any]:
        """What run.json keeps of the folder: its path, the digest of its file list, the counts."""
        return {
            "path": str(self.root),
            "digest": self.digest,
            "documents": len(self.index.pages),
            "skipped": len(self.skipped),
        }

    def file_for(self, url_path: str) -> Path | None:
        """The document a URL path names (a folder's index.html for the folder); None for anything else:
        only the indexed documents are served, never another file of the folder or anything outside it."""
        rel = unquote(url_path).strip("/")
        if rel in self.documents:
            return self.root / rel
        index = f"{rel}/index.html" if rel else "index.html"
        return self.root / index if index in self.documents else None

    def search(self, query: str, base_url: str, pageno: int = 1) -> dict[str, Any]:
        ranked = self.index.search(query)
        start = (pageno - 1) * PAGE_SIZE
        results = []
        for position, (score, page) in enumerate(ranked[start : start + PAGE_SIZE], start + 1):
            url = f"{base_url}/{quote(page.path)}"  # a file name may hold spaces, brackets, any letter
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
