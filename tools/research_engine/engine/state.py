"""The state every stage of a headless run shares, and the bookkeeping they all use.

`EngineState` holds one run being driven: the run, its options and settings, the
locked brief, the journal, the budget and clock, the HTTP clients and the model.
The stage modules (`gather`, `stages`, `review`, `synthesis`) are mixins over it and
`engine.loop.Engine` puts them together. Bookkeeping here: journalled steps, figures
for the progress panel, spend written through to run.json, events, run status.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from research_engine import brief as brief_mod
from research_engine import claims, decompose, retrieve, runrecord, runstate
from research_engine.corpus.session import ServedCorpora
from research_engine.engine.config import EngineOptions
from research_engine.engine.factory import rule_model
from research_engine.engine.journal import Journal
from research_engine.engine.metering import Budget, Clock, SpendLedger
from research_engine.engine.progress import Progress
from research_engine.errors import ResearchEngineError
from research_engine.selection.candidates import read_candidates_file
from research_engine.settings import Settings
from research_engine.sources import search
from research_engine.trace import Run, WriterLock
from research_engine.vocabulary import CYCLE_CEILING, FAILURE_STOP_PREFIX, RunStatus


class EngineState:
    """One run being driven. Build with `engine.loop.start` (new run) or `engine.loop.reopen` (resume)."""

    def __init__(
        self,
        run: Run,
        options: EngineOptions,
        progress: Progress,
        journal: Journal,
        settings: Settings,
        model: Any = None,
    ) -> None:
        self.run = run
        self.settings = settings
        self.options = options
        self.progress = progress
        progress.attach_log(run.path("event_log"))
        self.journal = journal
        self.brief = brief_mod.load_locked(run.root)
        self.clock = Clock()
        self.budget = Budget.from_brief(
            self.brief,
            carried=journal.data.get("spent"),
            overrides=options.budget_overrides,
            ledger=SpendLedger(run.path("spend_ledger")),
        )
        self.cassette: Any = None
        self._clients: list[Any] = []
        self._model_override = model
        self.model: Any = None
        self.raw_model: Any = None
        self.client: Any = None
        self.fresh_client: Any = None
        as_of = journal.data.get("config", {}).get("as_of")
        self.as_of = date.fromisoformat(as_of) if as_of else date.today()
        self.failed_fetches = 0
        self.rejected_drafts = 0
        self.sources = list(options.sources or ["web"])
        self._countries: list[dict[str, Any]] | None = None
        self._catalogue: dict[str, Any] | None = None
        self.writer: WriterLock | None = None  # the run's writer lock, held while this engine drives it
        self.corpora = ServedCorpora()  # the run's corpus folders (`--corpus`), served while it is driven

    def release_writer(self) -> None:
        if self.writer is not None:
            self.writer.release()

    def _save_spend(self) -> None:
        model_use = self._model_use()
        spent = self.budget.spent()
        self.journal.data["spent"] = spent
        timings = dict(self.journal.data.get("timings") or {})
        for cat, seconds in self.clock.totals.items():
            timings[cat] = round(timings.get(cat, 0.0) + seconds, 4)
        self.clock.totals = {}
        self.journal.data["timings"] = timings
        self.journal.save()

        def change(rec: dict[str, Any]) -> None:
            budgets = rec.setdefault("budgets", {"set": {}, "spent": {}})
            budgets["spent"] = dict(spent)
            if model_use is not None and isinstance(rec.get("model"), dict):
                rec["model"].update(model_use)

        runrecord.update(self.run, change)

    def _model_use(self) -> dict[str, Any] | None:
        """run.json's model figures: per stage (this session's on top of earlier sessions', kept in the
        journal), and what the model says of itself (context window, output mode)."""
        usage = getattr(self.raw_model, "usage", None)
        if usage is None or not hasattr(usage, "per_stage"):
            return None
        if not usage.stages:
            return None  # the extractive model: nothing to count
        use = runrecord.add_model_use(self.journal.data.get("model_use_carried") or {}, usage.per_stage())
        self.journal.data["model_use"] = use
        described = getattr(self.raw_model, "describe", None)
        picked = list(self.journal.data.get("picked_claims") or [])
        return {"use": use, "picked_claims": picked, **(described() if callable(described) else {})}

    def step(self, key: str, fn: Callable[[], Any]) -> Any:
        """Run `fn` unless the journal says `key` is done; journal its result."""
        if self.journal.done(key):
            return self.journal.result(key)
        self.budget.check()
        with self.clock.timed("tools"):
            result = fn()
        self.journal.mark(key, result)
        self._figures()
        return result

    def _figures(self) -> None:
        try:
            latest = runstate.latest_verdicts(self.run)
            self.progress.figures(
                cycle=runstate.current_cycle(self.run),
                sub_questions=len(decompose.load(self.run)),
                sources=len(retrieve.list_sources(self.run)),
                claims=len(claims.active_claims(self.run)),
                refused=sum(1 for v in latest.values() if v.get("verdict") == "refuse"),
                failed_fetches=self.failed_fetches,
                ceiling=CYCLE_CEILING.get(str(self.brief.get("depth"))),
                budget=", ".join(
                    runrecord.describe_spend(k, v, self.budget.limits.get(k, "-"))
                    for k, v in self.budget.spent().items()
                ),
            )
        except ResearchEngineError:
            pass

    def _event(self, kind: str, **details: Any) -> None:
        runrecord.add_event(self.run, kind, **{k: v for k, v in details.items() if v is not None})

    def _set_status(self, status: str) -> None:
        def change(rec: dict[str, Any]) -> None:
            if rec.get("status") == RunStatus.FAILED and str(rec.get("stop_reason") or "").startswith(
                FAILURE_STOP_PREFIX
            ):
                rec["stop_reason"] = None  # resumed after a failure: it has not stopped any more
            if rec.get("status") in (RunStatus.LOCKED, RunStatus.RUNNING, RunStatus.FAILED):
                rec["status"] = status
            rec["model"] = {
                "name": getattr(self.raw_model, "name", self.options.model),
                "kind": self.options.model.split(":", 1)[0],
            }

        runrecord.update(self.run, change)
        self._note_gather()

    def _note_gather(self) -> None:
        """run.json's `gather`: the modalities this run gathers from, and any an API failure stopped."""

        if (self.journal.data.get("config") or {}).get("sources_unrecorded"):
            return  # a replay of a run recorded before `gather` existed writes run.json as it was written
        down = dict(self.journal.data.get("sources_down") or {})

        # Which web backends a corpus run searched: its folders alone, or beside a configured backend.
        web = ["corpus", *search.configured_backends(self.settings)] if self.corpora.urls else []

        def change(rec: dict[str, Any]) -> None:
            rec["gather"] = {
                "sources": list(self.sources),
                **({"web": web} if web and "web" in self.sources else {}),
                **({"down": down} if down else {}),
            }

        runrecord.update(self.run, change)

    def _searched(self, sq: str) -> set[str]:
        """The web queries already sent for `sq` (API queries are kept apart: they are not web searches)."""
        return {e["query"] for e in self._api_entries(sq, "search")}

    def _api_entries(self, sq: str, command: str) -> list[dict[str, Any]]:
        entries = (read_candidates_file(self.run, sq) or {}).get("queries", [])
        return [e for e in entries if e["command"] == command]

    def _source_down(self, modality: str) -> str | None:
        return (self.journal.data.get("sources_down") or {}).get(modality)

    def _planner(self) -> Any:
        """Dry runs plan by rule (the extractive model), so they make no model call at all."""
        if self.options.dry_run:
            return rule_model()
        return self.model

    def _angle_queries(self, sq: dict[str, Any], angles: list[str], skip: set[str]) -> list[dict[str, str]]:
        """Up to `queries_per_sub_question` distinct queries, round-robin over `angles`."""
        planner = self._planner()
        per_angle = [
            (angle, [q for q in planner.queries(self.brief, sq, angle) if q and q.strip()])
            for angle in angles
        ]
        out: list[dict[str, str]] = []
        seen = set(skip)
        depth = 0
        while len(out) < self.options.queries_per_sub_question and any(
            len(qs) > depth for _, qs in per_angle
        ):
            for angle, qs in per_angle:
                if depth < len(qs):
                    q = " ".join(qs[depth].split())
                    if q not in seen and len(out) < self.options.queries_per_sub_question:
                        out.append({"query": q, "angle": angle})
                        seen.add(q)
            depth += 1
        return out
