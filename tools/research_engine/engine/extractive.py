"""The embedded extractive model: judgement by rule, claims by BM25, no LLM and no key.

- decompose: the objective split into its facets (clauses joined by "and", ";", "?";
  enumerations such as "threads, processes and asyncio" or "X vs Y" become one short
  question per entity), then the missing search angles (time window, source type,
  counter-argument) phrased with the main facet's key terms, never the whole objective;
  at most MAX_SUB_QUESTIONS, each with a claim type from the brief ("quantitative", when
  allowed, for a question asking for a figure: it is what sends the loop to the data APIs);
- queries: the sub-question's key terms (focus terms first, a few words) plus the angle's words;
- select_judgement: which of the sub-question's subject words (`_Target.focus`) a candidate's
  title and snippet carry: none -> verdict hint "reject", all -> "choose", some -> no hint
  (the facts decide); API candidates (OpenAlex works, World Bank series) are judged the same way
  on their titles;
- consolidate: candidate sentences of the fetched passages (fragments, code, navigation,
  headings filtered out) ranked by BM25 with IDF over that sentence pool; a sentence must
  carry a focus term of the sub-question (and the angle's cue words for the time and counter
  angles) and belong to this sub-question rather than another of the plan (see `_owner`), so
  the same sentence never becomes two claims in one run; at most `max_claims` strong ones;
  for a quantitative sub-question, data-series points first (a World Bank passage such as
  "Japan, GDP (current US$), 2019: 5081769542379.77" is its own claim text and quote, so no
  number is ever reworded): per series the latest non-null point and, for the time angle, the
  earliest one in the recency window (ten years for "any"), each owned by one sub-question
  (see `_data_owner`);
- verify: the mechanical floor, with its reasons;
- critic: every sub-question without a supported claim is a material gap;
- write: "Key findings" (one cited bullet per sub-question), the claims by sub-question,
  then the marked caveat section naming gaps and refused claims.

BM25 is a small own implementation (Okapi BM25, k1 1.5, b 0.75) rather than
rank-bm25: it is twenty lines, needs no dependency, and this way the tokenizer,
stop words and tie-breaking (deterministic, by source and position) are ours.
The model is stateless (a pure function of its inputs): a resumed or replayed run
makes exactly the same choices as an uninterrupted one.
Nothing here does I/O or can invent text: every claim is a substring of a source.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from research_engine.engine.models import (
    ClaimDraft,
    GapDraft,
    Section,
    SelectionJudgement,
    SourceText,
    SubQuestionPlan,
    Usage,
    VerdictDraft,
)
from research_engine.terms import fold, words

ANGLES = ("entity", "time", "source-type", "counter")
ANGLE_TERMS = {
    "entity": "",
    "time": "changed version",
    "source-type": "official documentation",
    "counter": "limitations",
}
MAX_SUB_QUESTIONS = 6  # the engine's default cap; more would be cut off unplanned
QUERY_TERMS = 5
# Function words, question words and the words our own question templates add: none of them says
# what a sub-question is about, so none may drive a query or a sentence match.
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "may",
        "might",
        "must",
        "shall",
        "us",
        "via",
        "per",
        "within",
        "without",
        "across",
        "among",
        "regarding",
        "whether",
        "evidence",
        "say",
        "says",
        "said",
        "state",
        "states",
        "stated",
        "source",
        "sources",
        "primary",
        "official",
        "documentation",
        "docs",
        "doc",
        "find",
        "change",
        "changes",
        "changed",
        "recent",
        "recently",
        "current",
        "limitation",
        "limitations",
        "drawback",
        "drawbacks",
        "exception",
        "exceptions",
        "counter",
        "critique",
        "critiques",
        "apply",
        "applies",
        "answer",
        "use",
        "used",
        "using",
        "usage",
        "choose",
        "choosing",
        "chosen",
        "decide",
        "deciding",
        "pick",
        "select",
        "compare",
        "comparing",
        "comparison",
        "difference",
        "differences",
        "versus",
        "vs",
        "better",
        "best",
        "right",
        "known",
        "know",
        "one",
        # Generic question vocabulary: a question asks about a topic's "effect" or "way", or how a
        # "program" does its "work", but a sentence carrying only these words is not about the topic.
        "effect",
        "effects",
        "affect",
        "affects",
        "impact",
        "impacts",
        "way",
        "ways",
        "work",
        "works",
        "program",
        "programs",
        "programme",
        "programmes",
        "role",
        "aspect",
        "aspects",
        "thing",
        "things",
        "matter",
        "matters",
        "happen",
        "happens",
        "really",
        "actually",
        "overall",
    ]
)
# Words our templates put in a question that a source sentence will not repeat.
SENTENCE_MIN_WORDS = 8
SENTENCE_MAX_WORDS = 60
CLAIM_PASSAGE_KINDS = ("paragraph", "list-item", "table-row", "data")
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
BM25_K1 = 1.5
BM25_B = 0.75
FOCUS_WEIGHT = 2  # a focus term counts twice in the query: it is what the sub-question is about
# Ownership (`_Target.affinity`): the share of a question's subject terms a sentence carries counts
# most, so a one-entity question ("... use asyncio ...") keeps the sentences about its entity from an
# umbrella question ("limitations of threads, processes and asyncio") that matches one of its three;
# the angle's cue tips the balance toward the umbrella question only when the sentence is really its
# kind (a version note for the time angle is stronger evidence than a "not" for the counter angle).
OWN_SHARE_WEIGHT = 2.0
OTHER_SHARE_WEIGHT = 0.5
CUE_BONUS = {"time": 1.5, "counter": 1.0}
KEEP_SHARE = 0.5  # a claim must score at least this share of the sub-question's best sentence
DANGLING_PENALTY = 0.8  # "It ...", "This ...": the sentence leans on one we do not quote
# A data-series point as `sources.record` writes it: "<country>, <indicator>, <date>: <value>".
SERIES_POINT_RE = re.compile(
    r"^(?P<series>.+), (?P<date>\d{4}(?:[QM]\d{1,2})?): (?P<value>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$"
)
MAX_DATA_CLAIMS = 4  # data points per sub-question: a few latest values (and a trend's start), not a table
TREND_YEARS = 10  # the trend window when the brief's recency is "any"
DATA_ANGLES = ("entity", "source-type", "time")
DATA_ROLE_ANGLES = {
    "latest": (("entity", "source-type"), ("time",)),
    "earliest": (("time",), ("entity", "source-type")),
}
# Cue words a sentence must carry to answer the time or counter angle (matched on whole words).
TIME_CUE_RE = re.compile(
    r"\b(changed|added|new in|deprecated|removed|introduced|since|no longer|now|version \d|"
    r"(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
COUNTER_CUE_RE = re.compile(
    r"\b(not|cannot|can't|no|only|however|but|although|though|unless|limit\w*|drawback\w*|overhead|"
    r"slow\w*|block\w*|avoid|warning|caution|unsafe|risk\w*|deadlock\w*|problem\w*|disadvantage\w*|"
    r"instead|restrict\w*|prevent\w*|expensive|costly|fail\w*)\b",
    re.IGNORECASE,
)
ANGLE_CUES = {"time": TIME_CUE_RE, "counter": COUNTER_CUE_RE}
# A question asking for a figure (matched on whole words): "how large", "how many", "share", "GDP"...
QUANTITY_RE = re.compile(
    r"\b(how (?:large|big|much|many|fast|high|low)|size|amount|number of|share|rate|ratio|percent\w*|"
    r"per capita|gdp|gni|population|growth|inflation|unemployment|emissions?|spending|expenditure|"
    r"income|output|trade|exports?|imports?|debt|statistic\w*|figures?|quantit\w*)\b",
    re.IGNORECASE,
)
SOURCE_TYPE_RE = re.compile(
    r"\b(docs|documentation|official|specification|spec|standards?|rfc|pep|manual|reference)\b", re.IGNORECASE
)
BOILERPLATE_RE = re.compile(
    r"(previous topic|next topic|this page|show source|report a bug|table of contents|copyright|"
    r"all rights reserved|last updated|created using|skip to|cookie|privacy policy|sign in|log in|"
    r"subscribe|click here|navigation|edit on github|found a bug)",
    re.IGNORECASE,
)
CODE_RE = re.compile(
    r"^\s*(\.\.\.|\$ |#!|import |from \S+ import |def |class \S+[:(])|>>>|==|->|\{\s*\}|;\s*$"
)
TERMINAL_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
DANGLING_START_RE = re.compile(r"^(it|this|that|these|those|they|its|their|such|he|she)\b", re.IGNORECASE)
FRAGMENT_START_RE = re.compile(r"^(and|or|but|so|then|also)\b", re.IGNORECASE)

_BOUNDARY_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")
_ITEM = r"[\w.'+#-]+(?: [\w.'+#-]+)?"
_LIST_RE = re.compile(
    rf"(?<![\w.'+#-])(?P<first>{_ITEM})(?P<middle>(?:, {_ITEM})*),? (?:and|or) (?P<last>{_ITEM})"
)
_VERSUS_RE = re.compile(
    rf"(?<![\w.'+#-])(?P<first>{_ITEM}) (?:vs\.?|versus) (?P<last>{_ITEM})", re.IGNORECASE
)
_CHOICE_RE = re.compile(r"\b(between|among|choose|choosing|compare|comparing|differences?|versus|vs)\b", re.I)
_SUBJECT_RE = re.compile(
    r"^(?:how|when|why|what|which)\s+(?:should|would|could|can|do|does|must)\s+(?P<subject>.+?)\s+"
    r"(?:choose|decide|pick|select)\b",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(
    r"^(?:(?:how|what|why|when|which|who|where|whether)\b\s*(?:(?:do|does|did|is|are|was|were|can|could|"
    r"should|would|will|has|have)\b\s*)?)?(?:the\s+)?",
    re.IGNORECASE,
)
_QUESTION_START_RE = re.compile(
    r"^(how|what|why|when|which|who|where|whether|does|do|is|are|can|should|could|would|will|did)\b", re.I
)
_CLAUSE_SPLIT_RE = re.compile(
    r"\s*[?;]\s*|,?\s+and\s+(?=(?:what|how|why|when|which|who|where|whether|does|do|is|are|can|should)\b)",
    re.IGNORECASE,
)
# Words that end an enumeration item: "between threads" -> "threads", "asyncio for" -> "asyncio".
_EDGE_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "for",
        "in",
        "on",
        "to",
        "with",
        "of",
        "when",
        "at",
        "by",
        "from",
        "between",
        "among",
        "into",
        "about",
        "over",
        "under",
        "versus",
        "vs",
        "and",
        "or",
        "than",
        "as",
        "is",
        "are",
        "be",
        "should",
        "could",
        "would",
        "can",
        "do",
        "does",
        "how",
        "what",
        "why",
        "which",
        "who",
        "where",
        "whether",
        "choose",
        "choosing",
        "select",
        "decide",
        "pick",
        "compare",
        "comparing",
        "use",
        "using",
    ]
)
# Preferred claim type per angle, used when the brief allows it.
ANGLE_TYPES = {
    "entity": ("technical", "factual", "quantitative", "competitive", "regulatory"),
    "source-type": ("regulatory", "technical", "factual", "quantitative", "competitive"),
    "time": ("factual", "quantitative", "technical", "regulatory", "competitive"),
    "counter": ("factual", "technical", "competitive", "quantitative", "regulatory"),
}
ANSWERS = {
    "entity": "direct statements from sources that answer this facet",
    "time": "dated or versioned statements of what changed",
    "source-type": "what the primary or official sources themselves state",
    "counter": "limitations, exceptions and evidence that cuts the other way",
}


def tokens(text: str) -> list[str]:
    """Folded content words (tasks -> task, threading -> thread); stop words and one-letter words dropped."""
    out = []
    for word in words(text):
        if word in STOP_WORDS or len(word) < 2:
            continue
        out.append(fold(word))
    return out


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


def idf_table(documents: list[list[str]]) -> dict[str, float]:
    """BM25's IDF of every term of the pool (log(1 + (N - df + 0.5) / (df + 0.5)), never negative)."""
    n = len(documents)
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc))
    return {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}


