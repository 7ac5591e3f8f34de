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

import errno
import json
import logging
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from research_engine.errors import (
    ENVIRONMENT_ERRNOS,
    BadInput,
    ExitCode,
    Problem,
    ResearchEngineError,
    storage_failure,
)
from research_engine.settings import Settings
from research_engine.trace import Run, open_run

ENVELOPE_VERSION = 1
log = logging.getLogger("research_engine")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON envelope on stdout instead of text.")]
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="HOST[:PORT]",
        help="Allow this host although it has a loopback/private address (a local SearXNG or corpus); "
        "repeatable; every other private address stays refused. Recorded in run.json with --run.",
    ),
]
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


# OSErrors that mean a path the user gave cannot be used (input errors, exit 2), not a bug.
PATH_ERRNOS = {
    errno.ENAMETOOLONG: "path-too-long",
    errno.ELOOP: "bad-path",
    errno.ENOTDIR: "bad-path",
    errno.EISDIR: "bad-path",
    errno.ENOENT: "bad-path",
    errno.EACCES: "permission-denied",
    errno.EPERM: "permission-denied",
    errno.EROFS: "read-only",
}


def path_error(exc: BaseException) -> BadInput | None:
    """The input error an OSError about a path stands for (a name too long for the file system, a
    directory that is a file, no permission...); None for any other exception."""
    if not isinstance(exc, OSError) or exc.errno not in PATH_ERRNOS:
        return None
    name = exc.filename if exc.filename is not None else ""
    shown = str(name) if len(str(name)) <= 160 else str(name)[:120] + "..." + str(name)[-20:]
    return BadInput(f"cannot use {shown or 'a path'}: {exc.strerror or exc}", code=PATH_ERRNOS[exc.errno])


def run_command(command: str, json_mode: bool, body: Callable[[], Result]) -> None:
    """Run a command body, print its result, exit with its code."""
    try:
        try:
            result = body()
        except OSError as exc:
            # The machine's storage (disk full, quota, open files) before a path the user gave.
            environmental = exc.errno in ENVIRONMENT_ERRNOS and storage_failure(exc, "writing")
            raise (environmental or path_error(exc) or exc) from exc
    except ResearchEngineError as exc:
        result = Result(data=exc.data, exit_code=exc.exit_code, errors=exc.all_problems())
    except KeyboardInterrupt:
        interrupted = Result(exit_code=ExitCode.INTERRUPTED, errors=[Problem("interrupted", "interrupted")])
        if json_mode:  # still one envelope: a caller parsing stdout learns it was stopped
            emit(command, True, interrupted)
        else:
            sys.stderr.write("interrupted\n")
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    except Exception as exc:  # a bug: one line, traceback only when asked for (-v)
        log.info("internal error", exc_info=True)
        message = f"internal error: {type(exc).__name__}: {exc} (run with -v for the traceback)"
        result = Result(exit_code=ExitCode.INTERNAL, errors=[Problem("internal", message)])
    emit(command, json_mode, result)
    raise typer.Exit(int(result.exit_code))


