"""What the sentence ranking reads of a candidate: one named number per feature, each with why it may matter.

`question_view` reads a sub-question once (its subject, the kind of answer it asks for, its version scope,
its phrases, whether it asks about change, weighs, defines, contrasts or asks how to do something), and
`feature_rows` turns each sentence candidate into the numbers of `FEATURES`, in that order, for the fitted
linear ranking (`ranker`). A feature says what is true of the sentence; how much it counts is fitted on the
labelled dev set (`bench/fit_ranking.py`), never set here. Most are 0/1 or shares in [0, 1]; the BM25 ones are
divided by the pool's best, so one weight means the same on a long page and a short one.

The section a sentence sits in is read through `section_terms(headings)`: today a candidate knows the nearest
heading above it (passages carry no path yet); a passage's heading path plugs in there unchanged.

Pure functions of their text; no I/O.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from research_engine import ranking
from research_engine.answering import (
    INSTRUCTION_RE,
    SECTION_NUMBER_RE,
    VERSION_TERM_RE,
    AnswerKind,
    AnswerScore,
    answer_score,
    asked_for,
    asks_what_changed,
    expected_kind,
    identifier_parts,
    mechanism_asked,
    shared_terms,
    subject_names,
    version_under_heading,
    with_parts,
)
from research_engine.engine.extractive.candidates import ADMONITION_RE, DANGLING_START_RE, SentenceCandidate
from research_engine.engine.extractive.plan import EVALUATIVE_RE, TIME_RE
from research_engine.engine.extractive.situations import situation_parts, situation_referent
from research_engine.engine.extractive.targets import Target, plan_targets
from research_engine.engine.extractive.text import about_the_page, tokens
from research_engine.mechanisms import mechanisms_named
from research_engine.ranking import idf_table
from research_engine.terms import STOP_WORDS, fold, synonyms, words

SENTENCE_K1 = 1.5  # term saturation for sentences (BM25's k1; the readers' default, 1.2, is for passages)
BM25_FLOOR = 0.02  # log BM25 is taken of this plus BM25 over the pool's best
LEAD_SPAN = 8  # reading position: the first sentence 1, the 8th 0.5, the 40th 0.17
CORE_IDF_SHARE = 0.75  # a subject term this rare, beside the rarest, is one an answer must carry
CORE_MIN_TERMS = 3
PHRASE_WORDS = (3, 4)  # a phrase of the question: this many words, content words at both ends
COORDINATION = frozenset({"and", "or", "between", "vs", "versus", "nor"})  # "json and jsonb": a list
LONG_WORDS = 40  # a sentence this long has said what it says: the length feature tops out here
PRODUCT_VERSION_RE = re.compile(r"\b[A-Z][\w.+-]*[a-z][\w.+-]* (\d+(?:\.\d+)*)\b")  # "PostgreSQL 15": "15"
# A sentence that states its answer later ("... can be protected by following the steps below.")
DEFERS_RE = re.compile(r"\b(?:below|as follows|the following(?:\s+[\w-]+){0,3})\s*[.:]$", re.I)
# A statement that points below for more: "MkDocs includes two built-in themes (...), as documented below."
_POINTS_BELOW_RE = re.compile(r",\s*(?:as\s+\w+|see)\s+below\s*\.$", re.I)
# What a question asked within a situation may say without naming anything: "What is going on?", "Why does
# that happen?", "What are the usual causes?", "What can I change?" (stems, as `tokens` gives them).
VACUOUS_TERMS = frozenset(
    "go going happen mean caus usual common reason wrong problem fix chang need explain issu one".split()  # noqa: SIM905
)
# The asker's verb: "How do I enable ...", "Can I still get ...", "Is there a way to keep ..."
PROCEDURE_VERB_RE = re.compile(
    r"^\s*(?:how\s+(?:(?:do|can|should|could|would|must)\s+(?:i|we|you|one)|to)|(?:can|could)\s+(?:i|we|you|one)"
    r"(?:\s+still)?|is\s+there\s+a\s+way\s+to)\s+(\w+)",
    re.I,
)
DIFFERENCE_RE = re.compile(r"\b(?:difference|differences|differ|compare[ds]?|comparing|versus|vs)\b", re.I)
CONTRAST_RE = re.compile(
    r"\b(?:while|whereas|but|unlike|however|instead|rather than|on the other hand|in contrast|by contrast|"
    r"than)\b",
    re.IGNORECASE,
)
JUDGEMENT_RE = re.compile(
    r"\b(?:most|least|more|less)\s+(?!than\b)[a-z]+|\b(?:better|best|worse|worst|recommend\w*|prefer\w*|should|"
    r"avoid|deprecated|discouraged|insecure|safer|safest)\b",
    re.IGNORECASE,
)
LEAD_IN_RE = re.compile(r"^(?:[\w-]+\s+){0,3}[\w-]+,\s+")  # "By contrast, ", "In PostgreSQL 15, "


@dataclass
class QuestionView:
    """A sub-question read once for ranking its sentence pool."""

    text: str
    target: Target
    kind: AnswerKind
    subject: set[str]  # what the question is about
    context: set[str]  # terms every source title or every sub-question carries: no evidence of topic
    scope: set[str]  # the version(s) the question names ("3.2", "15")
    subject_query: list[str]  # BM25 query terms that are the subject
    rest_query: list[str]  # the other query terms, with the documentation's other words for them
    phrases: list[str]
    about_change: bool
    weighing: bool
    defining: bool
    contrasting: bool
    procedure: bool
    mechanism: str | None  # the kind of name a how-to asks for, when it says
    core: set[str] = field(default_factory=set)  # the rare subject terms a how-to answer must carry
    asked: set[str] = field(default_factory=set)  # every term of the question, and its synonyms
    names: tuple[frozenset[str], ...] = ()  # a lookup's subject under the names the pool gives it ...
    naming: dict[frozenset[str], SentenceCandidate] = field(default_factory=dict)  # ... and where


def bm25_scores(query: list[str], documents: list[list[str]]) -> list[float]:
    """BM25 of each candidate's terms for the (weighted: a repeated term counts again) query."""
    return ranking.bm25_scores(query, documents, k1=SENTENCE_K1)


