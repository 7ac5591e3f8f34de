"""`research-engine view RUN`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, run_command


def register(app: typer.Typer) -> None:
    app.command("view")(view)


def view(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    output: Annotated[
        Path | None, typer.Option("--output", help="Where to write the page (default: view.html in the run).")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Write one static, self-contained HTML page showing the run: claims, verdicts, quotes, sources, logs."""

    def body() -> Result:
        from research_engine import trace
        from research_engine import view as viewer

        handle = trace.open_run(run)
        path = viewer.write_view(handle, output)
        return Result(data={"path": str(path), "bytes": path.stat().st_size}, text=str(path))

    run_command("view", json_, body)