def _undecodable(args: list[str]) -> str | None:
    """The first argument that is not valid UTF-8 (Python keeps such bytes as lone surrogates)."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg.encode("utf-8", "backslashreplace").decode("utf-8")
    return None


def _command_name(group: Any, args: list[str]) -> str:
    """The command path `args` names (`claims tension add`), as far as the tree goes."""
    path: list[str] = []
    command = group
    for word in args:
        lookup = getattr(command, "get_command", None)  # only groups have one
        sub = lookup(command.context_class(command), word) if lookup is not None else None
        if sub is None:
            break
        path.append(word)
        command = sub
    return " ".join(path)


def _click_exceptions() -> tuple[type[Exception], type[Exception]]:
    """click's ClickException and UsageError, reached through typer's public `BadParameter`.

    typer re-exports click's BadParameter (a UsageError, itself a ClickException) whether it depends on the
    click package (typer < 0.26) or vendors click (typer >= 0.26), so its bases are the types typer raises.
    """
    bases = {cls.__name__: cls for cls in typer.BadParameter.__mro__}
    return bases["ClickException"], bases["UsageError"]


class EnvelopeGroup(TyperGroup):
    """The root group: usage errors keep the --json contract (one envelope on stdout, exit 2), and an
    argument that is not valid UTF-8 is bad input rather than a crash deep inside a write."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        json_mode = "--json" in (argv[: argv.index("--")] if "--" in argv else argv)
        bad = _undecodable(argv)
        if bad is not None:
            problem = Problem("bad-encoding", f"argument is not valid UTF-8: {bad[:80]}")
            emit(_command_name(self, argv), json_mode, Result(exit_code=ExitCode.BAD_INPUT, errors=[problem]))
            sys.exit(int(ExitCode.BAD_INPUT))
        if not json_mode or not standalone_mode:
            return super().main(
                argv,
                prog_name,
                complete_var,
                standalone_mode,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        click_exception, usage_error = _click_exceptions()
        try:
            code = super().main(
                argv, prog_name, complete_var, False, windows_expand_args=windows_expand_args, **extra
            )
        except click_exception as exc:
            exit_code = getattr(exc, "exit_code", ExitCode.BAD_INPUT)
            usage = isinstance(exc, usage_error)
            code = ExitCode.BAD_INPUT if usage or not 1 <= exit_code <= 7 else exit_code
            problem = Problem("usage", exc.format_message())  # type: ignore[attr-defined]
            emit(_command_name(self, argv), True, Result(exit_code=code, errors=[problem]))
        except typer.Abort:
            code = ExitCode.INTERRUPTED
            emit(
                _command_name(self, argv),
                True,
                Result(exit_code=code, errors=[Problem("interrupted", "interrupted")]),
            )
        sys.exit(int(code) if isinstance(code, int) else 0)


def record_target(run_path: str | None, sq: str | None) -> Run | None:
    """The run to record into for `--run RUN --sq SQ-NN` (both or neither), or None."""
    if run_path is None and sq is None:
        return None
    if run_path is None or sq is None:
        raise BadInput(
            "--run and --sq go together: name the run and the sub-question to record under",
            code="bad-option",
            field="run" if run_path is None else "sq",
        )
    if not re.fullmatch(r"SQ-[0-9]{2,}", sq):
        raise BadInput(f"--sq {sq!r} is not a sub-question id (SQ-01)", code="bad-id", field="sq")
    run = open_run(run_path)
    from research_engine import decompose

    decompose.get(run, sq)  # BadInput when the run has no such sub-question: nothing is recorded under it
    return run


def fetch_policy_for(
    config: Settings, run: Run | None, allow_host: list[str] | None, command: str, **options: Any
) -> Any:
    """`net.fetch_policy` with the command's `--allow-host` entries; with a run, the entries are recorded
    in its run.json (`allow_hosts`), so later commands on the run (the verifier's re-fetch) reach them."""
    from research_engine.net import fetch_policy
    from research_engine.net.policy import allow_host_entries
    from research_engine.runrecord import note_allowed_hosts

    hosts = allow_host_entries(allow_host or [])
    policy = fetch_policy(config, run, allow_hosts=hosts, **options)
    if run is not None and hosts:
        note_allowed_hosts(run, hosts, command=command)
    return policy


def settings() -> Settings:
    """The machine's settings, read from the environment here, at the edge (the library reads none)."""
    return Settings.from_env()


_verbosity = {"level": 0}


def verbosity() -> int:
    """How many -v the command line gave (`run -v` also keeps the model's exchanges in the trace)."""
    return _verbosity["level"]


def setup_logging(verbose: int, quiet: bool) -> None:
    _verbosity["level"] = 0 if quiet else verbose
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
