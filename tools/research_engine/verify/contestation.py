"""Closing a verification cycle: verify/contestation.md, its archive, the grounding score, its checker.

Owns `close` (every prepared claim judged, claims whose floor is refuse judged
mechanically; the previous cycle's contestation archived to
verify/contestation.cycle-NN.md; the new one written; run.json's grounding,
refused_ever and refused_claims updated), `summarize` (the counts and the grounding
score) and `check_verify`, the validate checker of everything under verify/.
Never fetches and never sets a floor: those are `refetch`'s and `floor`'s; verdicts
reach the worksheet only through `worksheet.record`.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from research_engine import answering, bounded, decompose, ids, runrecord
from research_engine import claims as ledger
from research_engine.artifacts import ValidationReport, load_checked, read_markdown, write_markdown
from research_engine.errors import CheckFailed, ResearchEngineError
from research_engine.trace import Run, atomic_write_text, iso
from research_engine.verify.worksheet import (
    claims_by_id,
    load_worksheet,
    record,
    write_worksheet,
)
from research_engine.vocabulary import VERIFIER_AGENT, VERIFIER_NAMES, Verdict, stricter_or_equal

ARCHIVE_RE = re.compile(r"contestation\.cycle-(\d+)\.md")


def summarize(challenges: list[dict[str, Any]]) -> dict[str, Any]:
    """checked, supported, partial, refused, grounding score = supported / checkable.

    A claim is checkable unless none of its sources could be re-read (that is the
    source's failure, not the claim's); un-cited claims are checkable and count against.
    """
    supported = sum(1 for c in challenges if c["verdict"] == Verdict.SUPPORTED)
    partial = sum(1 for c in challenges if c["verdict"] == Verdict.PARTIAL)
    refused = sum(1 for c in challenges if c["verdict"] == Verdict.REFUSE)
    checkable = sum(
        1 for c in challenges if c["checks"]["cited"] is False or not c["checks"]["all_unreachable"]
    )
    return {
        "checked": len(challenges),
        "supported": supported,
        "partial": partial,
        "refused": refused,
        "checkable": checkable,
        "grounding_score": round(supported / checkable, 4) if checkable else None,
    }


def close(run: Run) -> dict[str, Any]:
    """Write verify/contestation.md for the worksheet's cycle (archiving an older cycle's file)."""
    with run.lock():
        sheet = load_worksheet(run)
        if sheet is None or not sheet["claims"]:
            raise CheckFailed(
                "nothing to close: run `research-engine verify prepare` first", code="not-prepared"
            )
        judged = {c["claim"] for c in sheet["challenges"]}
        auto = [r for r in sheet["claims"] if r["claim"] not in judged and r["floor"] == Verdict.REFUSE]
        pending = [
            r["claim"] for r in sheet["claims"] if r["claim"] not in judged and r["floor"] != Verdict.REFUSE
        ]
        if pending:
            raise CheckFailed(
                f"{len(pending)} prepared claim(s) have no verdict: {', '.join(pending)} "
                "(record one with `research-engine verify record`)",
                code="unjudged-claims",
                data={"unjudged": pending},
            )
    # Claims whose floor is refuse need no judgement: the tool records the floor.
    for row in auto:
        with contextlib.suppress(CheckFailed):  # already judged by a concurrent `record`: that verdict stands
            record(run, row["claim"], Verdict.REFUSE, "mechanical floor: " + "; ".join(row["floor_reasons"]))
    with run.lock():
        sheet = load_worksheet(run)
        if sheet is None:  # removed since the look above
            raise CheckFailed(
                "nothing to close: run `research-engine verify prepare` first", code="not-prepared"
            )
        cycle = sheet["cycle"]
        current_path = run.path("contestation")
        archived = None
        if current_path.is_file():
            old_meta, _ = read_markdown(current_path)
            old_cycle = int(old_meta.get("cycle", 0))
            if old_cycle > cycle:
                raise CheckFailed(
                    f"verify/contestation.md is for cycle {old_cycle}, after this worksheet's cycle {cycle}",
                    code="cycle-order",
                )
            if old_cycle < cycle:
                archive = run.path("contestation_archive", cycle=old_cycle)
                atomic_write_text(archive, bounded.read_text(current_path))
                archived = run.relative(archive)
        challenges = sorted(sheet["challenges"], key=lambda c: ids.sort_key(c["claim"]))
        summary = summarize(challenges)
        meta = {
            "schema_version": 1,
            "cycle": cycle,
            "closed_at": iso(),
            "challenges": challenges,
            "summary": summary,
        }
        if sheet.get("prepared_by"):
            meta["prepared_by"] = list(sheet["prepared_by"])
        _write_contestation(run, meta)
        sheet["closed_at"] = meta["closed_at"]
        write_worksheet(run, sheet)
        refused_now = [c["claim"] for c in challenges if c["verdict"] == Verdict.REFUSE]

        def change(rec: dict[str, Any]) -> None:
            rec["grounding"] = {
                "checked": summary["checked"],
                "supported": summary["supported"],
                "partial": summary["partial"],
                "refused": summary["refused"],
                "score": summary["grounding_score"],
            }
            ever = set(rec.get("refused_claims") or []) | set(refused_now)
            rec["refused_claims"] = sorted(ever, key=ids.sort_key)
            rec["refused_ever"] = bool(rec.get("refused_ever")) or bool(ever)

        runrecord.update(run, change)
    ledger.refresh(run)  # a stage boundary: the claims draft shows the whole ledger again
    return {
        "cycle": cycle,
        "contestation": run.relative(current_path),
        "archived": archived,
        "summary": summary,
        "auto_refused": [r["claim"] for r in auto],
    }


def _write_contestation(run: Run, meta: dict[str, Any]) -> None:
    s = meta["summary"]
    score = "n/a" if s["grounding_score"] is None else f"{s['grounding_score']:.2f}"
    lines = [
        f"# Contestation, cycle {meta['cycle']}",
        "",
        f"Checked {s['checked']}: supported {s['supported']}, partial {s['partial']}, "
        f"refused {s['refused']}. Grounding score {score} "
        f"(supported / checkable, {s['checkable']} checkable).",
        "",
    ]
    # Relevance is recorded beside the verdict, never in it: does the claim answer its sub-question?
    questions = {sq["id"]: str(sq.get("text") or "") for sq in decompose.load(run)}
    claim_rows = {c["id"]: c for c in ledger.load(run).get("claims", [])}
    for chl in meta["challenges"]:
        lines.append(f"## {chl['id']}: {chl['claim']} **{chl['verdict']}**")
        row = claim_rows.get(chl["claim"])
        if row and row.get("sub_question") in questions:
            question = questions[row["sub_question"]]
            relevance = answering.relevance(question, list(questions.values()), str(row.get("text") or ""))
            lines.append("")
            lines.append(
                f"- relevance to {row['sub_question']} (not part of the verdict): {relevance.basis()}"
            )
        lines.append("")
        lines.append(
            f"- floor: {chl['floor']}"
            + (f" (requested {chl['requested_verdict']}, forced)" if chl["forced"] else "")
        )
        lines.append(f"- reason: {chl['reason']}")
        for e in chl["checks"]["evidence"]:
            state = (
                "unreachable"
                if not e["reachable"]
                else f"quote {'found (' + str(e['match']) + ')' if e['quote_found'] else 'NOT found'}"
            )
            lines.append(f"- {e['source']}: {state}")
        if chl["corroboration_query"]:
            lines.append(f"- corroboration query: {chl['corroboration_query']}")
        lines.append("")
    write_markdown(run.path("contestation"), meta, "\n".join(lines), schema="contestation")


def check_verify(run: Run, report: ValidationReport) -> None:
    """validate checker: worksheet, evidence and contestation files; challenges -> claims."""
    try:
        claims = claims_by_id(run)
    except ResearchEngineError:
        claims = None

    for path in sorted((run.root / "verify" / "evidence").glob("*.md")):
        meta = load_checked(run, report, path, "evidence")
        if meta and meta.get("snapshot") and not (run.root / meta["snapshot"]).is_file():
            report.add(path, f"snapshot {meta['snapshot']} is missing", "cross-reference")

    sheet_path = run.path("worksheet")
    if sheet_path.is_file():
        sheet = load_checked(run, report, sheet_path, "worksheet")
        if sheet:
            _check_prepared_by(report, sheet_path, sheet)
        if sheet and claims is not None:
            for row in sheet["claims"]:
                if row["claim"] not in claims:
                    report.add(
                        sheet_path,
                        f"the worksheet checks {row['claim']}, which is not a claim",
                        "cross-reference",
                    )

    seen_chl: dict[str, str] = {}
    files = sorted((run.root / "verify").glob("contestation.cycle-*.md"))
    if run.path("contestation").is_file():
        files.append(run.path("contestation"))
    for path in files:
        meta = load_checked(run, report, path, "contestation")
        if not meta:
            continue
        m = ARCHIVE_RE.fullmatch(path.name)
        if m and int(m.group(1)) != meta["cycle"]:
            report.add(
                path, f"archived as cycle {int(m.group(1))} but says cycle {meta['cycle']}", "cross-reference"
            )
        _check_prepared_by(report, path, meta)
        if summarize(meta["challenges"]) != meta["summary"]:
            report.add(path, "the summary does not match the challenges", "cross-reference", "summary")
        for chl in meta["challenges"]:
            if claims is not None and chl["claim"] not in claims:
                report.add(
                    path, f"{chl['id']} challenges {chl['claim']}, which is not a claim", "cross-reference"
                )
            if not stricter_or_equal(chl["verdict"], chl["floor"]):
                report.add(
                    path,
                    f"{chl['id']} verdict {chl['verdict']} is looser than its floor {chl['floor']}",
                    "cross-reference",
                )
            where = run.relative(path)
            if chl["id"] in seen_chl:  # a cycle's challenges live in exactly one contestation file
                report.add(path, f"{chl['id']} also appears in {seen_chl[chl['id']]}", "duplicate-id")
            seen_chl[chl["id"]] = where


def _check_prepared_by(report: ValidationReport, path: Any, meta: dict[str, Any]) -> None:
    """A cycle prepared by an agent other than the verifier is not an independent verification."""
    for agent in meta.get("prepared_by") or []:
        if agent not in VERIFIER_NAMES:
            report.add(
                path,
                f"cycle {meta['cycle']} was verified by {agent!r}, not the {VERIFIER_AGENT} agent: "
                "the verification is not independent",
                "verifier-identity",
                "prepared_by",
            )
