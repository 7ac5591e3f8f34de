"""The headless engine: one research run driven in-process, stage by stage, from a brief to result.md.

`run(brief_path, options)` locks the brief and drives the run; `resume(run_dir)`
continues a run from its trace tree. Both go through `Engine.drive`, which walks
the stages of DESIGN.md section 3 through the SAME library functions the CLI
commands call, so a headless run writes exactly the trace an agent would:

    plan        model.decompose            -> decompose.add            (sq add)
    queries     model.queries x 4 angles   (entity, time, source-type, counter)
    gather      sources.search.search      -> selection.candidates.record_*       (--sources: web,
                sources.openalex.search_works / World Bank series candidates   openalex, worldbank;
                (rules in engine.apigather)                                     an API failure is an event)
    select      model.select_judgement     -> selection.log_selection  (select log)
    retrieve    net.HttpClient + extract   -> retrieve.record          (one failing source never sinks
                                                                        the run)
    consolidate model.consolidate          -> claims.add_claim         (the grounding gate: a rejected
                                                                        draft is logged and dropped, never
                                                                        forced)
    verify      verify.prepare -> model.verify per claim -> verify.record -> verify.close
    critic      model.critic               -> critic.add / critic.close
    control     controller.control         -> stop, or remediate and loop:
                  re-research:    retire the refused claims, gather again targeting them
                  supplement-gap: gather the gaps' queries (a gap without a sub-question becomes one)
                  go-deeper / re-retrieve: more angles and a new selection round for the targets
    synthesize  model.write -> report.check -> report.finish

Resume. Every completed step is written to a small journal, `.state/engine.json`
(atomically, after the step). A step that is already in the journal is skipped;
a step that was cut short is redone, and every step is written so that redoing it
is harmless: sub-questions, queries, sources, claims and gaps already present are
recognised and not added twice, a selection round or a loop-log cycle already
written for this cycle is reused, and run.json is reconciled with the artifacts
(a source file or loop-log cycle written just before a kill is noted in run.json).

Budgets (`engine.budget`). Every HTTP exchange goes through a `MeteredClient`;
model tokens are read from the model's usage. When a budget is spent the step in
flight stops, the spend is written to run.json, the controller records the stop
(`budget:<name>`), and a partial result, labelled as such, is written with the
extractive writer (it spends nothing). run.json gets `partial: true`.

Record and replay (`engine.cassette`). `--record` keeps every exchange in
`<run>/cassette/`; `--replay CASSETTE` serves them back with no socket. The
engine's own configuration (search backends and their URLs, API overrides, the
model, the selection date) is kept beside it in `cassette/engine.json` so a
replay configures itself the same way; no secret is written there.

This module decides nothing a tool decides: it never scores, grounds, judges or
routes; it calls the tools in order and carries their results.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from research_engine import runstate
from research_engine.engine.budget import Budget, MeteredClient
from research_engine.engine.models import SELECTION_HINTS
from research_engine.engine.progress import Progress
from research_engine.errors import BadInput, BudgetSpent, CheckFailed, NotConfigured, ResearchEngineError
from research_engine.settings import Settings
from research_engine.trace import Run, atomic_write_text, iso

JOURNAL_NAME = "engine"
ENGINE_CONFIG = "engine.json"  # inside the cassette directory
ANGLES = ("entity", "time", "source-type", "counter")
CLAIM_TYPES = ("factual", "quantitative", "regulatory", "competitive", "technical")
CONFIDENCES = ("high", "medium", "low")


@dataclass
class EngineOptions:
    """How a headless run is driven (the CLI's flags)."""

    model: str = "extractive"
    depth: str | None = None
    dry_run: bool = False
    record: bool = False
    replay: str | None = None  # a cassette directory
    output_path: str | None = None
    allow_private: bool = False
    search_limit: int = 5  # results asked per query
    queries_per_sub_question: int = 4  # per cycle, across the four angles
    reasons_per_round: int = 8  # candidates the model writes a selection reason for
    max_sub_questions: int = 6
    budget_overrides: dict[str, int] = field(default_factory=dict)
    sources_per_sub_question: int | None = None
    # Source modalities gathered from (`--sources`): None means all three for a new run, the recorded
    # list for a replay (absent in an old cassette: web only) and web only for an old journal.
    sources: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Outcome:
    run_root: Path
    run_id: str
    status: str  # complete | stopped | dry-run
    stop_reason: str | None
    partial: bool
    cycles: int
    result: str | None
    figures: dict[str, Any]
    planned: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["run_root"] = str(self.run_root)
        return out


# ---------------------------------------------------------------------------- the journal


class Journal:
    """`.state/engine.json`: completed steps, per-cycle plans, carried spend. Written atomically."""

    def __init__(self, run: Run) -> None:
        self.path = run.path("state", name=JOURNAL_NAME)
        if self.path.is_file():
            try:
                self.data: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise BadInput(f"{self.path} is not valid JSON: {exc}", code="malformed-journal") from exc
        else:
            self.data = {
                "schema_version": 1,
                "status": "new",
                "options": {},
                "config": {},
                "steps": {},
                "plans": {},
                "spent": {},
                "timings": {},
                "sessions": 0,
            }

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def done(self, key: str) -> bool:
        return key in self.data["steps"]

    def result(self, key: str) -> Any:
        return self.data["steps"].get(key)

    def mark(self, key: str, result: Any = None) -> None:
        self.data["steps"][key] = result if result is not None else True
        self.save()

    def save(self) -> None:
        atomic_write_text(self.path, json.dumps(self.data, indent=2, ensure_ascii=False, default=str) + "\n")


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


class _TimedClient(MeteredClient):
    """A MeteredClient that also books HTTP time on the engine's Clock."""

    def __init__(self, client: Any, budget: Budget, provider_prefixes: tuple[str, ...], clock: Clock) -> None:
        super().__init__(client, budget, provider_prefixes)
        self.clock = clock

    def _timed(self, kind: str, fn: Any, *args: Any, **kw: Any) -> Any:
        with self.clock.timed("fetch" if kind == "fetch" else "provider"):
            return fn(*args, **kw)


class _TimedModel:
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


# ---------------------------------------------------------------------------- configuration


def read_cassette_config(cassette_dir: str | Path) -> dict[str, Any]:
    path = Path(cassette_dir) / ENGINE_CONFIG
    if not path.is_file():
        raise BadInput(
            f"{cassette_dir} is not an engine cassette (no {ENGINE_CONFIG})",
            code="bad-cassette",
            field="replay",
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BadInput(f"{path} is not valid JSON: {exc}", code="bad-cassette", field="replay") from exc


def _provider_prefixes(settings: Settings) -> tuple[str, ...]:
    from research_engine.sources.search import searxng_endpoint

    # SearXNG's search path only: a corpus server serves its pages from the same origin, and those are
    # fetches.
    prefixes = [
        searxng_endpoint(settings) if settings.searxng_url else "",
        settings.model_base_url or "",
    ]
    prefixes += [
        settings.base_url(name) for name in ("openalex", "worldbank", "brave", "tavily", "duckduckgo")
    ]
    return tuple(p.rstrip("/") for p in prefixes if p)


# ---------------------------------------------------------------------------- brief handling


def _brief_for_lock(path: Path, scratch: Path) -> Path:
    """A brief file to lock. A locked brief.md (front matter with `locked`) is re-run with its fields only."""
    import frontmatter
    import yaml

    text = path.read_text(encoding="utf-8-sig") if path.is_file() else ""
    if not text.lstrip().startswith("---"):
        return path
    try:
        meta: dict[str, Any] = dict(frontmatter.loads(text.lstrip()).metadata)
    except Exception:  # not ours to judge here; brief.lock reports malformed front matter
        return path
    if "locked" not in meta:
        return path
    source_name = str((meta.get("locked") or {}).get("source_file") or "brief.yaml")
    # Fields the lock filled in by default are left out again, so the new lock defaults them the same way.
    defaulted = set((meta.get("locked") or {}).get("defaults") or [])
    fields = {k: v for k, v in meta.items() if k != "locked" and k not in defaulted}
    scratch.mkdir(parents=True, exist_ok=True)
    target = scratch / (Path(source_name).stem + ".yaml")
    target.write_text(yaml.safe_dump(fields, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return target


def _lock_brief(brief_path: str | Path, options: EngineOptions) -> Run:
    import tempfile

    from research_engine import brief, trace

    with tempfile.TemporaryDirectory(prefix="re-brief-") as scratch:
        source = _brief_for_lock(Path(brief_path), Path(scratch))
        if options.depth:
            fields, _fmt = brief.read_brief_file(source)
            fields["depth"] = options.depth
            fields.pop("locked", None)
            import yaml

            source = Path(scratch) / (Path(source).stem + ".yaml")
            source.write_text(yaml.safe_dump(fields, sort_keys=False, allow_unicode=True), encoding="utf-8")
        locked = brief.lock(source, options.output_path, allow_private=options.allow_private)
    return trace.open_run(locked.run_root)


# ---------------------------------------------------------------------------- the engine


class Engine:
    """One run being driven. Build with `Engine.start` (new run) or `Engine.reopen` (resume)."""

    def __init__(
        self,
        run: Run,
        options: EngineOptions,
        progress: Progress,
        journal: Journal,
        settings: Settings,
        model: Any = None,
    ) -> None:
        from research_engine import brief as brief_mod

        self.run = run
        self.settings = settings
        self.options = options
        self.progress = progress
        self.journal = journal
        self.brief = brief_mod.load_locked(run.root)
        self.clock = Clock()
        self.budget = Budget.from_brief(
            self.brief, carried=journal.data.get("spent"), overrides=options.budget_overrides
        )
        self.cassette: Any = None
        self._clients: list[Any] = []
        self._model_override = model
        self.model: Any = None
        self.client: Any = None
        self.fresh_client: Any = None
        as_of = journal.data.get("config", {}).get("as_of")
        self.as_of = date.fromisoformat(as_of) if as_of else date.today()
        self.failed_fetches = 0
        self.rejected_drafts = 0
        self.sources = list(options.sources or ["web"])
        self._countries: list[dict[str, Any]] | None = None
        self._catalogue: dict[str, Any] | None = None

    # -- setup ---------------------------------------------------------------------------------------

    def _open_clients(self) -> None:
        from research_engine.engine.cassette import client_kwargs, open_cassette
        from research_engine.net import fetch_policy

        options: dict[str, Any] = {}
        if self.options.allow_private:
            options["per_host_interval"] = 0.0  # a private/loopback corpus: no public host to be polite to
        if self.options.replay:
            self.cassette = open_cassette("replay", self.options.replay, self.settings.secrets)
            options.update(client_kwargs(self.cassette))
        elif self.options.record:
            self.cassette = open_cassette("record", self.run.path("cassette_dir"), self.settings.secrets)
            options.update(client_kwargs(self.cassette))
        policy = fetch_policy(
            self.settings, self.run, allow_private=self.options.allow_private, client_options=options
        )
        prefixes = _provider_prefixes(self.settings)
        base = policy.client()
        fresh = policy.replace(use_cache=False).client()
        self._clients = [base, fresh]
        self.client = _TimedClient(base, self.budget, prefixes, self.clock)
        self.fresh_client = _TimedClient(fresh, self.budget, prefixes, self.clock)

    def _open_model(self) -> None:
        from research_engine.engine.models import make_model

        model = self._model_override
        if model is None:
            name = self.options.model
            kw: dict[str, Any] = {}
            if name.split(":", 1)[0] == "openai":
                kw["client"] = self.client
            model = make_model(name, settings=self.settings, **kw)
        self.raw_model = model
        self.budget.model_usage = model.usage
        self.budget.model_is_provider = not str(model.name).startswith(("extractive", "scripted"))
        self.model = _TimedModel(model, self.clock, self.budget)

    def close(self) -> None:
        for client in self._clients:
            # Closing is best effort; the run's state is already on disk.
            with suppress(Exception):
                client.close()

    # -- the journal's figures -----------------------------------------------------------------------

    def _save_spend(self) -> None:
        from research_engine import runrecord

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

        runrecord.update(self.run, change)

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
        from research_engine import claims, decompose, retrieve

        try:
            latest = runstate.latest_verdicts(self.run)
            self.progress.figures(
                cycle=runstate.current_cycle(self.run),
                sub_questions=len(decompose.load(self.run)),
                sources=len(retrieve.list_sources(self.run)),
                claims=len(claims.active_claims(self.run)),
                refused=sum(1 for v in latest.values() if v.get("verdict") == "refuse"),
                failed_fetches=self.failed_fetches,
                budget=", ".join(
                    f"{k} {v}/{self.budget.limits.get(k, '-')}" for k, v in self.budget.spent().items()
                ),
            )
        except ResearchEngineError:
            pass

    # -- driving -------------------------------------------------------------------------------------

    def drive(self) -> Outcome:

        self.journal.data["sessions"] = int(self.journal.data.get("sessions") or 0) + 1
        self.journal.data["status"] = "running"
        self.journal.save()
        self._set_status("running")
        self._reconcile()
        try:
            self.step("plan", self._plan)
            cycle = runstate.current_cycle(self.run)
            if self.journal.done("synthesize"):
                return self._outcome()
            last = runstate.load_loop_log(self.run)["cycles"]
            stopped = bool(last) and last[-1]["decision"]["action"] == "stop"
            if not stopped:
                if cycle == 1:
                    self.step("c01:queries", self._initial_queries)
                if self.options.dry_run:
                    return self._dry_run()
                while True:
                    decision = self._cycle(cycle)
                    if decision["action"] == "stop":
                        break
                    self.step(f"c{cycle:02d}:remediate", functools.partial(self._remediate, cycle, decision))
                    cycle += 1
            self.step("synthesize", lambda: self._synthesize(partial=False))
            self.journal.data["status"] = "done"
        except BudgetSpent as spent:
            self._stop_for_budget(spent)
            self.journal.data["status"] = "done" if self.journal.done("synthesize") else "stopped"
        finally:
            self._save_spend()
            self.close()
        return self._outcome()

    def _cycle(self, cycle: int) -> dict[str, Any]:
        plan = self.journal.data["plans"].get(str(cycle)) or {}
        tag = f"c{cycle:02d}"
        for sq in sorted(plan):
            self.progress.stage("gather", cycle=cycle, sq=sq)
            self.step(f"{tag}:gather:{sq}", functools.partial(self._gather, cycle, sq, plan[sq]))
        for sq in sorted(plan):
            self.progress.stage("select", cycle=cycle, sq=sq)
            self.step(f"{tag}:select:{sq}", functools.partial(self._select, cycle, sq))
        for sq in sorted(plan):
            self.progress.stage("retrieve", cycle=cycle, sq=sq)
            self.step(f"{tag}:retrieve:{sq}", functools.partial(self._retrieve, cycle, sq))
        for sq in sorted(plan):
            self.progress.stage("consolidate", cycle=cycle, sq=sq)
            self.step(f"{tag}:consolidate:{sq}", functools.partial(self._consolidate, cycle, sq))
        self.progress.stage("verify", cycle=cycle)
        self.step(f"{tag}:verify", lambda: self._verify(cycle))
        self.progress.stage("critic", cycle=cycle)
        self.step(f"{tag}:critic", lambda: self._critic(cycle))
        self.progress.stage("control", cycle=cycle)
        self._save_spend()
        return self.step(f"{tag}:control", lambda: self._control(cycle))

    # -- stages --------------------------------------------------------------------------------------

    def _planner(self) -> Any:
        """Dry runs plan by rule (the extractive model), so they make no model call at all."""
        if self.options.dry_run:
            from research_engine.engine.extractive import ExtractiveModel

            return ExtractiveModel()
        return self.model

    def _plan(self) -> dict[str, Any]:
        from research_engine import decompose

        self.progress.stage("decompose")
        plans = self._planner().decompose(self.brief)
        existing = {sq["text"] for sq in decompose.load(self.run)}
        types = [t for t in (self.brief.get("claim_types") or []) if t in CLAIM_TYPES] or ["factual"]
        added = []
        for plan in plans[: self.options.max_sub_questions]:
            text = " ".join(str(plan.text or "").split())
            if not text or text in existing:
                continue
            claim_type = plan.claim_type if plan.claim_type in CLAIM_TYPES else types[0]
            angle = plan.angle if plan.angle in ANGLES else None
            added.append(decompose.add(self.run, text, claim_type, angle, plan.answers or None))
            existing.add(text)
        if not decompose.load(self.run):
            raise CheckFailed("the model proposed no usable sub-question", code="no-sub-questions")
        return {"added": added}

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

    def _initial_queries(self) -> dict[str, Any]:
        """Cycle 1's plan: every sub-question searched from the four angles, its own angle first."""
        from research_engine import decompose

        self.progress.stage("queries", cycle=1)
        plan = {}
        for sq in decompose.load(self.run):
            own = sq.get("angle")
            angles = ([own] if own in ANGLES else []) + [a for a in ANGLES if a != own]
            plan[sq["id"]] = self._angle_queries(sq, angles, set())
        self.journal.data["plans"]["1"] = plan
        return {"sub_questions": len(plan), "queries": sum(len(v) for v in plan.values())}

    def _gather(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> dict[str, Any]:
        """Every configured modality, in turn: web search, OpenAlex works, World Bank series."""
        out: dict[str, Any] = {}
        if "web" in self.sources:
            out.update(self._gather_web(cycle, sq, queries))
        if "openalex" in self.sources:
            out["openalex"] = self._gather_openalex(cycle, sq, queries)
        if "worldbank" in self.sources:
            out["worldbank"] = self._gather_worldbank(cycle, sq)
        return out

    def _gather_web(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> dict[str, Any]:
        from research_engine.errors import UpstreamFailed
        from research_engine.selection.candidates import record_search
        from research_engine.sources import search

        done = self._searched(sq)
        searched, failed = 0, 0
        for item in queries:
            query = item["query"]
            if query in done:
                continue
            self.budget.check()
            try:
                outcome = search.search(
                    query, limit=self.options.search_limit, client=self.client, settings=self.settings
                )
            except UpstreamFailed as exc:
                failed += 1
                self.progress.note("search-failed", sq=sq, query=query, detail=exc.message)
                self._event("search-failed", sq=sq, query=query, chain=(exc.data or {}).get("chain"))
                continue
            engine_info = {"cycle": cycle, "angle": item.get("angle")}
            record_search(self.run, sq, outcome, query=query, info={"engine": engine_info})
            failures = [a for a in outcome.chain if a.outcome == "failed"]
            if failures:
                self.progress.note(
                    "backend-failed",
                    sq=sq,
                    query=query,
                    backends=",".join(a.backend for a in failures),
                    used=outcome.backend,
                )
            searched += 1
            done.add(query)
        return {"searched": searched, "failed": failed}

    # -- the data APIs (rules in engine.apigather) ------------------------------------------------------

    def _source_down(self, modality: str) -> str | None:
        return (self.journal.data.get("sources_down") or {}).get(modality)

    def _api_failed(self, modality: str, sq: str, what: str, exc: ResearchEngineError) -> None:
        """One API failing is an event, never the run's end. Anything but a rejected request (a rate limit,
        an exhausted allowance, a host that cannot be reached) also stops that API for the rest of the run."""
        down = not isinstance(exc, BadInput)
        self.progress.note("source-failed", source=modality, sq=sq, code=exc.code, detail=exc.message)
        self._event(
            "source-failed",
            source=modality,
            sq=sq,
            request=what,
            code=exc.code,
            detail=exc.message,
            status=(exc.data or {}).get("status"),
            skipped_for_rest_of_run=down,
        )
        if down:
            self.journal.data.setdefault("sources_down", {})[modality] = exc.code
            self.journal.save()
            self._note_gather()

    def _api_entries(self, sq: str, command: str) -> list[dict[str, Any]]:
        from research_engine.selection.candidates import read_candidates_file

        entries = (read_candidates_file(self.run, sq) or {}).get("queries", [])
        return [e for e in entries if e["command"] == command]

    def _gather_openalex(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> dict[str, Any]:
        """One works search per sub-question and cycle, when OpenAlex fits the claim type.

        Cycle 1 searches the sub-question's content words; later cycles the first planned
        query OpenAlex has not been asked yet (a refused claim's or a gap's query)."""
        from research_engine import decompose
        from research_engine.engine import apigather
        from research_engine.selection.candidates import record_works_search
        from research_engine.sources import openalex

        question = decompose.get(self.run, sq)
        if not apigather.fits("openalex", question["claim_type"]):
            return {"skipped": f"claim type {question['claim_type']}"}
        if self._source_down("openalex"):
            return {"skipped": f"down: {self._source_down('openalex')}"}
        asked = {e["query"] for e in self._api_entries(sq, "openalex search")}
        if any(
            (e.get("info") or {}).get("engine", {}).get("cycle") == cycle
            for e in self._api_entries(sq, "openalex search")
        ):
            return {"searched": 0}  # this cycle's search was recorded before a kill
        options = [apigather.openalex_query(question["text"])] if cycle == 1 else []
        options += [q["query"] for q in queries]
        query = next((q for q in options if q and q not in asked), None)
        if query is None:
            return {"searched": 0}
        self.budget.check()
        try:
            found = openalex.search_works(
                query, limit=self.options.search_limit, client=self.client, settings=self.settings
            )
        except BudgetSpent:
            raise
        except ResearchEngineError as exc:
            self._api_failed("openalex", sq, f"works search {query!r}", exc)
            return {"searched": 0, "failed": exc.code}
        engine_info = {"cycle": cycle, "angle": None}
        record_works_search(self.run, sq, found, query=query, info={"engine": engine_info})
        return {"searched": 1, "works": len(found.works)}

    def _wb_reference(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The country list and the indicator catalogue, once per session (see apigather)."""
        from research_engine.engine import apigather

        use_cache = self.cassette is None  # a cassette must hold them, so it is not bypassed by a cache
        if self._countries is None:
            self._countries = apigather.load_countries(
                self.client, use_cache=use_cache, settings=self.settings
            )
        if self._catalogue is None:
            self._catalogue = apigather.load_indicators(
                self.client, use_cache=use_cache, settings=self.settings
            )
        return self._countries, self._catalogue

    def _gather_worldbank(self, cycle: int, sq: str) -> dict[str, Any]:
        """Series candidates for a quantitative sub-question that names countries and a quantity."""
        from research_engine import decompose
        from research_engine.engine import apigather
        from research_engine.selection.candidates import record_candidates

        question = decompose.get(self.run, sq)
        if not apigather.fits("worldbank", question["claim_type"]):
            return {"skipped": f"claim type {question['claim_type']}"}
        if self._source_down("worldbank"):
            return {"skipped": f"down: {self._source_down('worldbank')}"}
        if self._api_entries(sq, "worldbank indicators"):
            return {"searched": 0}  # the same question names the same countries and quantity every cycle
        self.budget.check()
        try:
            countries, catalogue = self._wb_reference()
        except BudgetSpent:
            raise
        except ResearchEngineError as exc:
            self._api_failed("worldbank", sq, "the country list and indicator catalogue", exc)
            return {"searched": 0, "failed": exc.code}
        named = apigather.match_countries(question["text"], countries)
        if not named:
            return {"skipped": "no country or region named"}
        words = apigather.indicator_words(question["text"], [c["said"] for c in named])
        named = named[: apigather.MAX_COUNTRIES]
        indicators = apigather.rank_indicators(catalogue.get("indicators") or [], words)
        if not indicators:
            return {"skipped": "no indicator matches the sub-question's words"}
        base = self.settings.base_url("worldbank")
        candidates = [apigather.series_candidate(ind, named, i, base) for i, ind in enumerate(indicators, 1)]
        record_candidates(
            self.run,
            sq,
            command="worldbank indicators",
            query=" ".join(words),
            candidates=candidates,
            responses=[],  # the catalogue is a reference list, not evidence; its size and date are kept
            backend="worldbank",
            info={
                "countries": [c["id"] for c in named],
                "indicators": [ind["id"] for ind in indicators],
                "catalogue_size": len(catalogue.get("indicators") or []),
                "catalogue_fetched_at": catalogue.get("fetched_at"),
                "engine": {"cycle": cycle, "angle": None},
            },
        )
        return {"searched": 1, "candidates": len(candidates)}

    def _select(self, cycle: int, sq: str) -> dict[str, Any]:
        from research_engine import decompose, selection
        from research_engine.selection.candidates import load_candidates

        meta = selection.load(self.run, sq)
        if meta and meta.get("rounds") and meta["rounds"][-1].get("cycle") == cycle:
            last = meta["rounds"][-1]
            return {"round": last["round"], "chosen": len(last["chosen"])}  # written before a kill
        candidates = [c.to_dict() for c in load_candidates(self.run, sq)]
        if not candidates:
            self.progress.note("no-candidates", sq=sq, cycle=cycle)
            return {"round": None, "chosen": 0}
        question = decompose.get(self.run, sq)
        judged: dict[str, tuple[str | None, str | None]] = {}  # canonical key -> (reason, hint)
        for cand in candidates:
            key = cand.get("canonical_key") or cand["url"]
            cand.pop("extra", None)
            if key in judged:  # the same page from another query: the same judgement
                cand["reason"], cand["verdict_hint"] = judged[key]
                continue
            if len(judged) >= self.options.reasons_per_round:
                cand["reason"] = cand.get("reason") or (
                    f"not reviewed by the model (beyond the first {self.options.reasons_per_round})"
                )
                continue
            judgement = self.model.select_judgement(self.brief, question, cand)
            hint = judgement.verdict_hint if judgement.verdict_hint in SELECTION_HINTS else None
            cand["reason"] = " ".join(str(judgement.reason or "").split()) or None
            cand["verdict_hint"] = hint
            judged[key] = (cand["reason"], hint)
        round_ = selection.log_selection(self.run, sq, candidates, as_of=self.as_of)
        return {"round": round_["round"], "chosen": len(round_["chosen"])}

    def _retrieved_keys(self, sq: str) -> set[str]:
        from research_engine import retrieve
        from research_engine.urls import canonical_key

        keys: set[str] = set()
        for ref in retrieve.list_sources(self.run):
            if not ref.startswith(sq + "/"):
                continue
            meta, _ = retrieve.load_source(self.run, ref)
            for url in (meta.get("requested_url"), meta.get("final_url")):
                if url:
                    keys.add(_safe_key(canonical_key, url))
            if meta.get("canonical_key"):
                keys.add(meta["canonical_key"])
        return keys

    def _retrieve(self, cycle: int, sq: str) -> dict[str, Any]:
        from research_engine import selection
        from research_engine.retrieve.pages import PageRequest, retrieve_pages

        have = self._retrieved_keys(sq)
        todo = [c for c in selection.chosen(self.run, sq) if c["canonical_key"] not in have]
        web = [c for c in todo if (c.get("kind") or "web") == "web"]
        recorded: list[str] = []
        failed: list[dict[str, Any]] = []
        if web:
            self.budget.check()
            pages = [
                PageRequest(
                    url=c["url"],
                    query=_query_of(c),
                    access_tier=c.get("access_tier") or "open",
                    title=c.get("title"),
                )
                for c in web
            ]
            for page in retrieve_pages(self.run, sq, pages, self.client, timed=self.clock.timed):
                if page.ref is not None:
                    recorded.append(page.ref)
                else:
                    failed.append({"url": page.request.url, "error": page.why})
        for cand in todo:
            if (cand.get("kind") or "web") == "web":
                continue
            try:
                recorded.extend(self._api_document(sq, cand))
            except BudgetSpent:
                raise
            except ResearchEngineError as exc:
                failed.append({"url": cand["url"], "error": exc.code, "detail": exc.message})
        for item in failed:
            self.failed_fetches += 1
            self.progress.note("fetch-failed", sq=sq, url=item["url"], error=item["error"])
            self._event("fetch-failed", sq=sq, **item)
        return {"recorded": recorded, "failed": len(failed)}

    def _api_document(self, sq: str, cand: dict[str, Any]) -> list[str]:
        """A chosen API candidate retrieved the way `openalex work` / `worldbank series --run` record it."""
        from research_engine.retrieve import api as source_record

        kind = cand.get("kind")
        if kind == "openalex":
            from research_engine.sources import openalex

            fetch = openalex.get_work(
                cand.get("doi") or cand["url"], client=self.client, settings=self.settings
            )
            tier = openalex.access_tier(self.settings)
            return [source_record.record_work(self.run, sq, fetch, access_tier=tier, query=_query_of(cand))]
        if kind == "worldbank":
            from research_engine.engine.apigather import parse_series_url
            from research_engine.sources import worldbank

            countries, indicator, span, mrv = parse_series_url(cand["url"])
            series = worldbank.fetch_series(
                countries, indicator, date=span, mrv=mrv, client=self.client, settings=self.settings
            )
            return source_record.record_series(
                self.run, sq, series, query=_query_of(cand) or f"{';'.join(countries)} {indicator}"
            )
        raise BadInput(
            f"{kind} candidates are not retrieved by the headless engine yet", code="unsupported-kind"
        )

    def _changed_since_retrieval(self, ref: str) -> bool:
        """The verifier's copy of `ref` differed from the retrieved one: it no longer grounds new claims."""
        from research_engine.artifacts import read_markdown
        from research_engine.ids import parse_source_ref

        sq, src = parse_source_ref(ref)
        path = self.run.path("evidence", sq=sq, src=src)
        if not path.is_file():
            return False
        meta, _ = read_markdown(path)
        return meta.get("changed") is True

    def _source_texts(self, sq: str) -> list[Any]:
        from research_engine import retrieve
        from research_engine.engine.models import SourceText

        out = []
        for ref in retrieve.list_sources(self.run):
            if ref.startswith(sq + "/") and not self._changed_since_retrieval(ref):
                meta, passages = retrieve.load_source(self.run, ref)
                out.append(
                    SourceText(
                        ref=ref,
                        title=meta.get("title"),
                        url=meta.get("final_url") or meta.get("requested_url") or "",
                        passages=passages,
                    )
                )
        return out

    def _consolidate(self, cycle: int, sq: str) -> dict[str, Any]:
        from research_engine import claims, decompose

        sources = self._source_texts(sq)
        if not sources:
            self.progress.note("no-sources", sq=sq, cycle=cycle)
            return {"added": [], "rejected": 0}
        drafts = self.model.consolidate(self.brief, decompose.get(self.run, sq), sources)
        ledger = claims.load(self.run)["claims"]
        added: list[str] = []
        rejected = 0
        for draft in drafts or []:
            text = " ".join(str(draft.text or "").split())
            refs = [str(ref) for ref, _ in draft.evidence]
            quotes = [str(quote) for _, quote in draft.evidence]
            if not text or _already_claimed(ledger, sq, text, refs):
                continue
            confidence = draft.confidence if draft.confidence in CONFIDENCES else "medium"
            try:
                claim = claims.record_claim(self.run, sq, text, refs, quotes, confidence)
            except (CheckFailed, BadInput) as exc:
                # The grounding gate said no: the draft is logged and dropped, never forced in.
                rejected += 1
                self.rejected_drafts += 1
                self.progress.note("draft-rejected", sq=sq, why=exc.message)
                self._event(
                    "draft-rejected",
                    sq=sq,
                    cycle=cycle,
                    text=text,
                    sources=refs,
                    why=exc.message,
                    problems=[p.message for p in exc.all_problems()],
                )
                continue
            added.append(claim["id"])
            ledger.append(claim)
        claims.refresh(self.run)  # the end of a batch of adds: the draft shows the whole ledger again
        return {"added": added, "rejected": rejected}

    def _evidence_text(self, row: dict[str, Any]) -> str:
        """The verifier's fresh copies around each quote: what model.verify reads (fenced by the model)."""
        from research_engine import grounding
        from research_engine.artifacts import read_markdown
        from research_engine.retrieve import parse_passages

        parts = []
        for entry in row.get("evidence") or []:
            rel = entry.get("evidence_file")
            if not rel or not (self.run.root / rel).is_file():
                parts.append(
                    f"[{entry.get('source')}] (no fresh copy: {entry.get('fetch_error') or 'not fetched'})"
                )
                continue
            _, body = read_markdown(self.run.root / rel)
            passages = parse_passages(body)
            # Passages are whitespace-collapsed already; a cheap prefix test finds the quote's passage.
            quote = " ".join(str(entry.get("quote") or "").split())[:80]
            hits = [i for i, p in enumerate(passages) if quote and quote in p.text]
            if quote and not hits:
                needle = grounding.normalize(quote)
                hits = [i for i, p in enumerate(passages) if needle in grounding.normalize(p.text)]
            keep = sorted({j for i in hits for j in (i - 1, i, i + 1) if 0 <= j < len(passages)}) or list(
                range(min(3, len(passages)))
            )
            text = "\n".join(f"[{passages[j].id}] {passages[j].text}" for j in keep)
            parts.append(f"[{entry.get('source')}]\n{text[:4000]}")
        return "\n\n".join(parts)

    def _verify(self, cycle: int) -> dict[str, Any]:
        from research_engine import claims, verify
        from research_engine.engine.models import VERDICTS

        sheet = verify.load_worksheet(self.run)
        if sheet is not None and sheet["cycle"] == cycle and sheet.get("closed_at"):
            return {"closed": True, "summary": None}
        try:
            verify.prepare(self.run, client=self.fresh_client)
        except CheckFailed as exc:
            if exc.code != "nothing-to-verify":
                raise
            self.progress.note("nothing-to-verify", cycle=cycle)
            return {"closed": False, "summary": None}
        sheet = verify.load_worksheet(self.run) or {"claims": [], "challenges": []}
        judged = {c["claim"] for c in sheet["challenges"]}
        by_id = {c["id"]: c for c in claims.load(self.run)["claims"]}
        forced = 0
        for row in sheet["claims"]:
            if row["claim"] in judged:
                continue
            claim = by_id.get(row["claim"], {"id": row["claim"], "text": row.get("text", "")})
            draft = self.model.verify(claim, row, self._evidence_text(row))
            verdict = draft.verdict if draft.verdict in VERDICTS else row["floor"]
            reason = " ".join(str(draft.reason or "").split()) or f"verdict {verdict} (no reason given)"
            try:
                verify.record(
                    self.run, row["claim"], verdict, reason, corroboration_query=draft.corroboration_query
                )
            except CheckFailed as exc:
                if (
                    exc.code in ("corroboration-limit", "second-corroboration")
                    or "corroboration" in exc.message
                ):
                    try:
                        verify.record(self.run, row["claim"], verdict, reason)
                    except CheckFailed:
                        forced += 1
                else:
                    forced += 1  # looser than the floor: the tool recorded the floor instead
                self.progress.note("verdict-floored", claim=row["claim"], why=exc.message)
        closed = verify.close(self.run)
        return {"closed": True, "summary": closed["summary"], "forced": forced}

    def _critic(self, cycle: int) -> dict[str, Any]:
        from research_engine import claims, critic, decompose

        sqs = decompose.load(self.run)
        known = {sq["id"] for sq in sqs}
        latest = runstate.latest_verdicts(self.run)
        judged = [
            {**c, "verdict": (latest.get(c["id"]) or {}).get("verdict")}
            for c in claims.active_claims(self.run)
        ]
        gaps = self.model.critic(self.brief, sqs, judged) or []
        open_gaps = [g for g in critic.load(self.run)["gaps"] if g["status"] == "open"]
        open_abouts = {g["about"] for g in open_gaps}
        named = set()
        added = []
        for gap in gaps:
            about = " ".join(str(gap.about or "").split())
            query = " ".join(str(gap.query or "").split()) or about
            if not about:
                continue
            named.add(about)
            if about in open_abouts:
                continue
            severity = "material" if gap.material else "cosmetic"
            added.append(
                critic.add(self.run, about, query, severity=severity, sq=gap.sq if gap.sq in known else None)
            )
            open_abouts.add(about)
        closed = []
        for gap in open_gaps:
            if gap["about"] not in named:
                critic.close(
                    self.run, gap["id"], f"no longer named by the completeness critic in cycle {cycle}"
                )
                closed.append(gap["id"])
        return {"added": added, "closed": closed}

    def _control(self, cycle: int) -> dict[str, Any]:
        from research_engine import controller

        log = runstate.load_loop_log(self.run)
        if len(log["cycles"]) >= cycle:  # written before a kill: reuse it
            block = log["cycles"][cycle - 1]
            decision = {**block["decision"], "cycle": block["cycle"]}
        else:
            decision = controller.control(self.run)
        self.progress.note(
            "decision",
            cycle=cycle,
            action=decision["action"],
            targets=",".join(decision.get("targets") or []) or None,
            stop_reason=decision.get("stop_reason"),
        )
        return {
            "action": decision["action"],
            "targets": list(decision.get("targets") or []),
            "stop_reason": decision.get("stop_reason"),
            "cycle": cycle,
        }

    def _remediate(self, cycle: int, decision: dict[str, Any]) -> dict[str, Any]:
        """Turn the controller's decision into cycle+1's plan: which sub-questions to search again, and
        how."""
        from research_engine import claims, critic, decompose

        action, targets = decision["action"], decision["targets"]
        sqs = {sq["id"]: sq for sq in decompose.load(self.run)}
        ledger = {c["id"]: c for c in claims.load(self.run)["claims"]}
        searched: dict[str, set[str]] = {sq: self._searched(sq) for sq in sqs}
        plan: dict[str, list[dict[str, str]]] = {}
        retired: list[str] = []

        def add(sq: str, queries: list[dict[str, str]]) -> None:
            bucket = plan.setdefault(sq, [])
            for q in queries:
                if q["query"] not in {b["query"] for b in bucket}:
                    bucket.append(q)

        if action == "re-research":
            latest = runstate.latest_verdicts(self.run)
            tensions = {t["id"]: t for t in claims.load(self.run).get("tensions", [])}
            claim_ids: list[str] = []
            for target in targets:
                if target in tensions:
                    claim_ids.extend(tensions[target]["claims"])
                else:
                    claim_ids.append(target)
            for clm in dict.fromkeys(claim_ids):
                claim = ledger.get(clm)
                if claim is None:
                    continue
                verdict = latest.get(clm) or {}
                if claim["status"] == "active" and verdict.get("verdict") == "refuse":
                    claims.retire(
                        self.run,
                        clm,
                        f"refused by the verifier in cycle {verdict.get('cycle') or cycle}: "
                        f"{verdict.get('reason') or 'its evidence did not hold up'}; re-researched",
                    )
                    retired.append(clm)
                sq = claim["sub_question"]
                queries = []
                if verdict.get("corroboration_query"):
                    queries.append({"query": verdict["corroboration_query"], "angle": "counter"})
                target_sq = {**sqs[sq], "text": claim["text"]}
                queries += self._angle_queries(
                    target_sq, [sqs[sq].get("angle") or "entity", "source-type"], searched[sq]
                )
                add(sq, queries)
        elif action == "supplement-gap":
            gaps = {g["id"]: g for g in critic.load(self.run)["gaps"]}
            for target in targets:
                if target in sqs:
                    add(target, self._angle_queries(sqs[target], list(ANGLES), searched[target]))
                elif target in gaps:
                    gap = gaps[target]
                    sq = gap.get("sub_question")
                    if sq not in sqs:
                        types = [t for t in (self.brief.get("claim_types") or []) if t in CLAIM_TYPES] or [
                            "factual"
                        ]
                        existing = {s["text"]: s["id"] for s in sqs.values()}
                        sq = existing.get(gap["about"]) or decompose.add(
                            self.run, gap["about"], types[0], None, None
                        )
                        sqs = {s["id"]: s for s in decompose.load(self.run)}
                        searched.setdefault(sq, set())
                    add(sq, [{"query": gap["query"], "angle": "gap"}])
        else:  # go-deeper, re-retrieve: more angles and a new selection round for the targets' sub-questions
            for target in targets:
                sq = target if target in sqs else (ledger.get(target) or {}).get("sub_question")
                if sq is not None and sq in sqs:
                    add(sq, self._angle_queries(sqs[sq], list(reversed(ANGLES)), searched[sq]))
        for sq in plan:  # an empty query list still re-selects among candidates already found
            plan[sq] = [q for q in plan[sq] if q["query"] not in searched.get(sq, set())]
        self.journal.data["plans"][str(cycle + 1)] = plan
        self.progress.note(
            "remediate", cycle=cycle, action=action, sub_questions=",".join(sorted(plan)) or None
        )
        return {"action": action, "retired": retired, "plan": {k: len(v) for k, v in plan.items()}}

    def _searched(self, sq: str) -> set[str]:
        """The web queries already sent for `sq` (API queries are kept apart: they are not web searches)."""
        return {e["query"] for e in self._api_entries(sq, "search")}

    # -- synthesis -----------------------------------------------------------------------------------

    def _sections(self) -> list[Any]:
        from research_engine import claims, critic, decompose
        from research_engine.engine.models import Section

        latest = runstate.latest_verdicts(self.run)
        ledger = claims.load(self.run)["claims"]
        gaps = [g for g in critic.load(self.run)["gaps"] if g["status"] == "open"]
        sections = []
        for sq in decompose.load(self.run):
            mine = [c for c in ledger if c["sub_question"] == sq["id"]]
            stated, refused = [], []
            for claim in mine:
                verdict = latest.get(claim["id"]) or {}
                item = {
                    "id": claim["id"],
                    "text": claim["text"],
                    "verdict": verdict.get("verdict"),
                    "reason": verdict.get("reason"),
                    "evidence": claim.get("evidence") or [],
                    "confidence": claim.get("confidence"),
                }
                if verdict.get("verdict") == "refuse":
                    refused.append(item)
                elif claim["status"] == "active":
                    stated.append(item)
            sections.append(
                Section(
                    sq=sq,
                    claims=stated,
                    refused=refused,
                    gaps=[g for g in gaps if g.get("sub_question") == sq["id"]],
                )
            )
        return sections

    def _synthesize(
        self, *, partial: bool, why: str | None = None, spend_nothing: bool = False, finish: bool = True
    ) -> dict[str, Any]:
        from research_engine import report
        from research_engine.engine.extractive import ExtractiveModel

        self.progress.stage("synthesize")
        sections = self._sections()
        # After a budget stop nothing more is spent: the extractive writer needs no provider and no tokens.
        writer = ExtractiveModel() if (partial or spend_nothing) else self.model
        text = writer.write(self.brief, sections)
        if partial:
            text = _label_partial(text, why or "a budget was spent")
        draft = self.run.path("result_draft")
        atomic_write_text(draft, text)
        checked = report.check(self.run, draft)
        fallback = False
        if not checked.ok and writer is self.model and not isinstance(self.raw_model, ExtractiveModel):
            # The model's deliverable failed `report check`: note why and write the extractive one.
            self._event("deliverable-rejected", problems=[p.message for p in checked.problems])
            self.progress.note("deliverable-rejected", problems=len(checked.problems))
            text = ExtractiveModel().write(self.brief, sections)
            atomic_write_text(draft, text)
            fallback = True
        if not finish:
            checked = report.check(self.run, draft)
            if not checked.ok:
                raise CheckFailed(
                    "the partial draft does not pass `report check`",
                    code="report-check-failed",
                    problems=checked.problems,
                )
            return {"result": None, "fallback_writer": fallback, "partial": partial}
        finished = report.finish(self.run, draft)
        return {"result": finished["result"], "fallback_writer": fallback, "partial": partial}

    def _stop_for_budget(self, spent: BudgetSpent) -> None:
        """A budget is gone: let the governor record the stop, then write what can honestly be said."""
        from research_engine import controller, decompose, runrecord

        name = (spent.data or {}).get("budget") or spent.code.removeprefix("budget:")
        self.progress.note("budget-spent", budget=name, detail=spent.message)
        self._save_spend()
        log = runstate.load_loop_log(self.run)
        stopped = bool(log["cycles"]) and log["cycles"][-1]["decision"]["action"] == "stop"
        if not stopped and decompose.load(self.run):
            # The spend is in run.json, so the governor stops the run and says why in the loop log
            # (criterion first: a run whose criterion is met when the money runs out is complete).
            with suppress(CheckFailed):
                controller.control(self.run)
            log = runstate.load_loop_log(self.run)
            stopped = bool(log["cycles"]) and log["cycles"][-1]["decision"]["action"] == "stop"
        decided = log["cycles"][-1]["decision"]["stop_reason"] if stopped else None
        stop_reason = decided or f"budget:{name}"
        partial = not str(stop_reason).startswith("criterion")

        def change(rec: dict[str, Any]) -> None:
            rec["partial"] = partial
            rec["status"] = "stopped"
            rec["stop_reason"] = stop_reason
            rec.setdefault("events", []).append(
                {"at": iso(), "kind": "budget-spent", "budget": name, "detail": spent.message}
            )

        runrecord.update(self.run, change)
        self.journal.data["partial"] = {"budget": name, "detail": spent.message} if partial else None
        self.journal.save()
        if self.journal.done("synthesize"):
            return
        try:
            result = self._synthesize(partial=partial, why=spent.message, spend_nothing=True, finish=stopped)
            self.journal.mark("synthesize", result)
        except CheckFailed as exc:
            # Nothing verified to cite (the budget went early): the labelled draft is the partial result.
            self.progress.note("partial-result-unchecked", why=exc.message)
            problems = [p.message for p in exc.all_problems()]

            def note_draft(rec: dict[str, Any]) -> None:
                rec["result"] = {
                    "path": self.run.relative(self.run.path("result_draft")),
                    "partial": True,
                    "passes_report_check": False,
                    "problems": problems,
                }

            runrecord.update(self.run, note_draft)
            self.journal.mark("synthesize", {"result": None, "partial": True, "problems": problems})
        runrecord.update(
            self.run,
            lambda rec: rec.update(
                partial=partial, status="stopped" if partial else rec.get("status"), stop_reason=stop_reason
            ),
        )

    # -- dry run ---------------------------------------------------------------------------------------

    def _dry_run(self) -> Outcome:
        from research_engine import decompose, runrecord, selection

        plan = self.journal.data["plans"].get("1") or {}
        planned: dict[str, Any] = {}
        for sq in sorted(plan):
            self.step(f"c01:gather:{sq}", functools.partial(self._gather, 1, sq, plan[sq]))
            self.step(f"c01:select:{sq}", functools.partial(self._select, 1, sq))
            planned[sq] = {
                "text": decompose.get(self.run, sq)["text"],
                "queries": [q["query"] for q in plan[sq]],
                "selected": [c["url"] for c in selection.chosen(self.run, sq)],
            }
        self.journal.data["status"] = "dry-run"
        self.journal.save()

        def change(rec: dict[str, Any]) -> None:
            rec["status"] = "stopped"
            rec["stop_reason"] = "dry-run"

        runrecord.update(self.run, change)
        outcome = self._outcome()
        outcome.planned = planned
        return outcome

    # -- bookkeeping -----------------------------------------------------------------------------------

    def _event(self, kind: str, **details: Any) -> None:
        from research_engine import runrecord

        runrecord.add_event(self.run, kind, **{k: v for k, v in details.items() if v is not None})

    def _set_status(self, status: str) -> None:
        from research_engine import runrecord

        def change(rec: dict[str, Any]) -> None:
            if rec.get("status") in ("locked", "running", "failed"):
                rec["status"] = status
            rec["model"] = {
                "name": getattr(self.raw_model, "name", self.options.model),
                "kind": self.options.model.split(":", 1)[0],
            }

        runrecord.update(self.run, change)
        self._note_gather()

    def _note_gather(self) -> None:
        """run.json's `gather`: the modalities this run gathers from, and any an API failure stopped."""
        from research_engine import runrecord

        if (self.journal.data.get("config") or {}).get("sources_unrecorded"):
            return  # a replay of a run recorded before `gather` existed writes run.json as it was written
        down = dict(self.journal.data.get("sources_down") or {})

        def change(rec: dict[str, Any]) -> None:
            rec["gather"] = {"sources": list(self.sources), **({"down": down} if down else {})}

        runrecord.update(self.run, change)

    def _reconcile(self) -> None:
        """After a kill: note in run.json what the artifacts hold but run.json missed."""
        from research_engine import controller, retrieve, runrecord

        record = runrecord.read(self.run)
        noted = {s["id"] for s in record.get("sources", [])}
        missing = [ref for ref in retrieve.list_sources(self.run) if ref not in noted]
        if missing:
            metas = [retrieve.load_source(self.run, ref)[0] for ref in missing]

            def add_sources(rec: dict[str, Any]) -> None:
                have = {s["id"] for s in rec.get("sources", [])}
                for meta in metas:
                    if meta["id"] not in have:
                        rec.setdefault("sources", []).append(
                            {
                                "id": meta["id"],
                                "url": meta.get("final_url") or meta["requested_url"],
                                "kind": meta.get("kind"),
                                "canonical_key": meta.get("canonical_key"),
                                "access_tier": meta.get("access_tier"),
                                "sha256": meta.get("sha256"),
                            }
                        )
                rec["sources"].sort(key=lambda s: _ref_key(s["id"]))

            runrecord.update(self.run, add_sources)
        log = runstate.load_loop_log(self.run)
        if len(log["cycles"]) > int(record.get("cycles") or 0):
            for block in log["cycles"][int(record.get("cycles") or 0) :]:
                controller.note_cycle(self.run, block)  # the loop-log block was written, run.json was not

    def _outcome(self) -> Outcome:
        from research_engine import claims, decompose, retrieve, runrecord

        record = runrecord.read(self.run)
        latest = runstate.latest_verdicts(self.run)
        result = self.run.path("result")
        status = record.get("status") or "running"
        if self.options.dry_run:
            status = "dry-run"
        usage = getattr(self.raw_model, "usage", None)
        figures = {
            "sub_questions": len(decompose.load(self.run)),
            "sources": len(retrieve.list_sources(self.run)),
            "claims": len(claims.load(self.run)["claims"]),
            "active_claims": len(claims.active_claims(self.run)),
            "supported": sum(1 for v in latest.values() if v.get("verdict") == "supported"),
            "refused": sum(1 for v in latest.values() if v.get("verdict") == "refuse"),
            "failed_fetches": self.failed_fetches,
            "rejected_drafts": self.rejected_drafts,
            "budgets": {"set": self.budget.limits, "spent": self.budget.spent()},
            "timings": self.journal.data.get("timings") or {},
            "model": usage.to_dict() if usage is not None else None,
        }
        if self.cassette is not None and hasattr(self.cassette, "misses"):
            figures["replay_misses"] = list(self.cassette.misses)
        return Outcome(
            run_root=self.run.root,
            run_id=self.run.run_id,
            status=status,
            stop_reason=record.get("stop_reason"),
            partial=bool(record.get("partial")),
            cycles=int(record.get("cycles") or 0),
            result=self.run.relative(result) if result.is_file() else None,
            figures=figures,
        )


# ---------------------------------------------------------------------------- helpers


def _safe_key(canonical_key: Callable[[str], str], url: str) -> str:
    try:
        return canonical_key(url)
    except ResearchEngineError:
        return url


def _query_of(cand: dict[str, Any]) -> str | None:
    return cand.get("query") or None


def _ref_key(ref: str) -> tuple[int, int]:
    sq, src = ref.split("/")
    return int(sq.split("-")[1]), int(src.split("-")[1])


def _already_claimed(ledger: list[dict[str, Any]], sq: str, text: str, refs: list[str]) -> bool:
    """A draft the ledger already holds: the same text, active; or retired with the same sources."""
    for claim in ledger:
        if claim["sub_question"] != sq or " ".join(claim["text"].split()) != text:
            continue
        if claim["status"] == "active":
            return True
        cited = {e["source"] for e in claim.get("evidence") or []}
        if set(refs) == cited:
            return True  # re-adding a refused claim on the same evidence would only be refused again
    return False


def _label_partial(text: str, why: str) -> str:
    """Put the partial-result caution right under the deliverable's title."""
    banner = (
        f"> **Caution:** this is a PARTIAL result. The run stopped before finishing because {why}; "
        "claims that were not verified are left out, and the gaps below are not all gaps."
    )
    lines = text.splitlines()
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join(lines[:at] + ["", banner, ""] + lines[at:]) + "\n"


# ---------------------------------------------------------------------------- entry points


def start(
    brief_path: str | Path,
    options: EngineOptions,
    *,
    settings: Settings,
    progress: Progress | None = None,
    model: Any = None,
) -> Engine:
    """Lock the brief and prepare a new run (nothing is fetched yet)."""
    if options.record and options.replay:
        raise BadInput("--record and --replay exclude each other", code="bad-options")
    from research_engine.engine.apigather import parse_sources

    if options.replay:
        recorded = read_cassette_config(options.replay)
        settings = Settings.from_public(recorded)  # a replay is configured as the recording was
        options.allow_private = options.allow_private or bool(recorded.get("allow_private"))
        # A replay gathers what the recording gathered; a cassette from before --sources was web only.
        replayed = parse_sources(recorded.get("sources") or ["web"])
        if options.sources is not None and parse_sources(options.sources) != replayed:
            raise BadInput(
                f"this cassette was recorded with --sources {','.join(replayed)}; a replay gathers the same",
                code="bad-options",
                field="sources",
            )
        options.sources = replayed
        legacy = not recorded.get("sources")
    else:
        legacy = False
        options.sources = parse_sources(options.sources)
    _check_search_configured(options, settings)
    if model is None and options.model.split(":", 1)[0] == "openai":
        from research_engine.engine.openai_model import configured_endpoint

        # Before the lock, so a missing setting leaves no empty run behind; "openai:NAME" names the model.
        configured_endpoint(settings, model=options.model.partition(":")[2] or None)
    run = _lock_brief(brief_path, options)
    journal = Journal(run)
    config = settings.public()
    config["as_of"] = (
        read_cassette_config(options.replay).get("as_of") if options.replay else date.today().isoformat()
    )
    config["allow_private"] = options.allow_private
    config["sources"] = list(options.sources)
    if legacy:
        # Replaying a cassette from before --sources: keep its trace as it was.
        config["sources_unrecorded"] = True
    journal.data["options"] = options.to_dict()
    journal.data["config"] = config
    journal.save()
    if options.record:
        cassette_dir = run.path("cassette_dir")
        cassette_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            cassette_dir / ENGINE_CONFIG, json.dumps({**config, "model": options.model}, indent=2) + "\n"
        )
    engine = Engine(run, options, progress or Progress.quiet(), journal, settings, model=model)
    engine._open_clients()
    engine._open_model()
    return engine


def reopen(
    run_dir: str | Path,
    *,
    settings: Settings,
    progress: Progress | None = None,
    model: Any = None,
    budget_overrides: dict[str, int] | None = None,
) -> Engine:
    """Reopen a run for `--resume`: the options and configuration it was started with."""
    from research_engine import trace

    run = trace.open_run(run_dir)
    journal = Journal(run)
    if not journal.exists:
        raise BadInput(
            f"{run.root} was not started by `research-engine run` (no .state/{JOURNAL_NAME}.json)",
            code="not-an-engine-run",
            field="run",
        )
    known = set(EngineOptions.__dataclass_fields__)
    options = EngineOptions(**{k: v for k, v in journal.data.get("options", {}).items() if k in known})
    if budget_overrides:
        options.budget_overrides.update(budget_overrides)
    if options.sources is None:
        options.sources = ["web"]  # started before --sources existed: it gathered from the web only
    recorded = journal.data.get("config") or {}
    # A replay is configured as the recording was; a live resume keeps this machine's settings and fills in
    # only what they leave unset.
    settings = Settings.from_public(recorded, underneath=None if options.replay else settings)
    engine = Engine(run, options, progress or Progress.quiet(), journal, settings, model=model)
    engine._open_clients()
    engine._open_model()
    return engine


def _check_search_configured(options: EngineOptions, settings: Settings) -> None:
    from research_engine.sources import search

    if "web" in (options.sources or ["web"]) and not search.configured_backends(settings):
        raise NotConfigured(
            "no web search backend is configured: set SEARXNG_URL (e.g. to a `research-engine corpus serve` "
            "address), BRAVE_API_KEY or TAVILY_API_KEY, replay a recorded run with --replay CASSETTE, or "
            "gather from the data APIs only with --sources openalex,worldbank",
            code="search-not-configured",
        )


def run(
    brief_path: str | Path,
    options: EngineOptions | None = None,
    *,
    settings: Settings | None = None,
    progress: Progress | None = None,
    model: Any = None,
) -> Outcome:
    """Lock `brief_path` and drive the run to its end (or its budget, or the dry-run's selection)."""
    engine = start(
        brief_path,
        options or EngineOptions(),
        settings=settings or Settings(),
        progress=progress,
        model=model,
    )
    return engine.drive()


def resume(
    run_dir: str | Path,
    *,
    settings: Settings | None = None,
    progress: Progress | None = None,
    model: Any = None,
) -> Outcome:
    """Continue a run from its trace tree, redoing only unfinished work."""
    engine = reopen(run_dir, settings=settings or Settings(), progress=progress, model=model)
    if engine.journal.data.get("status") == "done":
        engine.close()
        return engine._outcome()
    return engine.drive()
