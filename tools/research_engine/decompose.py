"""Sub-questions: `decompose/sub-questions.md` (schema `sub-questions`).

Owns adding and reading sub-questions SQ-NN, each with its claim type (which
drives source fit in `selection`), an optional search angle and what a full
answer contains. Writing the sub-questions themselves is judgement (the agent's
or the model's); this module only records them, under the run lock, and renders
the list for people. It never deletes or renumbers a sub-question.
"""

from __future__ import annotations

from typing import Any

from research_engine import ids
from research_engine.artifacts import load_checked, read_markdown, write_markdown
from research_engine.errors import BadInput
from research_engine.runstate import current_cycle
from research_engine.trace import Run, iso
from research_engine.vocabulary import Angle, ClaimType

SCHEMA = "sub-questions"
SCHEMA_VERSION = 1


def load_document(run: Run) -> dict[str, Any]:
    """The front matter of sub-questions.md, or an empty one if none was written yet."""

    path = run.path("sub_questions")
    if not path.is_file():
        return {"schema_version": SCHEMA_VERSION, "sub_questions": []}
    meta, _ = read_markdown(path)
    meta.setdefault("sub_questions", [])
    return meta


def load(run: Run) -> list[dict[str, Any]]:
    """Every sub-question, in id order."""
    return list(load_document(run)["sub_questions"])


def get(run: Run, sq: str) -> dict[str, Any]:
    """One sub-question; BadInput (an id that names nothing in the run) naming the known ones."""
    items = load(run)
    for item in items:
        if item["id"] == sq:
            return item
    known = ", ".join(i["id"] for i in items) or "none yet"
    raise BadInput(
        f"sub-question {sq} does not exist in this run (known: {known})",
        code="unknown-sub-question",
        field="sq",
    )


def add(run: Run, text: str, claim_type: str, angle: str | None = None, answers: str | None = None) -> str:
    """Record a new sub-question and return its id (SQ-NN)."""

    text = " ".join((text or "").split())
    if len(text) < 3:
        raise BadInput("a sub-question needs its text", code="empty-sub-question", field="text")
    if claim_type not in tuple(ClaimType):
        raise BadInput(
            f"unknown claim type {claim_type!r}; expected one of {', '.join(ClaimType)}",
            code="bad-claim-type",
            field="type",
        )
    if angle is not None and angle not in tuple(Angle):
        raise BadInput(
            f"unknown angle {angle!r}; expected one of {', '.join(Angle)}", code="bad-angle", field="angle"
        )
    answers = " ".join(answers.split()) if answers and answers.strip() else None
    cycle = current_cycle(run)
    with run.lock():
        doc = load_document(run)
        sq = ids.next_id(run, "sq")
        doc["schema_version"] = SCHEMA_VERSION
        doc["sub_questions"].append(
            {
                "id": sq,
                "text": text,
                "claim_type": claim_type,
                "angle": angle,
                "answers": answers,
                "added_at": iso(),
                "cycle": cycle,
            }
        )
        _write(run, doc)
    return sq


def _write(run: Run, doc: dict[str, Any]) -> None:
    write_markdown(run.path("sub_questions"), doc, render(doc["sub_questions"]), schema=SCHEMA)


def render(items: list[dict[str, Any]]) -> str:
    lines = ["# Sub-questions", ""]
    if not items:
        lines.append("(none yet)")
    for item in items:
        angle = f", angle: {item['angle']}" if item.get("angle") else ""
        lines += [
            f"## {item['id']} ({item['claim_type']}{angle}; cycle {item['cycle']})",
            "",
            item["text"],
            "",
        ]
        if item.get("answers"):
            lines += [f"*A full answer contains:* {item['answers']}", ""]
    lines.append("Written by `research-engine sq add`; do not edit by hand.")
    return "\n".join(lines)


def check_sub_questions(run: Run, report: Any) -> None:
    """validate: sub-questions.md conforms to its schema and its ids are unique."""

    path = run.path("sub_questions")
    meta = load_checked(run, report, path, SCHEMA)
    if meta is None:
        return
    seen: set[str] = set()
    for item in meta["sub_questions"]:
        if item["id"] in seen:
            report.add(path, f"sub-question id {item['id']} appears twice", "duplicate-id")
        seen.add(item["id"])
