"""Claim picking: which sentence candidates become a sub-question's claims, ranked by BM25 and bonuses.

Ranks with BM25 (`research_engine.ranking`: Okapi BM25, k1 1.5, b 0.75, IDF over the sentence pool); owns
`sentence_claims`, over `candidates.sentence_candidates`: a sentence must carry a focus term of
the sub-question, name an enumerated item whole, and carry the angle's cue words for the time and counter
angles; sentences that answer the sub-question (`answering.answer_score`; a how-to answer must also carry
the subject's rarest term, in its words or its section's; a sentence that puts its answer off to what
follows answers nothing) come first, in BM25 order times the bonuses below (a heading or an entry naming
the subject, the subject opening a definition's sentence, a phrase of the question written as it is, a
sentence saying what to do for "how do I", a judgement for "should I", two compared items set against each
other, release notes for a question about change and against them otherwise; the query takes the
documentation's other words for the question's, `terms.synonyms`), and a lookup's sentence that states no
answer of its kind is refused;
at most `max_claims` strong ones, `per_source_cap` per source, the ones after `OPEN_CLAIMS` only from pages
already chosen; the same sentence in another source corroborates the claim instead of repeating it, and
two quotes of one sentence (alone, with its antecedent, with its entry's term) are one claim. Every
sentence of the sub-question's own sources is a candidate: a sentence that another sub-question's wording
fits better is still this one's when it is found here (an earlier rule gave it to the better-fitting
sub-question, which often never fetched the page, so the answer was claimed nowhere); the engine states a
finding once per run.

Tie-breaking is deterministic, by source and position.
Pure; every claim is one candidate, one run of a source's text.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Any

from research_engine import ranking
from research_engine.answering import (
    VERSION_TERM_RE,
    AnswerKind,
    answer_score,
    asked_for,
    asks_what_changed,
    expected_kind,
    identifier_parts,
    shared_terms,
)
from research_engine.engine.extractive.candidates import (
    DANGLING_START_RE,
    sentence_candidates,
)
from research_engine.engine.extractive.plan import EVALUATIVE_RE, LOOKUP_KINDS, TIME_RE
from research_engine.engine.extractive.targets import plan_targets
from research_engine.engine.extractive.text import (
    jaccard,
    near_key,
    tokens,
)
from research_engine.engine.models import ClaimDraft, SourceText
from research_engine.ranking import idf_table
from research_engine.terms import STOP_WORDS, fold, synonyms, words
from research_engine.vocabulary import Confidence

FOCUS_WEIGHT = 2  # a focus term counts twice in the query: it is what the sub-question is about
KEEP_SHARE = 0.35  # a claim must score at least this share of the sub-question's best sentence
# ... unless it answers: the bonuses for a heading or a definition spread the scores of sentences that all
# answer ("Plain VACUUM (without FULL) simply reclaims space ..." beside the entry of VACUUM FULL).
ANSWER_KEEP_SHARE = 0.2
DANGLING_PENALTY = 0.8  # "It ...", "This ...": the sentence leans on one we do not quote
# A sentence that states its answer later ("... can be protected by following the steps below.")
DEFERS_RE = re.compile(r"\b(?:below|as follows|the following(?:\s+[\w-]+){0,3})\s*[.:]$", re.I)
PROCEDURE_VERB_RE = re.compile(
    r"^\s*how\s+(?:(?:do|can|should|could|would|must)\s+(?:i|we|you|one)|to)\s+(\w+)", re.I
)
LEAD_BONUS, LEAD_SPAN = 0.5, 8  # the first sentence of a source x1.44, the 8th x1.25, the 40th x1.08
HEADING_BONUS = 1.0  # a sentence under a heading naming all the question's subject words x2
CORE_IDF_SHARE = 0.75  # a subject term this rare, beside the rarest, is one an answer must carry
CORE_MIN_TERMS = 3
PRODUCT_VERSION_RE = re.compile(r"\b[A-Z][\w.+-]*[a-z][\w.+-]* (\d+(?:\.\d+)*)\b")  # "PostgreSQL 15": "15"
CHANGELOG_WEIGHT = 0.6  # a release note's sentence, for a question not about change
OPEN_CLAIMS = 3  # claims a sub-question takes from any of its sources; the rest from those sources only
CONTRAST_BONUS = 1.0  # a sentence setting two of the compared items against each other x2
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
JUDGEMENT_BONUS = 1.0  # for a question that weighs ("should I use X or Y"): a sentence that judges x2
_DO = (  # what a documentation page tells its reader to do
    r"(?:use|add|set|call|pass|include|put|enable|disable|wrap|decorate|apply|import|override|subclass|"
    r"configure|specify|install|run|register|define|mark|write)"
)
INSTRUCTION_RE = re.compile(
    rf"(?:^|[,;:]\s+|\bthen\s+){_DO}\b|\byou\s+(?:can|should|must|need\s+to|have\s+to|may)\s+"
    rf"(?:also\s+|simply\s+|just\s+)?{_DO}\b|\bby\s+(?:using|adding|setting|calling|passing|wrapping)\b",
    re.IGNORECASE,
)
INSTRUCTION_BONUS = 1.0  # for "how do I": a sentence saying what to do ("..., use the X tag") x2
LEAD_IN_RE = re.compile(r"^(?:[\w-]+\s+){0,3}[\w-]+,\s+")  # "By contrast, ", "In PostgreSQL 15, "
TOPIC_BONUS = 1.0  # for "what is X": a sentence with X as its subject ("select_related works by ...") x2
PHRASE_BONUS = 1.0  # a sentence writing a phrase of the question ("timestamp with time zone") x2
PHRASE_WORDS = (3, 4)  # a phrase: this many words, content words at both ends
COORDINATION = frozenset({"and", "or", "between", "vs", "versus", "nor"})  # "json and jsonb": a list
ENTRY_BONUS = 1.0  # under a heading naming the subject alone: its first sentence x2, the second x1.5
SAME_QUOTE_SHARE = 0.6  # two quotes sharing a run of this share of the shorter one's words state one finding

SENTENCE_K1 = 1.5  # term saturation for sentences (BM25's k1; the readers' default, 1.2, is for passages)


def bm25_scores(query: list[str], documents: list[list[str]]) -> list[float]:
    """BM25 of each candidate's terms for the (weighted: a repeated term counts again) query."""
    return ranking.bm25_scores(query, documents, k1=SENTENCE_K1)


