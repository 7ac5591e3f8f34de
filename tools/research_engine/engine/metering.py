"""Metering a headless run: the governor's budgets (what has been spent, the clean stop when one is gone)
and the engine's own timers (where the time went, for `bench/run.py`).

Four run budgets, set by the brief (`budget:` in brief.md, defaults in
schema/brief.schema.json) and named as in `controller.POLICY["run_budgets"]`:

- `provider_calls`: requests to search backends and data APIs (SearXNG, Brave,
  Tavily, DuckDuckGo, OpenAlex, World Bank) plus calls to a remote model. Page
  fetches are not provider calls (they are bounded by `fetched_bytes`), and the
  embedded extractive model calls no provider.
- `fetched_bytes`: bytes of every HTTP response body the run received (search,
  APIs, pages, the verifier's re-fetches, model replies).
- `model_tokens`: prompt + completion tokens the model reported.
- `wall_clock_seconds`: seconds the engine has been working on the run, summed
  over resumes (time a killed run lay dead does not count).

`Budget.check()` raises `BudgetSpent` (exit 7) with `code="budget:<name>"` once a
figure reaches its limit; the loop catches it at a step boundary, records the
stop in run.json and writes a partial, labelled result. `MeteredClient` wraps
the one `net.HttpClient` so every request is counted (and refused once a budget
is spent) without any adapter knowing about budgets.

This module never decides routing (the controller reads the same figures from
run.json) and never writes an artifact itself; the loop persists `spent`.

`Clock` keeps exclusive time per category (an inner category pauses the outer one);
`TimedClient` and `TimedModel` book HTTP and model time on it, and `TimedModel` checks
the budget before every model call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from research_engine.brief import budget_of
from research_engine.errors import BudgetSpent
from research_engine.vocabulary import Budget as BudgetName

BUDGET_NAMES: tuple[str, ...] = tuple(BudgetName)


@dataclass
class Budget:
    """Limits and running spend; `carried` holds what earlier sessions (before a resume) spent."""

    limits: dict[str, int]
    carried: dict[str, float] = field(default_factory=dict)
    provider_calls: int = 0
    fetched_bytes: int = 0
    model_tokens: int = 0
    started: float = field(default_factory=time.monotonic)
    model_usage: Any = None  # a models.Usage, read live so tokens count the moment they are spent
    model_is_provider: bool = False

    @classmethod
    def from_brief(
        cls,
        fields: dict[str, Any],
        carried: dict[str, Any] | None = None,
        overrides: dict[str, int] | None = None,
    ) -> Budget:
        limits = {k: int(v) for k, v in budget_of(fields).items() if k in BUDGET_NAMES}
        limits.update({k: int(v) for k, v in (overrides or {}).items() if k in BUDGET_NAMES})
        return cls(limits=limits, carried={k: v for k, v in (carried or {}).items() if k in BUDGET_NAMES})

    def spent(self) -> dict[str, int]:
        tokens = self.model_tokens + (self.model_usage.model_tokens if self.model_usage is not None else 0)
        calls = self.provider_calls + (
            self.model_usage.calls if self.model_usage is not None and self.model_is_provider else 0
        )
        now = {
            "provider_calls": calls,
            "fetched_bytes": self.fetched_bytes,
            "model_tokens": tokens,
            "wall_clock_seconds": int(time.monotonic() - self.started),
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

    def note_response(self, result: Any, *, provider: bool) -> None:
        self.fetched_bytes += len(getattr(result, "body", b"") or b"")
        if provider:
            self.provider_calls += 1


class MeteredClient:
    """An `HttpClient` that counts every response against the budget and refuses once it is spent.

    `provider_hosts` are the search/API/model endpoints (counted as provider calls);
    anything else is a page fetch (counted in bytes only).
    """

    def __init__(
        self,
        client: Any,
        budget: Budget,
        provider_prefixes: tuple[str, ...] = (),
        timings: dict[str, float] | None = None,
    ) -> None:
        self._client = client
        self.budget = budget
        self.provider_prefixes = provider_prefixes
        self.timings = timings if timings is not None else {}

    def _is_provider(self, url: str) -> bool:
        return any(url.startswith(prefix) for prefix in self.provider_prefixes if prefix)

    def _timed(self, kind: str, fn: Any, *args: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            self.timings[kind] = self.timings.get(kind, 0.0) + time.perf_counter() - start

    def get(self, url: str, **kw: Any) -> Any:
        self.budget.check()
        provider = self._is_provider(url)
        result = self._timed("provider" if provider else "fetch", self._client.get, url, **kw)
        self.budget.note_response(result, provider=provider)
        return result

    def post_json(self, url: str, payload: dict, **kw: Any) -> Any:
        self.budget.check()
        provider = self._is_provider(url) or True  # POSTs go to APIs (Tavily) and models only
        result = self._timed("provider", self._client.post_json, url, payload, **kw)
        self.budget.note_response(result, provider=provider)
        return result

    def get_many(self, urls: list[str], **kw: Any) -> list[Any]:
        self.budget.check()
        results = self._timed("fetch", self._client.get_many, urls, **kw)
        for url, result in zip(urls, results, strict=False):
            self.budget.note_response(result, provider=self._is_provider(url))
        return results

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

    def __init__(self, client: Any, budget: Budget, provider_prefixes: tuple[str, ...], clock: Clock) -> None:
        super().__init__(client, budget, provider_prefixes)
        self.clock = clock

    def _timed(self, kind: str, fn: Any, *args: Any, **kw: Any) -> Any:
        with self.clock.timed("fetch" if kind == "fetch" else "provider"):
            return fn(*args, **kw)


class TimedModel:
    """Books every model call on the Clock and checks the budget before it."""

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
            "consolidate",
            "verify",
            "critic",
            "write",
        ):
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            self._budget.check()
            with self._clock.timed("model"):
                return attr(*args, **kw)

        return call
