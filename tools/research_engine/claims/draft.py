"""The ledger for people: `consolidate/synthesis.draft.md`, rendered from the log at stage boundaries.

The draft is a view, never the truth: plain Markdown (no front matter) with the
active claims by sub-question and their quotes, the retired claims, and the
tensions. Its opening paragraph says how many records of
`consolidate/claims.jsonl` it shows, and it shows exactly the ledger those first
records fold into (`validate` renders them again and compares). It is rendered
again, when it shows fewer records than the log holds, by `claims list`,
`verify close`, `report finish` and the headless engine after each consolidate
step; adding a claim only appends to the log (that is what keeps `claims add`
flat), so between those moments the draft lags behind the ledger and says so.

`migrate` turns a run made before the log (claims kept as the draft's front
matter) into the log, once.
"""

from __future__ import annotations

import re
from typing import Any

from research_engine import decompose, escaping, eventlog
from research_engine.artifacts import read_markdown
from research_engine.claims import log
from research_engine.errors import BadInput, CheckFailed
from research_engine.ids import sort_key
from research_engine.schemas import validate
from research_engine.trace import Run, atomic_write_bytes, atomic_write_text, iso
from research_engine.vocabulary import ClaimStatus, LedgerEvent, TensionStatus

TITLE = "# Synthesis draft"
SHOWN_RE = re.compile(r"as of its first (?:record|(\d+) records)\b")
HEAD_BYTES = 2048  # the opening paragraph, where the number of records shown is stated


def render(ledger: dict[str, Any], questions: dict[str, str] | None = None, *, records: int) -> str:
    """The draft's text for the ledger that the log's first `records` records fold into."""
    questions = questions or {}
    claims, tensions = ledger["claims"], ledger["tensions"]
    active = [c for c in claims if c["status"] == ClaimStatus.ACTIVE]
    retired = [c for c in claims if c["status"] == ClaimStatus.RETIRED]
    open_count = sum(1 for t in tensions if t["status"] == TensionStatus.OPEN)
    first = "its first record" if records == 1 else f"its first {records} records"
    lines = [
        TITLE,
        "",
        f"The claims ledger `consolidate/claims.jsonl` as of {first}: {_count(len(active), 'active claim')}, "
        f"{len(retired)} retired, {_count(len(tensions), 'tension')} ({open_count} open). The ledger is the "
        "record; this view is rendered from it by `claims list`, `verify close`, `report finish` and the "
        "headless engine after each consolidate step, so records appended since then are in the ledger "
        "only.",
        "",
    ]
    by_sq: dict[str, list[dict[str, Any]]] = {}
    for claim in active:
        by_sq.setdefault(claim["sub_question"], []).append(claim)
    if not active:
        lines += ["(no active claims)", ""]
    for sq in sorted(by_sq, key=sort_key):
        title = f": {escaping.text(questions[sq])}" if sq in questions else ""
        lines += [f"## {sq}{title}", ""]
        for claim in sorted(by_sq[sq], key=lambda c: sort_key(c["id"])):
            lines += _claim_lines(claim)
    if retired:
        lines += ["## Retired claims", ""]
        for claim in sorted(retired, key=lambda c: sort_key(c["id"])):
            lines += _claim_lines(claim)
    lines += ["## Tensions", ""]
    if not tensions:
        lines += ["(none recorded)", ""]
    for t in tensions:
        state = f"resolved: {t['resolution']}" if t["status"] == TensionStatus.RESOLVED else "open"
        lines.append(f"- **{t['id']}** ({', '.join(t['claims'])}): {t['about']} *({state})*")
    lines += ["", "Rendered by `research-engine` from `consolidate/claims.jsonl`; do not edit by hand."]
    return "\n".join(lines) + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _claim_lines(claim: dict[str, Any]) -> list[str]:
    status = (
        f"; retired: {escaping.text(claim['retired_why'])}" if claim["status"] == ClaimStatus.RETIRED else ""
    )
    head = f"{claim['confidence']} confidence, cycle {claim['cycle']}{status}"
    out = [f"- **{claim['id']}** ({head}) {escaping.text(claim['text'])}"]
    for ev in claim["evidence"]:
        where = f" [{ev['passage']}]" if ev.get("passage") else ""
        out.append(f"  - {ev['source']}{where}: \u201c{escaping.text(ev['quote'])}\u201d")
    out.append("")
    return out


