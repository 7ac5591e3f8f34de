"""The batch driver: check every brief, then run them, at most `workers` at a time, and keep the record.

Locally each brief runs in its own process (multiprocessing, spawn), so a run that crashes, hangs or is
killed takes nothing else with it; the processes share per-host politeness through a `FileHostLedger` in
the batch directory. On Ray each brief is a task (`batch.cluster`). Either way the driver alone writes
batch.json, after every start and every end.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from research_engine import bounded, brief
from research_engine.batch import cluster
from research_engine.batch import record as records
from research_engine.batch.record import BatchRecord, BriefEntry
from research_engine.batch.worker import RunRequest, process_main
from research_engine.corpus.session import ServedCorpora, check_folders, start_corpora
from research_engine.engine.config import (
    EngineOptions,
    check_brief,
    check_search_configured,
    check_search_reachable,
)
from research_engine.errors import BadInput, ExitCode, Problem
from research_engine.settings import Settings

BRIEF_SUFFIXES = (".yaml", ".yml", ".md", ".markdown", ".json", ".txt")
STOP_GRACE = 15.0  # seconds a stopped worker gets to mark its run failed before it is killed
OVERRUN = 120.0  # seconds past a run's wall-clock budget before the driver stops it as hung


@dataclass
class BatchOptions:
    """How a batch runs (the CLI's flags); the engine options every run gets."""

    output_path: str = "runs"
    workers: int | None = None  # None: the number of cores
    ray: str | None = None  # None: local processes; "local": a local Ray instance; "auto" or "ray://..."
    model: str = "extractive"
    depth: str | None = None
    sources: list[str] | None = None
    allow_hosts: list[str] = field(default_factory=list)
    allow_private: bool = False
    record: bool = False
    corpus: list[str] = field(default_factory=list)  # folders every run researches (`run --corpus`)

    def engine_options(self) -> dict[str, Any]:
        options = EngineOptions(
            model=self.model,
            depth=self.depth,
            record=self.record,
            output_path=self.output_path,
            allow_private=self.allow_private,
            allow_hosts=list(self.allow_hosts),
            sources=self.sources,
            corpus=list(self.corpus),
        )
        return asdict(options)

    def recorded(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "depth": self.depth,
            "sources": self.sources,
            "allow_hosts": list(self.allow_hosts),
            "allow_private": self.allow_private,
            "record": self.record,
            "corpus": list(self.corpus),
        }


class Reporter:
    """One line per finished run on `stream`, and a bar for the whole batch on a terminal."""

    def __init__(self, total: int, stream: IO[str] | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.bar = enabled and self.stream.isatty()

    def finished(self, entry: BriefEntry) -> None:
        self.done += 1
        if not self.enabled:
            return
        where = Path(entry.run_dir).name if entry.run_dir else Path(entry.brief).name
        why = f": {entry.error}" if entry.error else ""
        exit_code = "-" if entry.exit_code is None else entry.exit_code
        line = f"[{self.done}/{self.total}] {entry.status} (exit {exit_code}, {entry.seconds:.1f} s) "
        line += f"{where}{why}"
        if self.bar:
            width = 30
            filled = int(width * self.done / max(1, self.total))
            line += f"\n  [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
        self.stream.write(line + "\n")
        self.stream.flush()


def find_briefs(paths: Iterable[str | Path], folder: str | Path | None) -> list[Path]:
    """The briefs named, then every brief file directly in `folder` (sorted); BadInput when one is missing."""
    found = [Path(p) for p in paths]
    if folder is not None:
        directory = Path(folder)
        if not directory.is_dir():
            raise BadInput(f"--briefs {directory}: not a directory", code="bad-briefs-folder", field="briefs")
        found += sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in BRIEF_SUFFIXES)
    if not found:
        raise BadInput("no brief given (BRIEF... or --briefs DIR)", code="missing-argument", field="brief")
    for path in found:
        if not path.is_file():
            raise BadInput(f"brief {path} does not exist", code="missing-brief", field="brief")
    return found


def run_batch(
    briefs: list[Path],
    options: BatchOptions,
    *,
    settings: Settings,
    reporter: Reporter | None = None,
) -> BatchRecord:
    """Check everything, create the batch directory, run every brief; the final record."""
    workers = _workers(options.workers)
    options.corpus = [str(path) for path in check_folders(options.corpus)]
    engine_options = EngineOptions(**options.engine_options())
    for path in briefs:  # every brief first: a bad one fails the batch before any run, naming its file
        _check_brief(path, engine_options)
    check_search_configured(engine_options, settings, corpora=len(options.corpus))
    # A backend the guard refuses dooms every run.
    check_search_reachable(engine_options, settings, corpora=len(options.corpus))
    output = Path(options.output_path).expanduser()
    _check_writable(output)
    executor = "ray" if options.ray is not None else "local"
    address = None if options.ray in (None, "local") else options.ray
    session = _open_executor(options.ray, workers)
    record = records.create(
        output,
        briefs=briefs,
        executor=executor,
        workers=workers,
        options=options.recorded(),
        ray_address=address,
    )
    return _execute(record, options.engine_options(), settings, session, reporter)


def resume_batch(
    batch_dir: str | Path,
    *,
    settings: Settings,
    workers: int | None = None,
    ray: str | None = None,
    reporter: Reporter | None = None,
) -> BatchRecord:
    """Continue a batch: runs that ended are kept, runs cut short resumed, runs never started started."""
    record = records.load(batch_dir)
    if workers is not None:
        record.workers = _workers(workers)
    if ray is not None:
        record.executor, record.ray_address = "ray", None if ray == "local" else ray
    options = BatchOptions(output_path=record.output_path, **record.options).engine_options()
    for entry in record.runs:  # the briefs may have moved or changed since: say which before anything runs
        if entry.run_dir is None and record.announced_run(entry) is None:
            path = Path(entry.brief)
            if not path.is_file():
                raise BadInput(f"brief {path} of {record.batch_id} no longer exists", code="missing-brief")
            _check_brief(path, EngineOptions(**options))
    session = _open_executor(
        None if record.executor == "local" else (record.ray_address or "local"), record.workers
    )
    record.status = "running"
    return _execute(record, options, settings, session, reporter)


def batch_exit_code(record: BatchRecord) -> ExitCode:
    """0 when every brief ended with a deliverable (its run exited 0, 7 or 8), 1 when any did not."""
    return ExitCode.OK if all(entry.delivered for entry in record.runs) else ExitCode.CHECK_FAILED


# ------------------------------------------------------------------------------------------ internals


def _workers(requested: int | None) -> int:
    workers = requested if requested is not None else (os.cpu_count() or 1)
    if workers < 1:
        raise BadInput("--workers must be at least 1", code="bad-workers", field="workers")
    return workers


def _check_brief(path: Path, options: EngineOptions) -> None:
    """The brief as its run would lock it; BadInput naming the file in every problem."""
    try:
        check_brief(path, options)
    except BadInput as exc:
        problems = [Problem(p.code, p.message, p.field, str(path)) for p in exc.all_problems()]
        raise BadInput(f"{path}: {exc.message}", code=exc.code, problems=problems) from exc


def _check_writable(output: Path) -> None:
    """The output path exists (or can be made) and takes a file: checked before any run starts."""
    try:
        output.mkdir(parents=True, exist_ok=True)
        probe = output / f".batch-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise BadInput(
            f"output path {output} is not writable: {exc.strerror or exc}",
            code="output-path-unwritable",
            field="output_path",
        ) from exc


