"""What a headless run shows while it works: a live panel on a terminal, log lines otherwise.

The loop reports through one `Progress` object: `stage(name, **facts)` when a
stage starts, `note(event, **facts)` for things worth a line (a source fetched,
a draft the gate rejected, a backend that failed), and `figures(**counts)` for
the running totals (cycle, sources, claims, refusals, budget spend).

- On a TTY (stderr), a `rich` Live panel shows the stage, cycle and totals.
  rich comes with typer; it is imported only when a live display is wanted.
- Otherwise every call writes one structured line to stderr, logfmt style:
  `research-engine event=stage stage=retrieve cycle=1 sq=SQ-02 sources=3`.
- `Progress.quiet()` shows nothing (tests, `--json` runs that want silence).

It never touches the trace; it only displays.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

_FIGURES = ("cycle", "sub_questions", "sources", "claims", "refused", "failed_fetches")


def _logfmt_value(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
    return text


class Progress:
    """Structured log lines (the default when stderr is not a terminal)."""

    def __init__(self, stream: IO[str] | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.current_stage = "start"
        self.totals: dict[str, Any] = {}
        self.started = time.monotonic()

    @classmethod
    def quiet(cls) -> Progress:
        return cls(enabled=False)

    @classmethod
    def auto(cls, json_mode: bool = False) -> Progress:
        """A live panel on an interactive terminal, log lines otherwise."""
        stream = sys.stderr
        if stream.isatty() and not json_mode:
            return LiveProgress(stream)
        return cls(stream)

    def _line(self, event: str, facts: dict[str, Any]) -> None:
        if not self.enabled:
            return
        parts = [f"event={event}"] + [f"{k}={_logfmt_value(v)}" for k, v in facts.items() if v is not None]
        self.stream.write("research-engine " + " ".join(parts) + "\n")
        self.stream.flush()

    def stage(self, name: str, **facts: Any) -> None:
        self.current_stage = name
        self._line("stage", {"stage": name, **facts})

    def note(self, event: str, **facts: Any) -> None:
        self._line(event, facts)

    def figures(self, **counts: Any) -> None:
        # The running spend changes on every call; it is shown with the counts, never alone.
        changed = {k: v for k, v in counts.items() if self.totals.get(k) != v and k != "budget"}
        self.totals.update(counts)
        if changed:
            self._line("figures", {**changed, "budget": counts.get("budget")})

    def close(self) -> None:
        pass


class LiveProgress(Progress):
    """A rich Live panel: stage, cycle, totals, the last few notes."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(stream)

        self.console = Console(file=stream)
        self.notes: list[str] = []
        self.live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
        self.live.start()

    def _render(self) -> Any:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        table.add_row("stage", self.current_stage)
        for name in _FIGURES:
            if name in self.totals:
                table.add_row(name.replace("_", " "), str(self.totals[name]))
        spent = self.totals.get("budget")
        if spent:
            table.add_row("budget", spent)
        table.add_row("elapsed", f"{time.monotonic() - self.started:.0f}s")
        for note in self.notes[-4:]:
            table.add_row("", note)
        return table

    def _refresh(self) -> None:
        self.live.update(self._render())

    def stage(self, name: str, **facts: Any) -> None:
        self.current_stage = name + (
            "" if not facts else " " + " ".join(f"{k}={v}" for k, v in facts.items())
        )
        self._refresh()

    def note(self, event: str, **facts: Any) -> None:
        self.notes.append(f"{event}: " + " ".join(f"{k}={v}" for k, v in facts.items() if v is not None))
        self._refresh()

    def figures(self, **counts: Any) -> None:
        self.totals.update(counts)
        self._refresh()

    def close(self) -> None:
        self.live.stop()
