"""What a sentence says the other way round from its claims, with the claims' own words: a word's antonym
said of the same words ("disabled" where the claim has "enabled"), and two of the claims' words exchanged
("the Session is managed by the Engine" where the claim has the Engine managed by the Session).

Both read a word's neighbours: the content words (no stop word) beside it within its clause. An antonym is
a contradiction only said of what the claim says its opposite of (a neighbour in common within `REACH`
words each side), so that "lacks" in one clause and "has" in another never meet. Two words are exchanged
when each stands, in the sentence, beside a word the claims put beside the other and never beside itself;
an adverb ("recursively") is never one of the two, nor a verb whose voice changed ("applying conventions"
for "conventions are applied"): each moves beside other words without any role changing.
"""

from __future__ import annotations

import re

from research_engine.support_words import (
    BOUNDARY_WORDS,
    DIRECTION_WORDS,
    NEGATIONS,
    ORDER_WORDS,
    QUANTITY_GROUPS,
    STOP,
    antonym_stems,
    dictionary_word,
    negative_forms,
    stem,
)

REACH = 2  # the content words each side of a word that say what it is said of
# Words that order two things: "X, then Y", "X before Y", "X until Y". "after" is "before" read the other
# way, so only the same word is compared (a sentence may write either).
SEQUENCE_WORDS = frozenset({"then", "before", "after", "until", "afterwards", "later"})
MOVABLE = frozenset(stem(w) for w in ORDER_WORDS)  # "first reads" is "reads first": never exchanged
FIGURE_RE = re.compile(r"[0-9][0-9.,]*")
STOP_STEMS = frozenset(stem(w) for w in STOP if w.isalpha()) - {stem(w) for w in DIRECTION_WORDS}


def merged(a: dict[str, set[str]], b: dict[str, set[str]]) -> dict[str, set[str]]:
    return {k: a.get(k, set()) | b.get(k, set()) for k in {*a, *b}}


def around(tokens: list[str]) -> dict[str, set[str]]:
    """Each word's stem with the content words' stems beside it, up to a clause's end: what it is said of."""
    out: dict[str, set[str]] = {}
    for i, token in enumerate(tokens):
        if token[0].isalpha():
            out.setdefault(stem(token), set()).update(beside(tokens, i))
    return out


def beside(tokens: list[str], at: int, reach: int = REACH, steps: tuple[int, ...] = (-1, 1)) -> set[str]:
    out = set()
    for step in steps:
        j, seen = at + step, 0
        while 0 <= j < len(tokens) and seen < reach and tokens[j][0].isalnum():
            if tokens[j] not in STOP:
                out.add(stem(tokens[j]))
                seen += 1
            j += step
    return out


def antonyms(
    tokens: list[str],
    negated: set[int],
    sentence_stems: set[str],
    held_stems: set[str],
    affirmed: set[str],
    held_around: dict[str, set[str]],
    held_tokens: list[str] | None = None,
) -> list[str]:
    """A word whose antonym the claims state plainly (`affirmed`), said of the same words (one of the
    content words beside it is beside the antonym in a claim), where the claims never write the word;
    the sentence neither negates it ("not disabled" is "enabled") nor states the antonym too."""
    out = []
    for i, token in enumerate(tokens):
        if i in negated or not token[0].isalpha() or (token in STOP and token not in DIRECTION_WORDS):
            continue
        word_stem = stem(token)
        near = beside(tokens, i)
        if held_around.get(word_stem, set()) & near:
            continue  # the claims say the word itself of the same words
        opposite = [
            a
            for a in sorted(antonym_stems(word_stem))
            if a in affirmed
            and a not in sentence_stems
            and a not in STOP_STEMS
            and held_around.get(a, set()) & near
        ]
        if opposite and token in DIRECTION_WORDS and held_tokens is not None:
            # "Validators run after converters" restates "Converters are run before validators": a relation
            # read the other way round, its two sides exchanged too.
            opposite = [a for a in opposite if not _converse(tokens, i, held_tokens, a)]
        if opposite:
            out.append(f"{token} (the claim: {opposite[0]})")
    return out


