"""Where trafilatura's passages stand in the page: each kept passage placed at its words in the page's words.

trafilatura mostly keeps the page's order, but not always: a table nested in a cell comes out after the table
holding it (Doxygen writes each member's prototype as a table nested beside its labels, "virtual",
"static"), so the labels come before the prototype they follow. Placing each passage at the first place of
its words after the one before it then skipped ahead to a later member of the same words and lost every
passage in between: a prototype came out twice, a description under another member's heading.

So the passages are placed as the longest chain that keeps trafilatura's order (weighted by their words:
many short labels never outweigh a long row), and each passage out of that order then takes the free place
of its words nearest to where the chain puts it, between the passages around it. A passage is placed where
a block of the page starts when it is, spaces aside, that block's text; a short heading, term or list item
only where a block of its words starts (the heading "name()" is not the word "name" in the sentence before
it). Pure.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter

from research_engine.extract.blocks import Block

ANCHOR_MIN_WORDS = 4  # a shorter heading, term or list item is kept, or found, only whole
ALONE = ("heading", "list-item", "term")
# The places chained at most, all passages' together: 7,000 on the largest of 600 real pages (jsoncpp's
# sources, the extraction corpus, the docs fixtures), about 0.2 s at this bound. Past it, each passage is
# chained to this many places of its text, from the one its copy's rank points at.
_CHAIN_PLACES_MAX = 50_000
_CHAIN_PLACES_NEAR = 16


def kept_places(kept: list[Block], said: str, blocks: list[Block], at_page: list[int]) -> list[int]:
    """Where each kept passage's words start in the page's words `said` (-1: nowhere); `at_page` holds
    where each of the page's `blocks` starts there."""
    starts = _block_starts(blocks, at_page)
    keys = [c.key for c in kept]
    places = [_candidates(c, key, said, starts) for c, key in zip(kept, keys, strict=True)]
    if sum(map(len, places)) > _CHAIN_PLACES_MAX:
        # A row repeated down a long table makes every copy a candidate for every place of its text: the
        # n-th copy is chained among its text's places from the n-th on (trafilatura keeps some copies and
        # drops others). Off the chain, every place is sought.
        copies: Counter[str] = Counter()
        nearby = []
        for c, key, found in zip(kept, keys, places, strict=True):
            text = _unspaced(c.text) if _unspaced(c.text) in starts else key
            nearby.append(found[copies[text] : copies[text] + _CHAIN_PLACES_NEAR])
            copies[text] += 1
        places_chained = nearby
    else:
        places_chained = places
    out = _heaviest_chain(keys, places_chained)
    taken = sorted((at, at + len(key)) for at, key in zip(out, keys, strict=True) if at >= 0)
    # Where the chain puts each passage off it: after the chained passage before it, before the one after.
    ends_before, starts_after = [0] * len(keys), [len(said)] * len(keys)
    for j in range(1, len(keys)):
        last = j - 1
        ends_before[j] = out[last] + len(keys[last]) if out[last] >= 0 else ends_before[last]
    for j in range(len(keys) - 2, -1, -1):
        starts_after[j] = out[j + 1] if out[j + 1] >= 0 else starts_after[j + 1]
    chained = [at >= 0 for at in out]
    for j, key in enumerate(keys):
        if chained[j] or not places[j]:
            continue
        at = _nearest_free(places[j], len(key), ends_before[j], starts_after[j], taken)
        if at >= 0:
            out[j] = at
            taken.insert(bisect_left(taken, (at, at + len(key))), (at, at + len(key)))
    return out


def in_page_order(kept: list[Block], kept_at: list[int]) -> tuple[list[Block], list[int]]:
    """The kept passages in the order of their places; one placed nowhere stays after the passage before
    it."""
    place: list[tuple[int, int]] = []
    for j, at in enumerate(kept_at):
        place.append((at, j) if at >= 0 else (place[-1][0] if place else -1, j))
    order = sorted(range(len(kept)), key=place.__getitem__)
    return [kept[j] for j in order], [kept_at[j] for j in order]


