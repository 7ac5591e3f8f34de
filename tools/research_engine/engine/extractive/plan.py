"""Decomposition by rule: the objective's facets, their questions, the missing angles, each one's claim type.

Owns `plan_of` (one short question per enumerated entity of `facets.facets_of`, the facet question, then
the missing search angles phrased with the main facet's key terms, never the whole objective; at most
MAX_SUB_QUESTIONS) and `common_terms` (what the whole plan shares, so no question is "about" it). A pure
function of the brief: a resumed or replayed run plans the same questions. Matching sentences to these
questions is `targets`'s.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from research_engine.answering import AnswerKind, expected_kind
from research_engine.engine.extractive.asked_of import gerund
from research_engine.engine.extractive.facets import (
    INSTRUCTION_RE,
    PLURAL_RE,
    PRONOUN_LED_RE,
    QUESTION_START_RE,
    SCOPE_RE,
    TOPIC_MAX_WORDS,
    Facet,
    as_object,
    facets_of,
    question_terms,
    reads_as_topic,
)
from research_engine.engine.extractive.situations import situation_parts
from research_engine.engine.extractive.text import tokens
from research_engine.terms import STOP_WORDS
from research_engine.vocabulary import Angle, ClaimType

LOOKUP_KINDS = (AnswerKind.VERSION, AnswerKind.NUMBER, AnswerKind.IDENTIFIER, AnswerKind.NAME)
MAX_SUB_QUESTIONS = 6  # the engine's default cap; more would be cut off unplanned
# Preferred claim type per angle, used when the brief allows it.
ANGLE_TYPES: dict[str, tuple[ClaimType, ...]] = {
    Angle.ENTITY: (
        ClaimType.TECHNICAL,
        ClaimType.FACTUAL,
        ClaimType.QUANTITATIVE,
        ClaimType.COMPETITIVE,
        ClaimType.REGULATORY,
    ),
    Angle.SOURCE_TYPE: (
        ClaimType.REGULATORY,
        ClaimType.TECHNICAL,
        ClaimType.FACTUAL,
        ClaimType.QUANTITATIVE,
        ClaimType.COMPETITIVE,
    ),
    Angle.TIME: (
        ClaimType.FACTUAL,
        ClaimType.QUANTITATIVE,
        ClaimType.TECHNICAL,
        ClaimType.REGULATORY,
        ClaimType.COMPETITIVE,
    ),
    Angle.COUNTER: (
        ClaimType.FACTUAL,
        ClaimType.TECHNICAL,
        ClaimType.COMPETITIVE,
        ClaimType.QUANTITATIVE,
        ClaimType.REGULATORY,
    ),
}
# A question asking for a figure (matched on whole words): "how large", "how many", "share", "GDP"...
QUANTITY_RE = re.compile(
    r"\b(how (?:large|big|much|many|fast|high|low)|size|amount|number of|share|rate|ratio|percent\w*|"
    r"per capita|gdp|gni|population|growth|inflation|unemployment|emissions?|spending|expenditure|"
    r"income|output|trade|exports?|imports?|debt|statistic\w*|figures?|quantit\w*)\b",
    re.IGNORECASE,
)
# An objective that asks about change over time: only then is a "what changed" sub-question more than padding
# (on a documentation site it otherwise matches any page that mentions a year).
TIME_RE = re.compile(
    r"\b(chang\w*|new|newer|since|version\w*|release\w*|recent\w*|latest|histor\w*|deprecat\w*|removed?|"
    r"added|introduc\w*|replac\w*|trend\w*|over time|years?|decades?|evolv\w*|still|anymore|no longer)\b",
    re.IGNORECASE,
)
SOURCE_TYPE_RE = re.compile(
    r"\b(docs|documentation|official|specification|spec|standards?|rfc|pep|manual|reference)\b", re.IGNORECASE
)

# "What actually changes for programs that link against it": what a choice does, not what changed over time.
_EFFECT_RE = re.compile(r"\bwhat\s+(?:\w+ly\s+)?changes\s+(?:for|if|when|to|about|in how)\b", re.IGNORECASE)
# An objective that weighs something (a choice, a recommendation, a risk): only then is "what are the
# limitations and drawbacks" more than padding. "What is the maximum size" or "how do I enable" has none.
EVALUATIVE_RE = re.compile(
    r"\b(?:should|choose|choosing|better|best|recommend\w*|worth|advantages?|disadvantages?|pros|cons|"
    r"trade-?offs?|risks?|safe|safer|prefer\w*|downsides?|pitfalls?|limitations?|drawbacks?)\b",
    re.IGNORECASE,
)
# A choice about using something ("which should I use", "when to use"): its items are asked when to use each.
_USE_RE = re.compile(r"\b(?:use|used|using|choose|choosing|pick|prefer)\b", re.IGNORECASE)
_VERSUS_WORD_RE = re.compile(r"\b(?:vs\.?|versus)(?=\s)", re.IGNORECASE)
_LITERALS = frozenset({"true", "fals", "none", "yes", "on", "off"})  # folded, as `tokens` gives them
# A topic that is only a pronoun's, at either end ("them back", "change it"): no counter-question can be asked
# of it.
_LEANS_BACK_RE = re.compile(rf"{PRONOUN_LED_RE.pattern}|\b(?:it|them|that|this|those)$", re.IGNORECASE)


@dataclass
class PlannedQuestion:
    text: str
    angle: str
    claim_type: str
    focus: set[str]  # folded terms the question is about (its entity, or its own clause's terms)
    # The objective's enumerated items this question names ({vacuum}, {vacuum, full}): a sentence about it
    # names one of them whole ("full" alone in "full Core conformance" is not VACUUM FULL).
    items: tuple[frozenset[str], ...] = ()


def _question(clause: str) -> str:
    if not clause.strip():
        return "What is known about the objective?"
    if QUESTION_START_RE.match(clause):
        return f"{clause[0].upper()}{clause[1:]}?"
    instruction = INSTRUCTION_RE.match(clause)
    if instruction and clause[instruction.end() :].split():
        # "Compare json and jsonb" -> "What is known about json and jsonb?", not "about compare json ..."
        clause = re.sub(r"^\s*(?:(?:me|us)\s+)?", "", clause[instruction.end() :])
    first = clause.split(" ", 1)[0]
    if first.lower() in STOP_WORDS and first != "I":  # "The SQLite model" -> "the ..."; "SQLite" stays
        clause = clause[0].lower() + clause[1:]
    return f"What is known about {clause}?"


def _entity_question(facet: Facet, item: str, choice: bool) -> str:
    """One enumerated item's own question: when to use it, for a choice; else what it is,
    in the clause's scope ("What is the difference between json and jsonb data types in PostgreSQL" ->
    "What is json in PostgreSQL?")."""
    if facet.subject:
        return f"When should {facet.subject} use {item}{facet.tail}?"
    if choice or facet.tail.startswith(" for "):
        return f"When should {item} be used{facet.tail}?"  # a choice, or a purpose ("for money arithmetic")
    scope = SCOPE_RE.search(facet.tail)
    # The item as the objective wrote it: with its indefinite article ("What is a tab page in Vim?"), and a
    # plural as one ("What are capture filters?").
    article = re.search(rf"\b(a|an)\s+{re.escape(item)}\b", facet.clause, re.IGNORECASE)
    plural = not article and PLURAL_RE.fullmatch(item.split()[-1]) is not None
    said = f"{article.group(1).lower()} {item}" if article else item
    listed = re.search(rf"\b(?:a|an)\s+{re.escape(facet.items[0])}\s*,", facet.clause, re.IGNORECASE)
    if listed and not article and not plural:
        said = f"{_indefinite(item)} {item}"  # "a list, tuple and set": "a tuple", as the list says it
    return f"What {'are' if plural else 'is'} {said}{scope.group(0) if scope else ''}?"


def _indefinite(noun: str) -> str:
    """ "a" or "an", by the sound the noun opens with: an initialism's by its first letter's name ("an SQL
    view"), "u" before a consonant and a vowel as "you" ("a user", "an update")."""
    if re.match(r"[A-Z]{2,}\b", noun):
        return "an" if noun[0] in "AEFHILMNORSX" else "a"
    return "an" if re.match(r"[aeio]|u(?![b-df-hj-np-tv-z][aeiou])", noun, re.IGNORECASE) else "a"


def _window(recency: str | None) -> str:
    if not recency or recency == "any":
        return " recently"
    unit = {"d": "days", "m": "months", "y": "years"}.get(recency[-1], "")
    return f" in the last {recency[:-1]} {unit}" if unit else " recently"


def _claim_type(angle: str, allowed: list[str], index: int, text: str = "") -> str:
    if ClaimType.QUANTITATIVE in allowed and angle != Angle.COUNTER and QUANTITY_RE.search(text):
        return ClaimType.QUANTITATIVE  # it asks for a figure: the data sources (World Bank) answer it
    for wanted in ANGLE_TYPES[angle]:
        if wanted in allowed:
            return wanted
    return allowed[index % len(allowed)]


def common_terms(texts: list[str]) -> set[str]:
    """Terms in at least three quarters of the plan's questions: context, not what any one is about."""
    if len(texts) < 3:
        return set()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(tokens(text)))
    need = math.ceil(0.75 * len(texts))
    return {t for t, c in counts.items() if c >= need}


