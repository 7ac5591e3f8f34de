"""What a `--json` envelope shows of a long source or list, within one bound a model's context holds.

Claude Code keeps about 30,000 characters of a tool's output; a 100 KB page printed whole is cut off, and
the model then sees a broken envelope. So the commands that read sources (`fetch`, `source show`,
`verify prepare`, `claims list`, `search`) print at most `ENVELOPE_CHARS` characters by default: the
summary (ids, titles, counts), the passages most relevant to the sub-question (or one page of them, or of
the list), and where the rest is (the recorded file, and the command that pages through it). The files
keep everything; nothing is cut from the trace.

- `passage_view`: a passage as a model reads it, its sentences by id (`{"s1": ..., "s2": ...}`, from
  `sentences`), so evidence can be named by reference (`SQ-01/SRC-02#p05.s2`);
- `relevant`: the passages that best match a question (BM25, `ranking`), each with the heading above it,
  shown in document order, within a room of characters;
- `paged`: page N of passages (or any list of items) in order, each page within the room.

Pure functions; sizes are measured as the JSON the envelope prints (`ensure_ascii=False`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from research_engine.ranking import bm25_scores, tokens
from research_engine.sentences import PassageText, numbered

ENVELOPE_CHARS = 20_000  # the most a bounded --json envelope prints (docs/conventions.md)
SNIPPET_CHARS = 300  # a search result's snippet as a bounded envelope shows it
ITEM_SEPARATOR = 2  # ", " between items of a JSON list


def size(value: Any) -> int:
    """Characters `value` takes in a printed envelope."""
    return len(json.dumps(value, ensure_ascii=False, default=str))


def passage_view(passage: PassageText) -> dict[str, Any]:
    """A passage with its sentences by id: `{"id": "p05", "kind": ..., "sentences": {"s1": ..., ...}}`."""
    sentences = numbered(passage.id, passage.text, passage.kind)
    return {"id": passage.id, "kind": passage.kind, "sentences": sentences}


def _cut(view: dict[str, Any], room: int) -> dict[str, Any]:
    """A view cut down to `room` characters (a passage longer than a page: a long code block). Whole
    sentences are kept while they fit, the next is cut; `cut: true` says the file holds the rest."""
    kept: dict[str, str] = {}
    out = {**view, "sentences": kept, "cut": True}
    for sid, text in view["sentences"].items():
        left = room - size(out) - len(sid) - 6
        if left <= 0:
            break
        if len(text) + 2 <= left:
            kept[sid] = text
            continue
        kept[sid] = text[: max(0, left - 3)] + "..."
        break
    return out


@dataclass
class Shown:
    """Passages chosen for an envelope: their views (document order), and how many there are in all."""

    views: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    pages: int = 1
    page: int | None = None  # None: chosen by relevance, not a page

    @property
    def ids(self) -> list[str]:
        return [v["id"] for v in self.views]


def _heading_above(passages: Sequence[PassageText], index: int) -> int | None:
    for i in range(index - 1, -1, -1):
        if passages[i].kind == "heading":
            return i
    return None


def relevant(passages: Sequence[PassageText], question: str, room: int) -> Shown:
    """The passages best matching `question` (each with the nearest heading above it), in document order,
    within `room` characters; the first passages in order when nothing matches."""
    views = [passage_view(p) for p in passages]
    scores = bm25_scores(tokens(question), [tokens(p.text) for p in passages])
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    if not order:
        first = paged(passages, room, 1)
        return Shown(first.views, len(passages), first.pages, page=None)
    chosen: set[int] = set()
    used = 2
    for index in order:
        group = [i for i in (_heading_above(passages, index), index) if i is not None and i not in chosen]
        cost = sum(size(views[i]) + ITEM_SEPARATOR for i in group)
        if used + cost <= room:
            chosen.update(group)
            used += cost
        elif not chosen:  # the best passage alone is longer than the room: show what fits of it
            return Shown([_cut(views[index], room - 2)], len(passages), _page_count(views, room))
    return Shown([views[i] for i in sorted(chosen)], len(passages), _page_count(views, room))


def _pack(items: list[dict[str, Any]], room: int) -> list[list[dict[str, Any]]]:
    """Items in order, packed greedily into pages of at most `room` characters (an item longer than a
    page is cut to fit one of its own)."""
    pages: list[list[dict[str, Any]]] = [[]]
    used = 2
    for item in items:
        cost = size(item) + ITEM_SEPARATOR
        if used + cost > room and pages[-1]:
            pages.append([])
            used = 2
        if cost > room - 2 and "sentences" in item:
            item = _cut(item, room - 2)
            cost = size(item) + ITEM_SEPARATOR
        pages[-1].append(item)
        used += cost
    return pages


def _page_count(views: list[dict[str, Any]], room: int) -> int:
    return len(_pack(views, room))


def paged(passages: Sequence[PassageText], room: int, page: int) -> Shown:
    """Page `page` (from 1) of the passages in document order; an empty page past the last."""
    pages = _pack([passage_view(p) for p in passages], room)
    views = pages[page - 1] if 1 <= page <= len(pages) else []
    return Shown(views, len(passages), len(pages), page=page)


def page_of(items: list[dict[str, Any]], room: int, page: int) -> tuple[list[dict[str, Any]], int]:
    """Page `page` (from 1) of any list of JSON items, and how many pages there are."""
    pages = _pack(items, room)
    return (pages[page - 1] if 1 <= page <= len(pages) else []), len(pages)


def fit_list(data: dict[str, Any], key: str, reserve: int = 1200) -> dict[str, int] | None:
    """Cut the list `data[key]` from its end until the envelope holding `data` fits the bound (with
    `reserve` characters for the envelope's keys, warnings and where the rest is); what was cut, as
    `{"shown": k, "of": n}`, or None when everything fits."""
    items = data.get(key) or []
    room = ENVELOPE_CHARS - reserve
    if size(data) <= room:
        return None
    total = len(items)
    fixed = size({**data, key: []})
    kept, used = [], fixed
    for item in items:
        cost = size(item) + ITEM_SEPARATOR
        if used + cost > room:
            break
        kept.append(item)
        used += cost
    data[key] = kept
    return {"shown": len(kept), "of": total}


def clipped(text: str | None, limit: int = SNIPPET_CHARS) -> str | None:
    """`text` cut to `limit` characters (with "..."), as a bounded envelope shows a snippet."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 3].rstrip() + "..."
