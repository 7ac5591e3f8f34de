"""Claim picking: which sentence candidates become a sub-question's claims, by the fitted ranking and rules.

Owns `sentence_claims`, over `candidates.sentence_candidates`: every candidate is read against the
sub-question (`features.question_view`, `features.score_pool`) and scored by the fitted linear ranking
(`ranker`: weights fitted on the labelled dev set, validated leave-one-set-out, shipped as data), in which
answering the sub-question (`answering.answer_score`, the reading the deliverable states claims by) is one
weighed feature, not a gate; best first, a candidate becomes a claim unless one of `RULES` says why not. At
most `max_claims`, `per_source_cap` per source; the same sentence in another source
corroborates a claim instead of repeating it, and what the run states already (under another sub-question,
or in this one's earlier cycle) takes none of its places. Every sentence of the sub-question's own sources
is a candidate (the engine states a finding once per run).

The rules are what the ranking cannot learn from a score: what a claim must be (about the question, a whole
answer for a lookup), what the deliverable needs (a lookup's answer stated whole), and
what would repeat a claim. Ties break by source and position: deterministic. Pure; every claim is one
candidate, one run of a source's text.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from research_engine.answering import claim_terms
from research_engine.engine.extractive.candidates import SentenceCandidate, sentence_candidates
from research_engine.engine.extractive.features import (
    FEATURE_NAMES,
    QuestionView,
    Scored,
    asked_by_heading,
    bm25_scores,
    defers,
    question_view,
    score_pool,
)
from research_engine.engine.extractive.plan import LOOKUP_KINDS
from research_engine.engine.extractive.ranker import Ranker, default_ranker
from research_engine.engine.extractive.text import jaccard, near_key, sentences
from research_engine.engine.models import ClaimDraft, SourceText
from research_engine.mechanisms import mechanisms_named
from research_engine.ranking import idf_table
from research_engine.terms import STOP_WORDS, fold, words
from research_engine.vocabulary import Confidence

__all__ = [
    "RULES",
    "Pick",
    "Rule",
    "bm25_scores",
    "choose",
    "idf_table",
    "rank",
    "read_candidates",
    "sentence_claims",
]

OPEN_CLAIMS = 3  # claims a sub-question takes from any of its sources; the rest from those sources only
SAME_QUOTE_SHARE = 0.6  # two quotes sharing a run of this share of the shorter one's words state one finding
NEAR_DUPLICATE = 0.8  # two claims sharing this share of their terms (Jaccard) say the same
_BM25 = (FEATURE_NAMES.index("bm25_subject"), FEATURE_NAMES.index("bm25_rest"))


@dataclass
class Pick:
    """A ranked candidate: its reading, its fitted score."""

    cand: SentenceCandidate
    scored: Scored
    score: float
    alone: Scored | None = None  # for a span with its entry's term: the sentence alone


@dataclass
class Chosen:
    """The claims chosen so far for one sub-question."""

    view: QuestionView
    max_claims: int
    per_source_cap: int
    keep_margin: float
    claims: list[ClaimDraft] = field(default_factory=list)
    terms: list[set[str]] = field(default_factory=list)  # each claim's candidate terms
    picked: list[SentenceCandidate] = field(default_factory=list)  # each claim's candidate
    best: float | None = None
    per_source: Counter[str] = field(default_factory=Counter)
    stated: frozenset[str] = frozenset()  # texts the run states already, whitespace folded


@dataclass(frozen=True)
class Rule:
    name: str
    reason: str
    skips: Callable[[Pick, Chosen], bool]
    alone: bool = False  # decided by the candidate alone, whatever was chosen before it


def _shares_no_term(p: Pick, c: Chosen) -> bool:
    return not any(p.scored.values[i] for i in _BM25)


def _off_subject(p: Pick, c: Chosen) -> bool:
    about = set(p.cand.terms) | set(asked_by_heading(p.cand))  # an FAQ answer is about what its title asks
    return not c.view.target.eligible(about, p.cand.text)


def _entry_term_off_question(p: Pick, c: Chosen) -> bool:
    labelled = p.cand.head_lines > 1 and p.alone is not None and p.scored.answers > p.alone.answers
    # For a how-to the entry's term is the answer's name ("HIST_IGNORE_DUPS ( -h ) Do not enter ...").
    named = c.view.procedure and bool(p.cand.entry_name or mechanisms_named(p.cand.entry_term, c.view.text))
    return bool(p.cand.head_adds) and not (p.cand.head_adds & c.view.subject) and not labelled and not named


def _lookup_without_answer(p: Pick, c: Chosen) -> bool:
    return p.scored.answer.kind in LOOKUP_KINDS and not p.scored.answers


def _puts_answer_off(p: Pick, c: Chosen) -> bool:
    return defers(p.cand.text)


# The asker's own voice ("SQLite lets me insert a string into a column of type integer!", an FAQ entry's
# title): documentation states its findings in the second and third person. "I" alone is as often a key
# ("bind generic I ...") or "I/O": only with its verb.
ASKER_VOICE_RE = re.compile(
    r"(?<![\w/.-])(?:me|my|myself)(?![\w/.-])|\bI(?:['\u2019]m| am| have| want| need)\b"
)


def _asks(p: Pick, c: Chosen) -> bool:
    text = p.cand.text.rstrip()
    return text.endswith("?") or ASKER_VOICE_RE.search(text) is not None


# A sentence that only sends the reader elsewhere ("See Applying Patches in Other Directories.", "For details,
# see the PRAGMA page."): a manual's cross-reference, no finding of its own.
POINTS_ELSEWHERE_RE = re.compile(
    r"^(?:see(?:\s+also)?|refer\s+to|for\s+(?:more|further)\s+(?:information|details)\W*(?:,\s*)?see)\b",
    re.IGNORECASE,
)
POINTER_MAX_WORDS = 12
# ... however long, when it says so ("See section Invoking the msgfmt Program, for more information about all
# modes ..."), and a manual page's pointer to its manual ("The full documentation for msgfmt is maintained
# as a Texinfo manual.").
MORE_ELSEWHERE_RE = re.compile(r"\bfor\s+(?:more|further)\s+(?:information|details)\b", re.IGNORECASE)
MANUAL_POINTER_RE = re.compile(r"^the\s+(?:full|complete)\s+documentation\s+for\b", re.IGNORECASE)


def _points_elsewhere(p: Pick, c: Chosen) -> bool:
    text = p.cand.text
    if MANUAL_POINTER_RE.match(text):
        return True
    pointer = POINTS_ELSEWHERE_RE.match(text) is not None
    return pointer and (len(text.split()) <= POINTER_MAX_WORDS or MORE_ELSEWHERE_RE.search(text) is not None)


def _row_explains_nothing(p: Pick, c: Chosen) -> bool:
    return p.cand.row and p.scored.answer.kind not in LOOKUP_KINDS


def _stated_before(p: Pick, c: Chosen) -> bool:
    text = " ".join(p.cand.text.split())
    return any(s in text or text in s for s in c.stated)  # the sentence alone, or with its antecedent


def _weak_beside_best(p: Pick, c: Chosen) -> bool:
    return c.best is not None and p.score < c.best - c.keep_margin


def _near_duplicate(p: Pick, c: Chosen) -> bool:
    have = set(p.cand.terms)
    return (
        any(jaccard(have, other) >= NEAR_DUPLICATE for other in c.terms)
        or any(_same_quote(p.cand.text, d.text) for d in c.claims)
        or any(_same_entry_sentence(p.cand, q) for q in c.picked)
    )


def _full(p: Pick, c: Chosen) -> bool:
    return len(c.claims) >= c.max_claims or c.per_source[p.cand.ref] >= c.per_source_cap


def _new_page_late(p: Pick, c: Chosen) -> bool:
    return len(c.claims) >= OPEN_CLAIMS and not c.per_source[p.cand.ref]


# In order; the first that skips a candidate says why it is not a claim.
RULES: tuple[Rule, ...] = (
    Rule("shares-no-term", "it shares no term with the question", _shares_no_term, alone=True),
    Rule(
        "off-subject",
        "it carries no subject term of the sub-question, names an enumerated item only in part, or lacks the "
        "time or counter angle's cue words",
        _off_subject,
        alone=True,
    ),
    Rule(
        "entry-term-off-question",
        "the entry's term it is quoted with says nothing the question asks, the lines it brings state no "
        "answer the sentence alone lacks, and it is no option or setting answering a how-to",
        _entry_term_off_question,
        alone=True,
    ),
    Rule(
        "lookup-without-answer",
        "the question asks for a version, number, identifier or name, and it states none",
        _lookup_without_answer,
        alone=True,
    ),
    Rule(
        "puts-answer-off",
        'it says its answer comes after it ("... by following the steps below."): it states none itself',
        _puts_answer_off,
        alone=True,
    ),
    Rule(
        "asks",
        'it is a question or in the asker\'s voice ("How do I pool database connections?", "I\'m getting a '
        "warning ...\": an FAQ entry's title): it states nothing",
        _asks,
        alone=True,
    ),
    Rule(
        "points-elsewhere",
        'it only sends the reader elsewhere ("See Applying Patches in Other Directories."): it states '
        "nothing of its own",
        _points_elsewhere,
        alone=True,
    ),
    Rule(
        "row-explains-nothing",
        "a table row answers a lookup; it explains nothing",
        _row_explains_nothing,
        alone=True,
    ),
    Rule(
        "weak-beside-best",
        "its score is further below the best chosen claim's than the fitted keep margin",
        _weak_beside_best,
    ),
    Rule(
        "stated-before",
        "the run states it already, under another sub-question or in an earlier cycle (a run states a "
        "finding once; a re-research cycle looks for what is new)",
        _stated_before,
    ),
    Rule(
        "same-finding",
        "it repeats a chosen claim (most of its terms, one sentence alone and with its antecedent, or a "
        "sentence of the same entry another claim quotes)",
        _near_duplicate,
    ),
    Rule("full", "the sub-question, or its source, has its claims", _full),
    Rule(
        "new-page-late",
        "the last claims come from the pages the best ones came from, not from a new page",
        _new_page_late,
    ),
)


def choosable(pick: Pick, view: QuestionView) -> bool:
    """Can `pick` be a claim at all: no rule decided by the candidate alone skips it."""
    return not any(rule.skips(pick, Chosen(view, 0, 0, 0.0)) for rule in RULES if rule.alone)


def read_candidates(
    brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
) -> tuple[QuestionView | None, list[Pick]]:
    """The sub-question's candidates, each read against it (features, answer score), not yet scored."""
    candidates = sentence_candidates(sources)
    if not candidates:
        return None, []
    spell_compounds_as_asked(str(sq.get("text") or ""), candidates)
    view = question_view(brief, sq, candidates, [s.title or "" for s in sources])
    readings = score_pool(candidates, view)
    picks = [Pick(c, r, 0.0) for c, r in zip(candidates, readings, strict=True)]
    for pick in picks:
        if pick.cand.alone_index >= 0:
            pick.alone = readings[pick.cand.alone_index]
    return view, picks


