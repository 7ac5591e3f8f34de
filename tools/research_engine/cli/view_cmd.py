"""`research-engine view RUN [--pdf]`."""

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
        Path | None,
        typer.Option(
            "--output",
            help="Where to write the page (default: view.html, or view.pdf with --pdf, in the run).",
        ),
    ] = None,
    pdf: Annotated[
        bool,
        typer.Option(
            "--pdf",
            help="Write the same page as a PDF (WeasyPrint, the `pdf` extra, or headless Chromium).",
        ),
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Write the run as one static HTML page (or a PDF with --pdf): the deliverable first, each claim and
    source it cites linked to its card.

    The cards hold the claim's verdict, the verifier's reason and the verbatim quotes, and the source's URL
    and retrieval facts; the brief, budgets, selection logs and loop log follow.

    Exit 5 when --pdf finds neither WeasyPrint nor Chromium.
    """

    def body() -> Result:
        from research_engine import trace
        from research_engine import view as viewer

        handle = trace.open_run(run)
        if pdf:
            path, printer = viewer.write_pdf(handle, output)
            data = {"path": str(path), "bytes": path.stat().st_size, "printer": printer}
            return Result(data=data, text=str(path))
        path = viewer.write_view(handle, output)
        return Result(data={"path": str(path), "bytes": path.stat().st_size}, text=str(path))

    run_command("view", json_, body)
