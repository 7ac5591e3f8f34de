"""The corpus's search index: BM25 over whole documents, a title-field bonus, SearXNG-style snippets.

Why these choices:
- Documents and queries are cut by `research_engine.terms` (version numbers whole, light suffix
  folding), question words are stop words, and a title match adds a bonus field score: a query
  such as "threads processes asyncio" must match "threading", "Process-based parallelism".
- BM25 is our own ~50 lines (`Bm25Index`): the index also has to produce the snippet and be
  deterministic to the byte (ties broken by path), and rank-bm25 would add a dependency for the
  scoring loop alone. Nothing is built at start-up beyond the counts; a query term's postings (the
  documents holding it) are found on the first query asking for it and remembered, so a query scores only
  the documents holding one of its terms (figures in bench/corpus_index.py).

Pure: no I/O.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from research_engine.terms import fold, words

SNIPPET_CHARS = 300

# A query term in the page title adds TITLE_BONUS x its IDF (a second, one-occurrence field, BM25F-style):
# body frequency saturates, so without it a page ABOUT threads ranks with any page that says "thread" often.
TITLE_BONUS = 1.5
# Function and question words that carry no topic; kept short on purpose (technical words like
# "not", "no", "all" stay searchable).
_STOPWORDS = frozenset(
    """a an the of and or to in on for is are be was were by with as at it its this that these those from into
    than then there their which who whom what when where how why can could should would may might do does did
    has have had so if will shall must about between versus vs i we you my our your""".split()  # noqa: SIM905
)


# A folder's text repeats its words: folding each distinct word once makes indexing a third faster.
_fold = functools.lru_cache(maxsize=262_144)(fold)


def tokenize(text: str) -> list[str]:
    """Words of `text` as the index sees them: stop words dropped, suffixes folded (`terms.fold`),
    version numbers ("3.11") and identifiers ("run_until_complete") kept whole."""
    return [_fold(w) for w in words(text) if w not in _STOPWORDS]


_RELEASE_RE = re.compile(r"\d+\.\d+\.\d+")


def _releases(terms: Iterable[str]) -> list[str]:
    """The release versions ("6.2.0") among `terms` (a cheap test first: most terms are words)."""
    return [t for t in terms if t[:1].isdigit() and t.count(".") >= 2 and _RELEASE_RE.fullmatch(t)]


def _with_releases_of(terms: Counter[str] | set[str], skip: set[str]) -> None:
    """`terms` with the version each release's version is of ("6.2" of "6.2.0"), once, where absent."""
    for term in [t for t in _releases(terms) if t not in skip]:
        version = term.rsplit(".", 1)[0]
        if isinstance(terms, Counter):
            terms.setdefault(version, 1)
        else:
            terms.add(version)


# What separates a page's own title from the site's ("Asynchronous I/O — Python 3.11 documentation").
_TITLE_SEPARATOR_RE = re.compile(r"\s+(?:[\u2014\u2013|:]|-{1,2}|::)\s+")
SITE_TITLE_SHARE = 0.5  # a title tail this share of the pages end with is the site's name, not the page's


def site_title(titles: list[str]) -> str:
    """The tail most page titles share after a separator ("Tornado 6.2 documentation"), when at least
    `SITE_TITLE_SHARE` of them (three or more) do; "" otherwise."""
    tails = Counter(_TITLE_SEPARATOR_RE.split(t)[-1] for t in titles if _TITLE_SEPARATOR_RE.search(t))
    if not tails:
        return ""
    tail, count = tails.most_common(1)[0]
    return tail if count >= 3 and count >= SITE_TITLE_SHARE * len(titles) else ""


@dataclass
class CorpusPage:
    path: str  # relative, POSIX, e.g. "library/threading.html"
    title: str
    text: str
    tokens: Counter[str] = field(default_factory=Counter)
    length: int = 0
    title_terms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, path: str, title: str, text: str) -> CorpusPage:
        """A page with its tokens counted (the title's words count in the body too)."""
        tokens = Counter(tokenize(f"{title} {text}"))
        return cls(path, title or path, text, tokens, sum(tokens.values()), frozenset(tokenize(title)))


