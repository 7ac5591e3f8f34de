"""Identifier allocation: SQ-NN, SRC-NN (per sub-question), CLM-NN, CHL-NN, T-NN.

Identifiers are zero-padded to two digits and start at 01. Past 99 they simply
grow (CLM-100, CLM-101, ...): three digits from 100, four from 1000. Plain string
sorting would put CLM-100 before CLM-99, so everything that orders identifiers
uses `sort_key`, which sorts by prefix and then by number.

Allocation is a monotonic counter kept in `.state/ids.json` inside the run and
updated under the run lock, so many processes allocating at once get distinct
ids, and an id is never handed out twice, even after the thing it named has been
retired. The counter also never falls below the highest id already present in
the run's artifacts (so a lost state file cannot cause reuse): source files for
SRC, the last record of the claims ledger's log for CLM and T.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from research_engine import bounded, eventlog
from research_engine.errors import BadInput
from research_engine.trace import Run, atomic_write_text
from research_engine.vocabulary import LedgerEvent

KINDS = {"sq": "SQ", "src": "SRC", "clm": "CLM", "chl": "CHL", "tension": "T", "gap": "G"}
# Ids recorded in the claims ledger's log, by the event that introduces them (appended in increasing order).
LEDGER_EVENTS = {"CLM": LedgerEvent.CLAIM_ADDED, "T": LedgerEvent.TENSION_ADDED}
ID_RE = re.compile(r"^(SQ|SRC|CLM|CHL|T|G)-([0-9]{2,})\Z")  # ASCII digits only; \Z: no trailing newline
SOURCE_REF_RE = re.compile(r"^(SQ-[0-9]{2,})/(SRC-[0-9]{2,})\Z")


def format_id(prefix: str, number: int) -> str:
    return f"{prefix}-{number:02d}"


def parse_id(value: str) -> tuple[str, int]:
    match = ID_RE.match(value or "")
    if not match:
        raise BadInput(f"not an identifier: {value!r}", code="bad-id")
    return match.group(1), int(match.group(2))


def sort_key(value: str) -> tuple[str, int, str]:
    """Order ids numerically within their prefix; also works for SQ-NN/SRC-NN refs."""
    if "/" in value:
        sq, _, src = value.partition("/")
        return (sq.split("-")[0], _num(sq), f"{_num(src):09d}")
    return (value.split("-")[0], _num(value), "")


def _num(value: str) -> int:
    try:
        return int(value.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def parse_source_ref(value: str) -> tuple[str, str]:
    match = SOURCE_REF_RE.match(value or "")
    if not match:
        raise BadInput(
            f"not a source reference: {value!r} (expected SQ-NN/SRC-NN)",
            code="bad-source-ref",
            field="source",
        )
    return match.group(1), match.group(2)


def _state_path(run: Run) -> Path:
    return run.path("state", name="ids")


def _load(run: Run) -> dict:
    path = _state_path(run)
    if not path.exists():
        return {}
    try:
        state = bounded.load_json(bounded.read_bytes(path), "identifier state")
    except BadInput as exc:
        raise BadInput(f"identifier state {path} is unreadable: {exc.message}", code="bad-state") from exc
    if not isinstance(state, dict):
        raise BadInput(f"identifier state {path} is not a JSON object", code="bad-state")
    return state


def _highest_on_disk(run: Run, prefix: str, sq: str | None) -> int:
    """Highest number already used for this kind in the run's artifacts (a floor)."""
    if prefix == "SRC" and sq:
        folder = run.path("retrieve_dir", sq=sq)
        nums = [_num(p.stem) for p in folder.glob("SRC-*.md")] if folder.is_dir() else []
        return max(nums, default=0)
    if prefix in LEDGER_EVENTS:
        # The last record introducing such an id holds the highest one; read from the log's end, this costs
        # the same however long the ledger is.
        event = LEDGER_EVENTS[prefix]
        found = eventlog.last(run.path("claims_log"), lambda r: r.get("event") == event)
        return _num(str(found.get("id"))) if found else 0
    return 0


def allocate(run: Run, kind: str, *, sq: str | None = None, count: int = 1) -> list[str]:
    """Allocate `count` new identifiers of `kind` ('sq', 'src', 'clm', 'chl', 'tension')."""
    if kind not in KINDS:
        raise BadInput(f"unknown id kind {kind!r}; expected one of {', '.join(KINDS)}", code="bad-id-kind")
    prefix = KINDS[kind]
    if kind == "src" and (not sq or not re.fullmatch(r"SQ-[0-9]{2,}", sq)):
        raise BadInput("a source id needs its sub-question (--sq SQ-NN)", code="missing-sq", field="sq")
    if count < 1:
        raise BadInput("count must be at least 1", code="bad-count")
    with run.lock():
        state = _load(run)
        if kind == "src":
            per_sq = state.setdefault("SRC", {})
            current = max(int(per_sq.get(sq, 0)), _highest_on_disk(run, "SRC", sq))
            per_sq[sq] = current + count
        else:
            current = max(int(state.get(prefix, 0)), _highest_on_disk(run, prefix, None))
            state[prefix] = current + count
        atomic_write_text(_state_path(run), json.dumps(state, indent=2, sort_keys=True) + "\n")
    return [format_id(prefix, current + i) for i in range(1, count + 1)]


def next_id(run: Run, kind: str, *, sq: str | None = None) -> str:
    return allocate(run, kind, sq=sq)[0]


def peek(run: Run) -> dict:
    """The current counters (for validate and tests)."""
    return _load(run)