def _open_executor(ray: str | None, workers: int) -> Any:
    """None for local processes; a connected Ray session for `ray` ("local", "auto", "ray://...")."""
    if ray is None:
        return None
    return cluster.connect(ray, workers)  # Ray itself is imported there, on first use


def _requests(record: BatchRecord, engine_options: dict[str, Any], settings: Settings) -> list[RunRequest]:
    """What is left to do: every run that has not ended with a deliverable or a final failure of its own."""
    todo = []
    for entry in record.runs:
        if entry.delivered or entry.status in ("failed", "killed", "timed-out") and entry.run_dir is None:
            continue  # ended; a failure before its run existed is not retried (its cause is in `error`)
        entry.run_dir = entry.run_dir or record.announced_run(entry)
        if entry.status == "failed" and entry.exit_code == ExitCode.BAD_INPUT:
            continue  # refused as input: running it again cannot change that
        todo.append(
            RunRequest(
                index=entry.index,
                brief=entry.brief,
                worker_dir=str(record.worker_dir),
                options=engine_options,
                run_dir=entry.run_dir,
                settings=settings,
            )
        )
    return todo


def _execute(
    record: BatchRecord,
    engine_options: dict[str, Any],
    settings: Settings,
    session: Any,
    reporter: Reporter | None,
) -> BatchRecord:
    requests = _requests(record, engine_options, settings)
    reporter = reporter or Reporter(0, enabled=False)
    reporter.total = len(requests)
    limits = {req.index: _time_limit(Path(req.brief), engine_options) for req in requests}
    record.save()
    served = ServedCorpora()
    try:
        if session is None:
            if engine_options.get("corpus"):
                # Served once, by the driver, for every new run; a resumed run serves its folders again on
                # the port its trace names, so those go one at a time (two would want the same port).
                served = start_corpora(engine_options["corpus"], cache_root=settings.cache_root)
                for request in requests:
                    request.served = served.copy() if request.run_dir is None else None
                resumed = [r for r in requests if r.run_dir is not None]
                _run_local(record, resumed, limits, reporter.finished, workers=1)
                requests = [r for r in requests if r.run_dir is None]
            _run_local(record, requests, limits, reporter.finished)
        else:  # each Ray task serves the folders itself: the driver's loopback is not a cluster's
            session.run(record, requests, limits, reporter.finished, _finish)
    except KeyboardInterrupt:
        record.status = "interrupted"
        record.save()
        raise
    finally:
        served.stop()
        if session is not None:
            session.close()
    record.status = "complete" if all(e.delivered for e in record.runs) else "failed"
    record.save()
    return record


