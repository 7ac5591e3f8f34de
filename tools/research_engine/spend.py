"""A run's spend, in every mode: the ledger each metered request is appended to, and the meter that keeps
the calls of `--run` commands inside the run's budgets.

- `SpendLedger` is `.state/spend.jsonl`, an append-only log (`eventlog`: one O_APPEND write and an
  fsync per record) of spend increments (`{"at", "provider_calls": 1}`); the run's spend is their sum. The
  headless engine (`engine.metering.Budget`) and every `--run` command append to the same file, each
  append under an exclusive `flock` of the ledger, so parallel leaves and a crash at any instant lose no
  record and never glue two together.
- `RunMeter` is the `meter` of an HttpClient opened for a run outside the headless engine (`net.fetch_policy`
  attaches it whenever it is given a run): a request to a search backend or data API
  (`Settings.provider_endpoints`) is a provider call, written to the ledger before it is sent; every body is
  counted in `fetched_bytes` once read. A call that would take a budget past its limit (the 4th provider
  call of `provider_calls: 3`; any request once the fetched bytes or the wall-clock time are spent) is
  refused with `BudgetSpent` (exit 7) before anything is sent. When the client closes, run.json's
  `budgets.spent` is brought up to the ledger's totals.
- `spent(run, record)` is what the controller reads: run.json's figures, raised to the ledger's.

Wall-clock time outside the engine is the time since the run was created (the controller's rule), so the
meter records none of it. This module decides nothing about routing; it never imports a stage.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from research_engine import eventlog, runrecord
from research_engine.errors import BudgetSpent, ResearchEngineError
from research_engine.trace import Run, iso
from research_engine.vocabulary import Budget

BUDGET_NAMES: tuple[str, ...] = tuple(Budget)


class SpendLedger:
    """`.state/spend.jsonl`: one record per spend, appended and fsynced as it happens; thread- and
    process-safe (a `flock` of the ledger serializes appends across processes)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def totals(self) -> dict[str, float]:
        """The sum of every complete record, every budget named (a torn last line is not a record)."""
        recorded = self.recorded()
        return {name: recorded.get(name, 0.0) for name in BUDGET_NAMES}

    def recorded(self) -> dict[str, float]:
        """The sum of every complete record, only the budgets some record names."""
        out: dict[str, float] = {}
        for record in eventlog.read(self.path).records:
            for name in BUDGET_NAMES:
                value = record.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                    out[name] = out.get(name, 0.0) + value
        return out

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the ledger against every other writer, in this process and in others."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing the descriptor releases the flock

    def add(self, amounts: dict[str, float]) -> None:
        amounts = {k: v for k, v in amounts.items() if v}
        if not amounts:
            return
        with self.exclusive():
            self._append(amounts)

    def _append(self, amounts: dict[str, float]) -> None:
        eventlog.append(self.path, [{"at": iso(), **amounts}])


def ledger_of(run: Run) -> SpendLedger:
    return SpendLedger(run.path("spend_ledger"))


def elapsed_seconds(created_at: str | None) -> int | None:
    """Seconds since a run.json `created_at` stamp; None when it is missing or malformed."""
    if not created_at:
        return None
    try:
        start = datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return max(0, int((datetime.now(UTC) - start).total_seconds()))


def spent(run: Run, record: dict[str, Any]) -> dict[str, int]:
    """The run's spend as the governor sees it: run.json's `budgets.spent`, each figure raised to the
    ledger's total when the ledger holds more (a `--run` command killed before it updated run.json)."""
    out = {k: v for k, v in ((record.get("budgets") or {}).get("spent") or {}).items()}
    try:
        ledger = ledger_of(run).recorded()
    except ResearchEngineError:
        ledger = {}
    for name, value in ledger.items():
        out[name] = max(int(out.get(name) or 0), int(value))
    return out


class RunMeter:
    """The `meter` of a client opened for a run outside the headless engine (see the module docstring)."""

    def __init__(self, run: Run, provider_endpoints: tuple[str, ...]) -> None:
        self.run = run
        self.ledger = ledger_of(run)
        self.provider_endpoints = tuple(p for p in provider_endpoints if p)
        record = _read_record(run)
        budgets = record.get("budgets") or {}
        self.limits = {
            k: int(v) for k, v in (budgets.get("set") or {}).items() if k in BUDGET_NAMES and v is not None
        }
        self.created_at = record.get("created_at")
        self.recorded = False  # whether this meter wrote anything (run.json is updated at close only then)
        self.refusal: BudgetSpent | None = None

    def is_provider(self, url: str) -> bool:
        return any(url.startswith(prefix) for prefix in self.provider_endpoints)

    def sending(self, method: str, url: str) -> None:
        """Refuse (BudgetSpent) a request that would take a budget past its limit; write a provider call
        to the ledger before it is sent."""
        provider = self.is_provider(url)
        if not provider:
            self._check(self.ledger.totals(), provider=False)
            return
        with self.ledger.exclusive():  # the check and the append are one step for every process
            self._check(self.ledger.totals(), provider=True)
            self.ledger._append({"provider_calls": 1})
        self.recorded = True

    def received(self, method: str, url: str, size: int) -> None:
        if size > 0:
            self.ledger.add({"fetched_bytes": size})
            self.recorded = True

    def _check(self, totals: dict[str, float], *, provider: bool) -> None:
        figures = dict(totals)
        if not figures.get("wall_clock_seconds"):  # outside the engine: time since the run was created
            figures["wall_clock_seconds"] = float(elapsed_seconds(self.created_at) or 0)
        for name in BUDGET_NAMES:
            limit = self.limits.get(name)
            if limit is None:
                continue
            used = int(figures.get(name, 0))
            if name == Budget.PROVIDER_CALLS:
                if not provider:
                    continue  # a page fetch is no provider call: only bytes and time bound it
                over = used + 1 > limit
            else:
                over = used >= limit
            if over:
                self.refusal = _refusal(self.run, name, used, limit, figures, self.limits)
                raise self.refusal

    def close(self) -> None:
        """Bring run.json's `budgets.spent` up to the ledger (and note a refusal); best effort, since the
        ledger already holds every spend and the controller reads it too."""
        if not self.recorded and self.refusal is None:
            return
        totals = self.ledger.recorded()
        refusal = self.refusal

        def change(record: dict[str, Any]) -> None:
            budgets = record.setdefault("budgets", {"set": {}, "spent": {}})
            current = budgets.setdefault("spent", {})
            for name, value in totals.items():
                current[name] = max(int(current.get(name) or 0), int(value))
            if refusal is not None:
                event = {"at": iso(), "kind": "budget-refused", **refusal.data}
                record.setdefault("events", []).append(event)

        with contextlib.suppress(ResearchEngineError, OSError):
            runrecord.update(self.run, change)
        self.recorded, self.refusal = False, None


def _refusal(
    run: Run, name: str, used: int, limit: int, figures: dict[str, float], limits: dict[str, int]
) -> BudgetSpent:
    more = "; this call would be one more" if name == Budget.PROVIDER_CALLS else ""
    what = f"{used} of {limit} used{more}"
    return BudgetSpent(
        f"budget {name} spent ({what}): refused before sending. Stop gathering: run `research-engine "
        f"control --run {run.root}` (it stops on the budget) and synthesize what the run holds",
        code=f"budget:{name}",
        data={
            "budget": name,
            "spent": {k: int(v) for k, v in figures.items()},
            "limits": dict(limits),
        },
    )


def _read_record(run: Run) -> dict[str, Any]:
    try:
        return runrecord.read(run)
    except ResearchEngineError:
        return {}
