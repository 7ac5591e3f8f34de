"""Negations and restrictions: what a sentence's "not" or "only" governs, and whether its claims say the
same (`support`'s contradiction kind, with `support_opposites` for opposites said in the claims' words).

A negation ("not", "no", "never", "without", "no longer", "unless"...) or an "only" governs the words after
it up to a clause boundary (`SCOPE_WORDS` at most); a negating verb ("prevent", "avoid", "keep ... from")
governs what its "from" leads to. A sentence's negation or "only" needs a claim's of the same kind over a
word in common (an "only" read with the condition after it), and is a contradiction all the same where a
claim clause states more of its words plainly than any of the claims' negations governs ("neither A nor B"
is one negation: its "nor" agrees where its "neither" does and B's word is in a negated clause of the claims);
a claim's negation needs the sentence to negate the words it governs too, where the sentence states them and
the claims never state them plainly, and never to state them plainly as well ("no retry rules ... still
retries").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from research_engine.support_words import (
    BOUND_WORDS,
    BOUNDARY_WORDS,
    FROM_NEGATING_VERBS,
    NEGATING_VERBS,
    NEGATIONS,
    ONLY,
    ORDER_WORDS,
    SCOPE_SKIP,
    SCOPE_WORDS,
    STOP,
    negative_forms,
    stem,
    word_stems,
)

if TYPE_CHECKING:
    from research_engine.support import Held

RULE_B_MIN_WORDS = 1  # a claim's negation is held against a sentence that states one of its words
CONDITION_WORDS = frozenset({"when", "if", "unless", "once", "whenever"})  # an "only"'s condition opens
COORDINATING_NEGATIONS = frozenset({"neither", "nor"})
STOP_STEMS = frozenset(stem(w) for w in STOP if w.isalpha())
AFFIRMED_MIN = 3  # the words of a sentence's negation a claim clause must state plainly to contradict it
UNTIL_WORDS = frozenset({"until", "till", "before"})
# The words of a claim's negated clause a sentence's negation must govern to be the same negation.
SAME_CLAUSE_MIN = 2
# Verbs that say a thing is there to act: "if this option is not used" is "without this option".
PRESENCE_WORDS = "use given set specified supplied provided present passed included defined"
PRESENCE_STEMS = frozenset(stem(w) for w in PRESENCE_WORDS.split())
FROM_REACH = 12  # the words between a negating verb and its "from" ("prevent older versions (...) from")


@dataclass(frozen=True)
class Cue:
    kind: str  # "neg" | "only"
    word: str
    scope: tuple[str, ...]  # stems it governs, in order
    words: tuple[str, ...] = ()  # the same, as written
    condition: tuple[str, ...] = ()  # "only": its scope and the condition after it ("only ... when X")
    clause: frozenset[str] = frozenset()  # the content stems of the clause it stands in
    otherwise: bool = False  # in a clause "otherwise" opens: what follows when a condition is not met


def cues(
    tokens: list[str], covered: set[int] | None = None, negations: frozenset[str] = NEGATIONS
) -> list[Cue]:
    """The negations and "only"s of a text with the stems each governs; `covered` collects the positions of
    those stems (what the text states only under a negation). A negation that opens a clause ("not when")
    governs that clause; one that governs nothing after it ("but X is not.") governs what comes before it."""
    out = []
    for i, token in enumerate(tokens):
        kind = "neg" if token in negations else "only" if token in ONLY else None
        if kind is None:
            continue
        first = i + 1
        if first < len(tokens) and tokens[first] in BOUNDARY_WORDS:
            first += 1  # "not when the statement runs": the negation governs the clause it opens
        if token in NEGATING_VERBS:  # "prevent older versions from trying": what it keeps from happening
            after = _after_from(tokens, first)
            if after == first and token in FROM_NEGATING_VERBS:
                continue  # "keeps track of": no negation
            first = after
        at = _scope(tokens, range(first, len(tokens)))
        if not at and token == "not":
            at = _scope(tokens, range(i - 1, -1, -1))[::-1]
        if covered is not None and kind == "neg":
            covered.update(at)
        words = tuple(tokens[j] for j in at)
        condition = _condition(tokens, first) if kind == "only" else ()
        otherwise = _in_otherwise_clause(tokens, i)
        out.append(
            Cue(
                kind,
                token.replace("_", " "),
                tuple(stem(w) for w in words),
                words,
                condition,
                _clause(tokens, i),
                otherwise,
            )
        )
    return out


def _clause(tokens: list[str], at: int) -> frozenset[str]:
    """The content stems of the clause a cue stands in, both sides of it up to a clause boundary."""
    out: set[str] = set()
    for step in (-1, 1):
        j = at + step
        while 0 <= j < len(tokens) and tokens[j][0].isalnum() and tokens[j] not in BOUNDARY_WORDS:
            if tokens[j] not in SCOPE_SKIP and tokens[j] not in NEGATIONS and tokens[j] not in ONLY:
                out.add(stem(tokens[j]))
            j += step
    return frozenset(out)


def _in_otherwise_clause(tokens: list[str], at: int) -> bool:
    """Whether the clause a cue is in opens with "otherwise" ("set X, otherwise the files are not
    processed"): it says what happens when what came before is not done."""
    for j in range(at - 1, -1, -1):
        if tokens[j] == "otherwise" or (tokens[j] == "," and j > 0 and tokens[j - 1] == "otherwise"):
            return True  # "Otherwise, it will not be built"
        if not tokens[j][0].isalnum() or tokens[j] in BOUNDARY_WORDS:
            return False
    return False


def _condition(tokens: list[str], first: int) -> tuple[str, ...]:
    """The stems an "only" restricts read with the condition that follows it up to the sentence's end:
    "only process the rules if the URI is a path" and "processed only when the URI is a path" restrict the
    same thing, wherever the writer put "only"."""
    out: list[str] = []
    for token in tokens[first:]:
        if token in (".", ";", ":") or len(out) >= 2 * SCOPE_WORDS:
            break
        if token in BOUNDARY_WORDS and token not in CONDITION_WORDS:
            break
        if token[0].isalpha() and token not in SCOPE_SKIP and token not in CONDITION_WORDS:
            out.append(stem(token))
    return tuple(out)


def _after_from(tokens: list[str], first: int) -> int:
    """Where "from" leads a negating verb's object to what it keeps from happening, in the same clause (an
    aside in parentheses passed over)."""
    depth = counted = 0
    for j in range(first, len(tokens)):
        token = tokens[j]
        depth += (token == "(") - (token == ")")
        if depth > 0 or token == ")":
            continue
        if token == "from":
            return j + 1
        counted += 1
        if counted > FROM_REACH or token in (".", ";", ":") or token in BOUNDARY_WORDS:
            break
    return first


def _scope(tokens: list[str], positions: range) -> list[int]:
    """The positions of the words a cue governs, walking `positions` up to a clause boundary."""
    out: list[int] = []
    for j in positions:
        word = tokens[j]
        if not word[0].isalnum() or word in BOUNDARY_WORDS or len(out) >= SCOPE_WORDS:
            break
        if word not in SCOPE_SKIP and word not in NEGATIONS and word not in ONLY:
            out.append(j)
    return out


def faults(tokens: list[str], held: Held, negated: set[int]) -> list[str]:
    """The negations and restrictions on which a sentence and its claims disagree, as finding words;
    `negated` collects the positions of what the sentence states under a negation."""
    mine = cues(tokens, negated)
    sentence_stems = word_stems(tokens)
    out: list[str] = []
    neither_agreed = False
    for cue in mine:  # the sentence negates or restricts what the claims state plainly
        implied = held.implied if NEGATING_VERBS.isdisjoint(cue.words) else []  # "not avoid": no agreement
        same = [c for c in held.cues + implied if c.kind == cue.kind]
        if cue.word == "nor" and neither_agreed and cue.scope and any(cue.scope[0] in c.clause for c in same):
            continue  # "neither by a token nor by a default" for "not defined via a token, and the default
            # value is not specified": one negation of two things, the second's word in the claims' clause
        disagreed = _disagreed(cue, same, tokens, held)
        if cue.word == "neither":
            neither_agreed = not disagreed
        if disagreed:
            out.append(" ".join((cue.word, *cue.scope)))
    implied_negated: set[int] = set()
    # "stop it from applying" agrees with "not apply"
    implied_mine = cues(tokens, implied_negated, NEGATING_VERBS)
    sentence_clauses = affirmed_clauses(tokens, set()) if held.cues else []  # only against a claim's "not"
    # what a clause states under an "only" ("evaluates arguments only when needed") is restricted, not plain
    unnegated = affirmed_clauses(tokens, negated | implied_negated, restricted=True) if held.cues else []
    for cue in held.cues:  # the claims negate what the sentence states plainly (and never state it)
        if cue.kind != "neg" or len(cue.scope) < RULE_B_MIN_WORDS or cue.scope[0] not in sentence_stems:
            continue
        if cue.otherwise:  # "otherwise the files are not processed": "so that they are processed" agrees
            continue
        if UNTIL_WORDS & set(cue.words) and any(
            c.kind == "only" and set(c.condition) & set(cue.scope) for c in mine
        ):  # "not evaluated until needed": the sentence's "evaluated only when needed" says the same
            continue
        stated = {cue.scope[0]}
        if cue.word not in COORDINATING_NEGATIONS:  # "neither move nor mutate": each on its own
            # what the sentence puts on the predicate: the negated words in the clause that states it
            said = next((c for c in sentence_clauses if cue.scope[0] in c), frozenset())
            stated.update(w for w in cue.scope[1:] if w in said)
        if any(stated <= clause for clause in held.affirmed_clauses):
            continue  # the claims state the predicate plainly elsewhere, with what the sentence puts on it
        plainly = STOP_STEMS.isdisjoint(cue.scope) and any(  # the negated words stated plainly too
            set(cue.scope) <= clause for clause in unnegated
        )
        if sum(s in sentence_stems for s in set(cue.scope)) >= RULE_B_MIN_WORDS and (
            plainly or not any(c.kind == "neg" and set(c.scope) & set(cue.scope) for c in mine + implied_mine)
        ):
            out.append(f"states '{' '.join(cue.scope)}' where the claim says '{cue.word}'")
    return out


def _disagreed(cue: Cue, same: list[Cue], tokens: list[str], held: Held) -> bool:
    """Does the sentence's negation or "only" `cue` negate or restrict what the claims state plainly?"""
    if cue.word == "at most" and held.words & BOUND_WORDS:
        return False  # "at most 1,000,000,000 bytes" for the claim's maximum
    if cue.word == "only" and ORDER_WORDS & set(tokens) and ORDER_WORDS & held.words:
        return False  # "first in Config mode and only then in Module mode": an order the claims state
    if cue.kind == "only" and _not_until(cue, held):
        return False
    if cue.kind == "neg" and same and _affirmed_rather(cue, same, held):
        return True
    return (cue.kind == "only" and not same) or bool(
        cue.scope
        and any(s in held.stems for s in cue.scope)
        and not any(set(cue.scope) & set(c.scope) for c in same)
        and not (cue.kind == "neg" and any(_same_clause(cue, c) for c in same))
        and not (cue.kind == "only" and any(set(cue.condition) & set(c.condition) for c in same))
        and not (cue.kind == "neg" and _negated_by_prefix(cue.words, held))
    )


def affirmed_clauses(tokens: list[str], covered: set[int], restricted: bool = False) -> list[frozenset[str]]:
    """The stems each clause of a text states outside every negation ("enable and disable autoescaping per
    template" affirms "enable", but not "enabled by default" where another clause reads "not yet enabled by
    default"); with `restricted`, a clause with an "only" in it states nothing plainly."""
    out: list[frozenset[str]] = []
    clause: set[str] = set()
    limited = False
    for i, token in enumerate(tokens):
        if not token[0].isalnum() or token in BOUNDARY_WORDS:
            if clause and not limited:
                out.append(frozenset(clause))
            clause, limited = set(), False
        elif restricted and token in ONLY:
            limited = True
        elif i not in covered and token not in SCOPE_SKIP:
            clause.add(stem(token))
    if clause and not limited:
        out.append(frozenset(clause))
    return out


def _affirmed_rather(cue: Cue, same: list[Cue], held: Held) -> bool:
    """A sentence's negation whose words one clause of the claims states plainly, more of them than any of
    the claims' negations governs ("no effect on the policy settings of the caller" where a claim's "not"
    governs "introduce their own policy scope" and its next clause says the caller's policy settings "will
    be affected")."""
    if not cue.scope or any(cue.scope[0] in c.scope for c in same):
        return False  # the claims negate the same predicate
    scope = set(cue.scope) - STOP_STEMS
    plain = max((len(scope & clause) for clause in held.affirmed_clauses), default=0)
    negated = max(len(scope & (set(c.scope) | c.clause)) for c in same)
    return plain >= AFFIRMED_MIN and plain > negated


def _not_until(cue: Cue, held: Held) -> bool:
    """A sentence's "only when needed" is a claim's "not ... until needed" (or "not ... before")."""
    return any(
        c.kind == "neg" and UNTIL_WORDS & set(c.words) and set(cue.condition) & set(c.scope)
        for c in held.cues
    )


def _same_clause(mine: Cue, theirs: Cue) -> bool:
    """Two negations of one clause said in another voice ("almost never affect code that worked" and "code
    that ran is almost never altered by the semantics"): each governs a word of the other's clause, or the
    sentence's governs two words of the claim's negated clause ("won't detect it once the information is
    cached" for "won't notice a change in the information once it gets cached"); a "without X" is the
    claim's "X is not used" (a verb of presence negated)."""
    shared = set(mine.scope) & theirs.clause
    if not shared:
        return False
    if set(theirs.scope) & mine.clause or len(shared - STOP_STEMS) >= SAME_CLAUSE_MIN:
        return True
    return mine.word == "without" and bool(theirs.scope) and set(theirs.scope) <= PRESENCE_STEMS


def _negated_by_prefix(words: tuple[str, ...], held: Held) -> bool:
    """ "not visible" where the claims write "invisible": the same negation, spelled with a prefix."""
    return any(f in held.words for w in words for f in negative_forms(w) if len(f) > len(w))
