"""What a headless run shows while it works: quiet by default, loud on request.

The loop reports through one `Progress` object: `stage(name, **facts)` when a stage starts, `note(event,
**facts)` for things worth a line (a fetch that failed, a draft the gate rejected, a backend that failed),
and `figures(**counts)` for the running totals (cycle, sources, claims, refusals, budget spend).

- Every report is one structured line, logfmt style (`event=stage stage=retrieve cycle=1 sq=SQ-02`),
  appended to the run's event log (`.state/events.log`, with the time) once the engine attaches it.
- On stderr it appears only when asked for (`research-engine -v run` or `run -v`): `Progress(echo=True)`.
- On an interactive terminal (`Progress.auto`) a one-line progress bar shows the cycle, the stage and its
  sub-question, the step within the cycle, and the sources fetched and claims so far; it disappears when
  the run ends, leaving the closing summary (rich, which comes with typer).
- `Progress.quiet()` shows nothing (tests, library callers); the event log is still written.

The significant events (failures, refusals, fallbacks, the decision) are recorded in run.json by the
stages themselves; this module never touches the trace beyond its own log.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

_FIGURES = ("cycle", "sub_questions", "sources", "claims", "refused", "failed_fetches")
_PER_SUB_QUESTION = ("gather", "select", "retrieve", "consolidate")


def _logfmt_value(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
    return text


def logfmt(event: str, facts: dict[str, Any]) -> str:
    parts = [f"event={event}"] + [f"{k}={_logfmt_value(v)}" for k, v in facts.items() if v is not None]
    return " ".join(parts)


class Progress:
    """Structured lines to the run's event log, and to stderr when `echo` (the `-v` mode)."""

    def __init__(self, stream: IO[str] | None = None, echo: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.echo = echo
        self.current_stage = "start"
        self.totals: dict[str, Any] = {}
        self.started = time.monotonic()
        self._log_fd: int | None = None

    @classmethod
    def quiet(cls) -> Progress:
        return cls(echo=False)

    @classmethod
    def auto(cls, json_mode: bool = False, verbose: bool = False) -> Progress:
        """A progress bar on an interactive terminal (with the lines above it when `verbose`); elsewhere the
        lines on stderr when `verbose`, else nothing."""
        stream = sys.stderr
        if stream.isatty() and not json_mode:
            return BarProgress(stream, echo=verbose)
        return cls(stream, echo=verbose)

    def attach_log(self, path: Path) -> None:
        """Append every line to `path` from now on (the run's event log); O_APPEND, never a symbolic link."""
        self.detach_log()
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        self._log_fd = os.open(path, flags, 0o644)

    def detach_log(self) -> None:
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None

    def _line(self, event: str, facts: dict[str, Any]) -> None:
        line = logfmt(event, facts)
        if self._log_fd is not None:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            os.write(self._log_fd, f"at={stamp} {line}\n".encode())
        if self.echo:
            self._show("research-engine " + line)

    def _show(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def stage(self, name: str, **facts: Any) -> None:
        self.current_stage = name
        self._line("stage", {"stage": name, **facts})

    def note(self, event: str, **facts: Any) -> None:
        self._line(event, facts)

    def figures(self, **counts: Any) -> None:
        # The running spend changes on every call; it is shown with the counts, never alone.
        changed = {
            k: v for k, v in counts.items() if self.totals.get(k) != v and k not in ("budget", "ceiling")
        }
        self.totals.update(counts)
        if changed:
            self._line("figures", {**changed, "budget": counts.get("budget")})

    def close(self) -> None:
        self.detach_log()


class BarProgress(Progress):
    """A one-line rich progress bar on the terminal: cycle, stage and sub-question, steps, sources, claims."""

    def __init__(self, stream: IO[str], echo: bool = False) -> None:
        super().__init__(stream, echo=echo)
        self.console = Console(file=stream)
        self.bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task = self.bar.add_task("starting", total=1, counts="")
        self.cycle: Any = None
        self.steps = 0
        self.bar.start()

    def _show(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _steps_per_cycle(self) -> int:
        return len(_PER_SUB_QUESTION) * max(1, int(self.totals.get("sub_questions") or 1)) + 3

    def _refresh(self) -> None:
        cycle = self.totals.get("cycle")
        ceiling = self.totals.get("ceiling")
        where = f"cycle {cycle}" + (f"/{ceiling}" if ceiling else "") + " · " if cycle else ""
        counts = f"sources {self.totals.get('sources', 0)} · claims {self.totals.get('claims', 0)}"
        if self.totals.get("refused"):
            counts += f" · refused {self.totals['refused']}"
        self.bar.update(
            self.task,
            description=where + self.current_stage,
            total=self._steps_per_cycle(),
            completed=min(self.steps, self._steps_per_cycle()),
            counts=counts,
        )

    def stage(self, name: str, **facts: Any) -> None:
        super().stage(name, **facts)
        if facts.get("cycle") is not None and facts["cycle"] != self.cycle:
            self.cycle, self.steps = facts["cycle"], 0
            self.totals["cycle"] = facts["cycle"]
        self.steps += 1
        self.current_stage = name + (f" {facts['sq']}" if facts.get("sq") else "")
        self._refresh()

    def figures(self, **counts: Any) -> None:
        super().figures(**counts)
        self._refresh()

    def close(self) -> None:
        self.bar.stop()
        super().close()