COMPOUND_PART_MIN = 3  # "whitespace" is "white" + "space"; no part shorter (a prefix is no word)
# Prefixes that make a narrower thing of a word, never its opposite ("un", "non", "de" do): the page's
# "autosuggestions" are the asker's "suggestions".
WORD_PREFIXES = frozenset({"auto", "multi", "sub", "super", "inter", "pre", "post", "over", "under", "self"})
PREFIXED_WORD_MIN = 5  # "set" in "subset", "tab" in "subtab" are other words


def spell_compounds_as_asked(question: str, candidates: list[SentenceCandidate]) -> None:
    """Give each candidate the question's spelling of a compound it writes otherwise: the question's
    "whitespace" where a page writes "white space", its "time zone" where a page writes "timezone", its
    "suggestions" where a page writes "autosuggestions" (the term of the one spelling the sources never use,
    added to the candidates writing the other). In place."""
    vocabulary = {term for c in candidates for term in c.terms}
    said = [w for w in words(question) if w.isalpha() and w not in STOP_WORDS]
    spellings: list[tuple[re.Pattern[str], list[str]]] = []
    for word in said:  # one word asked, two written
        if fold(word) in vocabulary:
            continue
        for cut in range(COMPOUND_PART_MIN, len(word) - COMPOUND_PART_MIN + 1):
            head, tail = word[:cut], word[cut:]
            if fold(head) in vocabulary and fold(tail) in vocabulary:
                spellings.append((re.compile(rf"\b{head}[\s-]{tail}", re.IGNORECASE), [fold(word)]))
                break
    prefixed: dict[str, str] = {}  # one word asked, written with a prefix ("autosuggestions")
    for asked_term in {fold(word) for word in said if len(word) >= PREFIXED_WORD_MIN}:
        for term in vocabulary:
            if term.endswith(asked_term) and term[: -len(asked_term)] in WORD_PREFIXES:
                prefixed[term] = asked_term
    for first, second in zip(said, said[1:], strict=False):  # two words asked, one written
        joined = first + second
        if fold(joined) in vocabulary:
            spellings.append((re.compile(rf"\b{joined}", re.IGNORECASE), [fold(first), fold(second)]))
    if prefixed:
        for cand in candidates:
            cand.terms.extend(sorted({prefixed[t] for t in cand.terms if t in prefixed} - set(cand.terms)))
    for pattern, asked in spellings:
        for cand in candidates:
            if pattern.search(cand.text):
                cand.terms.extend(term for term in asked if term not in cand.terms)


