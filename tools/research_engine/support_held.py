"""What a set of claims holds, as the sentence-support check (`support`) reads it, prepared once per claim:
stems, negations and what they govern, strength words, causal links, figures with the words they are told
with, code tokens and the names a claim gives code in words ("the built-in function close").

Pure and linear in the claims' text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from research_engine import prose, support_spans
from research_engine.support_words import (
    CLAIM_CAUSAL_RE,
    CODE_KIND_NOUNS,
    MULTIPLIER_RE,
    MULTIPLIERS,
    NUMBER_WORD_RE,
    NUMBER_WORDS,
    ORDER_WORDS,
    STRENGTH_GROUP,
    normalise,
    tokenize,
    word_stems,
)

CONTRAST_RE = re.compile(r"(?:,|\bbut|\band)\s+not\b|\brather_than\b|\binstead_of\b")
# A claim's "only" ("vectors can only store values of one type") is the sentence's "all ... must".
RESTRICTION_STRENGTH = {STRENGTH_GROUP["all"], STRENGTH_GROUP["must"]}
CALL_RE = re.compile(r"[A-Za-z_][\w.]*\([^()]*\)")
# "the built-in function close." / "the option foo,": a lower-case word right after a kind of code, ending
# its clause, is that code's name.
SLOT_RE = re.compile(r"\b(" + "|".join(CODE_KIND_NOUNS) + r")\s+([a-z_][a-z0-9_]*)(?=\s*(?:[.,;:()\[]|$))")
# "the fpath variable", "the ‘double’ type": the name before its kind.
SLOT_NAME = r"[‘'\"`]?[a-z_][a-z0-9_]*[’'\"`]?"
SLOT_BEFORE_RE = re.compile(
    rf"\b(?:the|a|an)\s+({SLOT_NAME}(?:(?:\s*,\s*|\s+or\s+|\s+and\s+){SLOT_NAME})*)\s+"
    r"(" + "|".join(CODE_KIND_NOUNS) + r")s?\b"
)  # "the fpath variable", "the ‘double’ type", "the fg or wait builtins": names before their kind


def code_slots(text: str) -> list[tuple[str, str]]:
    """(kind, name) for each code a text names in words, either way round; `text` case folded."""
    out = [(m.group(1), m.group(2)) for m in SLOT_RE.finditer(text)]
    for m in SLOT_BEFORE_RE.finditer(text):
        names = re.split(r"\s*,\s*|\s+or\s+|\s+and\s+", m.group(1))
        out += [(m.group(2), n.strip("‘’'\"`")) for n in names if n.strip("‘’'\"`")]
    return out


@dataclass
class Held:
    """What a set of claims holds, prepared once: their text and quotes as the checks read them."""

    ids: tuple[str, ...]
    plain: str  # markup removed, case folded
    tokens: list[str]
    stems: set[str]
    cues: list[support_spans.Cue]
    affirmed: set[str]  # stems stated outside every negation
    affirmed_words: set[str]  # the same words as written
    affirmed_clauses: list[frozenset[str]]  # each clause's stems stated outside every negation
    strong: set[str]
    causal: bool
    ordered: bool  # "first ... before ...": an order a sentence's "only afterwards" states
    contrasted: bool  # "X, not Y" / "X rather than Y": the exclusion a sentence's "only X" states
    numbers: list[prose.StatedNumber]
    figures: list[Figures]  # per text of two figures or more
    code: set[str]  # code tokens' bases (call arguments dropped), case folded
    slots: dict[str, set[str]]  # a kind of code -> the names the claims give it in words
    words: set[str]  # every token, case folded

    @classmethod
    def of(cls, ids: Iterable[str], texts: Iterable[str]) -> Held:
        texts = list(dict.fromkeys(prose.plain_text(t) for t in texts if t))
        plain = " .\n".join(texts)  # a negation's reach ends with its text
        tokens = tokenize(plain)
        covered: set[int] = set()
        cues = list(dict.fromkeys(support_spans.cues(tokens, covered)))
        slots: dict[str, set[str]] = {}
        for kind, name in code_slots(plain.casefold()):
            slots.setdefault(kind, set()).add(name)
        return cls(
            ids=tuple(ids),
            plain=plain.casefold(),
            tokens=tokens,
            stems=word_stems(tokens),
            cues=cues,
            affirmed=word_stems(t for i, t in enumerate(tokens) if i not in covered),
            affirmed_words={t for i, t in enumerate(tokens) if i not in covered},
            affirmed_clauses=support_spans.clauses(tokens, covered),
            strong={STRENGTH_GROUP[t] for t in tokens if t in STRENGTH_GROUP}
            | (RESTRICTION_STRENGTH if any(c.kind == "only" for c in cues) else set()),
            causal=bool(CLAIM_CAUSAL_RE.search(normalise(plain))),
            ordered=any(t in ORDER_WORDS for t in tokens),
            contrasted=bool(CONTRAST_RE.search(normalise(plain))),
            numbers=stated_numbers(plain),
            figures=[f for f in (_figures(t) for t in texts) if f is not None],
            code={code_base(t) for t in code_in(plain)},
            slots=slots,
            words=set(tokens),
        )

    def merged(self, other: Held) -> Held:
        return Held(
            ids=self.ids + other.ids,
            plain=f"{self.plain} {other.plain}",
            tokens=self.tokens + ["."] + other.tokens,
            stems=self.stems | other.stems,
            cues=list(dict.fromkeys(self.cues + other.cues)),
            affirmed=self.affirmed | other.affirmed,
            affirmed_words=self.affirmed_words | other.affirmed_words,
            affirmed_clauses=self.affirmed_clauses + other.affirmed_clauses,
            strong=self.strong | other.strong,
            causal=self.causal or other.causal,
            ordered=self.ordered or other.ordered,
            contrasted=self.contrasted or other.contrasted,
            numbers=self.numbers + other.numbers,
            figures=self.figures + other.figures,
            code=self.code | other.code,
            slots={k: self.slots.get(k, set()) | other.slots.get(k, set()) for k in self.slots | other.slots},
            words=self.words | other.words,
        )


@dataclass(frozen=True)
class Figures:
    """One text's figures (value -> unit) and, for each of its content stems, the figures it is told with."""

    units: dict[float | str, str | None]
    words: dict[str, set[object]]


