"""A local corpus: a folder of documents searched and served on loopback, the engine's search backend.

- `files`: which files are documents, how each is read for the index, why one is skipped;
- `index`: BM25 over whole documents (`Bm25Index`), `tokenize`, `snippet`;
- `collection`: `Corpus(root)`, one folder indexed, answering searches in SearXNG's shape;
- `server`: `CorpusServer`, the corpus over HTTP (`corpus serve DIR`);
- `session`: `serve_corpora`, the folders of `run --corpus DIR` served in-process for one run.

It is a real search backend for researching a local document collection (and what makes the shipped
offline example possible). It never fetches anything and never writes into the folder.
"""

from __future__ import annotations

from research_engine.corpus.collection import Corpus
from research_engine.corpus.files import page_text
from research_engine.corpus.index import Bm25Index, CorpusPage, snippet, tokenize
from research_engine.corpus.server import CorpusServer

__all__ = ["Bm25Index", "Corpus", "CorpusPage", "CorpusServer", "page_text", "snippet", "tokenize"]