def bm25_scores(query: list[str], documents: list[list[str]]) -> list[float]:
    """Okapi BM25 score of each tokenized document for the tokenized query (IDF over `documents`)."""
    n = len(documents)
    if not n or not query:
        return [0.0] * n
    avgdl = sum(len(d) for d in documents) / n or 1.0
    idf = idf_table(documents)
    scores = []
    for doc in documents:
        tf = Counter(doc)
        score = 0.0
        for term in query:
            if term not in tf:
                continue
            freq = tf[term]
            score += (
                idf[term] * freq * (BM25_K1 + 1) / (freq + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
            )
        scores.append(score)
    return scores


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


# ---------------------------------------------------------------------------- decomposition by rule


@dataclass
class Facet:
    """One facet of the objective: a clause, maybe with the entities it enumerates."""

    clause: str
    items: list[str] = field(default_factory=list)
    tail: str = ""  # what follows the enumeration ("for concurrent work")
    subject: str = ""  # who chooses ("a Python 3.11 program")

    @property
    def phrase(self) -> str:
        """The facet's topic in a few words, for the angle questions."""
        if self.items:
            return f"{_join(self.items)}{self.tail}"
        return _LEAD_RE.sub("", self.clause, count=1).strip() or self.clause


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _trim_item(item: str, *, leading: bool) -> str:
    parts = item.split()
    if leading:
        while parts and parts[0].lower() in _EDGE_WORDS:
            parts.pop(0)
    while parts and parts[-1].lower() in _EDGE_WORDS:
        parts.pop()
    return " ".join(parts)


def _enumeration(clause: str) -> tuple[list[str], int] | None:
    """(items, end) of the enumeration in a clause ("X, Y and Z", "between X and Y", "X vs Y")."""
    for regex in (_VERSUS_RE, _LIST_RE):
        for m in regex.finditer(clause):
            middle = [p.strip() for p in (m.groupdict().get("middle") or "").split(",") if p.strip()]
            raw = [m.group("first"), *middle, m.group("last")]
            items = [_trim_item(p, leading=True) for p in raw]  # "between threads" -> "threads"
            if any(not i for i in items) or len({i.lower() for i in items}) != len(items):
                continue
            if regex is _LIST_RE and not middle and not _CHOICE_RE.search(clause):
                continue  # "X and Y" alone is as often one thing ("research and development")
            end = m.start("last") + m.group("last").find(items[-1]) + len(items[-1])
            return items, end
    return None


def facets_of(objective: str) -> list[Facet]:
    """The objective's facets, in order: clauses split on "?", ";" and "and <question word>"."""
    text = " ".join(objective.split())
    out: list[Facet] = []
    for clause in _CLAUSE_SPLIT_RE.split(text):
        clause = clause.strip(" ,.!?")
        if not clause or not tokens(clause):
            continue  # "when should each be used": no term of its own, the entities carry it
        facet = Facet(clause)
        found = _enumeration(clause)
        if found:
            items, end = found
            facet.items = items
            tail = clause[end:].rstrip(" ,.")
            facet.tail = tail if tokens(tail) else ""
            subject = _SUBJECT_RE.match(clause)
            facet.subject = subject.group("subject").strip() if subject else ""
        out.append(facet)
    return out


def _question(clause: str) -> str:
    clause = clause[0].upper() + clause[1:]
    if _QUESTION_START_RE.match(clause):
        return f"{clause}?"
    return f"What is known about {clause[0].lower() + clause[1:]}?"


def _entity_question(facet: Facet, item: str) -> str:
    if facet.subject:
        return f"When should {facet.subject} use {item}{facet.tail}?"
    return f"When should {item} be used{facet.tail}?"


def _window(recency: str | None) -> str:
    if not recency or recency == "any":
        return " recently"
    unit = {"d": "days", "m": "months", "y": "years"}.get(recency[-1], "")
    return f" in the last {recency[:-1]} {unit}" if unit else " recently"


def _claim_type(angle: str, allowed: list[str], index: int, text: str = "") -> str:
    if "quantitative" in allowed and angle != "counter" and QUANTITY_RE.search(text):
        return "quantitative"  # it asks for a figure: the data sources (World Bank) answer it
    for wanted in ANGLE_TYPES[angle]:
        if wanted in allowed:
            return wanted
    return allowed[index % len(allowed)]


def _common_terms(texts: list[str]) -> set[str]:
    """Terms in at least three quarters of the plan's questions: context, not what any one is about."""
    if len(texts) < 3:
        return set()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(tokens(text)))
    need = math.ceil(0.75 * len(texts))
    return {t for t, c in counts.items() if c >= need}


