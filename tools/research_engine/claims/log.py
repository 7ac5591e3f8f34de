"""The ledger's machine truth: `consolidate/claims.jsonl`, an append-only log of ledger events.

One JSON object a line (schema `claim-record`), one of four events: `claim-added`
(the whole claim with its evidence), `claim-retired`, `tension-added`,
`tension-resolved`. A record is validated against its schema before it is
written and appended under the run lock (`eventlog.append`: O_APPEND, one write,
fsync), so adding a claim costs the same at 0 and at 1,000 claims: nothing
already in the log is read or rewritten. A torn last line left by a crash is
never read as a record and is moved aside by the next append, which the run's
record notes (`ledger-repaired`).

`fold` turns the records, in order, into the ledger callers use (schema
`claims`): `{"schema_version", "claims": [...], "tensions": [...]}`, a claim's
status and a tension's resolution being the effect of the events about it. A
record that cannot apply (a second add of one id, the retirement of an unknown
claim, ...) is never skipped silently: `load` refuses the ledger, `validate`
names the line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from research_engine import eventlog, runrecord
from research_engine.errors import BadInput, CheckFailed
from research_engine.schemas import validate
from research_engine.trace import Run
from research_engine.vocabulary import ClaimStatus, LedgerEvent, TensionStatus

SCHEMA = "claims"  # the folded ledger
RECORD_SCHEMA = "claim-record"  # one line of the log
SCHEMA_VERSION = 1


class LedgerConflict(ValueError):
    """A record that cannot apply to the ledger folded so far."""


def empty() -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "claims": [], "tensions": []}


def record(event: LedgerEvent, ident: str, at: str, **fields: Any) -> dict[str, Any]:
    """One log record, keys in the order people read them."""
    return {"schema_version": SCHEMA_VERSION, "event": event, "id": ident, **fields, "at": at}


def append(run: Run, entry: dict[str, Any]) -> None:
    """Validate `entry` against schema `claim-record` and append it to the log, under the run lock."""
    path = run.path("claims_log")
    problems = validate(entry, RECORD_SCHEMA, file=run.relative(path) if path.exists() else None)
    if problems:
        raise CheckFailed(
            f"refusing to append to {path.name}: the record breaks {RECORD_SCHEMA}.schema.json",
            code="artifact-invalid",
            problems=problems,
        )
    with run.lock():
        refuse_legacy(run)
        repair = eventlog.append(path, [entry])
        if repair is not None:
            runrecord.add_event(
                run,
                "ledger-repaired",
                file=run.relative(path),
                offset=repair.offset,
                removed_bytes=repair.removed,
                kept_in=run.relative(repair.kept_in),
                why="an unterminated last line (a write cut short) was cut off before appending",
            )


def last_id(run: Run, event: LedgerEvent) -> str | None:
    """The id of the last `event` record (ids are appended in increasing order), read from the log's end."""
    found = eventlog.last(run.path("claims_log"), lambda r: r.get("event") == event)
    ident = found.get("id") if found else None
    return ident if isinstance(ident, str) else None


def read(run: Run) -> eventlog.LogContents:
    return eventlog.read(run.path("claims_log"))


def load(run: Run) -> dict[str, Any]:
    """The ledger folded from the log; an empty ledger when nothing was recorded yet. BadInput when a line
    is not a JSON object or a record cannot apply (the log was edited by hand)."""
    contents = read(run)
    if not contents.records and not contents.bad_lines:
        refuse_legacy(run)
    if contents.bad_lines:
        line, why = contents.bad_lines[0]
        raise BadInput(
            f"{run.relative(run.path('claims_log'))} line {line} is not a JSON object ({why}): "
            "the ledger was edited by hand or damaged; `research-engine validate` lists every problem",
            code="malformed-ledger",
        )
    return fold(contents.records)


def fold(records: Iterable[dict[str, Any]], problems: list[tuple[int, str]] | None = None) -> dict[str, Any]:
    """The ledger the records make, applied in order. A record that cannot apply raises BadInput, or, when
    `problems` is given, is left out and noted there as (1-based record number, why)."""
    ledger = empty()
    claims: dict[str, dict[str, Any]] = {}
    tensions: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(records, 1):
        try:
            _apply(entry, ledger, claims, tensions)
        except (LedgerConflict, KeyError, TypeError, AttributeError) as exc:
            why = str(exc) if isinstance(exc, LedgerConflict) else f"malformed record ({exc!r})"
            if problems is None:
                raise BadInput(
                    f"consolidate/claims.jsonl record {number} cannot apply: {why}", code="malformed-ledger"
                ) from exc
            problems.append((number, why))
    return ledger


def _apply(
    entry: dict[str, Any],
    ledger: dict[str, Any],
    claims: dict[str, dict[str, Any]],
    tensions: dict[str, dict[str, Any]],
) -> None:
    event, ident = entry["event"], entry["id"]
    if event == LedgerEvent.CLAIM_ADDED:
        if ident in claims:
            raise LedgerConflict(f"{ident} is added a second time")
        claim = {
            "id": ident,
            "sub_question": entry["sub_question"],
            "text": entry["text"],
            "evidence": entry["evidence"],
            "confidence": entry["confidence"],
            "status": ClaimStatus.ACTIVE.value,
            "retired_why": None,
            "cycle": entry["cycle"],
            "added_at": entry["at"],
        }
        claims[ident] = claim
        ledger["claims"].append(claim)
    elif event == LedgerEvent.CLAIM_RETIRED:
        retiring = claims.get(ident)
        if retiring is None:
            raise LedgerConflict(f"{ident} is retired but was never added")
        if retiring["status"] == ClaimStatus.RETIRED:
            raise LedgerConflict(f"{ident} is retired a second time")
        retiring.update(status=ClaimStatus.RETIRED.value, retired_why=entry["why"], retired_at=entry["at"])
    elif event == LedgerEvent.TENSION_ADDED:
        if ident in tensions:
            raise LedgerConflict(f"{ident} is added a second time")
        unknown = [c for c in entry["claims"] if c not in claims]
        if unknown:
            raise LedgerConflict(f"{ident} cites claim(s) not added before it: {', '.join(unknown)}")
        tension = {
            "id": ident,
            "claims": list(entry["claims"]),
            "about": entry["about"],
            "status": TensionStatus.OPEN.value,
            "resolution": None,
            "added_at": entry["at"],
        }
        tensions[ident] = tension
        ledger["tensions"].append(tension)
    elif event == LedgerEvent.TENSION_RESOLVED:
        resolving = tensions.get(ident)
        if resolving is None:
            raise LedgerConflict(f"{ident} is resolved but was never added")
        if resolving["status"] == TensionStatus.RESOLVED:
            raise LedgerConflict(f"{ident} is resolved a second time")
        resolving.update(
            status=TensionStatus.RESOLVED.value, resolution=entry["resolution"], resolved_at=entry["at"]
        )
    else:
        raise LedgerConflict(f"unknown event {event!r}")


def legacy_draft(run: Run) -> bool:
    """True when the run keeps its claims the old way, as the front matter of synthesis.draft.md (a run
    made before consolidate/claims.jsonl). The draft this version renders never has front matter."""
    path = run.path("draft")
    if run.path("claims_log").exists() or not path.is_file():
        return False
    with path.open("rb") as fh:
        return fh.read(4) == b"---\n"


def refuse_legacy(run: Run) -> None:
    if legacy_draft(run):
        raise BadInput(
            "this run keeps its claims in consolidate/synthesis.draft.md's front matter, the format before "
            "consolidate/claims.jsonl: run `research-engine claims migrate --run RUN` once",
            code="legacy-ledger",
        )
