"""Does a claim answer its sub-question? The answer score, recorded beside the verifier's evidence verdict.

"Supported" means the quote is on the page; it does not mean the sentence answers the question. This module
measures the second thing, deterministically, from text alone, so the controller, the contestation file, the
loop log and the extractive model all read one number:

- `expected_kind(question)`: the kind of answer the question asks for (`AnswerKind`): a version ("since which
  version", "which versions"), a number ("how many", "how long", "what is the maximum"), a document
  identifier (RFC, PEP, CVE, ticket), a name ("which backend", "what replaces"), a procedure ("how do I":
  the setting, command or API that does it), yes/no, or an explanation.
- `answer_score(question, claim)`: zero when the claim carries none of the question's key terms (or none
  of its subject's: `subject_terms`, `asked_for`). Else, for a lookup (version, number, identifier, name;
  a procedure is scored like a name),
  TERMS_WEIGHT x the share of the key terms it carries plus the rest when it states an answer of the
  expected kind that the question does not already state; so a lookup's sentence without one never
  answers. Yes/no and explanation questions have no kind to carry: the terms decide alone. Three terms
  (60% of a long question's) count as all, a code-like term counting twice; the subject's terms are half
  the term credit when known; context terms the caller names (the product's own name in every page title)
  weigh nothing, but never take the subject away. A claim answers when its score reaches `ANSWERS_MIN`.
- `relevance(question, questions, claim)`: the score the controller and the writers judge by; a claim
  carrying only the verb a how-to asks to do ("configure") or a lookup's frame ("Which setting controls")
  is about something else.

Pure functions of their text; no I/O. The weights and the threshold are data here, not scattered literals.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache

from research_engine.mechanisms import Mechanism, written_tokens
from research_engine.sentences import sentences as split_sentences
from research_engine.terms import PHRASAL_VERBS, STOP_WORDS, fold, phrasal_compounds, synonyms, words

ANSWERS_MIN = 0.5  # a supported claim at or above this answers its sub-question
# Answers drop qualifiers: three of the question's key terms, or 60% of a long question's, count as all.
TERMS_ENOUGH = 3
TERMS_SHARE = 0.6
TERMS_WEIGHT = 0.4  # the rest is the expected kind: a lookup stating no answer of its kind never answers


class AnswerKind(StrEnum):
    VERSION = "version"
    NUMBER = "number"
    IDENTIFIER = "identifier"
    NAME = "name"
    PROCEDURE = "procedure"
    YES_NO = "yes/no"
    EXPLANATION = "explanation"


KIND_PHRASES: dict[AnswerKind, str] = {
    AnswerKind.VERSION: "the version (or date) it names",
    AnswerKind.NUMBER: "the figure, with its unit",
    AnswerKind.IDENTIFIER: "the document identifier (RFC, PEP, ticket)",
    AnswerKind.NAME: "the name of the thing asked for (setting, class, command, option)",
    AnswerKind.PROCEDURE: "the setting, command, option or API that does it",
    AnswerKind.YES_NO: "a yes or no, with the condition it depends on",
    AnswerKind.EXPLANATION: "how or why, stated by the source",
}

# "Which X" names the thing asked for only before the verb: "What does the VACUUM command do" asks what
# it does.
_NOT_AUX = r"(?!(?:does|do|did|can|could|should|would|will|has|have)\b)"
_CHANGED = r"what (?:has |have )?changed|ha(?:s|ve) \w+ changed"  # asks what changed
_VERSION_Q = re.compile(
    # "since which version", "in which release"; not "a patch from an old version of a tree" (no question)
    rf"\b(?:(?:(?:since|from|in)\s+)?(?:which|what)\s+(?:{_NOT_AUX}\w+\s+){{0,2}}?(?:versions?|releases?)\b|"
    r"since when|"
    r"when\s+(?:was|were|did|is|does)\b.*\b(?:add\w*|introduc\w*|remov\w*|deprecat\w*|releas\w*|"
    rf"drop\w*|chang\w*|support\w*)|what year|{_CHANGED})",
    re.IGNORECASE,
)
_CHANGED_Q = re.compile(rf"\b(?:{_CHANGED})", re.IGNORECASE)
_NUMBER_Q = re.compile(
    r"\b(?:how\s+(?:many|much|long|large|big|often|old|fast|small|high|low|wide)|"
    rf"(?:which|what)\s+(?:{_NOT_AUX}\w+\s+){{0,4}}?"
    r"(?:port|size|length|number|amount|percentage|timeout)s?\b|"
    r"(?:maximum|minimum|max|min)\b|default\s+(?:value|size|length|limit|number|port|timeout))",
    re.IGNORECASE,
)
# An identifier asked for ("Which PEP introduced ...", "the CVE number"), not one named ("TLS session
# tickets", "Does it follow RFC 7627?").
_IDENTIFIER_Q = re.compile(
    r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:rfcs?|peps?|cves?|tickets?|issues?|bugs?)\b|"
    r"\b(?:rfc|pep|cve|ticket|issue|bug)\s+numbers?\b",
    re.IGNORECASE,
)
_NAME_Q = re.compile(
    rf"^\s*(?:(?:which|what)\s+(?:{_NOT_AUX}\w+\s+){{0,4}}?"
    r"(?:backends?|settings?|functions?|methods?|class(?:es)?|"
    r"commands?|options?|parameters?|arguments?|modules?|packages?|librar(?:y|ies)|tools?|fields?|types?|"
    r"names?|keywords?|flags?|variables?|decorators?|mixins?|tags?|locks?|engines?|formats?|algorithms?|"
    r"methods?|hashers?|levels?|modes?|extensions?)\b|(?:what|which)\s+(?:\w+\s+)?(?:replaces?|replaced|"
    # "Which pool does an Engine use?": "which" and a noun before the verb picks one of a set of named things
    rf"supersedes?|should\s+\w+\s+use|to\s+use)\b|which\s+(?:{_NOT_AUX}[\w-]+\s+){{1,3}}?"
    r"(?:does|do|did|is|are|was|were|should|would|will|can)\b)",
    re.IGNORECASE,
)
# "How do I enable ...": in technical documentation the answer names its mechanism (a setting, a decorator,
# a command, an option), so a sentence naming none describes the topic without saying how.
# How a how-to opens: "How do I", "How to", "Can I", "Is there a way to", "What can I".
_ASKER = r"(?:i|we|you|one)"
_HOW_DO_I = rf"how\s+(?:do|can|should|could|would|does|must)\s+{_ASKER}"
_IS_THERE_A_WAY = r"is\s+(?:there\s+a\s+way|it\s+possible)\s+to"
_WHAT_CAN_I = rf"what\s+(?:can|should|do|must)\s+{_ASKER}"
_PROCEDURE_Q = re.compile(
    rf"^\s*{_HOW_DO_I}\b|^\s*how\s+to\b|"
    # "Can I see what patch would do before applying it?", "Is there a way to ...": what to do, as yes/no
    rf"^\s*can\s+{_ASKER}\s+(?!use\b|be\b|have\b)|^\s*{_IS_THERE_A_WAY}\b|"
    # "What can I change in its configuration to make it load faster?": what to do, asked another way
    rf"^\s*{_WHAT_CAN_I}\s+(?:change|set|configure|add|run|type|put|pass|edit|enable|disable|turn)\b",
    re.IGNORECASE,
)
# The verb a how-to asks to do ("How do I configure X?"): documentation uses it of everything.
_ACTION_Q = re.compile(
    rf"^\s*(?:{_HOW_DO_I}|how\s+to|can\s+{_ASKER}|{_IS_THERE_A_WAY}|{_WHAT_CAN_I})"
    r"\s+(?:\w+ly\s+)?(?P<verb>[a-z]+)\b"
    # ... and the kind of name and the verb a lookup frames its object with ("Which setting controls X?"),
    # the kind read as `_MECHANISM_Q` reads it
    rf"|^\s*(?:which|what)\s+(?P<thing>[a-z]+)\s+{_NOT_AUX}(?P<does>[a-z]+(?:s|ed))\b",
    re.IGNORECASE,
)
_YES_NO_Q = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|must)\b", re.IGNORECASE
)

# Strictest first: "which RFC" before "which version" before "how many" before "which setting".
_KIND_RULES: tuple[tuple[re.Pattern[str], AnswerKind], ...] = (
    (_IDENTIFIER_Q, AnswerKind.IDENTIFIER),
    (_VERSION_Q, AnswerKind.VERSION),
    (_NUMBER_Q, AnswerKind.NUMBER),
    (_NAME_Q, AnswerKind.NAME),
    (_PROCEDURE_Q, AnswerKind.PROCEDURE),
    (_YES_NO_Q, AnswerKind.YES_NO),
)

_VERSION_A = re.compile(
    r"\b(?:v\d+(?:\.\d+)*|\d+\.\d+(?:\.\d+)*|(?:version|release|python|django|postgresql|pg)\s+\d+\b|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty "
    "hundred thousand million billion once twice half double dozen unlimited infinite zero"
)
_VERSION_NOT_FIGURE = re.compile(r"(?:\b(?:version|release|python|django|postgresql|pg|v)\s*|\d\.)$", re.I)
# A heading's own number ("6.4.2. Comparing Values", "20.2.1 Setting Parameters", "F.3 ..."): where it stands
# in the manual, no version it is about and no name it gives. A heading that is a version ("1.4.2", "2.0
# (2021-05-01)") keeps it.
SECTION_NUMBER_RE = re.compile(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+(?=[A-Za-z])")
_COUNT_Q = re.compile(r"\bhow\s+(?:many|much|often)\b", re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)\d\d")
_ISO_DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b")
NEAR_WORDS = 12  # a figure or version this many words from the subject can be its value
_NUMBER_A = re.compile(rf"\b(?:\d[\d,.]*|{'|'.join(_NUMBER_WORDS.split())})\b", re.IGNORECASE)
_IDENTIFIER_A = re.compile(r"\b(?:rfc|pep|cve|bpo|gh|#)\s*-?\d+|\bticket\s+#?\d+|(?<!\w)#\d+", re.IGNORECASE)
# A name: a code-like token (snake_case, dotted.name, call(), --flag, -y, CamelCase) or a capitalised word
# that does not open the sentence.
_CODE_A = re.compile(
    r"`[^`]+`|\b[A-Za-z]\w*_\w+\b|\b[a-z_]\w*(?:\.\w+)+\b|\b\w+\(\)|(?<![\w-])--?[a-zA-Z][\w:-]*(?![\w-])|"
    r"\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b[A-Z]{2,}\w*\b"
)
_CAPITAL_A = re.compile(r"(?<=[a-z,;] )[A-Z][\w-]+")
_DO = (  # what a documentation page tells its reader to do
    r"(?:use|add|set|call|pass|include|put|enable|disable|wrap|decorate|apply|import|override|subclass|"
    r"configure|specify|install|run|register|define|mark|write)"
)
# A sentence telling its reader what to do ("Use ...", "you can use ...", "by setting ..."): for a how-to
# asked in words, an answer in words ("FFmpeg has a concat demuxer which you can use when you want to avoid
# a re-encode"), worth half the credit of one naming its option or setting.
INSTRUCTION_RE = re.compile(
    rf"(?:^|[,;:]\s+|\bthen\s+){_DO}\b|\byou\s+(?:can|should|must|need\s+to|have\s+to|may)\s+"
    rf"(?:also\s+|simply\s+|just\s+)?{_DO}\b|\bby\s+(?:using|adding|setting|calling|passing|wrapping)\b",
    re.IGNORECASE,
)
INSTRUCTION_CREDIT = 0.5
# ... and so is one carrying five or more of a how-to's terms, nearly all it needs: it says in words what
# does it ("The test client makes requests to the application without running a live server.").
RESTATES_SHARE = 0.85
RESTATES_MIN_TERMS = 5

# A reference entry's term opening the quote, the way definition lists set it: a name in lower case or with
# an option's dashes, then its type, its values or its description ("mouse (bool) Whether to enable mouse
# support.", "ignore-space (mixed) [no|all|some] ...", "blame Show given file annotated by commits."). The
# name is what a how-to's answer names, even when it is a plain word.
_ENTRY_HEAD_A = re.compile(r"^(?P<name>(?:--?|\+)?[a-z_][\w.:+-]*)(?=\s+(?:[(\[<]|[A-Z][a-z]))")

# The question's own word for what it wants ("which option", "what setting", "a command to ...").
_MECHANISM_Q: dict[Mechanism, re.Pattern[str]] = {
    Mechanism.OPTION: re.compile(r"\b(?:options?|flags?|switch(?:es)?|arguments?|command[- ]line)\b", re.I),
    Mechanism.SETTING: re.compile(
        r"\b(?:settings?|variables?|parameters?|configur\w*|config|environment)\b", re.I
    ),
    Mechanism.FUNCTION: re.compile(r"\b(?:functions?|methods?|api|class(?:es)?|decorators?|call)\b", re.I),
    Mechanism.COMMAND: re.compile(r"\b(?:commands?|builtins?|tools?|utilit(?:y|ies))\b", re.I),
}


def mechanism_asked(question: str) -> Mechanism | None:
    """The kind of mechanism a "how do I" names as its answer, when its words say so ("Which option ...",
    "... with a setting"); None for other questions and for a how-to that does not say (most do not)."""
    if expected_kind(question) not in (AnswerKind.PROCEDURE, AnswerKind.NAME):
        return None
    return next((kind for kind, pattern in _MECHANISM_Q.items() if pattern.search(question)), None)


@dataclass(frozen=True)
class AnswerScore:
    score: float
    kind: AnswerKind
    terms_found: tuple[str, ...]
    terms_wanted: tuple[str, ...]
    kind_found: str | None  # what in the claim is an answer of the expected kind, if any
    verb_only: bool = False  # carries only the verb a how-to asks to do: about something else

    @property
    def answers(self) -> bool:
        return self.score >= ANSWERS_MIN

    def basis(self) -> str:
        """One line for a human: what the score is made of."""
        found, wanted = len(self.terms_found), len(self.terms_wanted)
        terms = f"{found}/{wanted} key terms" + (f" ({', '.join(self.terms_found[:5])})" if found else "")
        if self.kind in (AnswerKind.YES_NO, AnswerKind.EXPLANATION):
            kind = f"asks for {self.kind}"
        elif self.kind_found:
            kind = f"asks for a {self.kind}: states {self.kind_found!r}"
        else:
            kind = f"asks for a {self.kind}: states none"
        verdict = "answers" if self.answers else "does not answer"
        alone = "; carries only the verb asked" if self.verb_only else ""
        return f"{self.score:.2f} {verdict}: {terms}; {kind}{alone}"


def key_terms(text: str) -> list[str]:
    """The folded key terms of a question or claim, in order, unique."""
    return list(_key_terms(text))


@lru_cache(maxsize=1024)
def _key_terms(text: str) -> tuple[str, ...]:
    folded = [fold(w) for w in words(text) if w not in STOP_WORDS and len(w) > 1]
    return tuple(dict.fromkeys(folded + phrasal_compounds(text)))


def claim_terms(text: str) -> list[str]:
    """`key_terms` of a claim plus the parts of its identifiers: a sentence naming `SESSION_COOKIE_AGE`
    or `SysSock.RateLimit.Interval` is about session cookies, or rate limits (a question's identifiers stay
    whole: they name one thing)."""
    return list(dict.fromkeys(with_parts(key_terms(text)) + camel_parts(text)))


# A word written in camel case ("RateLimit", "getElementById"), and the parts it joins.
_CAMEL_WORD_RE = re.compile(r"\b[A-Za-z]+[a-z][A-Z][A-Za-z]*\b")
_CAMEL_PART_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def camel_parts(text: str) -> list[str]:
    """The folded content words inside `text`'s camel-case names ("SysSock.RateLimit" -> sys, sock, rate,
    limit), which the documentation names a setting by while its prose says "rate limit"."""
    return [
        fold(p)
        for name in _CAMEL_WORD_RE.findall(text)
        for p in (m.lower() for m in _CAMEL_PART_RE.findall(name))
        if len(p) > 1 and p not in STOP_WORDS
    ]


def with_parts(terms: list[str]) -> list[str]:
    """`terms` and then the parts of its identifiers (`session_cookie_age` also counts as session, cookie)."""
    return terms + [p for t in terms if "_" in t for p in identifier_parts(t)]


def identifier_parts(term: str) -> list[str]:
    """The folded content words inside an identifier ("session_cookie_age" -> session, cooki, age)."""
    return [fold(p) for p in term.split("_") if len(p) > 1 and p not in STOP_WORDS]


@lru_cache(maxsize=1024)
def expected_kind(question: str) -> AnswerKind:
    """What kind of answer `question` asks for: the first of `_KIND_RULES` its wording matches. "What
    changed in PostgreSQL 15 about ..." names its version: it asks what the change was, not when. A
    question that opens "how do I ..." asks for a procedure whatever it mentions on the way ("How do I set
    how many history lines zsh keeps", "How do I raise the maximum heap memory"): the answer is the
    setting or option that does it, not a figure."""
    text = " ".join(question.split())
    if _PROCEDURE_Q.search(text) and not _IDENTIFIER_Q.search(text):
        return AnswerKind.PROCEDURE
    kind = next((kind for pattern, kind in _KIND_RULES if pattern.search(text)), AnswerKind.EXPLANATION)
    if kind == AnswerKind.VERSION and _CHANGED_Q.search(text) and _VERSION_A.search(text):
        return AnswerKind.EXPLANATION
    return kind


def asks_what_changed(question: str) -> bool:
    """Does `question` ask what changed ("What changed in PostgreSQL 15 about ...", "what has changed")?"""
    return _CHANGED_Q.search(" ".join(question.split())) is not None


def answers_text(question: str) -> str:
    """What a full answer to `question` contains, in words (a sub-question's `answers` field)."""
    kind = expected_kind(question)
    terms = [w for w in dict.fromkeys(w for w in words(question) if w not in STOP_WORDS and len(w) > 1)]
    about = ", ".join(terms[:8]) or "the question"
    return f"{KIND_PHRASES[kind]}; a sentence about {about}"


def _kind_found(kind: AnswerKind, claim: str, question: str, near: set[str]) -> str | None:
    """The first thing in `claim` that answers a question of `kind`, that `question` does not state and,
    for a figure or a version, that stands within NEAR_WORDS words of one of the terms in `near` (the
    subject: "0" in a sentence about something else is no answer to "how long does a session last")."""
    asked = question.casefold()
    asked_terms = {fold(w) for w in words(question)}
    pattern = {
        AnswerKind.VERSION: _VERSION_A,
        AnswerKind.NUMBER: _NUMBER_A,
        AnswerKind.IDENTIFIER: _IDENTIFIER_A,
    }.get(kind)
    if kind == AnswerKind.NUMBER:  # a date's parts are not figures ("2016-03-29")
        claim = _ISO_DATE.sub(lambda d: " " * len(d.group(0)), claim)
    # a heading quoted before the sentence opens with its own number ("6.1. Manual Pages: ntpq(1) ..."): no
    # version, no figure
    claim = SECTION_NUMBER_RE.sub(lambda n: " " * len(n.group(0)), claim, count=1)
    found = (
        [m for m in pattern.finditer(claim)]
        if pattern
        else [m for m in _CODE_A.finditer(claim)] + [m for m in _CAPITAL_A.finditer(claim)]
    )
    anchors = [
        m.start()
        for m in re.finditer(r"[^\W_]+(?:_[^\W_]+)*", claim)
        for term in (fold(m.group(0).lower()),)
        if term in near or any(p in near for p in identifier_parts(term))
    ]
    head = _ENTRY_HEAD_A.match(claim) if kind == AnswerKind.PROCEDURE else None
    if head and head.group("name").casefold() not in {t.strip("`") for t in written_tokens(question)}:
        return head.group("name")  # the entry's name, even a word the question uses ("mouse")
    for m in found:
        token = m.group(0).strip("`").strip()
        if not token or re.search(rf"(?<!\w){re.escape(token.casefold())}(?!\w)", asked):
            continue
        parts = [p for p in re.split(r"[_.]+", token.casefold()) if p]
        if len(parts) > 1 and all(fold(p) in asked_terms for p in parts):
            continue  # "primary_key" asked about "the primary key": the question's own words, no answer
        if kind == AnswerKind.NUMBER and (
            _VERSION_NOT_FIGURE.search(claim[: m.start()]) or token.count(".") >= 2 or _YEAR.fullmatch(token)
        ):
            continue  # "Django 1.8", "version 3.2", "1.8.1", "(in 2003)": a version or a year, not a figure
        if kind == AnswerKind.NUMBER and not token[:1].isdigit() and not _COUNT_Q.search(question):
            continue  # "one", "two" answer "how many"; a size, a length or a port is written in digits
        if kind in (AnswerKind.NUMBER, AnswerKind.VERSION) and near and not (anchors and anchors[0] == 0):
            # (A claim that opens with the subject's name, a reference entry and its text, is all about it.)
            words_between = [len(claim[min(a, m.start()) : max(a, m.start())].split()) for a in anchors]
            if not words_between or min(words_between) > NEAR_WORDS:
                continue
        return token
    return None


def version_under_heading(
    answer: AnswerScore, question: str, headings: Sequence[str]
) -> tuple[AnswerScore, str]:
    """`answer` (a claim's reading for a version question that states no version itself) read with the
    innermost of `headings` that names a version the question does not: release notes put the version in
    the section heading ("Version 1.4.0 (2022-09-27)" over "The new hooks: config allows you to ..."). The
    heading counts as the answer of the kind asked, and is returned to be quoted beside the claim; ("", the
    answer unchanged) when none does."""
    if answer.kind != AnswerKind.VERSION or answer.kind_found or not answer.terms_found:
        return answer, ""
    asked = question.casefold()
    for heading in reversed(headings):
        own = SECTION_NUMBER_RE.sub("", heading)  # "6.1. Manual Pages" names no version
        found = next(
            (m.group(0) for m in _VERSION_A.finditer(own) if m.group(0).casefold() not in asked), None
        )
        if found:
            score = round(answer.score + (1 - TERMS_WEIGHT), 4)
            return AnswerScore(score, answer.kind, answer.terms_found, answer.terms_wanted, found), heading
    return answer, ""


_ASKED_FOR_RE = re.compile(
    r"^\s*(?:how\s+many|how\s+much|which|what)\s+(?!changed\b|happened\b)(?P<thing>(?:[\w.+-]+\s+){1,4}?)"
    r"(?:does|do|is|are|was|were|did|can|could|should|will|would|has|have)\b",
    re.IGNORECASE,
)
VERSION_TERM_RE = re.compile(r"\d+(?:\.\d+)+")  # a folded term that is a version ("3.2")
# How a question is put, never what it asks for: "What exactly does --keep-within keep?"
_ADVERB_RE = re.compile(
    r"exactly|actually|really|precisely|typically|usually|normally|generally|currently|basically|"
    r"essentially|specifically|ever|still",
    re.IGNORECASE,
)


_HOW_ADJECTIVE_RE = re.compile(
    r"^\s*how\s+(?:long|large|big|old|often|fast|small|high|low|wide)\s+"
    r"(?:does|do|is|are|was|were|can|could|will|would|should)\s+(?P<thing>.+?)\s+\w+(?:\s+by\s+default)?\s*\??$",
    re.IGNORECASE,
)


_ATTRIBUTE_OF_RE = re.compile(
    r"^\s*what\s+(?:is|are|was|were)\s+the\s+(?:[\w-]+\s+){0,2}?(?P<attribute>[\w-]+)\s+of\s+(?:an?\s+|the\s+)?"
    r"(?P<thing>.+?)"
    r"(?:\s+(?:in|on|for|with|by)\s+\S[^?]*)?\s*\??$",
    re.IGNORECASE,
)


def asked_for(question: str) -> set[str]:
    """The key terms of the thing a lookup asks for: "How many PBKDF2 iterations does Django 3.2 use?" ->
    {pbkdf2, iteration}; the product and version after the verb scope the question, they are not its
    subject. Empty when the question does not name one that way."""
    text = " ".join(re.sub(r"\([^()]*\)", " ", question).split())
    # "how long does X last": X; "what is the default value of X in Y": X
    match = _ASKED_FOR_RE.match(text) or _HOW_ADJECTIVE_RE.match(text) or _ATTRIBUTE_OF_RE.match(text)
    if not match:
        return set()
    named = " ".join(w for w in match.group("thing").split() if not _ADVERB_RE.fullmatch(w))
    thing = {t for t in key_terms(named) if not VERSION_TERM_RE.fullmatch(t)}
    if not thing:
        return set()
    if match.re is _ASKED_FOR_RE and not any(_weight(t) > 1 for t in thing):
        # "Which values can CMAKE_BUILD_TYPE take?": the values of the name after the verb are asked for; a
        # product or version there only scopes the question ("... does Django 3.2 use?")
        thing |= {
            t for t in key_terms(text[match.end() :]) if _weight(t) > 1 and not VERSION_TERM_RE.fullmatch(t)
        }
    # The attribute's noun stays when the thing is named in plain words the docs may put otherwise ("length"
    # of "a table or column name": the docs say "identifier length"); an identifier ("shared_buffers") is
    # what the docs write, and another setting's "default value" is no answer about it.
    attribute = match.groupdict().get("attribute") or ""
    if attribute and not any(_weight(t) > 1 for t in thing):
        thing |= set(key_terms(attribute))
    return thing


def subject_terms(question: str, questions: list[str]) -> set[str]:
    """What `question` is about: the thing a lookup asks for (`asked_for`), else its key terms less those
    at least three quarters of the run's sub-questions share (with three or more), which are the run's
    context, not this question's subject."""
    thing = asked_for(question)
    if thing:
        return thing
    own = set(key_terms(question))
    if len(questions) < 3:
        return own
    counts: Counter[str] = Counter()
    for text in questions:
        counts.update(set(key_terms(text)))
    shared = {t for t, c in counts.items() if c >= 0.75 * len(questions)}
    return (own - shared) or own


def _weight(term: str) -> int:
    """A code-like term (pg_start_backup, select_related, sha256) names one thing: it counts twice."""
    return 2 if "_" in term or (re.search(r"\d", term) and re.search(r"[a-z]", term)) else 1


def answer_score(
    question: str,
    claim: str,
    context: set[str] | None = None,
    subject: set[str] | None = None,
    names: Sequence[frozenset[str]] = (),
) -> AnswerScore:
    """How well `claim` answers `question` (see the module docstring). `subject`: the key terms the
    question is about (half the term credit when given); `context`: terms that weigh nothing; `names`: the
    words of names the documentation gives the subject (`subject_names`): a claim carrying one is about it."""
    kind = expected_kind(question)
    wanted = key_terms(question)
    # Context weighs nothing, but never takes the subject away: pages about the subject all carry it.
    content = [t for t in wanted if t not in (context or set()) or t in (subject or set())] or wanted
    claimed = set(claim_terms(claim))
    # A term the claim puts in the documentation's other words counts ("limit" for "restrict", "enabled"
    # for "turn ... on").
    meant = synonyms([], question)
    have = claimed | {
        t for t in content if synonyms([t]) & claimed or (t in PHRASAL_VERBS and meant & claimed)
    }
    focus = [t for t in content if t in (subject or set())]
    named = {t for name in names if name <= claimed for t in name}
    if named:
        have |= set(focus)
    elif kind == AnswerKind.NUMBER and focus:
        named = _self_named(claim, set(focus))
    found = [t for t in content if t in have]
    rest = [t for t in content if t not in focus]

    def share(terms: list[str]) -> float:
        total = sum(_weight(t) for t in terms)
        need = min(total, max(TERMS_ENOUGH, math.ceil(TERMS_SHARE * total)))
        return min(1.0, sum(_weight(t) for t in terms if t in have) / need) if terms else 1.0

    terms = (0.5 * share(focus) + 0.5 * share(rest) if rest else share(focus)) if focus else share(content)
    if not found or (focus and not any(t in have for t in focus)):  # about something else
        score, found_kind = 0.0, None
    elif kind in (AnswerKind.YES_NO, AnswerKind.EXPLANATION):
        score, found_kind = terms, None
    else:
        found_kind = _kind_found(kind, claim, question, (set(focus) or set(content)) | named)
        credit = 1.0 if found_kind else 0.0
        restates = len(found) >= RESTATES_MIN_TERMS and terms >= RESTATES_SHARE
        if not found_kind and kind == AnswerKind.PROCEDURE and (INSTRUCTION_RE.search(claim) or restates):
            credit = INSTRUCTION_CREDIT
        score = TERMS_WEIGHT * terms + (1 - TERMS_WEIGHT) * credit
    return AnswerScore(round(score, 4), kind, tuple(found), tuple(content), found_kind)


# A setting's, option's or key's name as documentation writes it: words joined by "-", "_" or "."
# ("history-size", "log_min_duration", "gc.reflogExpire").
_JOINED_NAME_RE = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?![\w-])")
NAMING_SENTENCE_MAX_WORDS = 25  # a sentence that gives the subject a name says little else


def subject_names(
    subject: set[str], sentences: Iterable[str], entries: set[str]
) -> dict[frozenset[str], str]:
    """The names documentation gives what a lookup asks for, read off `sentences`: a short sentence that
    carries every `subject` term and one joined name that is also a reference entry's name (`entries`,
    casefolded) ("Use history-size to control the number of entries to save") makes that name's words
    (histori, size) stand for the subject, so the entry that gives its default ("history-size (int) Size of
    ... Default is 500.") answers a question that never says "size". Each name's words -> the sentence
    that names it (the first)."""
    if not subject or not entries:
        return {}
    out: dict[frozenset[str], str] = {}
    for sentence in sentences:
        if (
            len(sentence.split()) > NAMING_SENTENCE_MAX_WORDS
            or sentence.rstrip().endswith("?")  # a question names nothing
            or not subject <= set(claim_terms(sentence))
        ):
            continue
        joined = {m.group(0) for m in _JOINED_NAME_RE.finditer(sentence)}
        if len(joined) != 1 or next(iter(joined)).casefold() not in entries:
            continue
        name = frozenset(fold(w) for w in words(joined.pop()) if w not in STOP_WORDS and len(w) > 1)
        if len(name) >= 2 and not name <= subject:
            out.setdefault(name, sentence)
    return out


def _self_named(claim: str, focus: set[str]) -> set[str]:
    """The words of a name `claim` itself gives its subject and goes on to use ("Use history-size to control
    the number of entries to save. history-size (int) ... Default is 500."): the figure stated under the name
    is stated of the subject."""
    again = {
        name
        for name, n in Counter(m.group(0).casefold() for m in _JOINED_NAME_RE.finditer(claim)).items()
        if n > 1
    }
    if not again:
        return set()
    return {t for name in subject_names(focus, split_sentences(claim), again) for t in name}


def shared_terms(questions: list[str]) -> set[str]:
    """Key terms every one of three or more questions carries (the product, the topic of the whole run):
    context for each of them, never what one of them asks. Two questions are often one topic asked twice
    ("How can I run my test suite in parallel?", "How many processes does the test suite in parallel
    use?"): what they share is then the subject itself."""
    sets = [set(key_terms(q)) for q in questions]
    return set.intersection(*sets) if len(sets) >= 3 else set()


def relevance(question: str, questions: list[str], claim: str) -> AnswerScore:
    """`claim`'s answer score against `question`, one of the run's `questions`: the one reading the
    controller, the contestation file and the writers share. A claim carrying only the verb a how-to asks to
    do ("configure" of "How do I configure a Kubernetes pod disruption budget?", in a page about something
    else) does not answer it: the ranking weighs such a sentence, the judgement refuses it."""
    context = shared_terms(questions)
    scored = answer_score(question, claim, context=context, subject=subject_terms(question, questions))
    m = _ACTION_Q.match(question)
    if m and m.group("thing") and not any(p.fullmatch(m.group("thing")) for p in _MECHANISM_Q.values()):
        m = None  # "Which version added ...": its words are what the answer states
    action = set(key_terms(" ".join(w for w in m.groups() if w))) if m else set()
    if action and set(scored.terms_found) <= action and set(scored.terms_wanted) - action - context:
        return replace(scored, score=0.0, verb_only=True)
    return scored
