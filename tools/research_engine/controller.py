"""The controller: the four signals, the governor, the priority ladder and the loop log.

DESIGN.md section 5, made code. After each cycle `control` reads the artifacts,
computes four signals, and `decide` (a PURE function: signals, cycle, ceiling and
budgets in; decision out) picks what happens next:

1. criterion first: stop `criterion-met` when coverage >= 0.8 and confidence >= 0.7
   and contradiction == 0 (this wins even at the cycle ceiling);
2. then the governor: stop `governor` when the cycle has reached the depth's ceiling,
   or `budget:<name>` when a run budget is spent;
3. then the first rung of the ladder whose signal fires AND which has targets:
   contradiction > 0 -> re-research (refused claim ids + open tension ids);
   gap > 0 -> supplement-gap (sub-questions with no supported claim that answers them, by
   `answering.answer_score`, + open material gaps);
   coverage low -> go-deeper (sub-questions lacking a supported, answering claim);
   confidence low -> re-retrieve (active claims not supported).
   A rung whose signal fires but whose target list is empty is skipped (a remediation
   without targets is not actionable); if no rung is left, the run stops `stalled`.

All thresholds, ceilings and the rung order live in one table, `POLICY`.

Signals are read from artifacts only (sub-questions, the claims ledger, the verdicts
in verify/contestation*.md, the critic's gaps); nothing a fetched page says reaches
the decision except through those. This module never fetches, never judges a claim
and never writes anything but controller/loop-log.md and run.json.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from research_engine import answering, coverage, critic, decompose, runrecord, spend
from research_engine import claims as claims_ledger
from research_engine.artifacts import read_counted, write_markdown
from research_engine.errors import CheckFailed, ResearchEngineError
from research_engine.ids import sort_key
from research_engine.runstate import all_contestations, latest_verdicts, load_loop_log, load_worksheet
from research_engine.schemas import validate
from research_engine.spend import elapsed_seconds
from research_engine.trace import Run, iso
from research_engine.vocabulary import CYCLE_CEILING, Action, Budget

# The one data table: thresholds, ceilings by depth, the ladder order, the run budgets.
POLICY: dict[str, Any] = {
    "criterion": {"coverage_min": 0.8, "confidence_min": 0.7, "contradiction_max": 0},
    "ceilings": CYCLE_CEILING,  # quick 1, standard 2, deep 3 (brief.py records it in run.json at lock)
    # (action, signal that fires it) in priority order.
    "ladder": (
        (Action.RE_RESEARCH, "contradiction"),
        (Action.SUPPLEMENT_GAP, "gap"),
        (Action.GO_DEEPER, "coverage"),
        (Action.RE_RETRIEVE, "confidence"),
    ),
    # budgets.set keys that bound the whole run (sources_per_sub_question is a per-SQ cap, not a run budget).
    "run_budgets": tuple(Budget),
}


@dataclass(frozen=True)
class Signals:
    """The four signals plus the ids behind them (the targets each rung would name)."""

    coverage: float
    confidence: float
    gap: int
    contradiction: int
    refused_claims: tuple[str, ...] = ()
    open_tensions: tuple[str, ...] = ()
    uncovered_sub_questions: tuple[str, ...] = ()
    unanswering_claims: tuple[str, ...] = ()  # supported, but answering no sub-question (answering.py)
    material_gaps: tuple[str, ...] = ()
    unsupported_claims: tuple[str, ...] = ()
    readings: dict[str, str] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, tuple):
                out[key] = list(value)
        out["coverage"] = round(self.coverage, 4)
        out["confidence"] = round(self.confidence, 4)
        return out


@dataclass(frozen=True)
class Decision:
    action: str
    targets: tuple[str, ...]
    stop_reason: str | None
    why: str
    skipped: tuple[str, ...] = ()  # rungs whose signal fired but had no targets

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "targets": list(self.targets),
            "stop_reason": self.stop_reason,
            "why": self.why,
            "skipped": list(self.skipped),
        }


def ceiling_for(depth: str) -> int:
    return int(POLICY["ceilings"][depth])


def criterion_met(signals: Signals) -> bool:
    c = POLICY["criterion"]
    return (
        signals.coverage >= c["coverage_min"]
        and signals.confidence >= c["confidence_min"]
        and signals.contradiction <= c["contradiction_max"]
    )


def spent_budget(budgets: dict[str, Any] | None) -> str | None:
    """The first run budget whose spend has reached its limit, or None."""
    if not budgets:
        return None
    limits = budgets.get("set") or {}
    spent = budgets.get("spent") or {}
    for name in POLICY["run_budgets"]:
        limit = limits.get(name)
        if limit is not None and spent.get(name) is not None and spent[name] >= limit:
            return name
    return None


def _rung_fires(signal: str, signals: Signals) -> bool:
    c = POLICY["criterion"]
    return {
        "contradiction": signals.contradiction > c["contradiction_max"],
        "gap": signals.gap > 0,
        "coverage": signals.coverage < c["coverage_min"],
        "confidence": signals.confidence < c["confidence_min"],
    }[signal]


def _rung_targets(signal: str, signals: Signals) -> tuple[str, ...]:
    return {
        "contradiction": signals.refused_claims + signals.open_tensions,
        "gap": signals.uncovered_sub_questions + signals.material_gaps,
        "coverage": signals.uncovered_sub_questions,
        "confidence": signals.unsupported_claims,
    }[signal]


def decide(signals: Signals, cycle: int, ceiling: int, budgets: dict[str, Any] | None = None) -> Decision:
    """The routing decision: criterion first, then the governor, then the ladder. Pure."""
    c = POLICY["criterion"]
    if criterion_met(signals):
        return Decision(
            "stop",
            (),
            "criterion-met",
            f"coverage {signals.coverage:.2f} >= {c['coverage_min']}, confidence {signals.confidence:.2f} >= "
            f"{c['confidence_min']} and contradiction {signals.contradiction} <= {c['contradiction_max']}",
        )
    if cycle >= ceiling:
        return Decision("stop", (), "governor", f"cycle {cycle} reached the ceiling of {ceiling} cycles")
    budget = spent_budget(budgets)
    if budget is not None:
        return Decision("stop", (), f"budget:{budget}", f"the {budget} budget is spent")
    skipped: list[str] = []
    for action, signal in POLICY["ladder"]:
        if not _rung_fires(signal, signals):
            continue
        targets = _rung_targets(signal, signals)
        if not targets:
            skipped.append(action)
            continue
        return Decision(action, targets, None, _rung_why(signal, signals, targets), tuple(skipped))
    return Decision(
        "stop",
        (),
        "stalled",
        "the criterion is not met but no remediation has targets"
        + (f" (skipped: {', '.join(skipped)})" if skipped else ""),
        tuple(skipped),
    )


def _rung_why(signal: str, signals: Signals, targets: tuple[str, ...]) -> str:
    c = POLICY["criterion"]
    named = ", ".join(targets)
    return {
        "contradiction": f"contradiction {signals.contradiction} > {c['contradiction_max']}: "
        f"refused claims and open tensions to re-research ({named})",
        "gap": f"gap {signals.gap}: sub-questions without a supported claim and material gaps ({named})",
        "coverage": f"coverage {signals.coverage:.2f} < {c['coverage_min']}: go deeper on {named}",
        "confidence": f"confidence {signals.confidence:.2f} < {c['confidence_min']}: re-retrieve for {named}",
    }[signal]


# ---------------------------------------------------------------- reading the artifacts


def read_signals(run: Run) -> Signals:
    """Compute the four signals from the run's artifacts, with a sentence on how each was read."""

    questions = {sq["id"]: str(sq.get("text") or "") for sq in decompose.load(run)}
    sub_questions = list(questions)
    ledger = claims_ledger.load(run)
    active = [c for c in ledger.get("claims", []) if c.get("status") == "active"]
    verdicts = latest_verdicts(run)

    def verdict_of(clm: str) -> str | None:
        v = verdicts.get(clm)
        return v["verdict"] if v else None

    supported = [c["id"] for c in active if verdict_of(c["id"]) == "supported"]
    refused = [c["id"] for c in active if verdict_of(c["id"]) == "refuse"]
    unverified = [c["id"] for c in active if verdict_of(c["id"]) is None]
    unsupported = [c["id"] for c in active if verdict_of(c["id"]) != "supported"]
    # Supported is about evidence; covered also needs the claim to answer its sub-question: the critic's
    # recorded judgement where there is one, else the answer score, alone or read together (`coverage`).
    relevance = coverage.readings(
        questions, [c for c in active if c["id"] in supported], critic.latest_answers(run)
    )
    unanswering = [clm for clm, reading in relevance.items() if not reading.answers]
    covered = {reading.sub_question for reading in relevance.values() if reading.answers}
    uncovered = [sq for sq in sub_questions if sq not in covered]
    judged = sum(1 for reading in relevance.values() if reading.by == "critic")
    tensions = [t["id"] for t in ledger.get("tensions", []) if t.get("status") == "open"]
    gaps = [g["id"] for g in critic.open_material_gaps(run)]

    covered_share = (len(sub_questions) - len(uncovered)) / len(sub_questions) if sub_questions else 0.0
    confidence = len(supported) / len(active) if active else 0.0
    readings = {
        "coverage": f"{len(sub_questions) - len(uncovered)} of {len(sub_questions)} sub-questions have an "
        "active, supported claim that answers them ("
        + (f"{judged} claim(s) judged by the critic, the rest by " if judged else "")
        + f"answer score >= {answering.ANSWERS_MIN}, alone or read together)"
        + (
            f"; {len(unanswering)} supported claim(s) answer no sub-question ({', '.join(unanswering)})"
            if unanswering
            else ""
        ),
        "relevance": "; ".join(f"{clm} {reading.basis}" for clm, reading in relevance.items())
        or "no supported claim yet",
        "confidence": f"{len(supported)} of {len(active)} active claims are supported"
        + (f" ({len(unverified)} not yet verified: {', '.join(unverified)})" if unverified else ""),
        "gap": f"{len(uncovered)} sub-question(s) without a supported, answering claim"
        + (f" ({', '.join(uncovered)})" if uncovered else "")
        + f" + {len(gaps)} open material gap(s) from the critic"
        + (f" ({', '.join(gaps)})" if gaps else ""),
        "contradiction": f"{len(refused)} refused claim(s) still active"
        + (f" ({', '.join(refused)})" if refused else "")
        + f" + {len(tensions)} open tension(s)"
        + (f" ({', '.join(tensions)})" if tensions else ""),
    }
    order = lambda ids_: tuple(sorted(ids_, key=sort_key))  # noqa: E731
    return Signals(
        coverage=covered_share,
        confidence=confidence,
        gap=len(uncovered) + len(gaps),
        contradiction=len(refused) + len(tensions),
        refused_claims=order(refused),
        open_tensions=order(tensions),
        uncovered_sub_questions=order(uncovered),
        unanswering_claims=order(unanswering),
        material_gaps=order(gaps),
        unsupported_claims=order(unsupported),
        readings=readings,
    )


