"""What every command shares: the --json envelope, error handling, logging.

A command body returns a `Result`; `run_command` prints it (human text by
default, one JSON envelope with --json) and exits with its code. Every
`ResearchEngineError` is caught here and nowhere else in the CLI; anything else
is a bug, reported as one line (the traceback only with -v).

Envelope (pinned by tools/tests/test_cli_contract.py):

    {"schema_version": 1, "command": "brief check", "ok": true, "exit_code": 0,
     "data": {...}, "errors": [{"code", "message", "field"?, "file"?}], "warnings": [...]}
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer

from research_engine.errors import ExitCode, Problem, ResearchEngineError

ENVELOPE_VERSION = 1
log = logging.getLogger("research_engine")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON envelope on stdout instead of text.")]
RunOpt = Annotated[str, typer.Option("--run", help="The run directory (as printed by `brief lock`).")]


@dataclass
class Result:
    data: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    exit_code: int = ExitCode.OK
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def envelope(command: str, result: Result) -> dict[str, Any]:
    return {
        "schema_version": ENVELOPE_VERSION,
        "command": command,
        "ok": int(result.exit_code) == 0,
        "exit_code": int(result.exit_code),
        "data": result.data,
        "errors": [p.to_dict() for p in result.errors],
        "warnings": [p.to_dict() for p in result.warnings],
    }


def emit(command: str, json_mode: bool, result: Result) -> None:
    if json_mode:
        sys.stdout.write(json.dumps(envelope(command, result), ensure_ascii=False, default=str) + "\n")
    else:
        if result.text:
            sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
        for warning in result.warnings:
            sys.stderr.write(f"warning: {_line(warning)}\n")
        for problem in result.errors:
            sys.stderr.write(f"error: {_line(problem)}\n")
    sys.stdout.flush()


def _line(problem: Problem) -> str:
    where = f"{problem.file}: " if problem.file else ""
    return f"{where}{problem.message}"


def run_command(command: str, json_mode: bool, body: Callable[[], Result]) -> None:
    """Run a command body, print its result, exit with its code."""
    try:
        result = body()
    except ResearchEngineError as exc:
        result = Result(data=exc.data, exit_code=exc.exit_code, errors=exc.all_problems())
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise typer.Exit(130) from None
    except Exception as exc:  # a bug: one line, traceback only when asked for
        log.debug("internal error", exc_info=True)
        message = f"internal error: {type(exc).__name__}: {exc} (run with -v for the traceback)"
        result = Result(exit_code=ExitCode.INTERNAL, errors=[Problem("internal", message)])
    emit(command, json_mode, result)
    raise typer.Exit(int(result.exit_code))


def setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING
    if quiet:
        level = logging.ERROR
    elif verbose == 1:
        level = logging.INFO
    elif verbose >= 2:
        level = logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    root = logging.getLogger("research_engine")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
