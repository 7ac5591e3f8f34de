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
    r"all rights reserved|last updated|last (?:change|changed|modified)\s*:|created using|skip to|"
    r"privacy policy|click here|edit on github|"
    r"found a bug|(?:we|site|website) uses? cookies|cookie (?:policy|settings|preferences|consent|notice)|"
    r"accept (?:all )?cookies|\b(?:sign|log) in to (?:comment|reply|continue|your account)|"
    r"subscribe (?:to our|now|for free)|(?:skip|main|site) navigation|navigation menu)",
    re.IGNORECASE,
)
CODE_RE = re.compile(
    r"^\s*(\.\.\.|\$ |#!|import |from \S+ import |def |class \S+[:(])|>>>|==|->|\{\s*\}|;\s*$"
)
# A quote that joins sentences (a pronoun-led one back to its antecedent, an example with what it says) is at
# most this long.
ANTECEDENT_MAX_WORDS = 90
TERM_RE = re.compile(r"^[^.!?]{1,60}$")  # a short line with no sentence end: a heading-like term
TERMINAL_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
FRAGMENT_START_RE = re.compile(r"^(and|or|but|so|then|also)\b", re.IGNORECASE)
PLACEHOLDER_RE = re.compile(r"<[A-Za-z][\w-]*>")
_BOUNDARY_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")


# "Version 8" and "release 3.2" are also written "v8" and "v3.2" ("moving from rsyslog v7 to v8").
_SPELLED_VERSION_RE = re.compile(r"\b(?:version|release)\s+(\d+(?:\.\d+)*)\b", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """Folded content words (tasks -> task, threading -> thread); stop words and one-letter words dropped;
    then the one-word forms of hyphenated phrasal verbs ("logged-in" -> also "login") and the short form of
    a spelled-out version ("Version 8" -> also "v8")."""
    out = []
    for word in words(text):
        if word in STOP_WORDS or len(word) < 2:
            continue
        out.append(fold(word))
    return out + phrasal_compounds(text) + [f"v{n}" for n in _SPELLED_VERSION_RE.findall(text)]


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
    # A key or placeholder in angle brackets ("the <Tab> key", "git add <pathspec>") reads as a word.
    symbols = sum(PLACEHOLDER_RE.sub("", text).count(c) for c in "{}[]=<>|;`\\")
    return symbols / len(text) <= 0.03


# A sentence about the page or its writing, not the subject: "This article explains ...", "This document
# describes ...", "In this tutorial, we ...", "Author: ...", "See also ...".
ABOUT_PAGE_RE = re.compile(
    r"^(?:(?:this|the\s+present)\s+(?:article|document|page|chapter|section|tutorial|guide|manual|note|notes|"
    r"part|appendix|book|release)\b(?:\s+\w+){0,3}\s+(?:explains?|describes?|covers?|documents?|lists?|"
    r"introduces?|gives?|provides?|shows?|contains?|discuss(?:es)?|summari[sz]es?|is\s+(?:about|meant|intended))|"
    r"in\s+this\s+(?:article|document|page|chapter|section|tutorial|guide|manual|part)\b|"
    r"(?:authors?|written\s+by|maintainer|copyright|last\s+(?:updated|modified))\b\s*:?|"
    r"see\s+(?:also|the)\b|for\s+(?:more|further)\s+(?:details|information)\b)",
    re.IGNORECASE,
)


def about_the_page(sentence: str) -> bool:
    """Is `sentence` about the page or its writing ("This article explains ...", "Author: ...")?"""
    return ABOUT_PAGE_RE.match(sentence) is not None


_AUXILIARIES = frozenset(
    """is are was were be been being am has have had do does did can cannot could will would shall should may
    might must isn't aren't wasn't weren't hasn't haven't doesn't don't didn't can't couldn't won't wouldn't
    shouldn't mustn't""".split()  # noqa: SIM905 (a word list reads better as text)
)
_NOT_VERB_BEFORE = frozenset(
    "a an the of in on for to with by from at as and or this that these those its".split()  # noqa: SIM905
)
_OPENING_WORD_RE = re.compile(r"^\s*([A-Za-z][\w-]*)")


def states_a_clause(sentence: str) -> bool:
    """Does `sentence` say something, rather than name something ("The write-ahead log file, usually named
    "X-wal".")? A light check, no parser: an auxiliary or modal verb, a word that reads as a finite verb
    (-s or -ed right after a word that can be a subject and before more words: "SQLite maintains ..."), an
    imperative or entry description opening with a capitalised word that is not an article ("Overwrite
    output files without asking."), or an entry's term in front ("-y (global) ...")."""
    said = sentence.split()
    lowered = [w.strip(".,;:()\"'").lower() for w in said]
    if any(w in _AUXILIARIES for w in lowered):
        return True
    opening = _OPENING_WORD_RE.match(sentence)
    if opening is None or opening.group(1).lower() not in _NOT_VERB_BEFORE:
        return True  # an entry's term, a code token or an imperative opens it
    for i in range(1, len(said) - 1):  # a verb has something after it: "... of jsonify responses." names
        word, before = lowered[i], said[i - 1]
        if (
            not said[i].endswith((",", ";", ":"))
            and len(word) > 3
            and word.isalpha()
            and (word.endswith("ed") or (word.endswith("s") and not word.endswith(("ss", "us", "is", "ous"))))
            and not before.endswith(",")
            and lowered[i - 1] not in _NOT_VERB_BEFORE
            and not (lowered[i - 1].endswith("ly") and i >= 2 and said[i - 2].endswith(","))
        ):
            return True
    return False


def near_key(text: str) -> str:
    """A sentence's identity for de-duplication: its lowercased words, punctuation and spacing ignored."""
    return " ".join(words(text))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