def governor_position(record: dict[str, Any], cycle: int) -> dict[str, Any]:
    """Where the governor stands: cycle, ceiling, budgets set and spent.

    Wall-clock spend is the time since the run was created unless a driver recorded
    its own figure in run.json (budgets.spent.wall_clock_seconds).
    """
    depth = record.get("depth", "standard")
    ceiling = int(record.get("cycle_ceiling") or ceiling_for(depth))
    budgets = record.get("budgets") or {"set": {}, "spent": {}}
    spent = dict(budgets.get("spent") or {})
    if "wall_clock_seconds" not in spent:
        elapsed = elapsed_seconds(record.get("created_at"))
        if elapsed is not None:
            spent["wall_clock_seconds"] = elapsed
    limits = {k: v for k, v in (budgets.get("set") or {}).items() if k in POLICY["run_budgets"]}
    return {"cycle": cycle, "ceiling": ceiling, "depth": depth, "budgets": {"set": limits, "spent": spent}}


# ---------------------------------------------------------------- the `control` step


def control(run: Run) -> dict[str, Any]:
    """Run one controller step: read signals, decide, append the cycle block, update run.json.

    Returns the decision as printed by `control --json`: action, targets, stop_reason, cycle,
    plus the signals and the governor position.
    """

    with run.lock():
        record = runrecord.read(run)
        log = load_loop_log(run)
        if record.get("stop_reason") or any(b["decision"]["action"] == "stop" for b in log["cycles"]):
            raise CheckFailed(
                f"the run already stopped ({record.get('stop_reason') or 'see controller/loop-log.md'}); "
                "no further cycle is allowed",
                code="run-stopped",
            )
        if not decompose.load(run):
            raise CheckFailed(
                "nothing to control: the run has no sub-questions yet (research-engine sq add)",
                code="no-sub-questions",
            )
        cycle = 1 + len(log["cycles"])
        _require_closed_verification(run, cycle)
        signals = read_signals(run)
        # The spend ledger is an artifact too: every metered call of every mode is in it at once.
        budgets = {**(record.get("budgets") or {}), "spent": spend.spent(run, record)}
        governor = governor_position({**record, "budgets": budgets}, cycle)
        decision = decide(signals, cycle, governor["ceiling"], governor["budgets"])
        block = {
            "cycle": cycle,
            "at": iso(),
            "signals": {
                "coverage": round(signals.coverage, 4),
                "confidence": round(signals.confidence, 4),
                "gap": signals.gap,
                "contradiction": signals.contradiction,
                "readings": dict(signals.readings),
                "ids": {
                    "refused_claims": list(signals.refused_claims),
                    "open_tensions": list(signals.open_tensions),
                    "uncovered_sub_questions": list(signals.uncovered_sub_questions),
                    "unanswering_claims": list(signals.unanswering_claims),
                    "material_gaps": list(signals.material_gaps),
                    "unsupported_claims": list(signals.unsupported_claims),
                },
            },
            "governor": governor,
            "decision": {
                "action": decision.action,
                "targets": list(decision.targets),
                "stop_reason": decision.stop_reason,
                "skipped": list(decision.skipped),
            },
            "why": decision.why,
        }
        log["cycles"].append(block)
        _write_loop_log(run, log)
        note_cycle(run, block)
    return {
        "action": decision.action,
        "targets": list(decision.targets),
        "stop_reason": decision.stop_reason,
        "cycle": cycle,
        "why": decision.why,
        "signals": block["signals"],
        "governor": governor,
    }


