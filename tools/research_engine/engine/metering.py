"""Metering a headless run: the governor's budgets (what has been spent, the clean stop when one is gone),
the spend ledger that keeps every spend on disk as it happens, and the engine's own timers (where the
time went, for `bench/run.py`).

Four run budgets, set by the brief (`budget:` in brief.md, defaults in
schema/brief.schema.json) and named as in `controller.POLICY["run_budgets"]`:

- `provider_calls`: requests sent to search backends and data APIs (SearXNG,
  Brave, Tavily, DuckDuckGo, OpenAlex, World Bank), every request on the wire
  (a retry is another call). Page fetches are not provider calls (they are
  bounded by `fetched_bytes`), and neither are model calls: the model is metered
  in tokens.
- `fetched_bytes`: bytes of every HTTP response body the run received (search,
  APIs, pages, robots.txt, the verifier's re-fetches, model replies).
- `model_tokens`: prompt + completion tokens of every model call (the server's
  `usage`, estimated by the model adapter when the server reports none).
- `wall_clock_seconds`: seconds the engine has been working on the run, summed
  over resumes (time a killed run lay dead does not count).

The spend ledger (`spend.SpendLedger`, `.state/spend.jsonl`, which every `--run` command of the skill
bundle appends to as well) is an append-only log (`eventlog`: one O_APPEND write and an fsync per
record): a provider call is written BEFORE its request is sent, the bytes of a body as soon as it has been
read, a model call's tokens as soon as it returns, and the working time since
the last record rides along with every record. So a run killed at any instant
(kill -9 included) has on disk at least every provider call it made, and a
resume starts from the ledger's totals: crashing never resets the governor.
What a kill can lose is only the body being read and the model call in flight
at that instant. Runs from before the ledger carry the journal's figures into it
once.

`Budget.check()` raises `BudgetSpent` (exit 7) with `code="budget:<name>"` once a
figure reaches its limit; the loop catches it at a step boundary, records the
stop in run.json and writes a partial, labelled result. `Meter` is the hook the
one `net.HttpClient` calls for every request and body (`meter=`), so every
exchange is counted without any adapter knowing about budgets; `MeteredClient`
wraps the client to refuse new requests once a budget is spent.

This module never decides routing (the controller reads the same figures from
run.json) and writes nothing but the ledger; the loop persists `spent` in run.json.

`Clock` keeps exclusive time per category (an inner category pauses the outer one);
`TimedClient` and `TimedModel` book HTTP and model time on it, and `TimedModel` checks
the budget before every model call and records its tokens after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from research_engine.brief import budget_of
from research_engine.errors import BudgetSpent
from research_engine.spend import BUDGET_NAMES, SpendLedger

__all__ = [
    "BUDGET_NAMES",
    "Budget",
    "Clock",
    "Meter",
    "MeteredClient",
    "SpendLedger",
    "TimedClient",
    "TimedModel",
]


@dataclass
class Budget:
    """Limits and running spend; `carried` holds what earlier sessions (before a resume) spent.

    With a `ledger`, every spend is also appended to it as it happens (see the module docstring)."""

    limits: dict[str, int]
    carried: dict[str, float] = field(default_factory=dict)
    provider_calls: int = 0
    fetched_bytes: int = 0
    started: float = field(default_factory=time.monotonic)
    model_usage: Any = None  # a models.Usage, read live so tokens count the moment they are spent
    ledger: SpendLedger | None = None
    _wall_recorded: float = 0.0  # seconds of this session already in the ledger
    _tokens_recorded: int = 0  # model tokens of this session already in the ledger
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_brief(
        cls,
        fields: dict[str, Any],
        carried: dict[str, Any] | None = None,
        overrides: dict[str, int] | None = None,
        ledger: SpendLedger | None = None,
    ) -> Budget:
        """The run's budget. With a ledger that exists, what earlier sessions spent is its totals (the
        journal's `carried` figures are written into a new ledger once, for runs from before it)."""
        limits = {k: int(v) for k, v in budget_of(fields).items() if k in BUDGET_NAMES}
        limits.update({k: int(v) for k, v in (overrides or {}).items() if k in BUDGET_NAMES})
        before = {k: float(v) for k, v in (carried or {}).items() if k in BUDGET_NAMES}
        if ledger is not None:
            if ledger.exists:
                before = ledger.totals()
            else:
                ledger.add(before)
        return cls(limits=limits, carried=before, ledger=ledger)

    def _model_tokens(self) -> int:
        return int(self.model_usage.model_tokens) if self.model_usage is not None else 0

    def spent(self) -> dict[str, int]:
        now = {
            "provider_calls": self.provider_calls,
            "fetched_bytes": self.fetched_bytes,
            "model_tokens": self._model_tokens(),
            "wall_clock_seconds": time.monotonic() - self.started,
        }
        return {k: int(now[k] + self.carried.get(k, 0)) for k in BUDGET_NAMES}

    def exhausted(self) -> str | None:
        """The first budget whose spend has reached its limit, or None."""
        spent = self.spent()
        for name in BUDGET_NAMES:
            limit = self.limits.get(name)
            if limit is not None and spent[name] >= limit:
                return name
        return None

    def check(self) -> None:
        name = self.exhausted()
        if name is not None:
            spent = self.spent()
            raise BudgetSpent(
                f"budget {name} spent ({spent[name]} of {self.limits[name]})",
                code=f"budget:{name}",
                data={"budget": name, "spent": spent, "limits": dict(self.limits)},
            )

    def record(self, provider_calls: int = 0, fetched_bytes: int = 0) -> None:
        """Count a spend and append it to the ledger with the working time since the last record and any
        model tokens not yet recorded."""
        with self._lock:
            self.provider_calls += provider_calls
            self.fetched_bytes += fetched_bytes
            elapsed = time.monotonic() - self.started
            wall, self._wall_recorded = elapsed - self._wall_recorded, elapsed
            tokens = self._model_tokens()
            new_tokens, self._tokens_recorded = tokens - self._tokens_recorded, tokens
            if self.ledger is not None:
                self.ledger.add(
                    {
                        "provider_calls": provider_calls,
                        "fetched_bytes": fetched_bytes,
                        "model_tokens": max(0, new_tokens),
                        "wall_clock_seconds": round(max(0.0, wall), 3),
                    }
                )