@dataclass
class _Planned:
    text: str
    angle: str
    claim_type: str
    focus: set[str]  # folded terms the question is about (its entity, or its own clause's terms)


def _item_focus(items: list[str]) -> set[str]:
    """The terms enumerated items are about; "Python's decimal" is about "decimal"."""
    return set(tokens(" ".join(re.sub(r"^\S+'s\s+", "", item) for item in items)))


def plan_of(brief: dict[str, Any]) -> list[_Planned]:
    """The rule-based plan: facet questions, then the angles they miss, at most MAX_SUB_QUESTIONS."""
    objective = " ".join(str(brief.get("objective") or "").split()) or "the objective"
    allowed = list(brief.get("claim_types") or ["factual"])
    facets = facets_of(objective) or [Facet(objective.rstrip(" ?.!"))]
    main = facets[0]
    main_focus = _item_focus(main.items)
    # (text, angle, own focus or None when it is "whatever is not common to the plan")
    facet_plans: list[tuple[str, str, set[str] | None]] = []
    for facet in facets:
        if facet.items and len(facet.items) <= 4:
            facet_plans += [
                (_entity_question(facet, item), "entity", _item_focus([item])) for item in facet.items
            ]
            facet_plans.append((_question(facet.clause), "entity", _item_focus(facet.items)))
        else:
            angle = "source-type" if SOURCE_TYPE_RE.search(facet.clause) else "entity"
            facet_plans.append((_question(facet.clause), angle, None))
    extra: list[tuple[str, str, set[str] | None]] = []
    phrase_focus = main_focus or None
    extra.append(
        (f"What changed{_window(brief.get('recency'))} regarding {main.phrase}?", "time", phrase_focus)
    )
    if all(a != "source-type" for _, a, _ in facet_plans):
        extra.append(
            (f"What does the official documentation say about {main.phrase}?", "source-type", phrase_focus)
        )
    extra.append((f"What are the limitations and drawbacks of {main.phrase}?", "counter", phrase_focus))
    room = MAX_SUB_QUESTIONS - len(extra)
    # Keep the source-type facet (it may come late) and as many other facets as fit, in order.
    kept = [p for p in facet_plans if p[1] == "source-type"][:1]
    for item in facet_plans:
        if len(kept) >= room:
            break
        if item not in kept:
            kept.append(item)
    kept.sort(key=facet_plans.index)
    chosen, seen = [], set()
    for text, angle, focus in kept + extra:
        if text.lower() not in seen:
            seen.add(text.lower())
            chosen.append((text, angle, focus))
    common = _common_terms([t for t, _, _ in chosen])
    out = []
    for i, (text, angle, focus) in enumerate(chosen):
        terms = set(tokens(text))
        own = (focus & terms if focus else set()) or (terms - common) or terms
        out.append(_Planned(text, angle, _claim_type(angle, allowed, i, text), own))
    return out