def _require_closed_verification(run: Run, cycle: int) -> None:
    """Verdicts recorded this cycle but not closed would be invisible to the signals: refuse instead."""

    sheet = load_worksheet(run)
    if sheet and sheet["cycle"] == cycle and sheet["challenges"] and not sheet.get("closed_at"):
        raise CheckFailed(
            f"cycle {cycle} has verdicts that were never closed: run `research-engine verify close` first",
            code="verification-not-closed",
        )


def note_cycle(run: Run, block: dict[str, Any]) -> None:
    """Copy one loop-log cycle block into run.json (cycles, cycles_detail, status, stop_reason).

    `control` calls it right after writing the block; a driver that finds a block
    in the loop log but not in run.json (a kill between the two writes) calls it to
    catch up.
    """

    decision = block["decision"]

    def change(rec: dict[str, Any]) -> None:
        rec["cycles"] = block["cycle"]
        rec.setdefault("cycles_detail", []).append(
            {
                "cycle": block["cycle"],
                "at": block["at"],
                "coverage": block["signals"]["coverage"],
                "confidence": block["signals"]["confidence"],
                "gap": block["signals"]["gap"],
                "contradiction": block["signals"]["contradiction"],
                "action": decision["action"],
                "targets": decision["targets"],
                "stop_reason": decision["stop_reason"],
            }
        )
        if decision["action"] == "stop":
            rec["stop_reason"] = decision["stop_reason"]
            rec["status"] = "stopped"
        else:
            rec["status"] = "running"

    runrecord.update(run, change)


