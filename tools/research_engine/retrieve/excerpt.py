"""A recorded source as a model reads it: bounded, its sentences by id, and where the rest is.

`fetch --run` and `source show` print what `excerpts` chooses of a source's passages (the ones most
relevant to its sub-question, or page N in document order), never more than a bounded envelope holds;
the source file under `retrieve/` keeps every passage. `page_command` is the one spelling of the command
that pages through a recorded source, so every envelope says the same thing about where the rest is.
"""

from __future__ import annotations

from typing import Any

from research_engine import decompose, excerpts
from research_engine.documents import Passage
from research_engine.retrieve.store import load_source, source_path
from research_engine.trace import Run


def question_for(run: Run, sq: str, query: str | None = None) -> str:
    """What a source of `sq` is read for: the sub-question, what a full answer contains, the query."""
    item = decompose.get(run, sq)
    return " ".join(str(part) for part in (item.get("text"), item.get("answers"), query) if part)


def page_command(run: Run, ref: str, page: int) -> str:
    return f"research-engine source show {ref} --run {run.root} --page {page} --json"


def choose(passages: list[Passage], room: int, *, question: str | None, page: int | None) -> excerpts.Shown:
    """Page `page` when asked for, else the passages most relevant to `question`, else page 1."""
    if page is not None or not question:
        return excerpts.paged(passages, room, page or 1)
    return excerpts.relevant(passages, question, room)


def rest(run: Run | None, ref: str | None, shown: excerpts.Shown) -> dict[str, Any]:
    """Where the passages not shown are: the source file and the command that pages through it."""
    out: dict[str, Any] = {"shown": len(shown.views), "of": shown.total, "pages": shown.pages}
    if shown.page is None:
        out["chosen_by"] = "relevance to the sub-question (with the heading above each passage)"
    else:
        out["page"] = shown.page
    if run is not None and ref is not None:
        out["file"] = str(source_path(run, ref))
        following = (shown.page or 0) + 1
        if following <= shown.pages:
            out["next"] = page_command(run, ref, following)
    return out


def show_source(
    run: Run, ref: str, *, page: int | None = None, question: str | None = None
) -> dict[str, Any]:
    """`source show`: a recorded source's summary and one bounded view of its passages."""
    meta, passages = load_source(run, ref)
    data: dict[str, Any] = {
        "source": ref,
        "title": meta.get("title"),
        "url": meta.get("final_url") or meta.get("requested_url"),
        "kind": meta.get("kind"),
        "passages": [],
    }
    shown = choose(passages, _room(data), question=question, page=page)
    data["passages"] = shown.views
    data["rest"] = rest(run, ref, shown)
    return data


def _room(data: dict[str, Any]) -> int:
    """What is left for the passages once the rest of the envelope is written (its keys, the summary,
    where the rest is, a warning or two)."""
    return excerpts.ENVELOPE_CHARS - excerpts.size(data) - 1200