def _converse(tokens: list[str], at: int, held_tokens: list[str], opposite: str) -> bool:
    """Does a claim state `opposite` with the sentence's two sides of its word `tokens[at]` exchanged?"""
    left, right = beside(tokens, at, steps=(-1,)), beside(tokens, at, steps=(1,))
    for j, token in enumerate(held_tokens):
        if token[0].isalpha() and stem(token) == opposite:
            held_left, held_right = beside(held_tokens, j, steps=(-1,)), beside(held_tokens, j, steps=(1,))
            # only words the claim puts on one side count ("rows before the current row": "row" on both)
            if (left & held_right) - held_left and (right & held_left) - held_right:
                return True
    return False


def quantities(tokens: list[str], negated: set[int], held_tokens: list[str]) -> list[str]:
    """One where the claims say more than one of the same thing, or the other way round: a quantity word
    whose next content word follows a word of the other group in a claim and never one of its own ("spans
    several path segments" for "only one path segment"), unless the sentence says the other too of it."""

    def counted(words: list[str], skip: set[int]) -> list[tuple[int, str, set[str]]]:
        return [
            (group, word, beside(words, i, 1, (1,)))
            for i, word in enumerate(words)
            if i not in skip
            for group in (0, 1)
            if word in QUANTITY_GROUPS[group]
        ]

    theirs = counted(held_tokens, set())
    mine = counted(tokens, negated)
    out = []
    for group, word, after in mine:
        if not after or any(g == group and after & a for g, _, a in theirs):
            continue
        other = [w for g, w, a in theirs if g != group and after & a]
        if other and not any(g != group and after & a for g, _, a in mine):
            out.append(f"{word} (the claim: {other[0]})")
    return out


# How often: a sentence that says "usually" where its claims say "rarely" of the same thing (or the other way
# round) says the opposite of them.
FREQUENT = frozenset({"usually", "often", "frequently", "generally", "typically", "commonly", "mostly",
                      "normally", "regularly"})  # fmt: skip
RARE = frozenset({"rarely", "seldom", "infrequently"})
NEAR_NEGATION = frozenset({"almost", "nearly", "hardly", "scarcely", "barely"})  # "almost never" is rare


def frequencies(tokens: list[str], negated: set[int], held_tokens: list[str]) -> list[str]:
    """A word of how often ("usually") whose clause is most like a claim clause that says the other end of
    the scale ("almost never") and like none that says its own; a negated one ("not usually") is the
    negation check's."""
    theirs = [c for c in _scaled_clauses(held_tokens, set()) if c[0]]
    out = []
    for scale, word, stems in _scaled_clauses(tokens, negated):
        if not scale:
            continue
        shared = [(len(stems & their_stems), their_scale, their_word)
                  for their_scale, their_word, their_stems in theirs]  # fmt: skip
        best = max((n for n, _, _ in shared), default=0)
        said = {(s, w) for n, s, w in shared if n == best}
        if best and all(s != scale for s, _ in said):
            out.append(f"{word} (the claim: {sorted(said)[0][1]})")
    return out


def _scaled_clauses(tokens: list[str], skip: set[int]) -> list[tuple[str, str, set[str]]]:
    """Each clause's word of how often ("frequent", "rare" or "") as written, with its content stems."""
    out: list[tuple[str, str, set[str]]] = []
    scale, word, stems = "", "", set[str]()
    for i, token in enumerate([*tokens, "."]):
        if not token[0].isalnum() or token in BOUNDARY_WORDS:
            if stems:
                out.append((scale, word, stems))
            scale, word, stems = "", "", set()
            continue
        rare = token in RARE or (token in ("never", "ever") and i > 0 and tokens[i - 1] in NEAR_NEGATION)
        negated = i > 0 and tokens[i - 1] in NEGATIONS  # "not usually" is the negation check's
        if i not in skip and not negated and not scale and (rare or token in FREQUENT):
            scale = "rare" if rare else "frequent"
            word = f"{tokens[i - 1]} {token}" if token in ("never", "ever") else token
        elif token not in STOP and token not in NEAR_NEGATION:
            stems.add(stem(token))
    return out


