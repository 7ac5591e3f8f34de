"""The completeness critic's gaps (controller/gaps.md) and answer judgements (controller/answers.md).

A gap is something the objective needs that the run has not found: what it is
about, the query that would look for it, optionally the sub-question it belongs
to, and whether it is material (it feeds the controller's gap signal and can
route a supplement-gap cycle) or cosmetic (recorded, never routes). Gaps are
closed with a reason, never deleted, and their ids (G-NN) are never reused.

The critic also judges which claims answer which sub-question (`record_answers`):
"supported" says a quote is on the page, not that it answers; where an agent reads
the claims, its judgement is recorded and the controller counts coverage by it
(`coverage`), the lexical answer score standing where nobody judged.

This module only records what the critic (an agent or a model) named; it never
decides what is missing or what answers.
"""

from __future__ import annotations

import re
from typing import Any

from research_engine import claims as ledger
from research_engine import decompose, ids
from research_engine.artifacts import load_checked, read_markdown, write_markdown
from research_engine.errors import BadInput, CheckFailed, ResearchEngineError
from research_engine.runstate import current_cycle
from research_engine.trace import Run, iso
from research_engine.vocabulary import GapSeverity


def load(run: Run) -> dict[str, Any]:
    path = run.path("gaps")
    if not path.is_file():
        return {"schema_version": 1, "gaps": []}
    meta, _ = read_markdown(path)
    meta.setdefault("gaps", [])
    return meta


def open_material_gaps(run: Run) -> list[dict[str, Any]]:
    return [g for g in load(run)["gaps"] if g["status"] == "open" and g["severity"] == "material"]


def add(run: Run, about: str, query: str, *, severity: str, sq: str | None = None) -> str:
    """Record a gap; returns its id (G-NN)."""

    about, query = (about or "").strip(), (query or "").strip()
    if not about:
        raise BadInput("a gap needs --about (what is missing)", code="missing-field", field="about")
    if not query:
        raise BadInput("a gap needs --query (how to look for it)", code="missing-field", field="query")
    if severity not in tuple(GapSeverity):
        raise BadInput(f"severity must be material or cosmetic, not {severity!r}", code="bad-severity")
    if sq is not None:
        _require_sub_question(run, sq)
    with run.lock():
        gap_id = ids.next_id(run, "gap")
        data = load(run)
        data["gaps"].append(
            {
                "id": gap_id,
                "about": about,
                "query": query,
                "sub_question": sq,
                "severity": severity,
                "status": "open",
                "closed_why": None,
                "closed_at": None,
                "cycle": current_cycle(run),
                "added_at": iso(),
            }
        )
        _write(run, data)
    return gap_id


def close(run: Run, gap_id: str, why: str) -> dict[str, Any]:
    why = (why or "").strip()
    if not why:
        raise BadInput("closing a gap needs --why", code="missing-field", field="why")
    with run.lock():
        data = load(run)
        for gap in data["gaps"]:
            if gap["id"] == gap_id:
                if gap["status"] == "closed":
                    raise CheckFailed(f"{gap_id} is already closed: {gap['closed_why']}", code="gap-closed")
                gap.update(status="closed", closed_why=why, closed_at=iso())
                _write(run, data)
                return gap
    raise BadInput(f"no gap {gap_id} in this run", code="unknown-gap", field="gap")


def _require_sub_question(run: Run, sq: str) -> None:
    if not re.fullmatch(r"SQ-[0-9]{2,}", sq):
        raise BadInput(f"not a sub-question id: {sq!r}", code="bad-id", field="sq")
    known = {s["id"] for s in decompose.load(run)}
    if sq not in known:
        raise BadInput(f"no sub-question {sq} in this run", code="unknown-sub-question", field="sq")


def _write(run: Run, data: dict[str, Any]) -> None:
    lines = ["# Completeness critic: gaps", ""]
    if not data["gaps"]:
        lines.append("(no gaps named)")
    for gap in data["gaps"]:
        where = f" ({gap['sub_question']})" if gap["sub_question"] else ""
        state = "open" if gap["status"] == "open" else f"closed: {gap['closed_why']}"
        lines.append(f"- **{gap['id']}** [{gap['severity']}, {state}]{where} {gap['about']}  ")
        lines.append(f"  query: `{gap['query']}`")
    write_markdown(run.path("gaps"), data, "\n".join(lines), schema="gaps")


