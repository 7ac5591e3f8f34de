"""Claim picking: which verbatim source sentences become a sub-question's claims, chosen by BM25.

Owns the BM25 scorer (`idf_table`, `bm25_scores`: Okapi BM25, k1 1.5, b 0.75, IDF over
the sentence pool), `sentence_candidates` (the quotable sentences of the fetched
passages, fragments, code, navigation and headings filtered out, plus the runs of text in
which reference documentation states a finding without one plain sentence: an entry's
term with its lines, a pronoun-led sentence with its antecedent, a list item with the
sentence announcing the list, a sentence with the one-line example it introduces) and
`sentence_claims`: a sentence must carry a focus term of the sub-question, name an
enumerated item whole, and carry the angle's cue words for the time and counter angles;
sentences that answer the sub-question (`answering.answer_score`; a how-to answer must
also carry the subject's rarest term) come first, in BM25 order times the bonuses below,
and a lookup's sentence that states no answer of its kind is refused; at most
`max_claims` strong ones, `per_source_cap` per source, the ones after `OPEN_CLAIMS` only
from pages already chosen; the same sentence in another source corroborates the claim
instead of repeating it. Every sentence of the sub-question's own sources is a candidate: a sentence that
another sub-question's wording fits better is still this one's when it is found here
(an earlier rule gave it to the better-fitting sub-question, which often never fetched
the page, so the answer was claimed nowhere); the engine states a finding once per run.

BM25 is a small own implementation rather than rank-bm25: it is twenty lines, needs no
dependency, and this way the tokenizer, stop words and tie-breaking (deterministic, by
source and position) are ours. Pure; every claim is one run of a source's text (a passage
break read as one space, as the verifier's normalized match reads it).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from research_engine.answering import (
    VERSION_TERM_RE,
    AnswerKind,
    answer_score,
    asked_for,
    expected_kind,
    identifier_parts,
    shared_terms,
    with_parts,
)
from research_engine.engine.extractive.plan import LOOKUP_KINDS, TIME_RE
from research_engine.engine.extractive.targets import plan_targets
from research_engine.engine.extractive.text import (
    TERMINAL_RE,
    is_claim_sentence,
    jaccard,
    near_key,
    sentences,
    tokens,
)
from research_engine.engine.models import ClaimDraft, Passage, SourceText
from research_engine.terms import fold
from research_engine.vocabulary import Confidence

BM25_K1 = 1.5
BM25_B = 0.75
FOCUS_WEIGHT = 2  # a focus term counts twice in the query: it is what the sub-question is about
KEEP_SHARE = 0.35  # a claim must score at least this share of the sub-question's best sentence
# ... unless it answers: the bonuses for a heading or a definition spread the scores of sentences that all
# answer ("Plain VACUUM (without FULL) simply reclaims space ..." beside the entry of VACUUM FULL).
ANSWER_KEEP_SHARE = 0.2
DANGLING_PENALTY = 0.8  # "It ...", "This ...": the sentence leans on one we do not quote
DANGLING_START_RE = re.compile(r"^(it|this|that|these|those|they|its|their|such|he|she)\b", re.IGNORECASE)
CLAIM_PASSAGE_KINDS = ("paragraph", "list-item", "table-row", "data")
TERM_RE = re.compile(r"^[^.!?]{1,60}$")  # a short line with no sentence end: a heading-like term
FOLLOWING_RE = re.compile(r"\b(?:following|below)\b|\b(?:these|this|examples?)\W*:$", re.I)  # announces only
PROCEDURE_VERB_RE = re.compile(
    r"^\s*how\s+(?:(?:do|can|should|could|would|must)\s+(?:i|we|you|one)|to)\s+(\w+)", re.I
)
LABEL_RE = re.compile(r"^\w[\w ]{0,20}:\s")  # "Default: 1209600": a labelled line of a reference entry
ANAPHORA_RE = re.compile(
    r"\b(?:this|that|these|those|such)\s+(?:purpose|option|setting|value|method|mode|case|feature|function|"
    r"variable|parameter|flag|argument|command|behaviou?r|approach|technique)s?\b|^\w+\s+(?:\w+\s+)?also\b",
    re.IGNORECASE,
)
ANTECEDENT_MAX_WORDS = 90  # a pronoun-led sentence and the one before it, quoted together
ENTRY_PASSAGES = 3  # a sentence this many passages below its entry's term (term included) may quote it
ENTRY_SENTENCE_MIN_WORDS = 4  # a shorter sentence than a claim's minimum, quoted with its entry's term
TABLE_ROW_WORDS = (3, 40)  # a table row is a candidate at this many words
LEAD_BONUS, LEAD_SPAN = 0.5, 8  # the first sentence of a source x1.44, the 8th x1.25, the 40th x1.08
HEADING_BONUS = 1.0  # a sentence under a heading naming all the question's subject words x2
ITEM_MIN_WORDS = 8  # a list item or line with no full stop is a statement at this length
EXAMPLE_MAX_WORDS = 12  # a one-line example this short is quoted with the sentence introducing it
CODE_MARK_SHARE = 0.08  # a line this dense in markup or operators is code, not prose
CORE_IDF_SHARE = 0.75  # a subject term this rare, beside the rarest, is one an answer must carry
CORE_MIN_TERMS = 3
PRODUCT_VERSION_RE = re.compile(r"\b[A-Z][\w.+-]*[a-z][\w.+-]* (\d+(?:\.\d+)*)\b")  # "PostgreSQL 15": "15"
CHANGELOG_RE = re.compile(r"\b(?:release notes?|changelog|change log|what'?s new|release \d[\d.]*)\b", re.I)
CHANGELOG_WEIGHT = 0.6  # a release note's sentence, for a question not about change
OPEN_CLAIMS = 3  # claims a sub-question takes from any of its sources; the rest from those sources only
CONTRAST_BONUS = 1.0  # a sentence setting two of the compared items against each other x2
DIFFERENCE_RE = re.compile(r"\b(?:difference|differences|differ|compare[ds]?|comparing|versus|vs)\b", re.I)
CONTRAST_RE = re.compile(
    r"\b(?:while|whereas|but|unlike|however|instead|rather than|on the other hand|in contrast|by contrast|"
    r"than)\b",
    re.IGNORECASE,
)
ENTRY_BONUS = 1.0  # under a heading naming the subject alone: its first sentence x2, the second x1.5
MANGLED_RE = re.compile(r"\s[,.;:](?:\s|$)")  # "cache , or are using": a sentence the extraction cut up


@dataclass
class SentenceCandidate:
    text: str
    ref: str
    source_index: int
    position: int  # passage order then sentence order inside the source
    terms: list[str]
    heading: set[str]  # the terms of the nearest heading above it, and of the page title
    row: bool = False  # a table row, not a sentence
    # A sentence quoted with its entry's term although it is a claim alone: the terms the term adds. Such a
    # span is a candidate only where it adds what the question is about.
    head_adds: set[str] = field(default_factory=set)
    entry_head: set[str] = field(default_factory=set)  # the own terms of the heading or term it falls under
    entry_rank: int = 0  # how many claimable sentences of its entry come before it
    title: set[str] = field(default_factory=set)  # the terms of its page's title
    changelog: bool = False  # its page is release notes or a changelog (by its title)
    alone_index: int = -1  # a span with its entry's term: the index of the sentence alone
    head_lines: int = 0  # ... and how many passages it quotes before the sentence (term, "Default: ...")


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


def sentence_candidates(sources: list[SourceText]) -> list[SentenceCandidate]:
    """Every quotable sentence of the sources' claim-bearing passages, in source and reading order.

    Beside each sentence, a span that states what it is about when the sentence does not: a reference
    entry's sentence with the entry's term ("shared_buffers (integer) Sets the amount ... The default is
    typically 128 megabytes (128MB), ..."; "SESSION_COOKIE_AGE Default: 1209600 (2 weeks, in seconds) The
    age of session cookies, in seconds."), and a sentence opening with a pronoun with the sentence before
    it, across a passage break too. Each is one verbatim run of the page's text.
    """
    out: list[SentenceCandidate] = []
    for s_index, source in enumerate(sources):
        position = 0
        previous_kind: str | None = None
        title = set(tokens(source.title or ""))
        changelog = CHANGELOG_RE.search(source.title or "") is not None
        heading = title
        entry: list[str] = []  # the passages since the last heading or term, the heading first
        entry_headed = False  # the entry opens with a heading, not a definition term
        head_terms: set[str] = set()  # the own terms of the entry's heading or term
        rank = 0  # claimable sentences of the entry so far
        intro: str | None = None  # "... contains many new features, including:" and the list's items so far
        for p_index, passage in enumerate(source.passages):
            prior_kind = previous_kind
            after_code, previous_kind = previous_kind == "code", passage.kind
            if passage.kind != "heading" and _is_code(passage):
                entry, intro = [], None  # an example line the extraction kept as text heads nothing
                continue
            if passage.kind == "heading" or TERM_RE.match(passage.text):
                # A heading, or a definition list's term ("shared_buffers (integer)"): what follows is on it.
                # A short line right under a heading ("Default: 1209600 (2 weeks, in seconds)") belongs to
                # the heading's entry.
                label = passage.kind != "heading" and LABEL_RE.match(passage.text)
                if passage.kind != "heading" and len(entry) == 1 and (entry_headed or label):
                    heading = heading | set(with_parts(tokens(passage.text)))
                    entry.append(passage.text)
                elif label:  # "Release date: 2023-05-11" under no term: it heads nothing
                    entry = []
                else:
                    heading = title | set(with_parts(tokens(passage.text)))
                    entry, entry_headed = [passage.text], passage.kind == "heading"
                    head_terms, rank = set(tokens(passage.text)), 0
                intro = None
                continue
            if passage.kind not in CLAIM_PASSAGE_KINDS:
                entry, intro = [], None
                continue
            before = entry[:]
            entry.append(passage.text)
            # An item of the list an introducing sentence announces: a list item, or a one-sentence paragraph
            # (extraction flattens some lists).
            one = sentences(passage.text)
            is_item = (passage.kind == "list-item" or len(one) == 1) and _is_statement(passage.text)
            listed = intro if is_item else None
            intro = f"{intro} {passage.text}" if intro and is_item else None  # the list so far
            if passage.kind == "table-row":
                # A reference table's row ("identifier length | 63 bytes | ...") is a finding, not prose: the
                # whole row is one candidate, kept only where a lookup finds its answer in it.
                position += 1
                cells = passage.text.split(" | ")
                if len(cells) >= 2 and TABLE_ROW_WORDS[0] <= len(passage.text.split()) <= TABLE_ROW_WORDS[1]:
                    out.append(_candidate(passage.text, source.ref, s_index, position, heading, row=True))
                continue
            spans = sentences(passage.text)
            for n, (start, end) in enumerate(spans):
                first_new = len(out)
                position += 1
                text = passage.text[start:end]
                if n == 0 and after_code and text[:1].islower():
                    continue  # "subclass that uses ...": the rest of a sentence whose subject was code
                headed = _entry_span(before, passage.text[:end])
                follows = source.passages[p_index + 1] if p_index + 1 < len(source.passages) else None
                introduces_code = (
                    n == len(spans) - 1
                    and follows is not None
                    and _is_code(follows)
                    and _introduces_example(text)
                )
                # A list item with no full stop ("Remove PUBLIC creation permission on the public schema
                # (Noah Misch)") is a statement all the same: release notes and feature lists read so.
                item = len(spans) == 1 and not is_claim_sentence(text) and _is_statement(text)
                if (
                    listed
                    and len(f"{listed} {text}".split()) <= ANTECEDENT_MAX_WORDS
                    and (item or is_claim_sentence(text))
                ):
                    # "PostgreSQL 15 contains many new features and enhancements, including: Support for
                    # the SQL MERGE command.": the item with the sentence that says what the list is.
                    out.append(_candidate(f"{listed} {text}", source.ref, s_index, position, heading))
                if n == len(spans) - 1 and passage.kind == "paragraph" and _introduces_example(text):
                    intro = text
                if (not is_claim_sentence(text) and not introduces_code and not item) or MANGLED_RE.search(
                    text
                ):
                    # A short sentence of a reference entry ("The age of session cookies, in seconds.")
                    # is a finding with its term and the lines between ("Default: 1209600 ...").
                    if headed and _is_entry_claim(text, headed):
                        out.append(_candidate(headed, source.ref, s_index, position, heading, head=before))
                        rank = _place_in_entry(
                            out[first_new:], head_terms if entry else set(), rank, title, changelog
                        )
                    continue
                if n:
                    joined = passage.text[spans[n - 1][0] : end]
                else:  # the antecedent is the previous passage's last sentence
                    prose = before and prior_kind == "paragraph" and not TERM_RE.match(before[-1])
                    last = sentences(before[-1])[-1:] if prose else []
                    if last and not is_claim_sentence(before[-1][last[0][0] : last[0][1]]):
                        last = []  # a code line or a fragment says nothing "this" could stand for
                    joined = f"{before[-1][last[0][0] :]} {text}" if last else ""
                if joined and len(joined.split()) <= ANTECEDENT_MAX_WORDS:
                    if DANGLING_START_RE.match(text):
                        # "This is the most secure method": the quote takes the sentence that says what
                        # "this" is, so the claim stands on its own (still one verbatim span of the page).
                        text = joined
                    elif ANAPHORA_RE.search(text):
                        # "You can also use X for this purpose": alone it says nothing of the purpose; with
                        # the sentence before it, it is a finding (both are candidates).
                        out.append(_candidate(joined, source.ref, s_index, position, heading))
                if introduces_code and follows is not None and _quotable_example(follows.text):
                    text = f"{text} {follows.text}"  # "..., e.g.: <form method="post">{% csrf_token %}"
                out.append(_candidate(text, source.ref, s_index, position, heading))
                if headed and not (set(tokens(before[0])) & set(out[-1].terms)):
                    alone = set(out[-1].terms)
                    out.append(
                        _candidate(headed, source.ref, s_index, position, heading, head=before, alone=alone)
                    )
                    out[-1].alone_index, out[-1].head_lines = len(out) - 2, len(before)
                rank = _place_in_entry(
                    out[first_new:], head_terms if entry else set(), rank, title, changelog
                )
    return out


def _place_in_entry(
    new: list[SentenceCandidate], head: set[str], rank: int, title: set[str], changelog: bool
) -> int:
    """Mark one sentence's candidates with their entry's head and rank; the next sentence's rank."""
    for cand in new:
        cand.entry_head, cand.entry_rank, cand.title, cand.changelog = head, rank, title, changelog
    return rank + 1 if new else rank


def _candidate(
    text: str,
    ref: str,
    source_index: int,
    position: int,
    heading: set[str],
    *,
    row: bool = False,
    head: list[str] | None = None,
    alone: set[str] | None = None,
) -> SentenceCandidate:
    adds = set(with_parts(tokens(" ".join(head)))) - (alone or set()) if head and alone is not None else set()
    return SentenceCandidate(
        text, ref, source_index, position, with_parts(tokens(text)), heading, row=row, head_adds=adds
    )


def _is_code(passage: Passage) -> bool:
    """A code block, or a one-line example the extraction kept as text (`<form method="post">{% csrf_token
    %}`): no sentence end, and markup or operators in it."""
    if passage.kind == "code":
        return True
    text = passage.text
    marks = sum(text.count(c) for c in "{}<>=%@$;")
    return not TERMINAL_RE.search(text) and marks >= 2 and marks / len(text) >= CODE_MARK_SHARE


def _quotable_example(text: str) -> bool:
    """A one-line example short enough to quote after its sentence, with nothing in it that reads as a
    sentence end (a prompt's "...", a "?" or "!")."""
    return len(text.split()) <= EXAMPLE_MAX_WORDS and not re.search(r"[.!?](?:\s|$)|\.\.\.", text)


def _is_statement(text: str) -> bool:
    """A quotable sentence, or a line with no full stop that would be one with it."""
    return is_claim_sentence(text) or (
        len(text.split()) >= ITEM_MIN_WORDS
        and not TERMINAL_RE.search(text)
        and not text.endswith(":")
        and is_claim_sentence(f"{text}.")
    )


def _introduces_example(sentence: str) -> bool:
    """ "As a shortcut, you can use the login_required() decorator:" before a code block: how a thing is
    done, stated in full. "The following settings are available:" announces, it does not state."""
    return (
        sentence.endswith(":")
        and not FOLLOWING_RE.search(sentence)
        and is_claim_sentence(sentence[:-1] + ".")
    )


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
    half the subject's terms or an identifier of it ("shared_buffers"); "Event Loop" does not name "how
    the asyncio event loop schedules tasks"."""
    parts = {t: set(identifier_parts(t)) for t in head if "_" in t}
    named = {t for t in head if t in subject or parts.get(t, set()) & subject}
    covered = (head | {p for ps in parts.values() for p in ps}) & subject
    return (
        bool(named)
        and len(head - named - context) <= 1
        and (2 * len(covered) >= len(subject) or any("_" in t for t in named))
    )


def _is_entry_claim(sentence: str, span: str) -> bool:
    return (
        len(sentence.split()) >= ENTRY_SENTENCE_MIN_WORDS
        and TERMINAL_RE.search(sentence) is not None
        and is_claim_sentence(span)
        and not MANGLED_RE.search(span)
    )


def _entry_span(before: list[str], upto: str) -> str | None:
    """The entry's term, the passages between and `upto` as one span, when the entry has a term and the
    span is short enough to read as one finding."""
    if not before or not TERM_RE.match(before[0]) or len(before) > ENTRY_PASSAGES:
        return None
    span = " ".join([*before, upto])
    return span if len(span.split()) <= ANTECEDENT_MAX_WORDS else None


def sentence_claims(
    brief: dict[str, Any],
    sq: dict[str, Any],
    sources: list[SourceText],
    *,
    max_claims: int,
    per_source_cap: int,
) -> list[ClaimDraft]:
    """The sub-question's claims from its sources' sentences, best BM25 score first."""
    candidates = sentence_candidates(sources)
    if not candidates:
        return []
    targets, me = plan_targets(brief, sq)
    target = targets[me]
    query = [t for t in dict.fromkeys(tokens(target.text))]
    # Does the sentence answer the question (its key terms, and the kind of answer it asks for)? Terms in
    # every source's title (the product's own name) are context, and a version the question names scopes
    # it ("How many PBKDF2 iterations does Django 3.2 use?" is about PBKDF2 iterations): neither is what the
    # question is about. (Terms common to the sources' text are not context: a sub-question's sources were
    # chosen for carrying its subject.)
    question = " ".join(str(sq.get("text") or target.text).split())
    context: set[str] = set()
    if len(sources) >= 2:
        context = set.intersection(*(set(tokens(s.title or "")) for s in sources))
    context |= shared_terms([t.text for t in targets])  # the whole plan's topic: context for each question
    subject = asked_for(question) or (
        {t for t in target.focus if t not in context and not VERSION_TERM_RE.fullmatch(t)} or target.focus
    )
    # The question's own version scopes the search, it does not rank sentences ("Python 3.2" in an old
    # release note is no match for "Django 3.2"). (Title context stays in the query: with a few sources it
    # may be the topic itself, every page of which carries it: "JSON Types", "JSON Functions".)
    scope = {t for t in query if VERSION_TERM_RE.fullmatch(t)} | set(PRODUCT_VERSION_RE.findall(question))
    ranking = [t for t in query if t not in scope] or query
    weighted = [t for t in ranking for _ in range(FOCUS_WEIGHT if t in subject else 1)]
    scores = bm25_scores(weighted, [c.terms for c in candidates])
    contrasting = len(target.items) >= 2 and DIFFERENCE_RE.search(question) is not None
    about_change = expected_kind(question) == AnswerKind.VERSION or TIME_RE.search(question) is not None
    scored = [answer_score(question, c.text, context, subject) for c in candidates]
    # The answer score counts the question's terms alike; in these pages some are everywhere ("test",
    # "run") and one says what "how do I run my test suite in parallel" is about. A sentence without the
    # rarest of the subject's terms (by IDF over the candidates) does not answer it, however many common
    # ones it has.
    # Only for "how do I": an explanation's or a comparison's subject is several things at once ("how the
    # GIL limits threads compared with processes"), and a lookup names what it asks for.
    procedure = expected_kind(question) == AnswerKind.PROCEDURE
    # The asker's verb ("restrict", "enable") is how the question is put, not what it is about: the docs
    # say "limit access".
    verb = PROCEDURE_VERB_RE.match(question)
    about = subject - {fold(verb.group(1).lower())} if verb else subject
    core = _core_terms(about, idf_table([c.terms for c in candidates])) if procedure else set()
    answers = [
        a.answers and (not core or bool(core & set(c.terms))) for a, c in zip(scored, candidates, strict=True)
    ]
    subject_share = lambda terms: len(subject & terms) / max(1, len(subject))  # noqa: E731
    for i, cand in enumerate(candidates):
        if DANGLING_START_RE.match(cand.text):  # no sentence before it to say what the pronoun means
            scores[i] *= DANGLING_PENALTY
        # A sentence naming more of the question's subjects answers more of it ("threads and
        # asyncio" for a question about threads, processes and asyncio).
        scores[i] *= 0.5 + 0.5 * subject_share(set(cand.terms))
        # Reference pages state what a thing is and does first, details later: a mild lead bonus.
        scores[i] *= 1 + LEAD_BONUS / (1 + cand.position / LEAD_SPAN)
        # Documentation puts the answer under a heading naming its subject ("select_related()").
        scores[i] *= 1 + HEADING_BONUS * subject_share(cand.heading)
        if subject and subject <= cand.title | context:
            # A page titled with what is asked ("VACUUM") says what it is first.
            scores[i] *= 1 + ENTRY_BONUS / (1 + cand.position / LEAD_SPAN)
        if _names_subject(cand.entry_head, subject, context):
            # Under a heading or term that names what is asked ("select_related()", "shared_buffers
            # (integer)"), the entry's first sentences say what it is: a definition.
            scores[i] *= 1 + ENTRY_BONUS / (1 + cand.entry_rank)
        if cand.changelog and not about_change:
            # Release notes state what changed in some version, reference pages what holds now: for a question
            # that does not ask about change, the reference page's sentence comes first.
            scores[i] *= CHANGELOG_WEIGHT
        if (
            contrasting
            and CONTRAST_RE.search(cand.text)
            and sum(item <= set(cand.terms) for item in target.items) >= 2
        ):
            # "What is the difference between json and jsonb?": a sentence setting one against the other
            # ("...; while jsonb data is stored in a decomposed binary format") answers it.
            scores[i] *= 1 + CONTRAST_BONUS
        if scope and scope <= cand.heading:  # the page is about the version asked of ("Django 3.2 ...")
            scores[i] *= 1 + HEADING_BONUS
        scores[i] *= 0.5 + scored[i].score
    # Sentences that answer the question come first, in BM25 order (its IDF knows which of the question's
    # words are rare in these pages; the answer score's term share does not); the rest only fill what
    # answers leave empty.
    ranked = sorted(
        range(len(candidates)),
        key=lambda i: (
            not answers[i],
            -scores[i],
            candidates[i].source_index,
            candidates[i].position,
        ),
    )
    chosen: list[ClaimDraft] = []
    chosen_answers = 0
    by_key: dict[str, ClaimDraft] = {}
    chosen_terms: list[set[str]] = []
    per_source: Counter[str] = Counter()
    best = 0.0
    for i in ranked:
        cand = candidates[i]
        if scores[i] <= 0:
            continue  # shares no term with the question
        have = set(cand.terms)
        if not target.eligible(have, cand.text):
            continue
        labelled = cand.head_lines > 1 and answers[i] > answers[cand.alone_index]
        if cand.head_adds and not (cand.head_adds & subject) and not labelled:
            # The entry's term says nothing the question asks ("Notes", another setting's name), and the
            # lines it brings ("Default: 1209600 ...") state no answer the sentence alone lacks.
            continue
        if scored[i].kind in LOOKUP_KINDS and not answers[i]:
            continue  # it asks for a version, a number, an identifier or a name, and this states none
        if cand.row and scored[i].kind not in LOOKUP_KINDS:
            continue  # a table row answers a lookup; it explains nothing
        if chosen_answers and not answers[i]:
            break  # answers were found: a sentence that answers nothing would only pad them
        if best and scores[i] < (ANSWER_KEEP_SHARE if answers[i] else KEEP_SHARE) * best:
            continue  # weak beside the best chosen: it repeats the question's words more than it answers
        key = near_key(cand.text)
        if key in by_key:  # the same sentence in another source corroborates it
            draft = by_key[key]
            if all(ref != cand.ref for ref, _ in draft.evidence):
                draft.evidence.append((cand.ref, cand.text))
                draft.confidence = Confidence.HIGH
            continue
        if any(jaccard(have, other) >= 0.8 for other in chosen_terms):
            continue  # a near-duplicate of a claim already chosen
        if any(cand.text in c.text or c.text in cand.text for c in chosen):
            continue  # one sentence alone and with its antecedent: the same finding twice
        if len(chosen) >= max_claims or per_source[cand.ref] >= per_source_cap:
            continue
        if len(chosen) >= OPEN_CLAIMS and not per_source[cand.ref]:
            continue  # the last claims come from the pages the best ones came from, not from a new page
        best = best or scores[i]
        chosen_answers += answers[i]
        share = len(target.terms & have) / max(1, len(target.terms))
        draft = ClaimDraft(
            text=cand.text,
            evidence=[(cand.ref, cand.text)],
            confidence=Confidence.MEDIUM if share >= 0.5 else Confidence.LOW,
        )
        chosen.append(draft)
        chosen_terms.append(have)
        by_key[key] = draft
        per_source[cand.ref] += 1
    return chosen