def _write_loop_log(run: Run, log: dict[str, Any]) -> None:
    lines = ["# Controller loop log", ""]
    c = POLICY["criterion"]
    lines.append(
        f"Criterion: coverage >= {c['coverage_min']}, confidence >= {c['confidence_min']}, "
        f"contradiction <= {c['contradiction_max']}. Ladder: "
        + " > ".join(f"{a} ({s})" for a, s in POLICY["ladder"])
        + "."
    )
    for block in log["cycles"]:
        s, g, d = block["signals"], block["governor"], block["decision"]
        lines += ["", f"## Cycle {block['cycle']} ({block['at']})", "", "Signals:", ""]
        for name in ("coverage", "confidence", "gap", "contradiction"):
            value = s[name]
            shown = f"{value:.2f}" if isinstance(value, float) else str(value)
            lines.append(f"- **{name}** {shown}: {s['readings'].get(name, '')}")
        if s["readings"].get("relevance"):
            lines.append(f"- relevance (beside the verdicts): {s['readings']['relevance']}")
        lines += [
            "",
            f"Governor: cycle {g['cycle']} of {g['ceiling']} ({g.get('depth', 'depth unknown')}); budgets "
            + (
                ", ".join(
                    f"{k} {g['budgets']['spent'].get(k, 0)}/{v}" for k, v in g["budgets"]["set"].items()
                )
                or "none set"
            ),
            "",
            f"Decision: **{d['action']}**"
            + (f" (stop reason: {d['stop_reason']})" if d["stop_reason"] else "")
            + (f"; targets: {', '.join(d['targets'])}" if d["targets"] else ""),
            "",
            f"Why: {block['why']}",
        ]
    write_markdown(run.path("loop_log"), log, "\n".join(lines), schema="loop-log")


