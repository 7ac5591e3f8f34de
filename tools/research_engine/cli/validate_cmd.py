"""`research-engine validate RUN`."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, run_command
from research_engine.errors import ExitCode


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)


def validate(
    run: Annotated[str, typer.Argument(help="The run directory.")],
    json_: JsonOpt = False,
) -> None:
    """Check every artifact of a run against its schema and every cross-reference: exit 0 or 1."""

    def body() -> Result:
        from research_engine import trace
        from research_engine import validate as validation

        report = validation.validate_run(trace.open_run(run))
        lines = [f"{report.checked_files} artifact(s) checked in {report.root}"]
        lines += [f"  {p.file}: {p.message}" for p in report.problems]
        lines += [f"  warning: {p.file}: {p.message}" for p in report.warnings]
        lines.append("valid" if report.ok else f"{len(report.problems)} problem(s)")
        return Result(
            data=report.to_dict(),
            text="\n".join(lines),
            exit_code=ExitCode.OK if report.ok else ExitCode.CHECK_FAILED,
            errors=report.problems if json_ else [],
            warnings=report.warnings if json_ else [],
        )

    run_command("validate", json_, body)
