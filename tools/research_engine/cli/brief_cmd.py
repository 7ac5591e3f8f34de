"""`research-engine brief check|lock`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import AllowHostOpt, JsonOpt, Result, run_command
from research_engine.errors import ExitCode

brief_app = typer.Typer(help="Check and lock research briefs.", no_args_is_help=True)

FileArg = Annotated[
    Path,
    typer.Argument(help="A brief: YAML, Markdown with YAML front matter, or a plain request; - reads stdin."),
]


def register(app: typer.Typer) -> None:
    app.add_typer(brief_app, name="brief")


@brief_app.command("check")
def check(file: FileArg, json_: JsonOpt = False) -> None:
    """Check a brief: exit 0 when valid, 2 naming every bad or missing field; print the intake questions."""

    def body() -> Result:
        from research_engine import brief

        report = brief.check_file(file)
        # Each problem is said once, as an error line on stderr; stdout keeps the verdict and the questions.
        lines = [f"brief {file}: {'valid' if report.ok else 'NOT valid'} ({report.source_format})"]
        for w in report.warnings:
            lines.append(f"  warning: {w.message}")
        if report.defaulted:
            lines.append(f"  defaults taken: {', '.join(report.defaulted)}")
        if report.questions:
            lines.append("intake questions:")
            for i, q in enumerate(report.questions, 1):
                proposed = q["proposed"]
                hint = f" [proposed: {proposed}]" if proposed not in (None, "") else ""
                lines.append(f"  {i}. ({q['field']}) {q['question']}{hint}")
        return Result(
            data=report.to_dict(),
            text="\n".join(lines),
            exit_code=ExitCode.OK if report.ok else ExitCode.BAD_INPUT,
            errors=report.problems,
            warnings=report.warnings if json_ else [],
        )

    run_command("brief check", json_, body)


@brief_app.command("lock")
def lock(
    file: FileArg,
    output_path: Annotated[
        str | None, typer.Option("--output-path", help="Directory for the run (overrides the brief's).")
    ] = None,
    allow_private: Annotated[
        bool,
        typer.Option("--allow-private", help="Record that this run may fetch loopback/private addresses."),
    ] = False,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Lock a brief: scaffold the run, write brief.md and run.json, print the run root."""

    def body() -> Result:
        from research_engine import brief
        from research_engine.net.policy import allow_host_entries

        hosts = allow_host_entries(allow_host or [])
        locked = brief.lock(file, output_path, allow_private=allow_private, allow_hosts=hosts)
        return Result(
            data={"run_root": str(locked.run_root), "run_id": locked.run_id, "brief_digest": locked.digest},
            text=str(locked.run_root),
        )

    run_command("brief lock", json_, body)