def _item_focus(items: list[str]) -> set[str]:
    """The terms enumerated items are about; "Python's decimal" is about "decimal"."""
    return set(tokens(" ".join(re.sub(r"^\S+'s\s+", "", item) for item in items)))


def _angle_objects(main: Facet, countered: str) -> tuple[str, str]:
    """How the counter and time angles name the main facet's topic: "of X" and "regarding X" when X reads
    as a topic (`facets.reads_as_topic`); else the main question itself, quoted ('for "What should I check
    first"'), so the angle questions stay sentences and keep its words; ("", "") when the topic is only a
    pronoun's ("them back") or the question cannot be quoted."""
    if _LEANS_BACK_RE.search(countered):
        return "", ""
    if reads_as_topic(countered, built=countered != main.phrase or bool(main.items)):
        return f"of {countered}", f"regarding {countered}"
    asked = situation_parts(main.clause)[0].rstrip(" ?")
    doing = _HOW_DO_I_RE.match(asked)
    if doing and len(tokens(doing.group("rest"))) >= 1:
        # "How do I keep a copy of the key somewhere safe" -> "of keeping a copy of the key somewhere safe"
        done = f"{gerund(doing.group('verb'))} {doing.group('rest')}"
        return f"of {done}", f"regarding {done}"
    if len(asked.split()) > 2 * TOPIC_MAX_WORDS or '"' in asked or len(tokens(asked)) < 2:
        return "", ""  # too long to quote, quoting a quote, or nothing to ask of ("Why")
    quoted = f'for "{asked[0].upper()}{asked[1:]}"'
    return quoted, quoted