class Bm25Index:
    """Okapi BM25 over whole pages (k1=1.5, b=0.75) plus a title-field bonus; deterministic ranking."""

    def __init__(self, pages: list[CorpusPage], k1: float = 1.5, b: float = 0.75) -> None:
        pages = _with_releases_named(_without_site_title(pages))
        self.pages = pages
        self.k1, self.b = k1, b
        self.doc_freq: Counter[str] = Counter()
        for page in pages:
            self.doc_freq.update(page.tokens.keys())
        self.avg_len = (sum(p.length for p in pages) / len(pages)) if pages else 0.0
        self._postings: dict[str, list[int]] = {}  # term -> pages holding it, found on the first query asking

    def postings(self, term: str) -> list[int]:
        """The pages holding `term` in their text or title (one scan per term, then remembered)."""
        found = self._postings.get(term)
        if found is None:
            pages = self.pages
            found = [n for n, page in enumerate(pages) if term in page.tokens or term in page.title_terms]
            self._postings[term] = found
        return found

    def idf(self, term: str) -> float:
        n, df = len(self.pages), self.doc_freq.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str) -> list[tuple[float, CorpusPage]]:
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self.pages:
            return []
        idf = {term: self.idf(term) for term in terms}
        holding = sorted({n for term in terms for n in self.postings(term)})
        scored = []
        for number in holding:
            page = self.pages[number]
            score = 0.0
            for term in terms:
                tf = page.tokens.get(term, 0)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * page.length / (self.avg_len or 1))
                    score += idf[term] * tf * (self.k1 + 1) / (tf + norm)
                if term in page.title_terms:
                    score += TITLE_BONUS * idf[term]
            if score > 0:
                scored.append((score, page))
        scored.sort(key=lambda item: (-item[0], item[1].path))
        return scored


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The window of `text` holding the most distinct query terms (SearXNG's `content`)."""
    terms = set(tokenize(query))
    sentences = re.split(r"(?<=[.!?])\s+", text)
    # Only windows holding a sentence that could carry a query word are worth tokenizing (a 300-page PDF has
    # thousands of sentences): a folded term's first four letters appear in any word it was folded from.
    stems = [t[:4] for t in terms if t]
    hits = [any(stem in s.lower() for stem in stems) for s in sentences]
    best, best_score = "", -1
    for i, sentence in enumerate(sentences):
        window = sentence
        j = i + 1
        while len(window) < width // 2 and j < len(sentences):
            window += " " + sentences[j]
            j += 1
        if best_score >= 0 and not any(hits[i:j]):
            continue  # no query word in it: it scores 0, and the first window already holds that
        # Scored on what is shown: a window of one long code line holds words far past the cut.
        score = len(terms & set(tokenize(window[:width])))
        if score > best_score:
            best, best_score = window, score
    best = best.strip()
    return best if len(best) <= width else best[: width - 1].rsplit(" ", 1)[0] + "…"


def _without_site_title(pages: list[CorpusPage]) -> list[CorpusPage]:
    """`pages` with the site's title tail (`site_title`) counted nowhere: every page carries it, so its words
    ("Tornado 6.2 documentation") tell no page apart, yet they drowned the one page that is about 6.2."""
    tail = site_title([p.title for p in pages])
    if not tail:
        return pages
    drop = Counter(tokenize(tail))
    out = []
    for page in pages:
        if not page.title.endswith(tail):
            out.append(page)
            continue
        own = frozenset(tokenize(page.title[: -len(tail)].rstrip(" \u2014\u2013|:-")))
        tokens = page.tokens - drop  # the title was counted in the body once
        out.append(CorpusPage(page.path, page.title, page.text, tokens, sum(tokens.values()), own))
    return out


def _with_releases_named(pages: list[CorpusPage]) -> list[CorpusPage]:
    """`pages` with each release's version ("6.2.0") also standing for the version it is a release of
    ("6.2"), which is how a question names it: once, where the page never says it (so the notes of 3.2
    itself, saying "3.2" throughout, still outrank the notes of each 3.2.x release)."""
    # The site's own release, on every page ("Django 3.2.25 documentation" in each page's header), names
    # no page's subject: it stands for nothing more.
    releases = [_releases(page.tokens) for page in pages]
    found = Counter(t for each in releases for t in each)
    site_wide = {t for t, n in found.items() if n >= SITE_TITLE_SHARE * len(pages)}
    out = []
    for page, each in zip(pages, releases, strict=True):
        versions = {t.rsplit(".", 1)[0] for t in each if t not in site_wide}
        if not versions - page.tokens.keys() and not versions - page.title_terms:
            out.append(page)  # nearly every page: no release, or it says the version itself
            continue
        tokens, title_terms = Counter(page.tokens), set(page.title_terms)
        _with_releases_of(tokens, site_wide)
        _with_releases_of(title_terms, site_wide)
        length = sum(tokens.values())
        out.append(CorpusPage(page.path, page.title, page.text, tokens, length, frozenset(title_terms)))
    return out