def question_view(
    brief: dict[str, Any], sq: dict[str, Any], candidates: Sequence[SentenceCandidate], titles: list[str]
) -> QuestionView:
    """Read `sq` (of `brief`'s plan) for ranking `candidates`, whose sources have `titles`."""
    targets, me = plan_targets(brief, sq)
    target = targets[me]
    question = " ".join(str(sq.get("text") or target.text).split())
    query = list(dict.fromkeys(tokens(target.text)))
    query += sorted(synonyms(query, question))  # "limit" for "restrict", "enable" for "turn on"
    # Terms in every source's title (the product's own name) and in every sub-question of the plan are
    # context, and a version the question names scopes it: neither is what the question is about.
    context: set[str] = set()
    if len(titles) >= 2:
        context = set.intersection(*(set(tokens(t)) for t in titles))
    context |= shared_terms([t.text for t in targets])
    subject = asked_for(question) or (
        {t for t in target.focus if t not in context and not VERSION_TERM_RE.fullmatch(t)} or target.focus
    )
    # A situation stated with the question ("..., given that entries flagged as fuzzy are missing from the
    # compiled catalog") is context: what the question is about is its own clause and what of the situation
    # that clause leans on ("include them": the entries flagged as fuzzy), not "missing" or "compiled".
    stated = subject
    asked, situation = situation_parts(question)
    if situation:
        own = set(tokens(asked)) | set(tokens(situation_referent(asked, situation)))
        subject = {t for t in subject if t in own} or subject
        if not subject - VACUOUS_TERMS:  # "What is going on, given that ...", "Which ones does ... look at"
            subject = (own - VACUOUS_TERMS) or (set(tokens(situation)) - VACUOUS_TERMS)
    scope = {t for t in query if VERSION_TERM_RE.fullmatch(t) and not _is_address(t)}
    scope |= set(PRODUCT_VERSION_RE.findall(question))
    ranking = [t for t in query if t not in scope] or query
    kind = expected_kind(question)
    procedure = kind == AnswerKind.PROCEDURE
    view = QuestionView(
        text=question,
        target=target,
        kind=kind,
        subject=subject,
        context=context,
        scope=scope,
        subject_query=[t for t in ranking if t in subject],
        rest_query=[t for t in ranking if t not in subject],
        phrases=_phrases(question),
        about_change=kind == AnswerKind.VERSION
        or asks_what_changed(question)
        or bool(TIME_RE.search(question)),
        weighing=EVALUATIVE_RE.search(question) is not None,
        defining=kind == AnswerKind.EXPLANATION and not _contrasting(target, question),
        contrasting=_contrasting(target, question),
        procedure=procedure,
        mechanism=mechanism_asked(question),
    )
    view.asked = set(query) | target.terms
    if kind == AnswerKind.NUMBER and asked_for(question):
        entries = {c.entry_name.casefold() for c in candidates if c.entry_name}
        by_text = {c.text: c for c in candidates}
        named = subject_names(subject, by_text, entries)
        view.names, view.naming = tuple(named), {name: by_text[text] for name, text in named.items()}
    view.asked |= synonyms(view.asked)
    if procedure:
        # The asker's verb ("restrict", "enable") is how the question is put, not what it is about.
        verb = PROCEDURE_VERB_RE.match(question)
        # Its core terms are read from all the question says, situation included: a situation often puts the
        # documentation's own words for the case ("takes a long time ... in a huge repository": "In
        # repositories with a long commit history it is advised to set this option ...").
        about = stated - {fold(verb.group(1).lower())} if verb else stated
        view.core = _core_terms(about, idf_table([c.terms for c in candidates]))
    return view


