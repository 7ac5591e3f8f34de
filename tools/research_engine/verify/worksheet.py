"""The verification worksheet (verify/worksheet.md): the floors `prepare` sets and the verdicts `record` adds.

Owns `prepare` (choose the claims, re-fetch what they cite through `refetch`, run the
`floor` checks, write the worksheet), `record` (one verdict as CHL-NN, held to the floor;
at most one corroboration query per claim in the whole run), `load_worksheet` and the
worksheet writer, plus the small readers `contestation` shares (claims by id, every
challenge so far). Never writes verify/contestation.md: closing a cycle is `contestation`'s.
"""

from __future__ import annotations

import re
from typing import Any

from research_engine import claims as ledger
from research_engine import ids, runrecord
from research_engine.artifacts import write_markdown
from research_engine.errors import BadInput, CheckFailed
from research_engine.retrieve import source_path
from research_engine.runstate import all_contestations, current_cycle, load_worksheet
from research_engine.settings import Settings
from research_engine.trace import Run, iso
from research_engine.verify.floor import UNREACHABLE_REASON, check_claim
from research_engine.verify.refetch import refetch_sources
from research_engine.vocabulary import (
    VERDICT_STRICTNESS,
    ClaimStatus,
    Verdict,
    stricter_or_equal,
)

CLAIM_ID_RE = re.compile(r"CLM-[0-9]{2,}")
AGENT_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")


def claims_by_id(run: Run) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in ledger.load(run).get("claims", [])}


def all_challenges(run: Run, *, include_worksheet: bool = True) -> list[dict[str, Any]]:
    """Every challenge of the run: the contestation files', then the open worksheet's."""
    out = [chl for meta in all_contestations(run) for chl in meta.get("challenges", [])]
    if include_worksheet:
        sheet = load_worksheet(run)
        if sheet is not None:
            seen = {c["id"] for c in out}
            out += [c for c in sheet["challenges"] if c["id"] not in seen]
    return out


def _empty_worksheet(cycle: int) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "cycle": cycle,
        "prepared_at": iso(),
        "closed_at": None,
        "claims": [],
        "challenges": [],
    }