def _target_for(brief: dict[str, Any], sq: dict[str, Any]) -> _Target:
    """`sq` as a consolidation target: the plan's own entry when it is one, else its uncommon terms."""
    text = " ".join(str(sq.get("text") or "").split())
    plan = plan_of(brief)
    for p in plan:
        if p.text == text:
            return _Target(p.text, p.angle, set(tokens(p.text)), p.focus)
    terms = set(tokens(text))
    common = _common_terms([p.text for p in plan] + [text])
    return _Target(text, str(sq.get("angle") or "entity"), terms, (terms - common) or terms)


@dataclass
class _Candidate:
    text: str
    ref: str
    source_index: int
    position: int  # passage order then sentence order inside the source
    terms: list[str]


@dataclass
class _Target:
    """One sub-question of the plan, as consolidation sees it."""

    text: str
    angle: str
    terms: set[str]
    focus: set[str]

    def eligible(self, cand_terms: set[str], text: str) -> bool:
        cue = ANGLE_CUES.get(self.angle)
        return bool(self.focus & cand_terms) and (cue is None or bool(cue.search(text)))

    def focus_share(self, cand_terms: set[str]) -> float:
        """The share of this question's subject terms a sentence carries."""
        return len(self.focus & cand_terms) / max(1, len(self.focus))

    def affinity(self, cand_terms: set[str], text: str) -> float:
        """How well a sentence (already `eligible`) answers this question (see OWN_SHARE_WEIGHT)."""
        others = self.terms - self.focus
        other_share = len(others & cand_terms) / len(others) if others else 0.0
        score = OWN_SHARE_WEIGHT * self.focus_share(cand_terms) + OTHER_SHARE_WEIGHT * other_share
        return score + CUE_BONUS.get(self.angle, 0.0)  # the cue it demanded is there


