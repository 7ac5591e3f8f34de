"""What a cue, a subject or a figure of a text is tied to: the spans the sentence-support check (`support`)
compares, so that a check reads the words a cue governs, not every word of the claim.

- `cues`: each negation or "only" with the words it governs, up to the end of its clause. A negation
  followed by a clause ("not when the statement runs") governs that clause. Two cues are the same when one's
  first governed word is governed by the other, or they share two governed words (a synonym in place).
- `subject`: the words of a sentence's subject (after a fronted phrase up to its comma), from the shape of
  the words alone (no part-of-speech model): the run of open-class words that opens the main clause, up to
  an auxiliary, a clause word or the first word that reads as its verb.
- `contexts` and `similarity`: the words around a position, nearer words weighing more; a figure or a
  word of a sentence is tied to the occurrence in the claims whose surroundings it shares most.

Pure and linear in the text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from research_engine.support_words import (
    BOUNDARY_WORDS,
    CLAUSE_WORDS,
    DETERMINERS,
    FRONTING_WORDS,
    IRREGULAR,
    NEGATIONS,
    OBJECT_PRONOUNS,
    ONLY,
    ORDER_WORDS,
    PREPOSITIONS,
    SCOPE_SKIP,
    SCOPE_WORDS,
    STOP,
    VERB_STOPS,
    stem,
)

BE_FORMS = frozenset({"is", "are", "was", "were", "be", "been", "being"})
PARTICLES = frozenset({"up", "down", "out", "off", "away", "back", "over"})
PAST_PARTICIPLES = frozenset(IRREGULAR) - {"wrote", "ran", "began", "chose", "broke", "knew", "saw", "went"}
VERB_FORM_RE = re.compile(r"(?:[^su]s|ed)$")
CONTEXT_WORDS = 6  # the words either side of a position that say what it is about


@dataclass(frozen=True)
class Cue:
    kind: str  # "neg" | "only" | "unless" (a claim's "unless X" is a sentence's "if not X")
    word: str
    scope: tuple[str, ...]  # the stems it governs nearest, in order (up to SCOPE_WORDS)
    words: tuple[str, ...] = ()  # the same, as written
    clause: tuple[str, ...] = ()  # every stem it governs, to the end of its clause (up to CLAUSE_WORDS)
    before: str | None = None  # the content stem just before it ("used only while": "only" moves about)

    @property
    def head(self) -> str | None:
        return self.scope[0] if self.scope else None


def cues(tokens: list[str], covered: set[int] | None = None) -> list[Cue]:
    """The negations and "only"s of a text with the stems each governs; `covered` collects the positions of
    the nearest of those stems (what the text states only under a negation)."""
    out = []
    for i, token in enumerate(tokens):
        kind = (
            "neg"
            if token in NEGATIONS
            else "only"
            if token in ONLY
            else "unless"
            if token == "unless"
            else ""
        )
        if not kind:
            continue
        clause: list[str] = []
        words: list[str] = []
        for j in range(i + 1, len(tokens)):
            nxt = tokens[j]
            opening = not clause and nxt in BOUNDARY_WORDS  # "not when ...": the clause is what it governs
            if not nxt[0].isalnum() or (nxt in BOUNDARY_WORDS and not opening) or len(clause) >= CLAUSE_WORDS:
                break
            if opening or nxt in SCOPE_SKIP or nxt in NEGATIONS or nxt in ONLY:
                continue
            clause.append(stem(nxt))
            if len(words) < SCOPE_WORDS:
                words.append(nxt)
                if covered is not None and kind == "neg":
                    covered.add(j)
        scope = tuple(clause[:SCOPE_WORDS])
        before = next(
            (stem(t) for t in reversed(tokens[max(0, i - 3) : i]) if t[0].isalpha() and t not in SCOPE_SKIP),
            None,
        )
        out.append(Cue(kind, token.replace("_", " "), scope, tuple(words), tuple(clause), before))
    return out


def same_cue(mine: Cue, theirs: Cue) -> bool:
    """Two cues negate (or restrict) the same thing: one's first governed word is in the other's clause, or
    their clauses share two words."""
    if mine.head is not None and mine.head in theirs.clause:
        return True
    if theirs.head is not None and theirs.head in mine.clause:
        return True
    moved = mine.before is not None and (
        mine.before == theirs.before or mine.before in theirs.clause or theirs.before in mine.clause
    )
    if mine.kind == "only" and moved:  # "are used only while" / "are only used while"
        return True
    return len(set(mine.clause) & set(theirs.clause)) >= 2


def subject(tokens: list[str], code: frozenset[str] | set[str] = frozenset()) -> list[int]:
    """The positions of a sentence's subject words: after a fronted phrase (one opening with a preposition or
    a clause word, up to its comma), the run of open-class words up to an auxiliary, a clause word or
    punctuation; a word ending in -s or -ed after the first reads as the verb unless what follows can only
    follow a noun (or, for -ed, a noun follows it). A gerund's subject runs through its object ("Receiving
    from a closed channel"). None for an imperative ("Call f()", "Set the ..."), for a gerund of code
    ("Calling f()": the code is the subject, `code` the sentence's code tokens) and for a sentence with a
    fronted phrase and no comma."""
    start = 0
    while start + 1 < len(tokens) and tokens[start].endswith("ly") and tokens[start + 1] == ",":
        start += 2  # "Typically, ..."
    while start < len(tokens) and tokens[start] in FRONTING_WORDS:
        comma = next((j for j in range(start, len(tokens)) if tokens[j] in {",", ";", ":"}), None)
        if comma is None:
            return []
        start = comma + 1
    determined = start < len(tokens) and tokens[start] in DETERMINERS
    while start < len(tokens) and tokens[start] in DETERMINERS:
        start += 1
    if start >= len(tokens):
        return []
    after = tokens[start + 1] if start + 1 < len(tokens) else ""
    gerund = not determined and tokens[start].endswith("ing")
    if not determined and (
        after in code or (not gerund and (after in DETERMINERS or after in OBJECT_PRONOUNS))
    ):
        return []
    out: list[int] = []
    for j in range(start, len(tokens)):
        token = tokens[j]
        if gerund and out and (token in PREPOSITIONS or token in DETERMINERS):
            continue
        if not token[0].isalnum() or token in VERB_STOPS or token in BOUNDARY_WORDS or token in STOP:
            break
        if token in NEGATIONS or (out and (token.endswith("ly") or token in ORDER_WORDS)):
            break  # "X without Y", "X typically lives", "CMake first tries": the subject has ended
        if out and _reads_as_verb(token, tokens[j + 1 : j + 3]):
            break
        out.append(j)
    if out and out[-1] + 1 < len(tokens) and tokens[out[-1] + 1] in DETERMINERS and not gerund:
        return []  # "The first time a function runs, ...": a phrase before the clause, not its subject
    return out


def agent(tokens: list[str]) -> list[int]:
    """The positions of a passive's agent, the subject of what it states ("is cleaned up by the garbage
    collector"): the words after a "by" that follows a participle (and its particle) after a form of "be"."""
    out: list[int] = []
    for k, token in enumerate(tokens):
        if token != "by" or k < 2:
            continue
        j = k - 1
        if tokens[j] in PARTICLES:
            j -= 1
        participle = tokens[j].endswith(("ed", "en")) or tokens[j] in PAST_PARTICIPLES
        if not participle or not any(t in BE_FORMS for t in tokens[max(0, j - 3) : j]):
            continue
        for i in range(k + 1, len(tokens)):
            word = tokens[i]
            if word in DETERMINERS and not out:
                continue
            if not word[0].isalnum() or word in STOP or word in BOUNDARY_WORDS or word in VERB_STOPS:
                break
            out.append(i)
    return out


def clauses(tokens: list[str], left_out: set[int]) -> list[frozenset[str]]:
    """The content stems of each clause of the text (clauses end at punctuation and clause words), the
    positions `left_out` aside."""
    out: list[frozenset[str]] = []
    current: set[str] = set()
    for i, token in enumerate(tokens + ["."]):
        if not token[0].isalnum() or token in BOUNDARY_WORDS:
            if current:
                out.append(frozenset(current))
            current = set()
        elif i not in left_out and token[0].isalpha() and token not in STOP:
            current.add(stem(token))
    return out


def together(tokens: list[str], stems: tuple[str, ...]) -> int:
    """The most of `stems` one clause of the text states (clauses end at punctuation and clause words)."""
    best = 0
    seen: set[str] = set()
    wanted = set(stems)
    for token in tokens + ["."]:
        if not token[0].isalnum() or token in BOUNDARY_WORDS:
            best, seen = max(best, len(seen)), set()
            continue
        if stem(token) in wanted:
            seen.add(stem(token))
    return best


def _reads_as_verb(token: str, following: list[str]) -> bool:
    """A word ending in -s or -ed read from the words after it (up to two)."""
    if not VERB_FORM_RE.search(token) or token.endswith(("ous", "ics", "ss")):
        return False
    nxt = following[0] if following else ""
    if token.endswith("ed") and nxt[:1].isalpha() and nxt not in STOP:
        return False  # "a nil deferred function value": a participle before its noun
    if nxt in {"and", "or"}:  # "creates and destroys": verbs; "sends and closes count": nouns
        return len(following) > 1 and bool(VERB_FORM_RE.search(following[1]))
    if nxt in {";", ".", ":", "!", "?"} or not nxt:
        return True  # "an error results;": a subject does not end a clause
    noun_only = not nxt[0].isalnum() or nxt in {"which", "who"}
    noun_only = noun_only or (nxt in VERB_STOPS and nxt not in DETERMINERS)  # "places no ...": a verb
    return not noun_only


def context(tokens: list[str], at: int) -> dict[str, float]:
    """The content stems within CONTEXT_WORDS tokens of position `at`, nearer ones weighing more; `at`
    itself is left out."""
    out: dict[str, float] = {}
    for j in range(max(0, at - CONTEXT_WORDS), min(len(tokens), at + CONTEXT_WORDS + 1)):
        token = tokens[j]
        if j == at or not token[0].isalpha() or token in STOP or len(token) < 3:
            continue
        weight = 1.0 / (1 + abs(j - at))
        key = stem(token)
        out[key] = max(out.get(key, 0.0), weight)
    return out


def similarity(a: dict[str, float], b: dict[str, float]) -> float:
    """Cosine: a context is most like itself, however many words it has."""
    dot = sum(weight * b[key] for key, weight in a.items() if key in b)
    norms = math.sqrt(sum(w * w for w in a.values()) * sum(w * w for w in b.values()))
    return dot / norms if norms else 0.0


WORD_AT_RE = re.compile(r"[A-Za-z_][\w.]*\w|[A-Za-z]|\d[\d.,]*\d|\d")


def figure_words(text: str, figures: list[tuple[int, object]]) -> dict[str, set[object]]:
    """Which figure each name and code token of one text is told with: the figure nearest to each of its
    occurrences (by words between; a tie gives both). Names and code are what a figure is usually for (a
    version of a product, the value of a setting); common words spread over the whole text. `figures` is
    (offset in `text`, value)."""
    spans = [(m.start(), m.group(0)) for m in WORD_AT_RE.finditer(text)]
    at_figure = []
    for offset, value in figures:
        index = next((i for i, (start, _) in enumerate(spans) if start >= offset), len(spans) - 1)
        at_figure.append((index, value))
    out: dict[str, set[object]] = {}
    for i, (start, word) in enumerate(spans):
        if not word[0].isalpha() or not _names_something(word, text[:start].rstrip()[-1:]):
            continue
        nearest = min(abs(i - index) for index, _ in at_figure)
        key = word.casefold().rstrip(".")
        out.setdefault(key, set()).update(v for index, v in at_figure if abs(i - index) == nearest)
    return out


def _names_something(word: str, before: str) -> bool:
    """A code token, an acronym or CamelCase anywhere; a capitalised word where a sentence does not open."""
    if "_" in word or any(c.isupper() for c in word[1:]):
        return True
    return word[0].isupper() and before not in {"", ".", "!", "?", ":"}
