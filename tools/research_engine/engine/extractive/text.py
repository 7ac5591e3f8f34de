"""Text utilities of the extractive model: content words, sentence spans, what counts as a quotable sentence.

Owns `tokens` and `key_terms` (content words over `terms.words`/`fold`, stop words
dropped), `sentences` (verbatim sentence spans, abbreviation- and initial-aware),
`is_claim_sentence` (a complete prose sentence, not a fragment, heading, code line or
navigation text), `near_key` and `jaccard` (sentence identity and overlap). Pure
functions of their text; they know nothing of sub-questions or sources.
"""

from __future__ import annotations

import re

from research_engine.terms import STOP_WORDS, fold, phrasal_compounds, words

SENTENCE_MIN_WORDS = 6  # "VACUUM reclaims storage occupied by dead tuples." is a whole definition
SENTENCE_MAX_WORDS = 80  # reference docs pack a definition into one long sentence (62 words in json vs jsonb)
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "no",
        "fig",
        "al",
        "approx",
        "cf",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
    ]
)
# Site furniture, by phrase: documentation is often about cookies, logging in and subscriptions, so the
# bare words ("The age of session cookies, in seconds.") are content; the banners' phrasing is not.
BOILERPLATE_RE = re.compile(
    r"(previous topic|next topic|this page|show source|report a bug|table of contents|copyright|"
    r"all rights reserved|last updated|created using|skip to|privacy policy|click here|edit on github|"
    r"found a bug|(?:we|site|website) uses? cookies|cookie (?:policy|settings|preferences|consent|notice)|"
    r"accept (?:all )?cookies|\b(?:sign|log) in to (?:comment|reply|continue|your account)|"
    r"subscribe (?:to our|now|for free)|(?:skip|main|site) navigation|navigation menu)",
    re.IGNORECASE,
)
CODE_RE = re.compile(
    r"^\s*(\.\.\.|\$ |#!|import |from \S+ import |def |class \S+[:(])|>>>|==|->|\{\s*\}|;\s*$"
)
TERMINAL_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
FRAGMENT_START_RE = re.compile(r"^(and|or|but|so|then|also)\b", re.IGNORECASE)
_BOUNDARY_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")


def tokens(text: str) -> list[str]:
    """Folded content words (tasks -> task, threading -> thread); stop words and one-letter words dropped;
    then the one-word forms of hyphenated phrasal verbs ("logged-in" -> also "login")."""
    out = []
    for word in words(text):
        if word in STOP_WORDS or len(word) < 2:
            continue
        out.append(fold(word))
    return out + phrasal_compounds(text)


def key_terms(text: str, limit: int = 8) -> list[str]:
    """Content words of `text` in first-seen order, as written (lowercase), unique by their fold."""
    seen: list[str] = []
    folded: set[str] = set()
    for word in words(text):
        if word in STOP_WORDS or len(word) < 2:
            continue
        key = fold(word)
        if key in folded:
            continue
        folded.add(key)
        seen.append(word)
        if len(seen) >= limit:
            break
    return seen


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of `text`; every span is a verbatim slice."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY_RE.finditer(text):
        nxt = text[m.end() : m.end() + 1]
        word_before = re.search(r"(\w+)\.?[\"'\u201d\u2019)\]]*$", text[start : m.start() + 1])
        if word_before and word_before.group(1).lower() in ABBREVIATIONS:
            continue
        if text[m.start()] == "." and re.search(r"\b\w\.$", text[max(start, m.start() - 2) : m.start() + 1]):
            continue  # an initial ("J. Smith") or a one-letter abbreviation
        if nxt and not (nxt.isupper() or nxt.isdigit() or nxt in "\"'(\u201c\u2018["):
            continue
        end = m.start() + len(m.group().rstrip())
        spans.append((start, end))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def is_claim_sentence(text: str) -> bool:
    """A complete prose sentence worth quoting: not a fragment, heading, code line or navigation text."""
    n_words = len(text.split())
    if not (SENTENCE_MIN_WORDS <= n_words <= SENTENCE_MAX_WORDS):
        return False
    if not TERMINAL_RE.search(text):
        return False  # headings, "... the following:" and cut-off fragments
    if CODE_RE.search(text) or BOILERPLATE_RE.search(text) or FRAGMENT_START_RE.match(text):
        return False
    symbols = sum(text.count(c) for c in "{}[]=<>|;`\\")
    return symbols / len(text) <= 0.03


def near_key(text: str) -> str:
    """A sentence's identity for de-duplication: its lowercased words, punctuation and spacing ignored."""
    return " ".join(words(text))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