def rank(picks: list[Pick], ranker: Ranker) -> list[Pick]:
    """`picks` scored by `ranker`, best first, then by source and position. Answering counts as a feature
    (`answers`), not a gate: a sentence scoring higher on the rest outranks an answer found by its terms."""
    for pick in picks:
        pick.score = ranker.score(pick.scored.values)
    return sorted(
        picks,
        key=lambda p: (-p.score, p.cand.source_index, p.cand.position),
    )


def _named_by(view: QuestionView, cand: SentenceCandidate) -> SentenceCandidate | None:
    """The sentence that gives a lookup's subject the name `cand` answers under (`QuestionView.naming`),
    when `cand` carries none of the subject's own words."""
    if not view.names:
        return None
    claimed = set(claim_terms(cand.text))
    if claimed & view.subject:
        return None
    naming = next((view.naming[name] for name in view.names if name <= claimed), None)
    return naming if naming is not None and naming.text != cand.text else None


def choose(
    view: QuestionView,
    ranked: list[Pick],
    *,
    max_claims: int,
    per_source_cap: int,
    keep_margin: float,
    stated: Collection[str] = (),
) -> list[ClaimDraft]:
    """The claims among `ranked` (best first): each candidate not skipped by one of `RULES`."""
    chosen = Chosen(view, max_claims, per_source_cap, keep_margin, stated=frozenset(stated))
    by_key: dict[str, ClaimDraft] = {}
    for pick in ranked:
        cand = pick.cand
        key = near_key(cand.text)
        if key in by_key:  # the same sentence in another source corroborates it
            draft = by_key[key]
            if all(ref != cand.ref for ref, _ in draft.evidence):
                draft.evidence.append((cand.ref, cand.text))
                draft.confidence = Confidence.HIGH
            continue
        if _continues_claim(pick, chosen):
            continue
        if any(rule.skips(pick, chosen) for rule in RULES):
            continue
        chosen.best = pick.score if chosen.best is None else chosen.best
        share = len(view.target.terms & set(cand.terms)) / max(1, len(view.target.terms))
        # The sentence that names the subject leads, a quote of its own: the entry alone never says what the
        # question asks about ("Use history-size to control the number of entries to save.").
        naming = _named_by(view, cand)
        quotes = [(naming.ref, naming.text)] if naming else []
        if pick.scored.heading:  # the release's heading states the version the sentence does not
            quotes.insert(0, (cand.ref, pick.scored.heading))
        draft = ClaimDraft(
            text=" ".join([q for _, q in quotes] + [cand.text]),
            evidence=[*quotes, (cand.ref, cand.text)],
            confidence=Confidence.MEDIUM if share >= 0.5 else Confidence.LOW,
        )
        chosen.claims.append(draft)
        chosen.terms.append(set(cand.terms))
        chosen.picked.append(cand)
        by_key[key] = draft
        chosen.per_source[cand.ref] += 1
    return chosen.claims


