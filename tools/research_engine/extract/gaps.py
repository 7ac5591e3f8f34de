"""trafilatura's passages with what it dropped wrongly put back, and the page's structure laid on them.

trafilatura prunes short, low-density blocks even in the middle of what it keeps: on a reference page a
setting whose entry is two short lines ("Default: 1209600 (2 weeks, in seconds)") disappears while the
entries around it, built the same way, stay; on Sphinx pages every section heading goes, on texinfo and
DocBook pages every definition term. `fill_gaps` reads the page's blocks (`extract.blocks`) beside
trafilatura's passages and puts a dropped block back when

- an element holding it has a sibling of the same tag and class whose text trafilatura mostly kept (a
  twin: another section, entry or item of the same list), or
- it is an item of a list a kept sentence announces ("...:"), or an example (a `<pre>`) right after a
  block that stays (the sentence introducing it), or
- it is a heading over text that stays (last first, so a section's heading over its first subsection's),
  or a definition's term whose description stays,

and it lies between the first and last block trafilatura kept, outside figures, with at
most half its words link text. Boilerplate is rarely built like the content beside it (a caption, an ad
slot, a share bar or a related-links box differs in tag or class from the paragraphs around it), and
headers, footers and sidebars lie outside the kept span. A heading that repeats the page title never
comes back (the title is metadata), nor one heading nothing that stays. Each block goes back where its
words stand in the page, between the kept passages around it, which `aligning` places in the page first.

Then each kept passage that is a block of the page takes the block's structure and text: a heading's level, a
preformatted block's kind (trafilatura reads a `<pre>` that does not look like code as a quotation), a
definition's term, the description a block belongs to. Pure.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from research_engine.extract.aligning import ALONE, ANCHOR_MIN_WORDS, in_page_order, kept_places
from research_engine.extract.blocks import NAVIGATION_LINK_SHARE, Block, labels_only, words
from research_engine.extract.sections import following, lone_wrapper

_GAP_LINK_SHARE_MAX = 0.5
_NEAR_CHARS = 200  # a shorter block is sought this close after the block before it
_TWIN_KEPT_SHARE = 0.5


def fill_gaps(kept: list[Block], blocks: list[Block], said: str, title: str | None = None) -> list[Block]:
    """`kept` (trafilatura's passages, in order) with the blocks it dropped wrongly put back in place, and
    the structure of the page's blocks on the passages that are those blocks."""
    keys = [b.key for b in blocks]
    at_page = _places(keys, said)
    kept, kept_at = in_page_order(kept, kept_places(kept, said, blocks, at_page))
    kept_keys = [c.key for c in kept]
    joined, whole = "\n".join(kept_keys), set(kept_keys)
    # A short heading, term or list item is kept only as a passage of its own: "The raw way" inside "The raw
    # way to limit access to pages is ..." is a heading trafilatura dropped, "TEXT" inside a paragraph about
    # TEXT affinity an item of a list it dropped.
    short = [b.kind in ALONE and len(k.split()) < ANCHOR_MIN_WORDS for b, k in zip(blocks, keys, strict=True)]
    inside_kept = _covering(kept_keys, kept_at)
    # A kept row of a menu ("20.2 Initialization" in texinfo's table of a chapter's sections) goes as
    # navigation (`_with_structure`): it keeps no heading of those words.
    block_at = {(at, b.key): b for b, at in zip(blocks, at_page, strict=True) if at >= 0}
    menu_rows = Counter(
        key for key, at in zip(kept_keys, kept_at, strict=True) if _is_navigation(block_at.get((at, key)))
    )
    kept_count = Counter(kept_keys)
    whole -= {key for key, n in menu_rows.items() if kept_count[key] == n}
    # Prose is kept when a kept passage holds it where it stands ("true if file exists." is not kept because
    # "true if file exists and is a block special file." is); a few words, where a kept passage of them stands
    # (the heading "Examples" is not kept because another section's paragraph "Examples:" is; a passage placed
    # nowhere still counts wherever it may be).
    placed = {(at, key) for key, at in zip(kept_keys, kept_at, strict=True) if at >= 0}
    unplaced = {key for key, at in zip(kept_keys, kept_at, strict=True) if at < 0}
    hits = [
        bool(k)
        and (
            k in whole and (at < 0 or (at, k) in placed or k in unplaced)
            if s
            else k in joined and (at < 0 or inside_kept(at, len(k)))
        )
        for k, s, at in zip(keys, short, at_page, strict=True)
    ]
    if sum(hits) < 2:
        return kept
    # The kept span runs from the first to the last block kept that is no few words found by chance.
    anchors = [
        i for i, hit in enumerate(hits) if hit and at_page[i] >= 0 and (keys[i] in whole or not short[i])
    ]
    if not anchors:
        return kept
    first, last = _opening(blocks, anchors[0]), anchors[-1]
    within = _restored_elements(blocks, hits)
    title_key = words(title or "")
    back = [False] * len(blocks)
    open_ = [False] * len(blocks)  # dropped, in the kept span, and neither a figure's nor mostly links
    for i in range(last, first - 1, -1):  # last first: a heading over a heading or term put back
        b = blocks[i]
        # A heading may be all link (texi2html links each one back to the table of contents): it comes
        # back only over text that stays, which a menu's or a sidebar's linked title never heads.
        linked = b.kind != "heading" and b.link_share > _GAP_LINK_SHARE_MAX
        if hits[i] or at_page[i] < 0 or b.figure or linked:
            continue
        if short[i] and keys[i] in unplaced:
            continue  # kept already, as a passage of its own placed nowhere
        open_[i] = True
        if b.kind == "heading":
            back[i] = keys[i] != title_key and _heads_what_stays(i, blocks, hits, back)
        elif b.kind == "term":
            back[i] = _describes_kept(i, blocks, hits, back)
        else:
            back[i] = _inside(b.element, within)
    for i in range(first + 1, last + 1):
        # An example comes back after the sentence introducing it ("... like this:", "For example:").
        if open_[i] and blocks[i].kind == "code" and blocks[i - 1].kind != "heading":
            back[i] = back[i] or hits[i - 1] or back[i - 1]
    out = _merge(kept, kept_keys, kept_at, [(at_page[i], blocks[i]) for i in range(len(blocks)) if back[i]])
    return _with_structure(out, kept, kept_at, block_at)


def _opening(blocks: list[Block], first: int) -> int:
    """Where the kept span starts: at the first kept block, or back at the heading of the section that block
    opens, when that heading and the block lie in one section element (a reference page's purpose, dropped
    just under its title, is the section's opening, not the page's header)."""
    for i in range(first - 1, -1, -1):
        if blocks[i].kind != "heading":
            continue
        section = lone_wrapper(blocks[i].element).getparent()
        el = blocks[first].element
        inside = section is not None and el is not None and section in el.iterancestors()
        return i if inside else first
    return first


def _heads_what_stays(i: int, blocks: list[Block], hits: list[bool], back: list[bool]) -> bool:
    """Whether the block after a heading stays and stands in what follows the heading (`sections.following`):
    what the heading heads, not text further on past a form, a widget or the end of a box."""
    j = i + 1
    while j < len(blocks) and blocks[j].link_share >= NAVIGATION_LINK_SHARE and blocks[j].kind != "heading":
        j += 1  # a menu of the section's subsections, a "Next: ..., Up: ..." bar (texinfo): passed over
    if j > i + 1:  # past navigation: what stays lies in the heading's section
        section = lone_wrapper(blocks[i].element).getparent()
        return j < len(blocks) and (hits[j] or back[j]) and section in blocks[j].element.iterancestors()
    after = following(blocks[i].element)
    if after is None:
        return False
    # What a section's own heading heads is all of its section (Sphinx's `<section>`, docutils' `<div
    # class="section">`): a synopsis dropped under "borg key export" does not part it from the table that
    # stays.
    section = lone_wrapper(blocks[i].element).getparent()
    if section is None or not _is_section(section):
        section = after

    def heads(el: Any) -> bool:
        return el is after or after in el.iterancestors() or section in el.iterancestors()

    # Blocks dropped inside what the heading heads are passed over: a member's template line above its
    # prototype (Doxygen) does not part the member's heading from the prototype that stays.
    while j < len(blocks) and blocks[j].kind != "heading" and not (hits[j] or back[j]):
        if not heads(blocks[j].element):
            return False
        j += 1
    return j < len(blocks) and (hits[j] or back[j]) and heads(blocks[j].element)


def _is_section(el: Any) -> bool:
    return el.tag == "section" or "section" in (el.get("class") or "").split()


def _describes_kept(i: int, blocks: list[Block], hits: list[bool], back: list[bool]) -> bool:
    """Whether a term's description (or the next term over it) stays: some of its blocks kept or put back."""
    number = blocks[i].definition
    for k in range(i + 1, len(blocks)):
        if blocks[k].definition != number or not number:
            return k == i + 1 and (hits[k] or back[k])
        if hits[k] or back[k]:
            return True
    return False


def _places(keys: list[str], said: str) -> list[int]:
    """Where each block's words start in the page's words (-1: not found in order)."""
    at, out = 0, []
    for key in keys:
        # A few words ("email") are looked for just ahead only: found further on they are some other text.
        near = at + len(key) + _NEAR_CHARS if len(key.split()) < ANCHOR_MIN_WORDS else None
        found = said.find(key, at, near) if key else -1
        out.append(found)
        if found >= 0:
            at = found + len(key)
    return out


def _covering(kept_keys: list[str], kept_at: list[int]) -> Callable[[int, int], bool]:
    """A test: do the words at [start, start + length) lie inside one kept passage found in the page?"""
    spans = sorted((at, at + len(key)) for key, at in zip(kept_keys, kept_at, strict=True) if at >= 0)
    starts = [start for start, _ in spans]

    def inside(start: int, length: int) -> bool:
        j = bisect_right(starts, start) - 1
        return j >= 0 and start + length <= spans[j][1]

    return inside


def _merge(
    kept: list[Block], kept_keys: list[str], kept_at: list[int], put: list[tuple[int, Block]]
) -> list[Block]:
    """Kept passages and blocks put back, each by where it stands in the page's words (a passage not found
    there stands where the one before it ended)."""
    out: list[Block] = []
    n = cursor = 0
    for j, chunk in enumerate(kept):
        at = kept_at[j] if kept_at[j] >= 0 else cursor
        cursor = at + len(kept_keys[j]) if kept_at[j] >= 0 else cursor
        while n < len(put) and put[n][0] <= at:
            out.append(put[n][1])
            n += 1
        last = put[n - 1] if n else None
        if last and at < last[0] + len(last[1].key) and kept_keys[j] and kept_keys[j] in last[1].key:
            continue  # a fragment of the block just put back, which trafilatura kept
        out.append(chunk)
    out.extend(block for _, block in put[n:])
    return out


def _with_structure(
    out: list[Block], kept: list[Block], kept_at: list[int], block_at: dict[tuple[int, str], Block]
) -> list[Block]:
    """Kept passages that are blocks of the page, word for word and in place, take the block's structure and
    its text as the page writes it (trafilatura loses line breaks in code and spaces out inline markup); a
    table row that is all links is a navigation bar and goes."""
    twin_of = {id(c): block_at.get((at, c.key)) for c, at in zip(kept, kept_at, strict=True)}
    done = []
    for c in out:
        b = twin_of.get(id(c))
        if b is None:
            done.append(c)
            continue
        if _is_navigation(b):
            continue  # a row of links: a navigation bar ("[ << ] | [ < ] | [ Up ] | ..."), no finding
        kind = b.kind if b.kind in ("heading", "term", "code") else c.kind
        level = b.level or c.level
        done.append(
            replace(c, text=b.text, kind=kind, element=b.element, level=level, definition=b.definition)
        )
    return done


def _is_navigation(b: Block | None) -> bool:
    """A table row that is all links: a navigation bar or a menu ("[ << ] | [ < ] | [ Up ]"); or any block
    of links with navigation labels only ("Next: ..., Previous: ..., Up: ...")."""
    return (
        b is not None
        and b.link_share >= NAVIGATION_LINK_SHARE
        and (b.kind == "table-row" or (b.element is not None and labels_only(b.element)))
    )


def _restored_elements(blocks: list[Block], hits: list[bool]) -> set[Any]:
    """Elements whose every block comes back (subject to the other rules): elements part kept, twins of
    kept elements, and the items of lists a kept block announces."""
    tally: dict[Any, list[int]] = {}  # element -> [leaf blocks kept, leaf blocks] at or below it
    leaves = [_is_leaf(b.element) for b in blocks]
    for b, hit, leaf in zip(blocks, hits, leaves, strict=True):
        if not leaf:
            continue
        for node in (b.element, *b.element.iterancestors()):
            counts = tally.get(node)
            if counts is None:
                tally[node] = counts = [0, 0]
            counts[0] += hit
            counts[1] += 1
    seen: dict[Any, bool] = {}
    out: set[Any] = set()
    for b, hit, leaf in zip(blocks, hits, leaves, strict=True):
        if hit or not leaf:
            continue
        if tally[b.element][0]:  # its own element's other text stays: a description's first lines
            out.add(b.element)  # before its first <p> ("<dd>Exit after ...<p>If the exit code is 1")
            continue
        x = _twin_level(b.element, tally)
        if x not in seen:
            seen[x] = _has_kept_twin(x, tally) or _has_kept_counterpart(x, tally)
        if seen[x]:
            out.add(x)
        elif _announced_item(b.element, tally):
            out.add(b.element)
    return out


def _is_leaf(el: Any) -> bool:
    """A block element of the page's content (a run of text in a `<div>` or `<span>` is not one: layout
    wrappers around dates, ads and widgets are built alike and must not vouch for one another)."""
    return el is not None and isinstance(el.tag, str) and el.tag.lower() in _LEAF_TAGS


_LEAF_TAGS = frozenset({
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "dt", "dd", "pre", "tr", "blockquote", "figcaption",
})  # fmt: skip


def _inside(el: Any, within: set[Any]) -> bool:
    return el in within or any(a in within for a in el.iterancestors())


def _twin_level(el: Any, tally: dict[Any, list[int]]) -> Any:
    """The element holding `el` just below the nearest ancestor with kept text."""
    x = el
    while x.getparent() is not None and not tally[x.getparent()][0]:
        x = x.getparent()
    return x


def _has_kept_twin(x: Any, tally: dict[Any, list[int]]) -> bool:
    parent = x.getparent()
    if parent is None:
        return False
    sig = (x.tag, x.get("class"))
    for sibling in parent:
        if sibling is x or sibling not in tally or (sibling.tag, sibling.get("class")) != sig:
            continue
        kept, total = tally[sibling]
        if kept / total >= _TWIN_KEPT_SHARE:
            return True
    return False


def _has_kept_counterpart(x: Any, tally: dict[Any, list[int]]) -> bool:
    """Whether a twin of an element holding `x` (up to `_COUNTERPART_LEVELS` up) holds, in the same place
    (the same tags and classes down to `x`), a part that trafilatura mostly kept: the same part of another
    entry. Doxygen's members are each a `div.memitem` holding a prototype (`div.memproto`) and a description
    (`div.memdoc`): where a member's description stays but its prototype went, other members' stayed."""
    path = [_signature(x)]
    holder = x.getparent()
    for _ in range(_COUNTERPART_LEVELS):
        if holder is None or holder.getparent() is None:
            return False
        for twin in holder.getparent():
            if twin is holder or _signature(twin) != _signature(holder):
                continue
            parts = [twin]
            for sig in reversed(path):
                parts = [part for el in parts for part in el if _signature(part) == sig]
            for part in parts:
                counts = tally.get(part)
                if counts and counts[0] / counts[1] >= _TWIN_KEPT_SHARE:
                    return True
        path.append(_signature(holder))
        holder = holder.getparent()
    return False


_COUNTERPART_LEVELS = 2  # a part of an entry's part: a paragraph of a member's description


def _signature(el: Any) -> tuple[Any, Any]:
    return el.tag, el.get("class")


def _announced_item(el: Any, tally: dict[Any, list[int]]) -> bool:
    """A dropped item of a list that a kept block announces ("... assigned one of the following type
    affinities:" over "TEXT", "NUMERIC", ...): the list is what the sentence is about."""
    parent = el.getparent()
    if el.tag != "li" or parent is None or parent.tag not in ("ul", "ol"):
        return False
    before = parent.getprevious()
    while before is not None and not (isinstance(before.tag, str) and "".join(before.itertext()).strip()):
        before = before.getprevious()
    return (
        before is not None
        and bool(tally.get(before, [0])[0])
        and "".join(before.itertext()).rstrip().endswith(":")
    )