def _parse_claim_ids(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if part:
                if not CLAIM_ID_RE.fullmatch(part):
                    raise BadInput(f"not a claim id: {part!r}", code="bad-id", field="claims")
                out.append(part)
    if not out:  # --claims "" names no claim: a mistake, not "all of them"
        raise BadInput("--claims names no claim id", code="bad-id", field="claims")
    return out


def _source_exists(run: Run, ref: str) -> bool:
    try:
        return source_path(run, ref).is_file()
    except BadInput:
        return False


def _corroboration_of(challenges: list[dict[str, Any]], clm: str) -> str | None:
    for chl in challenges:
        if chl["claim"] == clm and chl.get("corroboration_query"):
            return chl["corroboration_query"]
    return None


def prepare(
    run: Run,
    claim_ids: list[str] | None = None,
    *,
    client: Any = None,
    settings: Settings | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """Re-fetch the sources the chosen claims cite (default: every active claim); write the worksheet.

    `agent` names who runs the verification (the Claude Code agent; the bundle's hook lets only the
    research-verifier agent run it). It is recorded in the worksheet's `prepared_by` and carried into the
    contestation at close, so `validate` can flag a cycle that another agent prepared.
    """
    if agent is not None and not AGENT_NAME_RE.fullmatch(agent):
        raise BadInput(f"not an agent name: {agent!r}", code="bad-agent", field="agent")
    wanted = _parse_claim_ids(claim_ids)
    every = claims_by_id(run)
    if wanted is None:
        chosen = [c for c in every.values() if c.get("status") == ClaimStatus.ACTIVE]
    else:
        unknown = [c for c in wanted if c not in every]
        if unknown:
            raise BadInput(f"no claim {', '.join(unknown)} in this run", code="unknown-claim", field="claims")
        retired = [c for c in wanted if every[c].get("status") != ClaimStatus.ACTIVE]
        if retired:
            raise BadInput(
                f"{', '.join(retired)} retired: only active claims are verified",
                code="retired-claim",
                field="claims",
            )
        chosen = [every[c] for c in wanted]
    if not chosen:
        raise CheckFailed("no active claims to verify", code="nothing-to-verify")

    cycle = current_cycle(run)
    sheet = load_worksheet(run)
    if sheet is not None and sheet["cycle"] != cycle:
        if sheet["challenges"] and not sheet.get("closed_at"):
            raise CheckFailed(
                f"the cycle-{sheet['cycle']} worksheet has verdicts that were never closed: "
                "run `research-engine verify close` first",
                code="worksheet-not-closed",
            )
        sheet = None
    sheet = sheet or _empty_worksheet(cycle)
    judged = {chl["claim"] for chl in sheet["challenges"]}
    skipped = [c["id"] for c in chosen if c["id"] in judged]
    chosen = [c for c in chosen if c["id"] not in judged]

    refs: list[str] = []
    for claim in chosen:
        for ev in claim.get("evidence") or []:
            ref = ev.get("source")
            if ref and ref not in refs and _source_exists(run, ref):
                refs.append(ref)
    copies, evidence_files = refetch_sources(run, refs, client=client, settings=settings)

    prior = all_challenges(run, include_worksheet=False)
    rows = []
    for claim in chosen:
        checked = check_claim({**claim, "corroboration_query": _corroboration_of(prior, claim["id"])}, copies)
        for entry in checked["evidence"]:
            entry["evidence_file"] = evidence_files.get(entry["source"])
        rows.append(checked)

    with run.lock():
        current = load_worksheet(run)
        if current is not None and current["cycle"] == sheet["cycle"]:
            sheet = current
        keep = [row for row in sheet["claims"] if row["claim"] not in {r["claim"] for r in rows}]
        sheet["claims"] = sorted(keep + rows, key=lambda r: ids.sort_key(r["claim"]))
        sheet["prepared_at"] = iso()
        if agent is not None and agent not in sheet.setdefault("prepared_by", []):
            sheet["prepared_by"].append(agent)
        write_worksheet(run, sheet)
    return {
        "cycle": sheet["cycle"],
        "worksheet": run.relative(run.path("worksheet")),
        "prepared_by": sheet.get("prepared_by", []),
        "claims": rows,
        "skipped_already_judged": skipped,
        "sources_fetched": len(refs),
        "unreachable": [r for r, c in copies.items() if c is not None and not c.reachable],
    }


def record(
    run: Run, clm: str, verdict: str, reason: str, *, corroboration_query: str | None = None
) -> dict[str, Any]:
    """Record a verdict for `clm` as CHL-NN. Returns the challenge and whether the floor forced it.

    Raises CheckFailed (after recording the floor) when the verdict was looser than the floor,
    and CheckFailed (recording nothing) for a second corroboration query or a second verdict.
    """
    if verdict not in VERDICT_STRICTNESS:
        raise BadInput(
            f"verdict must be supported, partial or refuse, not {verdict!r}",
            code="bad-verdict",
            field="verdict",
        )
    reason = (reason or "").strip()
    if not reason:
        raise BadInput("a verdict needs --reason", code="missing-field", field="reason")
    if not CLAIM_ID_RE.fullmatch(clm or ""):
        raise BadInput(f"not a claim id: {clm!r}", code="bad-id", field="claim")
    query = (corroboration_query or "").strip() or None

    with run.lock():
        sheet = load_worksheet(run)
        row = None if sheet is None else next((r for r in sheet.get("claims", []) if r["claim"] == clm), None)
        if sheet is None or row is None:
            raise BadInput(
                f"{clm} has no mechanical checks yet: run `research-engine verify prepare` first",
                code="not-prepared",
                field="claim",
            )
        existing = next((c for c in sheet["challenges"] if c["claim"] == clm), None)
        if existing is not None:
            raise CheckFailed(
                f"{clm} already has a verdict this cycle ({existing['id']} {existing['verdict']})",
                code="already-judged",
            )
        if query and _corroboration_of(all_challenges(run), clm):
            runrecord.add_event(run, "corroboration-refused", claim=clm, query=query)
            raise CheckFailed(
                f"{clm} already used its one corroboration query "
                f"({_corroboration_of(all_challenges(run), clm)!r}); a second is not allowed",
                code="corroboration-exhausted",
            )
        floor, floor_reasons = row["floor"], list(row["floor_reasons"])
        if query and floor == Verdict.REFUSE and row.get("all_unreachable") and row["cited"]:
            rest = [r for r in floor_reasons if not r.startswith(UNREACHABLE_REASON)]
            if not rest:
                floor, floor_reasons = (
                    Verdict.PARTIAL,
                    ["no cited source could be re-read (corroboration query recorded)"],
                )
        forced = not stricter_or_equal(verdict, floor)
        final = floor if forced else verdict
        chl_id = ids.next_id(run, "chl")
        challenge = {
            "id": chl_id,
            "claim": clm,
            "verdict": final,
            "floor": floor,
            "requested_verdict": verdict,
            "forced": forced,
            "reason": reason if not forced else f"{reason} [forced to {floor}: {'; '.join(floor_reasons)}]",
            "checks": _checks_summary(row),
            "corroboration_query": query,
            "cycle": sheet["cycle"],
            "recorded_at": iso(),
        }
        sheet["challenges"].append(challenge)
        sheet["closed_at"] = None
        write_worksheet(run, sheet)
    if query:
        runrecord.add_event(run, "corroboration-query", claim=clm, query=query)
    if forced:
        raise CheckFailed(
            f"{clm}: verdict {verdict} is looser than the mechanical floor {floor} "
            f"({'; '.join(floor_reasons)}); recorded {chl_id} as {floor}",
            code="verdict-below-floor",
            data={"challenge": challenge},
        )
    return challenge


def _checks_summary(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "cited": row["cited"],
        "numbers_ok": row["numbers"]["ok"],
        "numbers_missing": list(row["numbers"]["missing"]),
        "all_unreachable": row["all_unreachable"],
        "floor_reasons": list(row["floor_reasons"]),
        "evidence": [
            {
                k: e.get(k)
                for k in (
                    "source",
                    "reachable",
                    "fetch_error",
                    "changed",
                    "quote_found",
                    "match",
                    "score",
                    "evidence_file",
                )
            }
            for e in row["evidence"]
        ],
    }


def write_worksheet(run: Run, sheet: dict[str, Any]) -> None:
    verdicts = {c["claim"]: c for c in sheet["challenges"]}
    lines = [
        f"# Verification worksheet, cycle {sheet['cycle']}",
        "",
        "Mechanical checks against the verifier's own fresh copies (verify/evidence/). "
        "The floor is the loosest verdict the checks allow; a verdict can only be stricter.",
        "",
    ]
    for row in sheet["claims"]:
        lines.append(f"## {row['claim']} ({row['sub_question']}): floor **{row['floor']}**")
        lines.append("")
        lines.append(f"> {row['text']}")
        lines.append("")
        for e in row["evidence"]:
            if not e.get("in_run"):
                lines.append(f"- {e['source']}: NOT IN THE RUN (hallucinated citation)")
                continue
            if not e["reachable"]:
                lines.append(f"- {e['source']}: unreachable ({e['fetch_error']})")
                continue
            where = f" at {e['fresh_span']}" if e.get("fresh_span") else ""
            found = (
                f"quote found{where} ({e['match']}, score {e['score']})"
                if e["quote_found"]
                else f'quote NOT found (closest, score {e["score"]}: "{e["closest"] or ""}")'
            )
            changed = "changed since retrieval" if e["changed"] else "unchanged since retrieval"
            named = f"#{e['span']}" if e.get("span") else ""
            lines.append(f"- {e['source']}{named}: reachable, {changed}, {found}")
        if not row["evidence"]:
            lines.append("- no evidence: un-cited")
        numbers = (
            "numbers ok"
            if row["numbers"]["ok"]
            else f"numbers missing from quotes: {row['numbers']['missing']}"
        )
        lines.append(f"- {numbers}")
        for reason in row["floor_reasons"]:
            lines.append(f"- floor: {reason}")
        chl = verdicts.get(row["claim"])
        lines.append(
            f"- verdict: {chl['id']} {chl['verdict']}"
            + (" (forced by the floor)" if chl["forced"] else "")
            + f": {chl['reason']}"
            if chl
            else "- verdict: (not yet recorded)"
        )
        lines.append("")
    write_markdown(run.path("worksheet"), sheet, "\n".join(lines), schema="worksheet")