def check_gaps(run: Run, report: Any) -> None:
    """validate checker: gaps.md front matter and its sub-question references."""

    path = run.path("gaps")
    data = load_checked(run, report, path, "gaps")
    if data is None:
        return
    try:
        known = {s["id"] for s in decompose.load(run)}
    except ResearchEngineError:
        return
    seen: set[str] = set()
    for gap in data["gaps"]:
        if gap["id"] in seen:
            report.add(path, f"{gap['id']} appears twice", "duplicate-id")
        seen.add(gap["id"])
        if gap["sub_question"] and gap["sub_question"] not in known:
            report.add(
                path,
                f"{gap['id']} names {gap['sub_question']}, which is not a sub-question",
                "cross-reference",
            )


# ---------------------------------------------------------------- answer judgements: controller/answers.md


def load_answers(run: Run) -> dict[str, Any]:
    path = run.path("answers")
    if not path.is_file():
        return {"schema_version": 1, "judgements": []}
    meta, _ = read_markdown(path)
    meta.setdefault("judgements", [])
    return meta


def latest_answers(run: Run) -> dict[str, dict[str, Any]]:
    """The latest judgement per sub-question (what the controller reads)."""
    return {j["sub_question"]: j for j in load_answers(run)["judgements"]}


def record_answers(run: Run, sq: str, answering: list[str], why: str) -> dict[str, Any]:
    """Record the critic's judgement that `answering` (claims of `sq`, read together) answer `sq`; an empty
    list says none of its claims does. Every active claim of `sq` is recorded as considered, so a claim
    left out is judged not to answer, and a claim added later is judged again (lexically, or by the next
    judgement)."""
    why = " ".join((why or "").split())
    if not why:
        raise BadInput(
            "say why these claims answer (or why none does): --why", code="missing-field", field="why"
        )
    _require_sub_question(run, sq)
    wanted = list(dict.fromkeys(c.strip(" ") for c in answering if c.strip(" ")))
    bad = [c for c in wanted if not re.fullmatch(r"CLM-[0-9]{2,}", c)]
    if bad:
        raise BadInput(f"not a claim id: {', '.join(bad)}", code="bad-id", field="claims")
    considered = [c["id"] for c in ledger.active_claims(run) if c["sub_question"] == sq]
    foreign = [c for c in wanted if c not in considered]
    if foreign:
        raise BadInput(
            f"{', '.join(foreign)} is not an active claim of {sq} (its active claims: "
            f"{', '.join(considered) or 'none'})",
            code="unknown-claim",
            field="claims",
        )
    judgement = {
        "sub_question": sq,
        "answering": wanted,
        "considered": considered,
        "why": why,
        "cycle": current_cycle(run),
        "at": iso(),
    }
    with run.lock():
        data = load_answers(run)
        data["judgements"].append(judgement)
        _write_answers(run, data)
    return judgement


def _write_answers(run: Run, data: dict[str, Any]) -> None:
    lines = ["# Completeness critic: which claims answer which sub-question", ""]
    for j in data["judgements"]:
        said = ", ".join(j["answering"]) + " answer(s)" if j["answering"] else "no claim answers"
        lines.append(f"- cycle {j['cycle']}, **{j['sub_question']}**: {said}: {j['why']}  ")
        lines.append(f"  considered: {', '.join(j['considered']) or 'none'}")
    write_markdown(run.path("answers"), data, "\n".join(lines), schema="answers")


def check_answers(run: Run, report: Any) -> None:
    """validate checker: answers.md front matter, its sub-questions and its claims."""
    path = run.path("answers")
    data = load_checked(run, report, path, "answers")
    if data is None:
        return
    try:
        known = {s["id"] for s in decompose.load(run)}
        owners = {c["id"]: c["sub_question"] for c in ledger.load(run)["claims"]}
    except ResearchEngineError:
        return
    for j in data["judgements"]:
        sq = j["sub_question"]
        if sq not in known:
            report.add(path, f"a judgement names {sq}, which is not a sub-question", "cross-reference")
        for clm in [*j["answering"], *j["considered"]]:
            if owners.get(clm) != sq:
                why = f"{sq}'s judgement names {clm}, which is not a claim of {sq}"
                report.add(path, why, "cross-reference")
        if not set(j["answering"]) <= set(j["considered"]):
            why = f"{sq}'s judgement names an answering claim it did not consider"
            report.add(path, why, "cross-reference")