def negatives(
    tokens: list[str],
    negated: set[int],
    held_stems: set[str],
    affirmed_words: set[str],
    held_around: dict[str, set[str]],
) -> list[str]:
    """A word whose negative (un-, in-, non-, dis-) the claims state plainly instead ("visible" where they
    write "invisible"). Where the claims write the word too, only when they say the negative, and never the
    word, of the words the sentence says it of ("set to NEW" against "will be unset ... sets a default")."""
    out = []
    for i, token in enumerate(tokens):
        if i in negated or not token.isalpha() or len(token) < 3:
            continue
        flipped = [f for f in negative_forms(token) if f in affirmed_words and f not in STOP]
        word_stem = stem(token)
        if flipped and word_stem in held_stems:
            near = beside(tokens, i)
            if held_around.get(word_stem, set()) & near:
                continue
            flipped = [f for f in flipped if held_around.get(stem(f), set()) & near]
        if flipped:
            out.append(f"{token} (the claim: {flipped[0]})")
    return out


def sides(tokens: list[str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each content word's stem with the stems of the content words just before it and just after it."""
    left: dict[str, set[str]] = {}
    right: dict[str, set[str]] = {}
    for i, token in enumerate(tokens):
        if token[0].isalnum() and token not in STOP:
            s = stem(token)
            left.setdefault(s, set()).update(beside(tokens, i, 1, (-1,)))
            right.setdefault(s, set()).update(beside(tokens, i, 1, (1,)))
    return left, right


def exchanged(
    tokens: list[str],
    held_stems: set[str],
    held_left: dict[str, set[str]],
    held_right: dict[str, set[str]],
    held_tokens: list[str],
) -> list[str]:
    """Two of the claims' words each put where the claims put the other: beside a word the claims write
    beside the other and never beside itself, on the same side; the two apart in the sentence (not within
    `REACH` content words of each other) and in the other order than in every claim sentence that has both
    ("A is managed by B" for "B is managed by A"; "B manages A" restates it, and is not held here)."""
    left, right = sides(tokens)
    held = {s for s in left if s in held_stems and s not in MOVABLE and not FIGURE_RE.fullmatch(s)}
    # a figure is no anchor: what it counts is the number check's ("dimensions are 1, i.e. a scalar"); nor is
    # an adverb: "recursively forces" is "forced recursively"
    adverbs = {s for t in tokens if (s := stem(t)) in held and _adverb(t)}
    anchors = sorted(held - adverbs)
    participles = _participle_changed(tokens, held_tokens, set(anchors))
    near = around(tokens)

    def moved(x: str, y: str) -> bool:
        for mine, theirs in ((left, held_left), (right, held_right)):
            shared = (mine[x] & theirs.get(y, set())) - {x, y}
            if shared and not mine[x] & theirs.get(x, set()):
                return True
        return False

    out = []
    for n, x in enumerate(anchors):
        for y in anchors[n + 1 :]:
            if y in near.get(x, ()) or not (moved(x, y) and moved(y, x)):
                continue
            if {x, y} & participles:  # "applying conventions" is "conventions are applied": no swap
                continue
            voice_changed = bool(_agents(tokens, x, y)) != bool(_agents(held_tokens, x, y))
            if _order(tokens, x, y) * _order(held_tokens, x, y) < 0 and not voice_changed:
                out.append(f"{x} and {y} exchanged")  # "httpd recognizes changes" is "changes are recognized
                # by httpd" in the active voice; "popularized by A" for "popularized by B" is no voice change
    return out


ADVERB_ENDINGS = (
    ("ically", "ic"), ("ically", "ical"), ("ily", "y"), ("ably", "able"), ("ibly", "ible"), ("ly", ""),
    ("ly", "e"),
)  # fmt: skip


def _adverb(token: str) -> bool:
    """An adverb made from an adjective ("recursively", "easily", "automatically"): it says how, and stands
    before or after its verb alike. "apply", "family", "reply" and "assembly" are not: "app", "fami", "rep"
    and "assemb" are no words of four letters or more."""
    for ending, base in ADVERB_ENDINGS:
        word = token[: -len(ending)] + base
        if token.endswith(ending) and len(word) >= 4 and dictionary_word(word):
            return True
    return False


def _participle_changed(tokens: list[str], held_tokens: list[str], anchors: set[str]) -> set[str]:
    """The anchors written as an -ing form on one side and an -ed form on the other: a verb whose voice or
    aspect changed ("applying X" for "X is applied"), which moves its object to its other side."""

    def forms(words: list[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for word in words:
            if word.endswith(("ing", "ed")) and (s := stem(word)) in anchors:
                out.setdefault(s, set()).add("ing" if word.endswith("ing") else "ed")
        return out

    mine, theirs = forms(tokens), forms(held_tokens)
    return {s for s in mine.keys() & theirs.keys() if not mine[s] & theirs[s]}


def _agents(tokens: list[str], x: str, y: str) -> set[str]:
    """Which of two stems a text writes after "by" (stop words passed over): a passive's agent."""
    out = set()
    for i, token in enumerate(tokens):
        if token != "by":
            continue
        for after in tokens[i + 1 : i + 4]:
            if after[0].isalpha() and after not in STOP:
                if (s := stem(after)) in (x, y):
                    out.add(s)
                break
    return out


def _order(tokens: list[str], x: str, y: str) -> int:
    """1 when every sentence of `tokens` that has both stems has x first, -1 when y first, 0 otherwise."""
    seen: set[int] = set()
    at: dict[str, int] = {}
    for token in [*tokens, "."]:
        if token == ".":
            if len(at) == 2:
                seen.add(1 if at[x] < at[y] else -1)
            at = {}
        elif token[0].isalnum() and (s := stem(token)) in (x, y):
            at.setdefault(s, len(at))
    return seen.pop() if len(seen) == 1 else 0


def reordered(tokens: list[str], held_stems: set[str], held_tokens: list[str]) -> list[str]:
    """Two of the claims' words on either side of an order word ("first X, then Y") where the claims have
    them the other way round on either side of the same word, and never this way round."""
    if SEQUENCE_WORDS.isdisjoint(tokens):
        return []
    mine = _ordered_pairs(tokens, held_stems)
    if not mine:
        return []
    theirs = _ordered_pairs(held_tokens, {y for _, _, y in mine} | {x for x, _, _ in mine})
    return [
        f"{x} {word} {y} (the claim: {y} {word} {x})"
        for x, word, y in sorted(mine)
        if (y, word, x) in theirs and (x, word, y) not in theirs
    ]


def _ordered_pairs(tokens: list[str], anchors: set[str]) -> set[tuple[str, str, str]]:
    """(x, order word, y) for the anchor words in the stretch before and the stretch after each order word:
    up to a clause's end or another order word, a parenthesis passed over."""
    plain = _without_parentheses(tokens)
    out: set[tuple[str, str, str]] = set()
    for at, word in enumerate(plain):
        if word not in SEQUENCE_WORDS:
            continue
        before = _stretch(plain, range(at - 1, -1, -1)) & anchors
        after = _stretch(plain, range(at + 1, len(plain))) & anchors
        out.update((x, word, y) for x in before - after - MOVABLE for y in after - before - MOVABLE)
    return out


def _stretch(tokens: list[str], positions: range) -> set[str]:
    out = set()
    for j in positions:
        token = tokens[j]
        if token == ",":
            continue  # "X, then Y": a comma joins what an order word orders
        if not token[0].isalnum() or token in BOUNDARY_WORDS or token in SEQUENCE_WORDS:
            break
        if token not in STOP:
            out.add(stem(token))
    return out


def _without_parentheses(tokens: list[str]) -> list[str]:
    out, depth = [], 0
    for token in tokens:
        if token == "(":
            depth += 1
        elif token == ")":
            depth = max(0, depth - 1)
        elif not depth:
            out.append(token)
    return out
