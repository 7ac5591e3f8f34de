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
    75 run busy: another process is writing this run (its writer lock is held); try again when it ends
    130 interrupted: Ctrl-C stopped the command
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
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