@dataclass(frozen=True)
class SeriesPoint:
    """One non-null point of a data series, as its passage says it."""

    series: str  # "Japan, GDP (current US$)": everything before the date
    date: str  # "2019", "2019Q1", "2019M01"
    text: str  # the whole passage, verbatim
    ref: str

    @property
    def year(self) -> int:
        return int(self.date[:4])


def series_points(sources: list[SourceText]) -> dict[str, list[SeriesPoint]]:
    """Non-null points of every data series in `sources` (passages of kind "data" shaped like
    "Japan, GDP (current US$), 2019: 5081769542379.77"), oldest first, series in first-seen order.

    Nulls ("no value reported (null)") do not match: a point without a value states nothing.
    """
    out: dict[str, list[SeriesPoint]] = {}
    for source in sources:
        for passage in source.passages:
            if passage.kind != "data":
                continue
            match = SERIES_POINT_RE.match(passage.text)
            if match:
                point = SeriesPoint(match.group("series"), match.group("date"), passage.text, source.ref)
                out.setdefault(point.series, []).append(point)
    for points in out.values():
        points.sort(key=lambda p: (p.date, p.ref))  # stable: equal dates keep the sources' order
    return out


def _window_years(recency: str | None) -> int:
    """The brief's recency as whole years (at least one); TREND_YEARS for "any" (the time angle
    then asks what changed "recently", which a point from the 1960s does not answer)."""
    match = re.fullmatch(r"(\d+)([dmy])", str(recency or "").strip())
    if not match:
        return TREND_YEARS
    n, unit = int(match.group(1)), match.group(2)
    return max(1, n if unit == "y" else math.ceil(n / 12) if unit == "m" else 1)


def _earliest(points: list[SeriesPoint], years: int) -> SeriesPoint | None:
    """The earliest point of the span at most `years` before the latest one."""
    inside = [p for p in points if p.year >= points[-1].year - years]
    return inside[0] if inside and inside[0].date != points[-1].date else None


def _data_owner(targets: list[_Target], kinds: list[str], series_terms: set[str], role: str, me: int) -> int:
    """The sub-question that states a series' `role` point ("latest" or "earliest").

    Among the plan's quantitative sub-questions sharing a term with the series name, the latest
    point goes to a direct question (entity, source-type) before the time angle, the earliest
    (a trend's start) to the time angle first; then the better term match, then plan order.
    The counter angle states no data point. Pure, like `_owner`: one sub-question per point.
    When no quantitative question names the series, it was fetched for `me`, which states it.
    """
    groups = DATA_ROLE_ANGLES[role]
    scored = []
    for i, target in enumerate(targets):
        if kinds[i] != "quantitative" or target.angle not in DATA_ANGLES:
            continue
        matched = target.terms & series_terms
        if not matched:
            continue
        rank = next((g for g, angles in enumerate(groups) if target.angle in angles), len(groups))
        score = sum(2.0 if t in target.focus else 1.0 for t in matched) / math.sqrt(max(1, len(target.terms)))
        scored.append((rank, -round(score, 6), i))
    return min(scored)[2] if scored else me