def _time_limit(path: Path, engine_options: dict[str, Any]) -> float:
    """How long a run may take before the driver stops it as hung: its wall-clock budget plus a margin
    (the governor stops a run on its budget at a step boundary; a step stuck on a dead peer never ends)."""
    try:
        fields = brief.checked(path, engine_options.get("output_path")).fields
        return float(brief.budget_of(fields)["wall_clock_seconds"]) + OVERRUN
    except BadInput:  # a locked brief.md of a resumed run: its budget is in the run
        return float(brief.budget_of({})["wall_clock_seconds"]) + OVERRUN


def _finish(
    record: BatchRecord,
    entry: BriefEntry,
    seconds: float,
    result: dict[str, Any] | None,
    ended: str | None = None,
) -> None:
    """Record how `entry`'s worker ended: its result file when it wrote one, else `ended` (killed, ...)."""
    entry.seconds = round(entry.seconds + seconds, 3)
    if result is None:
        result = _read_result(record, entry)
    if result is not None:
        for name in (
            "run_dir",
            "status",
            "exit_code",
            "stop_reason",
            "cycles",
            "claims_supported",
            "claims_refused",
            "model_tokens",
            "provider_calls",
            "fetched_bytes",
            "error",
        ):
            if name in result:
                setattr(entry, name, result[name])
    else:
        entry.run_dir = entry.run_dir or record.announced_run(entry)
        entry.status, entry.exit_code = ended or "killed", None
        entry.error = "the worker ended without a word (killed): `batch --resume` continues its run"
    if ended in ("timed-out", "interrupted"):
        entry.status = ended
        entry.error = (
            entry.error if ended == "interrupted" else "stopped after running past its wall-clock budget"
        )
    record.save()


def _read_result(record: BatchRecord, entry: BriefEntry) -> dict[str, Any] | None:
    path = record.worker_dir / f"{entry.name}.result.json"
    if not path.is_file():
        return None
    try:
        data = bounded.load_json(bounded.read_bytes(path), str(path))
    except BadInput:
        return None
    return data if isinstance(data, dict) else None


def _run_local(
    record: BatchRecord,
    requests: list[RunRequest],
    limits: dict[int, float],
    finished: Callable[[BriefEntry], None],
    workers: int | None = None,
) -> None:
    context = multiprocessing.get_context("spawn")  # never fork a process that holds threads and locks
    ledger_dir = str(record.root / ".politeness")
    pending = deque(requests)
    running: dict[int, tuple[Any, float]] = {}
    entries = {entry.index: entry for entry in record.runs}
    try:
        while pending or running:
            while pending and len(running) < (workers or record.workers):
                request = pending.popleft()
                entry = entries[request.index]
                with contextlib.suppress(FileNotFoundError):  # an earlier attempt's result is not this one's
                    (record.worker_dir / f"{entry.name}.result.json").unlink()
                process = context.Process(
                    target=process_main,
                    args=(request, ledger_dir),
                    name=f"research-engine-batch-{entry.name}",
                )
                process.start()
                entry.status, entry.attempts = "running", entry.attempts + 1
                running[request.index] = (process, time.monotonic())
                record.save()
            multiprocessing.connection.wait([p.sentinel for p, _ in running.values()], timeout=1.0)
            for index, (process, started) in list(running.items()):
                hung = process.is_alive() and time.monotonic() - started > limits[index]
                if process.is_alive() and not hung:
                    continue
                if hung:
                    _stop(process)
                process.join()
                del running[index]
                _finish(
                    record, entries[index], time.monotonic() - started, None, "timed-out" if hung else None
                )
                finished(entries[index])
    except KeyboardInterrupt:
        for process, _ in running.values():
            if process.is_alive():
                process.terminate()  # SIGTERM: the run records itself failed and stays resumable
        for index, (process, started) in running.items():
            _stop(process)
            _finish(record, entries[index], time.monotonic() - started, None, "interrupted")
        raise


def _stop(process: Any) -> None:
    """SIGTERM, then SIGKILL after a grace period."""
    if process.is_alive():
        process.terminate()
        process.join(STOP_GRACE)
    if process.is_alive():
        process.kill()
        process.join()
