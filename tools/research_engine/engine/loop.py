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
    select      model.select_judgements    -> selection.log_selection  (select log)
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

Budgets (`engine.metering`). Every HTTP exchange goes through a `MeteredClient`;
model tokens are read from the model's usage. When a budget is spent the step in
flight stops, the spend is written to run.json, the controller records the stop
(`budget:<name>`), and a partial result, labelled as such, is written with the
extractive writer (it spends nothing). run.json gets `partial: true`.

Record and replay (`engine.cassette`). `--record` keeps every exchange in
`<run>/cassette/`; `--replay CASSETTE` serves them back with no socket. The
engine's own configuration (search backends and their URLs, API overrides, the
model, the selection date) is kept beside it in `cassette/engine.json` so a
replay configures itself the same way; no secret is written there.

The engine is split by job: `config` (options, outcome, the recorded configuration),
`journal` (resume points), `metering` (budgets and timers), `state` (what every stage
shares), `gather`, `stages` (plan, queries, select, retrieve, consolidate), `review`
(verify, critic, control, remediate) and `synthesis` (the deliverable, the budget stop,
the dry run); this module drives them in order.

The engine decides nothing a tool decides: it never scores, grounds, judges or
routes; it calls the tools in order and carries their results.
"""

from __future__ import annotations

import functools
import json
from contextlib import suppress
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from research_engine import claims, controller, decompose, retrieve, runrecord, runstate, selection, trace
from research_engine.corpus.session import ServedCorpora, check_folders, start_corpora
from research_engine.engine.apigather import parse_sources
from research_engine.engine.cassette import check_cassette, client_kwargs, open_cassette
from research_engine.engine.config import (
    ENGINE_CONFIG,
    EngineOptions,
    Outcome,
    lock_brief,
    preflight,
    provider_prefixes,
    read_cassette_config,
)
from research_engine.engine.factory import check_configured, make_model
from research_engine.engine.gather import GatherStages
from research_engine.engine.helpers import ref_key
from research_engine.engine.journal import JOURNAL_NAME, Journal
from research_engine.engine.metering import Meter, TimedClient, TimedModel
from research_engine.engine.progress import Progress
from research_engine.engine.review import ReviewStages
from research_engine.engine.stages import ResearchStages
from research_engine.engine.synthesis import SynthesisStages
from research_engine.errors import (
    ENVIRONMENT_ERRNOS,
    BadInput,
    BudgetSpent,
    ResearchEngineError,
    StorageFailed,
    storage_failure,
)
from research_engine.net import fetch_policy
from research_engine.redaction import redact_text
from research_engine.settings import Settings
from research_engine.trace import atomic_write_text
from research_engine.vocabulary import RunStatus, failure_stop

__all__ = ["Engine", "EngineOptions", "Journal", "Outcome", "reopen", "resume", "run", "start"]


class Engine(GatherStages, ResearchStages, ReviewStages, SynthesisStages):
    """One run being driven: the stages in order, cycle after cycle, until the controller stops it."""

    def _open_clients(self) -> None:
        # Hosts named with --allow-host get no politeness pause (the client exempts them); --allow-private
        # means a local corpus on many hosts, with no public host to be polite to.
        options: dict[str, Any] = {}
        if self.options.allow_private:
            options["per_host_interval"] = 0.0
        if self.options.replay:
            self.cassette = open_cassette("replay", self.options.replay, self.settings.secrets)
            options.update(client_kwargs(self.cassette))
            options["warn_private"] = False  # served from the cassette: no private address is contacted
        elif self.options.record:
            self.cassette = open_cassette("record", self.run.path("cassette_dir"), self.settings.secrets)
            options.update(client_kwargs(self.cassette))
        # Every request and body of both clients is counted (and written to the spend ledger) as it happens.
        options["meter"] = Meter(self.budget, provider_prefixes(self.settings, self.corpora.search_urls))
        policy = fetch_policy(
            self.settings,
            self.run,
            allow_private=self.options.allow_private,
            allow_hosts=self.options.allow_hosts,
            client_options=options,
        )
        base = policy.client()
        fresh = policy.replace(use_cache=False).client()
        self._clients = [base, fresh]
        self.client = TimedClient(base, self.budget, self.clock)
        self.fresh_client = TimedClient(fresh, self.budget, self.clock)

    def _open_model(self) -> None:
        model = self._model_override
        if model is None:
            name = self.options.model
            kw: dict[str, Any] = {}
            if name.split(":", 1)[0] == "openai":
                # Its own client and timeout (a model call takes minutes, a page seconds), recorded in the
                # cassette like every other exchange; failures and fallbacks become run.json events.
                kw["client_options"] = client_kwargs(self.cassette) if self.cassette is not None else None
                kw["on_event"] = self._event
                if self.options.keep_exchanges:
                    kw["record_dir"] = self.run.path("model_exchanges")
            model = make_model(name, settings=self.settings, **kw)
        self.raw_model = model
        # Model use per stage adds up over sessions: what earlier ones counted is carried under this one's.
        self.journal.data["model_use_carried"] = self.journal.data.get("model_use") or {}
        self.budget.model_usage = model.usage  # tokens count; a model call is not a provider call
        self.model = TimedModel(model, self.clock, self.budget)

    def close(self) -> None:
        with suppress(Exception):
            getattr(self.raw_model, "close", lambda: None)()
        for client in self._clients:
            # Closing is best effort; the run's state is already on disk.
            with suppress(Exception):
                client.close()
        self.progress.detach_log()
        with suppress(Exception):
            self.corpora.stop()
        self.release_writer()

    def drive(self) -> Outcome:
        self.journal.data["sessions"] = int(self.journal.data.get("sessions") or 0) + 1
        self.journal.data["status"] = "running"
        self.journal.save()
        try:  # from the moment run.json says running, an ending of any kind is recorded
            self._set_status("running")
            self._reconcile()
            self._save_spend()  # run.json shows what earlier sessions spent (the ledger) from the start
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
        except BaseException as exc:  # a fatal upstream error, Ctrl-C, a bug: say so, stay resumable
            self._record_failure(exc)
            environmental = isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS
            storage = storage_failure(exc, "writing") if environmental else exc
            if isinstance(storage, StorageFailed):  # say exactly how to go on once the machine is fixed
                raise storage.then(f"continue with `research-engine run --resume {self.run.root}`") from exc
            raise
        finally:
            with suppress(Exception):  # best effort: the ledger already holds every spend
                self._save_spend()
            self.close()
        return self._outcome()

    def _record_failure(self, exc: BaseException) -> None:
        """run.json after a run ended on an error: status `failed`, stop reason `failed:<code>`, an event
        with the message; the journal says `failed`, and `run --resume` picks the run up where it was."""
        if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
            exc = storage_failure(exc, "writing") or exc
        if isinstance(exc, ResearchEngineError):
            code, message = exc.code, exc.message
        elif isinstance(exc, KeyboardInterrupt):
            code, message = "interrupted", "interrupted (Ctrl-C)"
        else:
            code, message = "internal", f"{type(exc).__name__}: {exc}"
        message = redact_text(message, self.settings.secrets)

        def change(rec: dict[str, Any]) -> None:
            rec["status"] = RunStatus.FAILED
            rec["stop_reason"] = failure_stop(code)
            rec.setdefault("events", []).append(
                {"at": trace.iso(), "kind": "run-failed", "code": code, "detail": message}
            )

        with suppress(Exception):  # the failure may be run.json itself; the journal still says failed
            self.journal.data["status"] = "failed"
            self.journal.save()
            runrecord.update(self.run, change)

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

    def _reconcile(self) -> None:
        """After a kill: note in run.json what the artifacts hold but run.json missed."""

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
                rec["sources"].sort(key=lambda s: ref_key(s["id"]))

            runrecord.update(self.run, add_sources)
        log = runstate.load_loop_log(self.run)
        if len(log["cycles"]) > int(record.get("cycles") or 0):
            for block in log["cycles"][int(record.get("cycles") or 0) :]:
                controller.note_cycle(self.run, block)  # the loop-log block was written, run.json was not

    def _outcome(self) -> Outcome:
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
            no_finding=bool((record.get("result") or {}).get("no_finding")),
        )

    def _dry_run(self) -> Outcome:
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


def start(
    brief_path: str | Path,
    options: EngineOptions,
    *,
    settings: Settings,
    progress: Progress | None = None,
    model: Any = None,
    served: ServedCorpora | None = None,
) -> Engine:
    """Lock the brief and prepare a new run (nothing is fetched yet).

    `served`: corpus folders a caller already serves (`corpus.session.start_corpora`; a batch serves its
    folders once for all its runs); the run uses them and leaves them running. Otherwise `options.corpus`
    folders are served for this run alone."""
    if options.record and options.replay:
        raise BadInput("--record and --replay exclude each other", code="bad-options")

    corpora = ServedCorpora()
    if options.replay:
        recorded = read_cassette_config(options.replay)
        check_cassette(options.replay)  # an altered body refuses the replay before a run directory exists
        settings = Settings.from_public(recorded)  # a replay is configured as the recording was
        options.allow_private = options.allow_private or bool(recorded.get("allow_private"))
        options.allow_hosts = [*options.allow_hosts, *(recorded.get("allow_hosts") or [])]
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
        # The recording's corpus folders, under the URLs it used: the cassette answers, no server starts.
        corpora = ServedCorpora.from_records(recorded.get("corpus") or [])
    else:
        legacy = False
        if served is not None:
            options.corpus = [str(e["path"]) for e in served.entries]
        options.corpus = [str(path) for path in check_folders(options.corpus)]
        # A corpus run gathers from its folders unless told otherwise: a private folder's questions are not
        # sent to public APIs by default.
        options.sources = parse_sources(options.sources or (["web"] if options.corpus else None))
    # Before the lock, so a missing setting leaves no empty run behind; "openai:NAME" names the model.
    check_model = None if model is not None else functools.partial(check_configured, options.model, settings)
    # An input error first, then the machine.
    preflight(brief_path, options, settings, check_model, corpora=len(options.corpus) + len(corpora.urls))
    if options.corpus and not options.replay:
        # This run's own servers, or the caller's (a copy without them: this run does not stop them).
        if served is None:
            corpora = start_corpora(options.corpus, cache_root=settings.cache_root)
        else:
            corpora = served.copy()
        # Allowed for this run, and only these: exactly the servers' HOST:PORT pairs.
        options.allow_hosts = [*options.allow_hosts, *corpora.allow_hosts]
    try:
        run = lock_brief(brief_path, options)
        writer = trace.acquire_writer(run, "run")
    except BaseException:
        corpora.stop()
        raise
    try:
        return _prepare(run, writer, options, settings, progress, model, legacy=legacy, corpora=corpora)
    except BaseException:
        writer.release()
        corpora.stop()
        raise


def _prepare(
    run: trace.Run,
    writer: trace.WriterLock,
    options: EngineOptions,
    settings: Settings,
    progress: Progress | None,
    model: Any,
    *,
    legacy: bool,
    corpora: ServedCorpora,
) -> Engine:
    journal = Journal(run)
    config = settings.public()
    config["as_of"] = (
        read_cassette_config(options.replay).get("as_of") if options.replay else date.today().isoformat()
    )
    config["allow_private"] = options.allow_private
    if options.allow_hosts:
        config["allow_hosts"] = list(options.allow_hosts)
    config["sources"] = list(options.sources or [])
    if corpora.urls:
        config["corpus"] = corpora.records()
        runrecord.update(run, functools.partial(_note_corpus, corpora.records()))
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
    engine.writer = writer
    engine.corpora = corpora
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
    keep_exchanges: bool | None = None,
) -> Engine:
    """Reopen a run for `--resume`: the options and configuration it was started with (`keep_exchanges`,
    when given, is this session's `-v`)."""

    run = trace.open_run(run_dir)
    # One writer: the lock is taken before the journal is read, so no second resume acts on a stale one.
    writer = trace.acquire_writer(run, "run --resume")
    try:
        return _reopen(run, writer, settings, progress, model, budget_overrides, keep_exchanges)
    except BaseException:
        writer.release()
        raise


def _reopen(
    run: trace.Run,
    writer: trace.WriterLock,
    settings: Settings,
    progress: Progress | None,
    model: Any,
    budget_overrides: dict[str, int] | None,
    keep_exchanges: bool | None = None,
) -> Engine:
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
    if keep_exchanges is not None:
        options.keep_exchanges = keep_exchanges
    if options.sources is None:
        options.sources = ["web"]  # started before --sources existed: it gathered from the web only
    recorded = journal.data.get("config") or {}
    # A replay is configured as the recording was; a live resume keeps this machine's settings and fills in
    # only what they leave unset.
    settings = Settings.from_public(recorded, underneath=None if options.replay else settings)
    engine = Engine(run, options, progress or Progress.quiet(), journal, settings, model=model)
    engine.writer = writer
    engine.corpora = _reopen_corpora(options, recorded, settings)
    engine._open_clients()
    engine._open_model()
    return engine


def _note_corpus(records: list[dict[str, Any]], rec: dict[str, Any]) -> None:
    """run.json's `corpus`: each folder's path, the digest of its file list, its URL and counts."""
    rec["corpus"] = records


def _reopen_corpora(options: EngineOptions, recorded: dict[str, Any], settings: Settings) -> ServedCorpora:
    """A resumed corpus run serves its folders again on the ports its URLs name (a replay serves none)."""
    records = [r for r in recorded.get("corpus") or [] if isinstance(r, dict) and r.get("url")]
    if options.replay or not records:
        return ServedCorpora.from_records(records)
    ports = [urlsplit(str(r["url"])).port for r in records]
    return start_corpora([str(r["path"]) for r in records], ports=ports, cache_root=settings.cache_root)


def run(
    brief_path: str | Path,
    options: EngineOptions | None = None,
    *,
    settings: Settings | None = None,
    progress: Progress | None = None,
    model: Any = None,
    served: ServedCorpora | None = None,
) -> Outcome:
    """Lock `brief_path` and drive the run to its end (or its budget, or the dry-run's selection);
    `served`: corpus folders the caller serves (see `start`)."""
    engine = start(
        brief_path,
        options or EngineOptions(),
        settings=settings or Settings(),
        progress=progress,
        model=model,
        served=served,
    )
    return engine.drive()


def resume(
    run_dir: str | Path,
    *,
    settings: Settings | None = None,
    progress: Progress | None = None,
    model: Any = None,
    keep_exchanges: bool | None = None,
) -> Outcome:
    """Continue a run from its trace tree, redoing only unfinished work."""
    engine = reopen(
        run_dir,
        settings=settings or Settings(),
        progress=progress,
        model=model,
        keep_exchanges=keep_exchanges,
    )
    if engine.journal.data.get("status") == "done":
        engine.close()
        return engine._outcome()
    return engine.drive()