# A reference page's stock section names (a manual page's DESCRIPTION, OPTIONS; a SQL command's "Description",
# "Parameters"): the section is on the page's subject, whatever that is, so its name says nothing either way.
GENERIC_SECTION_RE = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:name|synopsis|description|overview|introduction|details|discussion|"
    r"summary|usage|options|parameters|arguments)\W*$",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def section_terms(headings: tuple[str, ...]) -> frozenset[str]:
    """The terms of the headings a sentence sits under, outermost first, identifier parts included: where
    a passage's heading path plugs in (today the candidate's nearest heading). An admonition's title
    ("Important", "Note") says nothing of the section's subject."""
    named = (
        SECTION_NUMBER_RE.sub("", h)
        for h in headings
        if not ADMONITION_RE.match(h) and not GENERIC_SECTION_RE.match(h)
    )
    return frozenset(with_parts(tokens(" ".join(named))))


def _is_address(term: str) -> bool:
    """An IPv4 address ("10.0.0.5"): dotted numbers like a version, and no version."""
    try:
        ipaddress.IPv4Address(term)
    except ValueError:
        return False
    return True


@dataclass
class Scored:
    """One candidate's reading against the question: its answer score and the feature values."""

    answer: AnswerScore
    answers: bool  # it answers its sub-question (`answering`: what the deliverable states)
    values: list[float]
    heading: str = ""  # the section heading that states its answer (a release's version), quoted beside it


Feature = Callable[[SentenceCandidate, QuestionView, "_Pool", int], float]


@dataclass
class _Pool:
    """What features of one candidate read off the whole pool."""

    bm25_subject: list[float]
    bm25_rest: list[float]
    answer: list[AnswerScore]
    bm25_both: list[float] = field(default_factory=list)  # subject terms twice, the rest once
    asked_heading: list[float] = field(default_factory=list)  # its section's question matching the asker's


