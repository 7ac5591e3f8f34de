"""Writing the ledger (claims CLM-NN, their retirement, tensions T-NN) and the questions callers ask of it.

Every write is one record appended to the log (`claims.log`) under the run lock,
with its id allocated under the same lock (`ids`), so concurrent callers get
distinct ids, lose nothing, and ids appear in the log in increasing order. Adding
a claim reads nothing of the ledger; retiring a claim and recording or resolving
a tension fold the ledger first, because they must know what it holds.

Nothing here deletes a claim or reuses an id: a retired claim stays, with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from research_engine import decompose, ids
from research_engine.claims import log
from research_engine.claims.gate import check_claim
from research_engine.errors import BadInput, CheckFailed
from research_engine.runstate import current_cycle
from research_engine.trace import Run, iso
from research_engine.vocabulary import ClaimStatus, Confidence, LedgerEvent, TensionStatus

CONFIDENCE = tuple(c.value for c in Confidence)


def record_claim(
    run: Run,
    sq: str,
    text: str,
    sources: list[str],
    quotes: list[str],
    confidence: str = "medium",
    spans: Sequence[str] = (),
) -> dict[str, Any]:
    """Pass the grounding gate and record the claim; returns it as `load` will show it. Evidence is
    `sources` with their `quotes`, and `spans` (`SQ-NN/SRC-NN#p05.s2`) whose words the tool copies."""
    if confidence not in CONFIDENCE:
        raise BadInput(
            f"unknown confidence {confidence!r}; expected one of {', '.join(CONFIDENCE)}",
            code="bad-confidence",
            field="confidence",
        )
    decompose.get(run, sq)
    evidence = check_claim(run, text, list(sources), list(quotes), list(spans))
    cycle = current_cycle(run)
    with run.lock():
        clm = ids.next_id(run, "clm")
        entry = log.record(
            LedgerEvent.CLAIM_ADDED,
            clm,
            iso(),
            sub_question=sq,
            text=" ".join(text.split()),
            evidence=evidence,
            confidence=confidence,
            cycle=cycle,
        )
        log.append(run, entry)
    return log.fold([entry])["claims"][0]


def add_claim(
    run: Run,
    sq: str,
    text: str,
    sources: list[str],
    quotes: list[str],
    confidence: str = "medium",
    spans: Sequence[str] = (),
) -> str:
    """Pass the grounding gate and record the claim; returns its id (CLM-NN)."""
    return str(record_claim(run, sq, text, sources, quotes, confidence, spans)["id"])


def retire(run: Run, clm: str, why: str) -> dict[str, Any]:
    """Retire a claim (it stays in the ledger, marked retired, with the reason); returns the claim."""
    why = " ".join((why or "").split())
    if not why:
        raise BadInput("say why the claim is retired (--why)", code="missing-why", field="why")
    with run.lock():
        claim = get_claim(log.load(run), clm)
        if claim["status"] == ClaimStatus.RETIRED:
            raise CheckFailed(
                f"claim {clm} is already retired ({claim.get('retired_why')})",
                code="already-retired",
                field="claim",
            )
        at = iso()
        log.append(run, log.record(LedgerEvent.CLAIM_RETIRED, clm, at, why=why))
    claim.update(status=ClaimStatus.RETIRED.value, retired_why=why, retired_at=at)
    return claim


def add_tension(run: Run, claims: list[str], about: str) -> str:
    """Record a tension between two or more active claims; returns its id (T-NN)."""
    about = " ".join((about or "").split())
    if not about:
        raise BadInput("say what the tension is about (--about)", code="missing-about", field="about")
    wanted = list(dict.fromkeys(c.strip() for c in claims if c.strip()))
    if len(wanted) < 2:
        raise BadInput(
            "a tension needs at least two different claims (--claims CLM-a,CLM-b)",
            code="tension-needs-two",
            field="claims",
        )
    with run.lock():
        known = {c["id"]: c for c in log.load(run)["claims"]}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise BadInput(
                f"tension cites claim(s) not in this run: {', '.join(unknown)}",
                code="unknown-claim",
                field="claims",
                data={"unknown": unknown},
            )
        retired = [c for c in wanted if known[c]["status"] == ClaimStatus.RETIRED]
        if retired:
            raise CheckFailed(
                f"tension cites retired claim(s): {', '.join(retired)}", code="retired-claim", field="claims"
            )
        tid = ids.next_id(run, "tension")
        log.append(run, log.record(LedgerEvent.TENSION_ADDED, tid, iso(), claims=wanted, about=about))
    return tid


def resolve_tension(run: Run, tension: str, resolution: str) -> dict[str, Any]:
    """Resolve an open tension with how and why; returns the tension."""
    resolution = " ".join((resolution or "").split())
    if not resolution:
        raise BadInput(
            "say how the tension was resolved (--resolution)", code="missing-resolution", field="resolution"
        )
    with run.lock():
        for item in log.load(run)["tensions"]:
            if item["id"] == tension:
                break
        else:
            raise BadInput(
                f"tension {tension} does not exist in this run", code="unknown-tension", field="tension"
            )
        if item["status"] == TensionStatus.RESOLVED:
            raise CheckFailed(
                f"tension {tension} is already resolved", code="already-resolved", field="tension"
            )
        at = iso()
        log.append(run, log.record(LedgerEvent.TENSION_RESOLVED, tension, at, resolution=resolution))
    item.update(status=TensionStatus.RESOLVED.value, resolution=resolution, resolved_at=at)
    return item


# ---------------------------------------------------------------------------- questions


def get_claim(ledger: dict[str, Any], clm: str) -> dict[str, Any]:
    for claim in ledger["claims"]:
        if claim["id"] == clm:
            return claim
    raise BadInput(f"claim {clm} does not exist in this run", code="unknown-claim", field="claim")


def active_claims(run: Run) -> list[dict[str, Any]]:
    return [c for c in log.load(run)["claims"] if c["status"] == ClaimStatus.ACTIVE]


def open_tensions(run: Run) -> list[dict[str, Any]]:
    return [t for t in log.load(run)["tensions"] if t["status"] == TensionStatus.OPEN]