def _phrases(question: str) -> list[str]:
    """The question's runs of PHRASE_WORDS words that open and close with a content word ("timestamp with
    time zone", "time zone type"), none in or beside a list of two things ("json and jsonb data types"),
    padded for a whole-word match in a sentence's words."""
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
    contrast, jsonb does not ..."), name it, with context terms only between ("VACUUM FULL rewrites ..."
    for FULL, not "Plain VACUUM (without FULL) ..."), and go on to say something? A call with arguments
    ("prefetch_related('toppings') implied ...") or a prompt (">>> ...") opens an example, not a statement."""
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


def _same_quote(a: str, b: str) -> bool:
    """Do two candidate quotes state one finding: one inside the other, or most of the shorter one as a run
    of the other ("default_transaction_isolation ( Each SQL transaction has an isolation level, ..." beside
    "Each SQL transaction has an isolation level, ... This parameter controls the default ...")? A sentence
    two entries end with alike ("This parameter can only be set in the postgresql.conf file") is not most
    of either."""
    if a in b or b in a:
        return True
    x, y = a.split(), b.split()
    run = difflib.SequenceMatcher(None, x, y, autojunk=False).find_longest_match(0, len(x), 0, len(y)).size
    return run >= SAME_QUOTE_SHARE * min(len(x), len(y))


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
    # ... and the documentation's other words for them ("limit" for "restrict", "enable" for "turn on").
    query += sorted(synonyms(query, str(sq.get("text") or target.text)))
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
    about_change = (
        expected_kind(question) == AnswerKind.VERSION
        or asks_what_changed(question)
        or TIME_RE.search(question) is not None
    )
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
    # (A sentence under a heading or on a page naming the core term is about it: "In any template that uses
    # a POST form, use the csrf_token tag" on the page "Cross Site Request Forgery protection".)
    # A sentence that puts its answer off ("... can be protected by following the steps below.") answers
    # nothing itself.
    answers = [
        a.answers
        and (not core or bool(core & (set(c.terms) | c.heading | synonyms(set(c.terms)))))
        and not DEFERS_RE.search(c.text)
        for a, c in zip(scored, candidates, strict=True)
    ]
    weighing = EVALUATIVE_RE.search(question) is not None
    phrases = _phrases(question)
    defining = expected_kind(question) == AnswerKind.EXPLANATION and not contrasting
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
        if cand.changelog:
            # Release notes state what changed in some version, reference pages what holds now: for a question
            # about change the release note's sentence comes first, for any other the reference page's.
            scores[i] *= 1 / CHANGELOG_WEIGHT if about_change else CHANGELOG_WEIGHT
        if phrases and any(p in f" {' '.join(words(cand.text))} " for p in phrases):
            scores[i] *= 1 + PHRASE_BONUS  # "timestamp with time zone", not "timestamp without time zone"
        if weighing and JUDGEMENT_RE.search(cand.text):
            scores[i] *= 1 + JUDGEMENT_BONUS  # "This is the most secure of the currently provided methods"
        if procedure and INSTRUCTION_RE.search(cand.text):
            scores[i] *= 1 + INSTRUCTION_BONUS
        if defining and _opens_with(cand.text, subject, context):
            scores[i] *= 1 + TOPIC_BONUS
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
        if any(_same_quote(cand.text, c.text) for c in chosen):
            continue  # one sentence alone and with its antecedent or its entry's term: the same finding twice
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