def _continues_claim(pick: Pick, chosen: Chosen) -> bool:
    """When `pick` quotes a chosen claim's sentence with the sentence that continues it ("... at least one
    column denoted as a primary key column; ... These columns do not need to be actually known to the
    database as primary key columns, ..."), the claim takes the longer quote: the same finding, stated whole.
    True when it did. Not an example a sentence introduces: a claim grows by prose only."""
    cand = pick.cand
    if cand.example:
        return False
    # The cheap test first: this runs for every ranked candidate, and most go on from no chosen claim.
    n = next(
        (
            n
            for n, old in enumerate(chosen.picked)
            if old.ref == cand.ref and len(cand.text) > len(old.text) and cand.text.startswith(old.text)
        ),
        None,
    )
    if n is None or _weak_beside_best(pick, chosen) or not choosable(pick, chosen.view):
        return False
    draft = chosen.claims[n]
    draft.evidence[-1] = (cand.ref, cand.text)
    draft.text = " ".join(quote for _, quote in draft.evidence)
    chosen.picked[n], chosen.terms[n] = cand, set(cand.terms)
    return True


def sentence_claims(
    brief: dict[str, Any],
    sq: dict[str, Any],
    sources: list[SourceText],
    *,
    max_claims: int,
    per_source_cap: int,
    ranker: Ranker | None = None,
    stated: Collection[str] = (),
) -> list[ClaimDraft]:
    """The sub-question's claims from its sources' sentences, best first."""
    ranker = ranker or default_ranker()
    view, picks = read_candidates(brief, sq, sources)
    if view is None:
        return []
    return choose(
        view,
        rank(picks, ranker),
        max_claims=max_claims,
        per_source_cap=per_source_cap,
        keep_margin=ranker.keep_margin,
        stated=stated,
    )


def _same_quote(a: str, b: str) -> bool:
    """Do two candidate quotes state one finding: one inside the other, or most of the shorter one as a run
    of the other? A sentence two entries end with alike ("This parameter can only be set in the
    postgresql.conf file") is not most of either."""
    if a in b or b in a:
        return True
    x, y = a.split(), b.split()
    run = difflib.SequenceMatcher(None, x, y, autojunk=False).find_longest_match(0, len(x), 0, len(y)).size
    return run >= SAME_QUOTE_SHARE * min(len(x), len(y))


def _same_entry_sentence(a: SentenceCandidate, b: SentenceCandidate) -> bool:
    """Do two spans of one entry (same source, section and term) quote a sentence in common? Then the
    deliverable would state it twice ("... runs out of memory." in two claims). Entries that end alike
    ("This parameter can only be set in the postgresql.conf file") are other entries, not repeats."""
    if a.ref != b.ref or a.headings != b.headings or a.entry_term != b.entry_term:
        return False
    mine = {" ".join(a.text[s:e].split()) for s, e in sentences(a.text)}
    return any(" ".join(b.text[s:e].split()) in mine for s, e in sentences(b.text))