def _stable_pick(key: str, n: int) -> int:
    return hashlib.sha256(key.encode("utf-8")).digest()[0] % n


class ExtractiveModel:
    """The embedded default: deterministic, no network, no key (see the module docstring)."""

    def __init__(self, *, max_claims: int = 3, per_source_cap: int = 2, name: str = "extractive") -> None:
        self.name = name
        self.usage = Usage()
        self.max_claims = max_claims
        self.per_source_cap = per_source_cap

    # ------------------------------------------------------------------ decompose, queries, select

    def decompose(self, brief: dict[str, Any]) -> list[SubQuestionPlan]:
        return [
            SubQuestionPlan(text=p.text, claim_type=p.claim_type, angle=p.angle, answers=ANSWERS[p.angle])
            for p in plan_of(brief)
        ]

    def queries(self, brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]:
        text = str(sq.get("text") or "") or str(brief.get("objective") or "")
        target = _target_for(brief, sq)
        terms = key_terms(text, limit=12)
        focus = [t for t in terms if fold(t) in target.focus]
        rest = [t for t in terms if fold(t) not in target.focus]
        base = " ".join((focus + rest)[:QUERY_TERMS])
        extra = ANGLE_TERMS.get(angle or "entity", "")
        out = [f"{base} {extra}".strip()] if base else []
        if rest and focus and len(focus) >= 2 and " ".join(focus) not in out:
            out.append(" ".join(focus[:QUERY_TERMS]))
        return out

    def select_judgement(
        self, brief: dict[str, Any], sq: dict[str, Any], candidate: dict[str, Any]
    ) -> SelectionJudgement:
        subject = _target_for(brief, sq).focus
        have = set(tokens(f"{candidate.get('title') or ''} {candidate.get('snippet') or ''}"))
        # The subject words as the sub-question writes them, in its order (folded ones it lacks last).
        in_text = key_terms(str(sq.get("text") or ""), limit=50)
        written: dict[str, str] = {}
        for word in in_text:
            written.setdefault(fold(word), word)
        order = {folded: i for i, folded in enumerate(written)}
        shown = sorted(subject, key=lambda t: (order.get(t, len(order)), t))
        matched = [written.get(t, t) for t in shown if t in have]
        missing = [written.get(t, t) for t in shown if t not in have]
        who = sq.get("id") or "the sub-question"
        where = f"{candidate.get('backend') or 'search'} rank {candidate.get('rank', '?')}"
        if not subject:
            return SelectionJudgement(f"{who} has no subject words to match ({where})", None)
        if not matched:
            return SelectionJudgement(
                f"off-topic: title and snippet carry none of {who}'s subject words "
                f"({', '.join(missing)}; {where})",
                "reject",
            )
        if not missing:
            return SelectionJudgement(
                f"on-topic: title and snippet carry all of {who}'s subject words "
                f"({', '.join(matched)}; {where})",
                "choose",
            )
        return SelectionJudgement(
            f"partly on-topic: title and snippet carry {', '.join(matched)} but not {', '.join(missing)} "
            f"of {who}'s subject words ({where})",
            None,
        )

    # ------------------------------------------------------------------ consolidate

    def _targets(self, brief: dict[str, Any], sq: dict[str, Any]) -> tuple[list[_Target], int]:
        """The plan's sub-questions (plus `sq` when it is not one of them) and `sq`'s index among them."""
        targets = [_Target(p.text, p.angle, set(tokens(p.text)), p.focus) for p in plan_of(brief)]
        key = " ".join(str(sq.get("text") or "").split())
        for i, t in enumerate(targets):
            if t.text == key:
                return targets, i
        targets.append(_target_for(brief, sq))
        return targets, len(targets) - 1

    def _owner(self, targets: list[_Target], cand_terms: set[str], text: str) -> int:
        """The sub-question a sentence belongs to: the eligible one it matches best; ties split by a hash.

        Pure (no memory of earlier calls), so the same sentence is claimed by one sub-question
        only, whatever order the sub-questions are consolidated in and across a resume.
        """
        scored = [
            (round(t.affinity(cand_terms, text), 6), i)
            for i, t in enumerate(targets)
            if t.eligible(cand_terms, text)
        ]
        if not scored:
            return -1
        best = max(s for s, _ in scored)
        tied = [i for s, i in scored if s == best]
        return tied[_stable_pick(near_key(text), len(tied))]

    def consolidate(
        self, brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
    ) -> list[ClaimDraft]:
        return self._data_claims(brief, sq, sources) + self._sentence_claims(brief, sq, sources)

    def _data_claims(
        self, brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
    ) -> list[ClaimDraft]:
        """Data-series points as claims: each one's text and quote is the point's passage, verbatim.

        Only for a quantitative sub-question. Per series, the latest non-null point and, for a
        trend, the earliest non-null point in the recency window before it, each given to one
        sub-question of the plan (`_data_owner`); at most MAX_DATA_CLAIMS, latest points first.
        """
        if str(sq.get("claim_type") or "") != "quantitative":
            return []
        by_series = series_points(sources)
        if not by_series:
            return []
        targets, me = self._targets(brief, sq)
        kinds = self._claim_types(brief, sq, len(targets), me)
        years = _window_years(brief.get("recency"))
        picked: list[SeriesPoint] = []
        for role in ("latest", "earliest"):
            for series, points in by_series.items():
                if _data_owner(targets, kinds, set(tokens(series)), role, me) != me:
                    continue  # another sub-question of the plan states this point
                point = points[-1] if role == "latest" else _earliest(points, years)
                if point is not None and point.text not in {p.text for p in picked}:
                    picked.append(point)
        drafts = []
        for point in picked[:MAX_DATA_CLAIMS]:
            refs = list(dict.fromkeys(p.ref for p in by_series[point.series] if p.text == point.text))
            drafts.append(
                ClaimDraft(text=point.text, evidence=[(ref, point.text) for ref in refs], confidence="high")
            )
        return drafts

    def _claim_types(self, brief: dict[str, Any], sq: dict[str, Any], n: int, me: int) -> list[str]:
        """The claim type of each target of `_targets`: the plan's, and `sq`'s own for `sq`."""
        kinds = [p.claim_type for p in plan_of(brief)][:n]
        kinds += [""] * (n - len(kinds))
        kinds[me] = str(sq.get("claim_type") or kinds[me])
        return kinds

    def _sentence_claims(
        self, brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
    ) -> list[ClaimDraft]:
        candidates = self._candidates(sources)
        if not candidates:
            return []
        targets, me = self._targets(brief, sq)
        target = targets[me]
        query = [t for t in dict.fromkeys(tokens(target.text))]
        weighted = [t for t in query for _ in range(FOCUS_WEIGHT if t in target.focus else 1)]
        scores = bm25_scores(weighted, [c.terms for c in candidates])
        for i, cand in enumerate(candidates):
            if DANGLING_START_RE.match(cand.text):
                scores[i] *= DANGLING_PENALTY
            # A sentence naming more of the question's subjects answers more of it ("threads and
            # asyncio" for a question about threads, processes and asyncio).
            scores[i] *= 0.5 + 0.5 * target.focus_share(set(cand.terms))
        ranked = sorted(
            range(len(candidates)),
            key=lambda i: (-scores[i], candidates[i].source_index, candidates[i].position),
        )
        chosen: list[ClaimDraft] = []
        by_key: dict[str, ClaimDraft] = {}
        chosen_terms: list[set[str]] = []
        per_source: Counter[str] = Counter()
        best = 0.0
        for i in ranked:
            cand = candidates[i]
            if scores[i] <= 0:
                break  # ranked by score: nothing relevant follows
            have = set(cand.terms)
            if not target.eligible(have, cand.text):
                continue
            if best and scores[i] < KEEP_SHARE * best:
                break
            key = near_key(cand.text)
            if key in by_key:  # the same sentence in another source corroborates it
                draft = by_key[key]
                if all(ref != cand.ref for ref, _ in draft.evidence):
                    draft.evidence.append((cand.ref, cand.text))
                    draft.confidence = "high"
                continue
            if self._owner(targets, have, cand.text) != me:
                continue  # another sub-question of the plan answers this sentence better: it is claimed there
            if any(_jaccard(have, other) >= 0.8 for other in chosen_terms):
                continue  # a near-duplicate of a claim already chosen
            if len(chosen) >= self.max_claims or per_source[cand.ref] >= self.per_source_cap:
                continue
            best = best or scores[i]
            share = len(target.terms & have) / max(1, len(target.terms))
            draft = ClaimDraft(
                text=cand.text,
                evidence=[(cand.ref, cand.text)],
                confidence="medium" if share >= 0.5 else "low",
            )
            chosen.append(draft)
            chosen_terms.append(have)
            by_key[key] = draft
            per_source[cand.ref] += 1
        return chosen

    def _candidates(self, sources: list[SourceText]) -> list[_Candidate]:
        out: list[_Candidate] = []
        for s_index, source in enumerate(sources):
            position = 0
            previous_kind = None
            for passage in source.passages:
                after_code, previous_kind = previous_kind == "code", passage.kind
                if passage.kind not in CLAIM_PASSAGE_KINDS:
                    continue
                for n, (start, end) in enumerate(sentences(passage.text)):
                    position += 1
                    text = passage.text[start:end]
                    if n == 0 and after_code and text[:1].islower():
                        continue  # "subclass that uses ...": the rest of a sentence whose subject was code
                    if is_claim_sentence(text):
                        out.append(_Candidate(text, source.ref, s_index, position, tokens(text)))
        return out

    # ------------------------------------------------------------------ verify, critic, write

    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft:
        floor = checks.get("floor") or "refuse"
        reasons = [str(r) for r in checks.get("floor_reasons") or []]
        if floor == "supported":
            reason = "mechanical checks pass: the quote is in the verifier's fresh copy"
            reason += " and carries the claim's numbers"
        else:
            reason = "mechanical floor: " + ("; ".join(reasons) or floor)
        return VerdictDraft(verdict=floor, reason=reason)

    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]:
        supported = {c.get("sub_question") for c in claims if c.get("verdict") == "supported"}
        gaps = []
        for sq in sub_questions:
            if sq["id"] in supported:
                continue
            queries = self.queries(brief, sq, sq.get("angle") or "entity")
            gaps.append(
                GapDraft(
                    about=f"no supported claim answers {sq['id']}: {sq['text']}",
                    query=queries[0] if queries else sq["text"],
                    sq=sq["id"],
                    material=True,
                )
            )
        return gaps

    def write(self, brief: dict[str, Any], sections: list[Section]) -> str:
        return render_report(brief, sections)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