class Meter:
    """The HttpClient's `meter`: told of every request before it is sent and every body once read.

    `provider_prefixes` are the search and data-API endpoints; a request to one of them is a provider
    call. Anything else (pages, robots.txt, the model) counts in bytes only."""

    def __init__(self, budget: Budget, provider_prefixes: tuple[str, ...] = ()) -> None:
        self.budget = budget
        self.provider_prefixes = tuple(p for p in provider_prefixes if p)

    def is_provider(self, url: str) -> bool:
        return any(url.startswith(prefix) for prefix in self.provider_prefixes)

    def sending(self, method: str, url: str) -> None:
        if self.is_provider(url):
            self.budget.record(provider_calls=1)

    def received(self, method: str, url: str, size: int) -> None:
        self.budget.record(fetched_bytes=size)


class MeteredClient:
    """An `HttpClient` (opened with a `Meter`) that refuses new requests once a budget is spent."""

    def __init__(self, client: Any, budget: Budget, timings: dict[str, float] | None = None) -> None:
        self._client = client
        self.budget = budget
        self.timings = timings if timings is not None else {}

    def _is_provider(self, url: str) -> bool:
        meter = getattr(self._client, "meter", None)
        return bool(meter is not None and meter.is_provider(url))

    def _timed(self, kind: str, fn: Any, *args: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            self.timings[kind] = self.timings.get(kind, 0.0) + time.perf_counter() - start

    def get(self, url: str, **kw: Any) -> Any:
        self.budget.check()
        return self._timed("provider" if self._is_provider(url) else "fetch", self._client.get, url, **kw)

    def post_json(self, url: str, payload: dict, **kw: Any) -> Any:
        self.budget.check()
        return self._timed("provider", self._client.post_json, url, payload, **kw)

    def get_many(self, urls: list[str], **kw: Any) -> list[Any]:
        self.budget.check()
        return list(self._timed("fetch", self._client.get_many, urls, **kw))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> MeteredClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:  # anything else (cache dirs, flags) from the real client
        return getattr(self._client, name)


# ---------------------------------------------------------------------------- timing (for bench/run.py)


class Clock:
    """Exclusive time per category: an inner category pauses the outer one."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self._stack: list[tuple[str, float]] = []

    @contextmanager
    def timed(self, category: str) -> Iterator[None]:
        now = time.perf_counter()
        if self._stack:
            outer, since = self._stack[-1]
            self.totals[outer] = self.totals.get(outer, 0.0) + now - since
        self._stack.append((category, now))
        try:
            yield
        finally:
            end = time.perf_counter()
            cat, since = self._stack.pop()
            self.totals[cat] = self.totals.get(cat, 0.0) + end - since
            if self._stack:
                outer, _ = self._stack[-1]
                self._stack[-1] = (outer, end)


class TimedClient(MeteredClient):
    """A MeteredClient that also books HTTP time on the engine's Clock."""

    def __init__(self, client: Any, budget: Budget, clock: Clock) -> None:
        super().__init__(client, budget)
        self.clock = clock

    def _timed(self, kind: str, fn: Any, *args: Any, **kw: Any) -> Any:
        with self.clock.timed("fetch" if kind == "fetch" else "provider"):
            return fn(*args, **kw)


class TimedModel:
    """Books every model call on the Clock, checks the budget before it and records its tokens after it."""

    def __init__(self, model: Any, clock: Clock, budget: Budget) -> None:
        self._model = model
        self._clock = clock
        self._budget = budget

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._model, name)
        if name not in (
            "decompose",
            "queries",
            "select_judgement",
            "select_judgements",
            "consolidate",
            "verify",
            "critic",
            "write",
        ):
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            self._budget.check()
            try:
                with self._clock.timed("model"):
                    return attr(*args, **kw)
            finally:
                self._budget.record()  # the call's tokens (and the time) into the ledger at once

        return call
