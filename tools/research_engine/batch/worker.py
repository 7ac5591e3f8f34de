"""One brief of a batch, driven to its end in the current process (a local worker process or a Ray task).

The run is an ordinary headless run (`engine.loop`): the same trace tree `run` writes. The worker tells the
driver two things through files in the batch directory, so that a worker killed at any instant still
leaves the driver what it needs: `.runs/NNN.json` with the run directory (and the worker's pid and host, for
whoever has to find it) as soon as the run exists, and
`.runs/NNN.result.json` with how it ended. A worker never writes batch.json.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from research_engine import trace
from research_engine.corpus.session import ServedCorpora
from research_engine.engine import loop
from research_engine.engine.config import EngineOptions, Outcome
from research_engine.errors import ExitCode, ResearchEngineError
from research_engine.net import politeness
from research_engine.net.hostledger import FileHostLedger
from research_engine.net.politeness import HostLedger
from research_engine.settings import Settings


@dataclass
class RunRequest:
    """What a worker needs to drive one brief (picklable: it crosses a process or a Ray task boundary)."""

    index: int
    brief: str
    worker_dir: str
    options: dict[str, Any] = field(default_factory=dict)  # EngineOptions fields
    run_dir: str | None = None  # set: resume this run instead of starting one
    settings: Settings = field(default_factory=Settings)
    served: ServedCorpora | None = None  # corpus folders the driver serves for every run (no servers here)

    @property
    def name(self) -> str:
        return f"{self.index:03d}"


def drive(
    request: RunRequest, ledger: HostLedger | None = None, *, own_process: bool = False
) -> dict[str, Any]:
    """Start (or resume) the run of `request` and drive it to its end; the result the driver records.

    Every outcome is a value, never an exception: Ctrl-C (and SIGTERM, in a process of its own) ends the run
    as `run` ends it (run.json says failed, `run --resume` continues it) and comes back as `interrupted`.
    A Ray worker keeps Ray's own SIGTERM handling (`own_process` False).
    """
    politeness.install(ledger)  # every client the run opens shares the batch's per-host politeness
    if own_process and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupted)
        signal.signal(signal.SIGTERM, _interrupted)
    started = time.monotonic()
    result: dict[str, Any] = {"index": request.index, "run_dir": request.run_dir}
    try:
        if request.run_dir:
            outcome = loop.resume(request.run_dir, settings=request.settings)
        else:
            engine = loop.start(
                request.brief,
                EngineOptions(**request.options),
                settings=request.settings,
                served=request.served,
            )
            result["run_dir"] = str(engine.run.root)
            announced = {"run_dir": result["run_dir"], "pid": os.getpid(), "host": socket.gethostname()}
            _write(Path(request.worker_dir) / f"{request.name}.json", announced)
            outcome = engine.drive()
        result.update(_ended(outcome))
    except ResearchEngineError as exc:
        result.update(status="failed", exit_code=int(exc.exit_code), error=f"{exc.code}: {exc.message}")
    except KeyboardInterrupt:
        result.update(status="interrupted", exit_code=int(ExitCode.INTERRUPTED), error="interrupted")
    except Exception as exc:  # a bug in one run never sinks the batch: it is that run's failure
        result.update(
            status="failed",
            exit_code=int(ExitCode.INTERNAL),
            error=f"internal error: {type(exc).__name__}: {exc}",
        )
    finally:
        politeness.install(None)
    result["seconds"] = round(time.monotonic() - started, 3)
    _write(Path(request.worker_dir) / f"{request.name}.result.json", result)
    return result


def _ended(outcome: Outcome) -> dict[str, Any]:
    figures = outcome.figures
    spent = figures["budgets"]["spent"]
    return {
        "run_dir": str(outcome.run_root),
        "status": outcome.status,
        "exit_code": int(outcome.exit_code),
        "stop_reason": outcome.stop_reason,
        "cycles": outcome.cycles,
        "claims_supported": int(figures.get("supported") or 0),
        "claims_refused": int(figures.get("refused") or 0),
        "model_tokens": int(spent.get("model_tokens") or 0),
        "provider_calls": int(spent.get("provider_calls") or 0),
        "fetched_bytes": int(spent.get("fetched_bytes") or 0),
        "error": None,
    }


def _write(path: Path, data: dict[str, Any]) -> None:
    trace.atomic_write_text(path, json.dumps(data, ensure_ascii=False) + "\n")


_stopping = threading.Event()


def _interrupted(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C or SIGTERM, once: the run ends as `run` ends it, and a second signal (Ctrl-C reaches every
    process of the group, then the driver stops its workers) does not cut that ending short. (The handler
    stays installed and returns: setting SIG_IGN here would make CPython raise on a signal already caught.)"""
    if _stopping.is_set():
        return
    _stopping.set()
    raise KeyboardInterrupt


def process_main(request: RunRequest, ledger_dir: str | None) -> None:
    """The entry point of a local worker process (multiprocessing, spawn)."""
    drive(request, FileHostLedger(ledger_dir) if ledger_dir else None, own_process=True)
