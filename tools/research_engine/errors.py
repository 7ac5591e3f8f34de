"""Domain errors and exit codes: the one place both are defined.

Every failure the engine can explain is a `ResearchEngineError` carrying a stable
`code` (machine-readable, used in the JSON envelope), a human message, an optional
`field`, and the exit code the CLI returns. The CLI catches this base class once,
at its entry point, and turns it into one line on stderr (or the `errors` list of
the `--json` envelope), never a traceback.

Exit codes (documented in docs/conventions.md; pinned by a test):

    0  ok
    1  check failed: the input was understood but does not pass (validate, gate, report check)
    2  bad input or usage: malformed brief, unknown run, unreadable file, bad option
    3  refused: a URL refused by the SSRF guard or robots.txt
    4  unresolved: a host name could not be resolved
    5  not configured: a service the command needs has no configuration (e.g. no search backend)
    6  upstream failed: every configured backend or the network failed
    7  budget spent: the governor stopped a run on a budget (partial, labelled result)
    8  no finding: the run ended without one supported finding; result.md says so, why, and what stays open
    70 internal error: a bug; the message says where to look
    74 storage failed: the machine would not let a file be written (disk full, quota, read-only, too many open
       files, no permission); nothing is half-written and the same command (or `run --resume`) continues
    75 run busy: another process is writing this run (its writer lock is held); try again when it ends
    130 interrupted: Ctrl-C stopped the command
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any


class ExitCode(IntEnum):
    OK = 0
    CHECK_FAILED = 1
    BAD_INPUT = 2
    REFUSED = 3
    UNRESOLVED = 4
    NOT_CONFIGURED = 5
    UPSTREAM_FAILED = 6
    BUDGET_SPENT = 7
    NO_FINDING = 8  # a completed run whose deliverable can cite no supported claim
    INTERNAL = 70  # sysexits EX_SOFTWARE
    STORAGE_FAILED = 74  # sysexits EX_IOERR: the machine refused a write; fix it and run the command again
    RUN_BUSY = 75  # sysexits EX_TEMPFAIL: a temporary condition, retry later
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, the shell's convention)


@dataclass(frozen=True)
class Problem:
    """One thing wrong, as it appears in the envelope's `errors` list."""

    code: str
    message: str
    field: str | None = None
    file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        if self.file is not None:
            out["file"] = self.file
        return out


class ResearchEngineError(Exception):
    """Base of every explainable failure. Subclasses fix the default code and exit code."""

    default_code = "error"
    exit_code = ExitCode.INTERNAL

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        field: str | None = None,
        problems: list[Problem] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field = field
        self.problems = list(problems or [])
        self.data = dict(data or {})

    def all_problems(self) -> list[Problem]:
        if self.problems:
            return list(self.problems)
        return [Problem(self.code, self.message, self.field)]


class CheckFailed(ResearchEngineError):
    """The input was understood but does not pass a check."""

    default_code = "check-failed"
    exit_code = ExitCode.CHECK_FAILED


class BadInput(ResearchEngineError):
    """Malformed or unreadable input, unknown run, bad option value."""

    default_code = "bad-input"
    exit_code = ExitCode.BAD_INPUT


class Refused(ResearchEngineError):
    """A URL refused by the SSRF guard or robots.txt."""

    default_code = "refused"
    exit_code = ExitCode.REFUSED


class Unresolved(ResearchEngineError):
    """A host name that could not be resolved."""

    default_code = "unresolved"
    exit_code = ExitCode.UNRESOLVED


class NotConfigured(ResearchEngineError):
    """A service the command needs has no configuration."""

    default_code = "not-configured"
    exit_code = ExitCode.NOT_CONFIGURED


class UpstreamFailed(ResearchEngineError):
    """Every configured backend (or the network) failed."""

    default_code = "upstream-failed"
    exit_code = ExitCode.UPSTREAM_FAILED


class RunBusy(ResearchEngineError):
    """Another live process holds the run's writer lock (`trace.writer_lock`)."""

    default_code = "run-busy"
    exit_code = ExitCode.RUN_BUSY


class BudgetSpent(ResearchEngineError):
    """A run budget is spent."""

    default_code = "budget-spent"
    exit_code = ExitCode.BUDGET_SPENT


class StorageFailed(ResearchEngineError):
    """The machine refused to store a file: no space, quota, read-only, too many open files, no permission."""

    default_code = "storage-failed"
    exit_code = ExitCode.STORAGE_FAILED

    def then(self, next_step: str) -> StorageFailed:
        """The same failure, its message ending with `next_step` (what to run once the cause is fixed)."""
        return StorageFailed(_storage_message(self.data, next_step), code=self.code, data=self.data)


RETRY = "run the same command again (a run continues with `research-engine run --resume RUN`)"

# errno -> (code, what the machine said, in words a person acts on)
STORAGE_ERRNOS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no-space", "no space left on the device"),
    errno.EDQUOT: ("quota-exceeded", "the disk quota is exceeded"),
    errno.EROFS: ("read-only-filesystem", "the file system is read-only"),
    errno.EMFILE: ("too-many-open-files", "this process has too many open files"),
    errno.ENFILE: ("too-many-open-files", "the system has too many open files"),
    errno.EFBIG: ("file-too-large", "the file system refuses a file this large"),
    errno.EACCES: ("permission-denied", "permission denied"),
    errno.EPERM: ("permission-denied", "permission denied"),
}
# Errnos that say nothing about the path itself: the same write succeeds once the machine is fixed.
ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EMFILE, errno.ENFILE, errno.EFBIG})


def storage_failure(
    exc: BaseException, operation: str, path: str | Path | None = None
) -> StorageFailed | None:
    """The StorageFailed an OSError raised while `operation` (e.g. "writing") `path` stands for; None when the
    exception is not one the machine's storage explains (a bug stays a bug)."""
    if not isinstance(exc, OSError) or exc.errno not in STORAGE_ERRNOS:
        return None
    code, said = STORAGE_ERRNOS[exc.errno]
    where = path if path is not None else exc.filename
    data = {"said": said, "operation": operation, "path": str(where) if where is not None else None}
    return StorageFailed(_storage_message(data, RETRY), code=code, data=data)


def _storage_message(data: dict[str, Any], next_step: str) -> str:
    return (
        f"{data['said']} while {data['operation']} {data['path'] or 'a file'}; nothing was half-written: "
        f"fix it, then {next_step}"
    )