def _bm25(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return pool.bm25_subject[i]


def _bm25_rest(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return pool.bm25_rest[i]


def _bm25_log(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    """The log of BM25 over the whole query: a weight w on it scales the score as BM25 to the power w, as
    the score's other factors multiply it."""
    return math.log(BM25_FLOOR + pool.bm25_both[i])


def _subject_share(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return len(q.subject & set(c.terms)) / max(1, len(q.subject))


def _answer_score(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return pool.answer[i].score


def defers(text: str) -> bool:
    """Does `text` put its answer off to what follows ("... are described below.", "... as follows:"), not
    state it and point below for more?"""
    return DEFERS_RE.search(text) is not None and _POINTS_BELOW_RE.search(text) is None


def _answers(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return 1.0 if pool.answer[i].answers else 0.0


def _kind_stated(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(pool.answer[i].kind_found is not None)


def _lead(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return 1 / (1 + c.position / LEAD_SPAN)


def _entry_rank(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return 1 / (1 + c.entry_rank)


def _heading_subject(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return len(q.subject & section_terms(c.headings)) / max(1, len(q.subject))


def _answers_asked_heading(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return pool.asked_heading[i] / (1 + c.entry_rank)


def _heading_off(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    own = section_terms(c.headings) - q.context
    return float(bool(own) and not (own & q.asked))


def _entry_names_subject(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(_names_subject(c.entry_head, q.subject, q.context)) / (1 + c.entry_rank)


def _title_share(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return len(q.subject & c.title) / max(1, len(q.subject))


def _title_names_subject(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(bool(q.subject) and q.subject <= c.title | q.context) / (1 + c.position / LEAD_SPAN)


def _entry_span(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(c.head_lines > 0 or bool(c.head_adds))


def _row(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(c.row)


def _dangling(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(DANGLING_START_RE.match(c.text) is not None)


def _about_page(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(about_the_page(c.text))


def _changelog_change(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(c.changelog and q.about_change)


def _changelog_other(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(c.changelog and not q.about_change)


def _version_match(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(bool(q.scope) and q.scope <= section_terms(c.headings) | c.title)


def _version_other(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    """The page or section is about a version, and not the one asked of ("Django 1.4.3 release notes"
    for a question about Django 3.2)."""
    named = {t for t in section_terms(c.headings) | c.title if VERSION_TERM_RE.fullmatch(t) or t.isdigit()}
    return float(bool(q.scope) and bool(named) and not (q.scope & named))


def _phrase(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    said = f" {' '.join(words(c.text))} "
    return float(any(p in said for p in q.phrases))


def _judges(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(q.weighing and JUDGEMENT_RE.search(c.text) is not None)


def _instructs(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(q.procedure and INSTRUCTION_RE.search(c.text) is not None)


def _defines(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(q.defining and _opens_with(c.text, q.subject, q.context))


def _contrasts(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    have = set(c.terms)
    return float(
        q.contrasting
        and CONTRAST_RE.search(c.text) is not None
        and sum(item <= have for item in q.target.items) >= 2
    )


def _core_missing(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(bool(q.core) and not _carries_core(c, q))


def _names_mechanism(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    """A how-to's sentence naming an option, setting, function or command (of the kind asked, when the
    question says which) that the question does not already name."""
    if not q.procedure and q.kind != AnswerKind.NAME:
        return 0.0
    if c.entry_name and c.text.startswith(c.entry_term) and c.entry_name.casefold() not in q.text.casefold():
        return 1.0  # the quote opens with its entry's term: "ignore-space (mixed) ... Ignore space changes"
    named = mechanisms_named(c.text, q.text)
    return float(bool(named.get(q.mechanism)) if q.mechanism else bool(named))  # type: ignore[call-overload]


def _entry_of_mechanism(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    """A how-to's sentence under a reference entry whose term is an option, setting or function name
    ("-y (global)", "SHARE_HISTORY <K>", "pool_pre_ping", a definition list's "mouse (bool)"): the entry's
    description says what it does."""
    if not q.procedure or not c.entry_term:
        return 0.0
    return float(bool(c.entry_name) or bool(mechanisms_named(c.entry_term.split(" (")[0], q.text)))


def _shows_example(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return float(q.procedure and c.example)


def _length(c: SentenceCandidate, q: QuestionView, pool: _Pool, i: int) -> float:
    return min(1.0, len(c.text.split()) / LONG_WORDS)


# name -> (function, why it may matter). The order is the weights' order in the fitted ranking's file.
FEATURES: dict[str, tuple[Feature, str]] = {
    "bm25_subject": (_bm25, "BM25 of the subject's terms, over the pool's best"),
    "bm25_rest": (_bm25_rest, "BM25 of the question's other terms and their documentation synonyms"),
    "bm25_log": (_bm25_log, "log BM25 of the whole query, the subject's terms twice"),
    "subject_share": (_subject_share, "a sentence naming more of the subjects answers more of the question"),
    "answer_score": (_answer_score, "answering.answer_score: key terms and an answer of the kind asked"),
    "answers": (_answers, "answer_score reaches answering.ANSWERS_MIN: the deliverable counts it an answer"),
    "kind_stated": (_kind_stated, "states an answer of the kind asked (a figure, a version, a name)"),
    "lead": (_lead, "reference pages say what a thing is first"),
    "entry_rank": (_entry_rank, "the first sentences under a heading or term define it"),
    "heading_subject": (_heading_subject, "the section's headings name the subject"),
    "answers_asked_heading": (
        _answers_asked_heading,
        "first under a heading that asks what the question asks (an FAQ entry's answer), by BM25",
    ),
    "heading_off": (_heading_off, "the section's headings name none of the question's terms"),
    "entry_names_subject": (_entry_names_subject, "under an entry whose term is the subject"),
    "title_names_subject": (_title_names_subject, "on a page titled with the subject, early"),
    "title_share": (_title_share, "the share of the subject's terms its page's title carries"),
    "entry_span": (_entry_span, "quoted with its entry's term and labelled lines"),
    "row": (_row, "a reference table's row"),
    "dangling": (_dangling, "opens with a pronoun whose antecedent is not quoted"),
    "about_page": (_about_page, "about the page or its writing, not the subject"),
    "changelog_change": (_changelog_change, "release notes, for a question about change"),
    "changelog_other": (_changelog_other, "release notes, for a question about what holds now"),
    "version_match": (_version_match, "its page or section names the version asked of"),
    "version_other": (_version_other, "its page or section is about another version"),
    "phrase": (_phrase, "writes a phrase of the question as the question does"),
    "judges": (_judges, "judges, for a question that weighs"),
    "instructs": (_instructs, "says what to do, for a how-to"),
    "defines": (_defines, "opens with the subject, for a question asking what it is"),
    "contrasts": (_contrasts, "sets two compared items against each other"),
    "core_missing": (_core_missing, "a how-to's sentence without the subject's rarest term"),
    "names_mechanism": (
        _names_mechanism,
        "a how-to's sentence naming an option, setting, function or command",
    ),
    "entry_of_mechanism": (_entry_of_mechanism, "a how-to's sentence describing an option or setting entry"),
    "shows_example": (_shows_example, "a how-to's sentence quoted with the example it introduces"),
    "length": (_length, "longer sentences say more"),
}
FEATURE_NAMES: tuple[str, ...] = tuple(FEATURES)


def score_pool(candidates: Sequence[SentenceCandidate], q: QuestionView) -> list[Scored]:
    """Each candidate's answer reading and feature values (in `FEATURE_NAMES` order). A candidate sharing
    no term with the question, or not about its subject (`Target.eligible`), can never be a claim: it is
    read no further (zeros, answering nothing), which keeps a 20,000-sentence manual page fast."""
    asked = [asked_by_heading(c) for c in candidates]
    documents = [c.terms + extra for c, extra in zip(candidates, asked, strict=True)]
    raw_subject, raw_rest = bm25_scores(q.subject_query, documents), bm25_scores(q.rest_query, documents)
    subject_bm25, rest_bm25 = _relative(raw_subject), _relative(raw_rest)
    both = _relative([2 * a + b for a, b in zip(raw_subject, raw_rest, strict=True)])
    unread = AnswerScore(0.0, q.kind, (), (), None)
    answer = [
        answer_score(q.text, c.text, q.context, q.subject, q.names)
        if (subject_bm25[i] or rest_bm25[i]) and q.target.eligible(set(documents[i]), c.text)
        else unread
        for i, c in enumerate(candidates)
    ]
    headings = [""] * len(candidates)
    if q.kind == AnswerKind.VERSION:
        for i, c in enumerate(candidates):
            if answer[i] is not unread and c.headings:
                answer[i], headings[i] = version_under_heading(answer[i], q.text, c.headings)
    pool = _Pool(subject_bm25, rest_bm25, answer, both, asked_heading_match(candidates, q))
    zeros = [0.0] * len(FEATURES)
    out = []
    for i, cand in enumerate(candidates):
        if answer[i] is unread:
            out.append(Scored(unread, False, zeros))
            continue
        values = [function(cand, q, pool, i) for function, _ in FEATURES.values()]
        out.append(Scored(answer[i], answer[i].answers, values, headings[i]))
    return out


def asked_heading_match(candidates: Sequence[SentenceCandidate], q: QuestionView) -> list[float]:
    """For each candidate under a heading that asks (`asks_as_heading`: an FAQ entry's title, "It always
    chunks all my files, even unchanged ones!"), how well that heading matches the question, situation
    included: BM25 over the pool's distinct asking headings, over the best one's. The answer under a
    matching title need not repeat the asker's words ("it will probably be held in the browser's cache"
    under "I just added a new rule, but the steenkin ad is still getting through. How?")."""
    asking = sorted({c.headings[-1] for c in candidates if c.headings and asks_as_heading(c.headings[-1])})
    if not asking:
        return [0.0] * len(candidates)
    titles = [sorted(section_terms((h,))) for h in asking]
    scores = _relative(bm25_scores(q.subject_query * 2 + q.rest_query, titles))  # the subject's terms twice
    match = dict(zip(asking, scores, strict=True))
    return [match.get(c.headings[-1], 0.0) if c.headings else 0.0 for c in candidates]


def asks_as_heading(heading: str) -> bool:
    """Does `heading` ask or complain, as an FAQ entry's title does (it ends with "?" or "!")?"""
    return heading.rstrip().endswith(("?", "!"))


def asked_by_heading(c: SentenceCandidate) -> list[str]:
    """The terms of the question its section asks, when the heading it sits under is one ("How can I
    specify the encryption passphrase programmatically?", an FAQ entry's title): the sentences under it
    answer it without repeating it ("The passphrase can be specified using the BORG_PASSPHRASE environment
    variable."), so they are read as being about what it asks. Terms the sentence has are not added twice."""
    asked = _heading_question_terms(c.headings[-1]) if c.headings else ()
    if not asked:
        return []
    own = set(c.terms)
    return [t for t in asked if t not in own]


@lru_cache(maxsize=4096)
def _heading_question_terms(heading: str) -> tuple[str, ...]:
    """The terms of `heading` when it asks a question, once each; none when it states (cached: the
    candidates of one section, scored and then checked by the subject rules, share their heading)."""
    return tuple(dict.fromkeys(tokens(heading))) if heading.rstrip().endswith("?") else ()


def _relative(scores: list[float]) -> list[float]:
    best = max(scores, default=0.0)
    return [s / best for s in scores] if best > 0 else [0.0] * len(scores)


def _carries_core(c: SentenceCandidate, q: QuestionView) -> bool:
    """A how-to's answer carries the subject's rarest term, in its words, its section's or its synonyms
    ("use the csrf_token tag" on the page "Cross Site Request Forgery protection")."""
    if not q.core:
        return True
    have = set(c.terms)
    return bool(q.core & (have | section_terms(c.headings) | c.title | synonyms(have)))


def _contrasting(target: Target, question: str) -> bool:
    return len(target.items) >= 2 and DIFFERENCE_RE.search(question) is not None


def _phrases(question: str) -> list[str]:
    """The question's runs of PHRASE_WORDS words that open and close with a content word ("timestamp with
    time zone"), none in or beside a list of two things ("json and jsonb data types"), padded for a
    whole-word match in a sentence's words."""
    said = words(question)
    out = []
    for n in range(PHRASE_WORDS[0], PHRASE_WORDS[1] + 1):
        for i in range(len(said) - n + 1):
            run = said[i : i + n]
            joined = COORDINATION & set(said[max(0, i - 1) : i + n + 1])  # in or right beside "A and B"
            if all(len(w) > 1 and w not in STOP_WORDS for w in (run[0], run[-1])) and not joined:
                out.append(f" {' '.join(run)} ")
    return out


def _opens_with(text: str, subject: set[str], context: set[str]) -> bool:
    """Is `subject` what the sentence is about: do its first key terms, before or after a lead-in ("By
    contrast, jsonb does not ..."), name it, with context terms only between, and go on to say something?
    A call with arguments or a prompt (">>> ...") opens an example, not a statement."""
    if not subject:
        return False
    for opening_text in (text, LEAD_IN_RE.sub("", text, count=1)):
        if not opening_text[:1].isalnum():
            continue
        head = tokens(re.split(r"\((?!\))", opening_text, maxsplit=1)[0])
        opening: set[str] = set()
        for term in head:
            if term not in subject and term not in context:
                break
            opening.add(term)
        if subject <= opening and len(head) > len(opening):
            return True
    return False


def _core_terms(subject: set[str], idf: dict[str, float]) -> set[str]:
    """The subject's rarest terms in the candidate pool (IDF at least CORE_IDF_SHARE of the rarest's);
    none when fewer than CORE_MIN_TERMS subject terms occur at all."""
    present = {t: idf[t] for t in subject if t in idf}
    if len(present) < CORE_MIN_TERMS:
        return set()  # with a short subject every term is core already
    top = max(present.values())
    return {t for t, v in present.items() if v >= CORE_IDF_SHARE * top}


def _names_subject(head: set[str], subject: set[str], context: set[str]) -> bool:
    """A heading that names the subject and little else: at most one word beside it ("(integer)"), and
    half the subject's terms or an identifier of it ("shared_buffers")."""
    parts = {t: set(identifier_parts(t)) for t in head if "_" in t}
    named = {t for t in head if t in subject or parts.get(t, set()) & subject}
    covered = (head | {p for ps in parts.values() for p in ps}) & subject
    return (
        bool(named)
        and len(head - named - context) <= 1
        and (2 * len(covered) >= len(subject) or any("_" in t for t in named))
    )