# `report check` treats a heading containing "caveat" or "gap" as a caveat area (report.CAVEAT_WORDS), and
# a heading starting with "About" as framing (report.EXEMPT_WORDS): facts there need no citation.
KEY_FINDINGS_HEADING = "## Key findings"
CAVEAT_HEADING = "## Caveats and gaps"
ABOUT_HEADING = "## About this report"
_CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}


def _sources_of(claim: dict[str, Any]) -> str:
    return ", ".join(e["source"] if isinstance(e, dict) else e[0] for e in claim.get("evidence") or [])


def render_report(brief: dict[str, Any], sections: list[Section]) -> str:
    """The extractive deliverable: key findings, claims by sub-question, then caveats and gaps."""
    objective = " ".join(str(brief.get("objective") or "Research report").split())
    findings: list[str] = []
    body: list[str] = []
    caveats: list[str] = []
    said: set[str] = set()  # a sentence is stated once even if two claims carry it
    for section in sections:
        sq = section.sq
        stated = []
        for claim in section.claims:
            if claim.get("verdict") not in ("supported", "partial"):
                continue
            key = near_key(str(claim.get("text") or ""))
            if key in said:
                continue
            said.add(key)
            stated.append(claim)
        body += [f"## {sq['id']}: {sq['text']}", ""]
        for claim in stated:
            caution = " (partly supported: read with caution)" if claim.get("verdict") == "partial" else ""
            body += [f"- {claim['text']} [{claim['id']}]{caution} (source: {_sources_of(claim)})", ""]
        if stated:
            top = min(
                stated,
                key=lambda c: (
                    c.get("verdict") != "supported",
                    _CONFIDENCE_RANK.get(str(c.get("confidence")), 3),
                    stated.index(c),
                ),
            )
            caution = " (partly supported)" if top.get("verdict") == "partial" else ""
            findings.append(f"- **{sq['id']}** ({sq['text']}): {top['text']} [{top['id']}]{caution}")
        else:
            body += ["> **Gap:** no source sentence answered this sub-question.", ""]
            caveats.append(f"- Gap: no claim was supported for {sq['id']} ({sq['text']}).")
        for gap in section.gaps:
            if not stated and str(gap.get("about") or "").startswith("no supported claim answers"):
                continue  # already said just above
            caveats.append(f"- Gap ({sq['id']}): {gap.get('about')}")
        for claim in section.refused:
            caveats.append(
                f"- Refused, not established: {claim['id']} (\u201c{claim['text']}\u201d) was refused by the "
                f"verifier: {claim.get('reason') or 'its evidence did not hold up'}."
            )
    lines = [f"# {objective}", "", KEY_FINDINGS_HEADING, ""]
    if findings:
        lines += findings + [""]
    else:
        lines += ["> **Gap:** no sub-question has a supported answer.", ""]
    lines += body
    if caveats:
        lines += [CAVEAT_HEADING, ""] + list(dict.fromkeys(caveats)) + [""]
    lines += [
        ABOUT_HEADING,
        "",
        "Written by the embedded extractive model: every statement above is a verbatim sentence of the "
        "cited source, chosen by BM25 relevance and checked by the independent verifier.",
        "",
    ]
    return "\n".join(lines)