def questions(run: Run) -> dict[str, str]:
    """Sub-question id -> text, for the draft's headings ({} when the sub-questions are unreadable)."""
    try:
        return {q["id"]: q["text"] for q in decompose.load(run)}
    except BadInput:
        return {}


def shown(run: Run) -> int | None:
    """How many log records the draft says it shows; None without a draft (or one this version did not
    render: no such statement in its opening)."""
    try:
        with run.path("draft").open("rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    match = SHOWN_RE.search(head)
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else 1


def refresh(run: Run) -> bool:
    """Render the draft again when it shows fewer records than the log holds; True when it was written."""
    with run.lock():
        contents = log.read(run)
        if contents.bad_lines:
            log.load(run)  # raises malformed-ledger, naming the line
        count = len(contents.records)
        if count == 0 or shown(run) == count:
            return False
        text = render(log.fold(contents.records), questions(run), records=count)
        atomic_write_text(run.path("draft"), text)
    return True


def migrate(run: Run) -> int:
    """Move a run's claims from the old draft's front matter into consolidate/claims.jsonl and render the
    draft anew; returns the number of records written. Ids, texts, evidence and times are kept."""
    with run.lock():
        if not log.legacy_draft(run):
            raise CheckFailed(
                "nothing to migrate: the run has consolidate/claims.jsonl or no old-format draft",
                code="nothing-to-migrate",
            )
        meta, _ = read_markdown(run.path("draft"))
        problems = validate(meta, log.SCHEMA)
        if problems:
            raise CheckFailed(
                "the old draft's front matter breaks claims.schema.json; fix it before migrating",
                code="artifact-invalid",
                problems=problems,
            )
        records = _legacy_records(meta)
        for entry in records:
            problems = validate(entry, log.RECORD_SCHEMA)
            if problems:
                raise CheckFailed(
                    f"record for {entry['id']} would break claim-record.schema.json",
                    code="artifact-invalid",
                    problems=problems,
                )
        log.fold(records)  # raises when the old ledger does not hold together
        atomic_write_bytes(run.path("claims_log"), b"".join(eventlog.encode(r) for r in records))
        refresh(run)
    return len(records)


def _legacy_records(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Claims added in id order, then tensions added, then retirements and resolutions in time order."""
    claims = sorted(meta["claims"], key=lambda c: sort_key(c["id"]))
    tensions = sorted(meta["tensions"], key=lambda t: sort_key(t["id"]))
    now = iso()
    out = [
        log.record(
            LedgerEvent.CLAIM_ADDED,
            c["id"],
            c["added_at"],
            sub_question=c["sub_question"],
            text=c["text"],
            evidence=c["evidence"],
            confidence=c["confidence"],
            cycle=c["cycle"],
        )
        for c in claims
    ]
    out += [
        log.record(LedgerEvent.TENSION_ADDED, t["id"], t["added_at"], claims=t["claims"], about=t["about"])
        for t in tensions
    ]
    later = [
        (
            c.get("retired_at") or now,
            sort_key(c["id"]),
            LedgerEvent.CLAIM_RETIRED,
            c["id"],
            {"why": c["retired_why"]},
        )
        for c in claims
        if c["status"] == ClaimStatus.RETIRED
    ] + [
        (
            t.get("resolved_at") or now,
            sort_key(t["id"]),
            LedgerEvent.TENSION_RESOLVED,
            t["id"],
            {"resolution": t["resolution"]},
        )
        for t in tensions
        if t["status"] == TensionStatus.RESOLVED
    ]
    for at, _, event, ident, fields in sorted(later, key=lambda x: (x[0], x[1])):
        out.append(log.record(event, ident, at, **fields))
    return out