def _block_starts(blocks: list[Block], at_page: list[int]) -> dict[str, list[int]]:
    """Where each block starts, in order: by its words, and by its text as written."""
    starts: dict[str, list[int]] = {}
    for b, at in zip(blocks, at_page, strict=True):
        if at >= 0:
            starts.setdefault(b.key, []).append(at)
            starts.setdefault(_unspaced(b.text), []).append(at)
            starts.setdefault(_as_kind(b.kind, b.key), []).append(at)
    return starts


def _as_kind(kind: str, key: str) -> str:
    """A block's words with its kind: a kept heading "String decoder" is the page's heading of those words,
    not the table of contents' item before it."""
    return f"\1{kind}\1{key}"


def _unspaced(text: str) -> str:
    """A text as written, spaces aside: "~Reader()" and "Reader()" differ, though their words do not."""
    return "\0" + "".join(text.split())  # never the words of a block, which are spaced


def _candidates(c: Block, key: str, said: str, starts: dict[str, list[int]]) -> list[int]:
    """Where a kept passage may stand, in order."""
    if not key:
        return []
    exact = starts.get(_unspaced(c.text))
    if exact is not None:
        return exact
    if c.kind in ALONE and len(key.split()) < ANCHOR_MIN_WORDS:
        return starts.get(_as_kind(c.kind, key)) or starts.get(key, [])
    out, at = [], said.find(key)
    while at >= 0:
        out.append(at)
        at = said.find(key, at + 1)
    return out


def _heaviest_chain(keys: list[str], places: list[list[int]]) -> list[int]:
    """One place for each passage of the chain in trafilatura's order whose places follow one another
    without overlapping and whose words weigh most; -1 for the passages off it."""
    ends = sorted({at + len(key) for key, found in zip(keys, places, strict=True) for at in found})
    # Prefix maxima by end (a Fenwick tree) of (weight, -node): of chains as heavy, the one found first.
    tree: list[tuple[int, int]] = [(0, 1)] * (len(ends) + 1)
    nodes: list[tuple[int, int, int]] = []  # (passage, place, node before it or -1)

    def best_ending_by(at: int) -> tuple[int, int]:
        i, best = bisect_right(ends, at), (0, 1)
        while i > 0:
            best, i = max(best, tree[i]), i - (i & -i)
        return best[0], -best[1]

    for j, key in enumerate(keys):
        new = []
        for at in places[j]:
            weight, before = best_ending_by(at)
            nodes.append((j, at, before))
            new.append((weight + len(key), len(nodes) - 1, at + len(key)))
        for weight, node, end in new:  # after all of them: a passage is placed once in a chain
            i = bisect_left(ends, end) + 1
            while i < len(tree):
                tree[i], i = max(tree[i], (weight, -node)), i + (i & -i)
    out = [-1] * len(keys)
    node = best_ending_by(ends[-1])[1] if ends else -1
    while node >= 0:
        j, at, node = nodes[node]
        out[j] = at
    return out


def _nearest_free(found: list[int], length: int, lo: int, hi: int, taken: list[tuple[int, int]]) -> int:
    """The place among `found` (in order) nearest to the words [lo, hi), inside first and leftmost first,
    whose span overlaps no taken span; -1 if none."""

    def free(at: int) -> bool:
        n = bisect_right(taken, (at, at + length))
        return (n == 0 or taken[n - 1][1] <= at) and (n == len(taken) or taken[n][0] >= at + length)

    right = bisect_left(found, lo)
    left = right - 1
    while right < len(found) or left >= 0:  # outward from the gap, the nearer side first
        ahead = max(0, found[right] - hi) if right < len(found) else None
        behind = lo - (found[left] + length) if left >= 0 else None
        if behind is None or (ahead is not None and ahead <= behind):
            at, right = found[right], right + 1
        else:
            at, left = found[left], left - 1
        if free(at):
            return at
    return -1