def _figures(text: str) -> Figures | None:
    found = stated_numbers(text)
    if len({n.value for n in found}) < 2:
        return None
    units = {n.value: n.unit for n in found}
    return Figures(units, support_spans.figure_words(text, [(n.at, n.value) for n in found]))


def stated_numbers(text: str) -> list[prose.StatedNumber]:
    """`prose.numbers`, number words from two to ninety ("three categories" is 3) and words that multiply
    ("doubles" is 2)."""
    words = [prose.StatedNumber(m.group(0), NUMBER_WORDS[m.group(0).lower()], None, m.start())
             for m in NUMBER_WORD_RE.finditer(text)]  # fmt: skip
    times = [prose.StatedNumber(m.group(0), MULTIPLIERS[m.group(0).lower()], None, m.start())
             for m in MULTIPLIER_RE.finditer(text)]  # fmt: skip
    return prose.numbers(text) + words + times


def code_in(text: str) -> list[str]:
    return list(_code_tokens(text))


@lru_cache(maxsize=4096)
def _code_tokens(text: str) -> tuple[str, ...]:  # a sentence is read by several checks
    return tuple([m.group(0) for m in CALL_RE.finditer(text)] + prose.code_tokens(text))


def code_base(token: str) -> str:
    """A code token as compared: call arguments and trailing punctuation dropped, case folded."""
    token = token.strip().strip("`").casefold()
    token = re.sub(r"\(.*\)$", "", token)
    return token.strip(".,;:")