_CYCLE_BLOCK_RE = re.compile(r"^## Cycle (\d+)", re.M)


def check_loop_log(run: Run, report: Any) -> None:
    """validate checker: loop-log front matter, cycle numbering, references to contestation."""

    path = run.path("loop_log")
    read = read_counted(report, path)
    if read is None:
        return
    meta, body = read
    problems = validate(meta, "loop-log")
    report.extend(problems, path)
    if problems:
        return
    cycles = meta["cycles"]
    for i, block in enumerate(cycles, 1):
        if block["cycle"] != i:
            report.add(path, f"cycle block {i} is numbered {block['cycle']}", "cross-reference")
        if block["decision"]["action"] == "stop" and i != len(cycles):
            report.add(path, f"cycle {i} stopped the run but later cycles follow", "cross-reference")
        if block["decision"]["action"] != "stop" and not block["decision"]["targets"]:
            report.add(path, f"cycle {i} remediates without targets", "cross-reference")
        if block["governor"]["cycle"] > block["governor"]["ceiling"]:
            report.add(
                path, f"cycle {i} exceeds the ceiling {block['governor']['ceiling']}", "cross-reference"
            )
    if [int(n) for n in _CYCLE_BLOCK_RE.findall(body)] != [b["cycle"] for b in cycles]:
        report.add(path, "the body's cycle blocks do not match the front matter", "cross-reference")
    # Loop log -> contestation: a refused id named in a cycle must be refused by then.
    _check_refusals_named(run, report, path, cycles)
    try:
        record = runrecord.read(run)
    except ResearchEngineError:
        return
    if record.get("cycles") != len(cycles):
        report.add(
            run.path("run"),
            f"run.json cycles {record.get('cycles')} but the loop log has {len(cycles)}",
            "cross-reference",
            "cycles",
        )


def _check_refusals_named(run: Run, report: Any, path: Any, cycles: list[dict[str, Any]]) -> None:
    refused_by_cycle: dict[int, set[str]] = {}
    for meta in all_contestations(run):
        refused_by_cycle.setdefault(int(meta.get("cycle", 0)), set()).update(
            c["claim"] for c in meta.get("challenges", []) if c["verdict"] == "refuse"
        )
    for block in cycles:
        named = block["signals"].get("ids", {}).get("refused_claims", [])
        known = set().union(*[v for k, v in refused_by_cycle.items() if k <= block["cycle"]] or [set()])
        for clm in named:
            if clm not in known:
                report.add(
                    path,
                    f"cycle {block['cycle']} names {clm} as refused but no contestation refuses it",
                    "cross-reference",
                )