# A how-to as the asker's doing: "How do I keep ...", "How can we put ...", "What is the best way to set ..."
_HOW_DO_I_RE = re.compile(
    r"^(?:how\s+(?:do|can|should|could|would)\s+(?:i|we|you|one)|what\s+is\s+the\s+(?:best|simplest|easiest)\s+"
    r"way\s+to)\s+(?P<verb>[a-z]+)\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)


def plan_of(brief: dict[str, Any]) -> list[PlannedQuestion]:
    """The rule-based plan: facet questions, then the angles they miss, at most MAX_SUB_QUESTIONS."""
    objective = " ".join(str(brief.get("objective") or "").split()) or "the objective"
    allowed = list(brief.get("claim_types") or [ClaimType.FACTUAL])
    facets = facets_of(objective) or [Facet(objective.rstrip(" ?.!") or objective)]
    main = facets[0]
    main_focus = _item_focus(main.items)
    choice = bool(_USE_RE.search(objective) or _VERSUS_WORD_RE.search(objective))
    # (text, angle, own focus or None when it is "whatever is not common to the plan")
    facet_plans: list[tuple[str, str, set[str] | None]] = []
    for facet in facets:
        if facet.items and len(facet.items) <= 4:
            facet_plans += [
                (_entity_question(facet, item, choice), Angle.ENTITY, _item_focus([item]))
                for item in facet.items
            ]
            facet_plans.append((_question(facet.clause), Angle.ENTITY, _item_focus(facet.items)))
        else:
            angle: str = Angle.SOURCE_TYPE if SOURCE_TYPE_RE.search(facet.clause) else Angle.ENTITY
            # A follow-up is about what it asks ("the default behaviour"), not the subject it was given.
            if facet is main:
                others = [f.clause for f in facets]
                asks = set(tokens(facet.clause)) - common_terms(others)
            else:
                asks = set(tokens(facet.asked)) if facet.clause.endswith(f" for {main.phrase}") else set()
            facet_plans.append((_question(facet.clause), angle, asks or None))
    extra: list[tuple[str, str, set[str] | None]] = []
    phrase_focus = main_focus or None
    # Angles are added only where they can be answered from the brief's scope: "what changed" when the
    # objective asks about change or for a figure the brief wants (a series has a trend); the counter angle
    # when the objective weighs something (every finding is contested by the verifier anyway). A sub-question
    # that only re-asks the main one with "official documentation" added is padding: the sources' own type
    # is selection's business.
    # The quantitative claim type (the brief's default) wants a trend only of a figure the objective asks for:
    # a how-to or an explanation naming no time has no "what changed in the last 5 years".
    series = (
        ClaimType.QUANTITATIVE in allowed
        and QUANTITY_RE.search(objective) is not None
        and expected_kind(main.clause) != AnswerKind.PROCEDURE
    )
    time_wanted = (TIME_RE.search(_EFFECT_RE.sub(" ", objective)) or series) and not (
        expected_kind(main.clause) == AnswerKind.VERSION or TIME_RE.search(main.clause)
    )
    countered = as_object(main)
    of, regarding = _angle_objects(main, countered)
    if EVALUATIVE_RE.search(objective) and of:
        # Only a question that weighs something has drawbacks to find; for a lookup ("how long", "which
        # version"), a procedure or a definition that question would be padding; nor when the topic is a
        # pronoun's ("the limitations and drawbacks of them back" asks nothing).
        extra.append((f"What are the limitations and drawbacks {of}?", Angle.COUNTER, phrase_focus))
    room = MAX_SUB_QUESTIONS - len(extra) - bool(time_wanted)
    # Keep the source-type facet (it may come late) and as many other facets as fit, in order.
    kept = [p for p in facet_plans if p[1] == Angle.SOURCE_TYPE][:1]
    for item in facet_plans:
        if len(kept) >= room:
            break
        if item not in kept:
            kept.append(item)
    kept.sort(key=facet_plans.index)
    if (
        time_wanted
        and regarding
        and not any(expected_kind(text) == AnswerKind.VERSION for text, _, _ in kept)
    ):
        # A facet that asks what changed or since which version is the time angle already.
        extra.insert(
            0,
            (
                f"What changed{_window(brief.get('recency'))} {regarding}?",
                Angle.TIME,
                phrase_focus,
            ),
        )
    chosen, seen = [], set()
    for text, angle, focus in kept + extra:
        if text.lower() not in seen:
            seen.add(text.lower())
            chosen.append((text, angle, focus))
    common = common_terms([t for t, _, _ in chosen])
    # An item's value literal is not what it names ("null=True" is about null).
    items = [frozenset(_item_focus([item]) - _LITERALS) for facet in facets for item in facet.items]
    out = []
    for i, (text, angle, focus) in enumerate(chosen):
        terms = question_terms(text)
        if angle == Angle.TIME and not focus:
            # "What changed in the last 5 years regarding X?" is about X; its window is no topic.
            terms = terms - question_terms(_window(brief.get("recency"))) or terms
        own = (focus & terms if focus else set()) or (terms - common) or terms
        named = tuple(dict.fromkeys(item for item in items if item and item <= terms))
        out.append(PlannedQuestion(text, angle, _claim_type(angle, allowed, i, text), own, named))
    return out
