"""research-engine: a research engine that contests its own findings.

The package is the product; the `research-engine` CLI is a thin skin over it. A script
can drive a run with the handful of names below, without the CLI:

    from research_engine import (
        Settings, lock_brief, open_run, add_sub_question, fetch_policy, retrieve_pages, PageRequest,
        add_claim, prepare_verification, record_verdict, close_verification, control,
        check_deliverable, finish_deliverable, validate_run,
    )

    settings = Settings.from_env()                     # the machine's services, read once
    run = open_run(lock_brief("brief.yaml").run_root)  # the locked brief starts a run
    sq = add_sub_question(run, "Which release added X?", "factual")
    with fetch_policy(settings, run).client() as client:
        (page,) = retrieve_pages(run, sq, [PageRequest("https://example.org/x")], client)
    clm = add_claim(run, sq, "X arrived in 4.1.", [page.ref], ["X was added in 4.1."])
    for row in prepare_verification(run, settings=settings)["claims"]:
        record_verdict(run, row["claim"], row["floor"], "checked against the fresh copy")
    close_verification(run)
    decision = control(run)                            # stop, or the next rung of the ladder

`run_research(brief, EngineOptions(), settings=settings)` drives the whole loop headless;
`run_batch([brief, ...], BatchOptions(workers=2), settings=settings)` drives many, each an ordinary run.
Errors are `ResearchEngineError`s carrying an `ExitCode`. Everything else lives in the
modules named in docs/architecture.md; these names are loaded on first use, so
`import research_engine` stays cheap (the CLI imports it on every call).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> (module, attribute): the public API, loaded on first use.
_PUBLIC: dict[str, tuple[str, str]] = {
    "Settings": ("research_engine.settings", "Settings"),
    "ResearchEngineError": ("research_engine.errors", "ResearchEngineError"),
    "ExitCode": ("research_engine.errors", "ExitCode"),
    "lock_brief": ("research_engine.brief", "lock"),
    "open_run": ("research_engine.trace", "open_run"),
    "add_sub_question": ("research_engine.decompose", "add"),
    "fetch_policy": ("research_engine.net.policy", "fetch_policy"),
    "retrieve_pages": ("research_engine.retrieve.pages", "retrieve_pages"),
    "PageRequest": ("research_engine.retrieve.pages", "PageRequest"),
    "add_claim": ("research_engine.claims", "add_claim"),
    "prepare_verification": ("research_engine.verify", "prepare"),
    "record_verdict": ("research_engine.verify", "record"),
    "close_verification": ("research_engine.verify", "close"),
    "control": ("research_engine.controller", "control"),
    "check_deliverable": ("research_engine.report", "check"),
    "finish_deliverable": ("research_engine.report", "finish"),
    "validate_run": ("research_engine.validate", "validate_run"),
    "EngineOptions": ("research_engine.engine.config", "EngineOptions"),
    "run_research": ("research_engine.engine.loop", "run"),
    "resume_research": ("research_engine.engine.loop", "resume"),
    "BatchOptions": ("research_engine.batch", "BatchOptions"),
    "run_batch": ("research_engine.batch", "run_batch"),
    "resume_batch": ("research_engine.batch", "resume_batch"),
}

__all__ = [
    "BatchOptions",
    "EngineOptions",
    "ExitCode",
    "PageRequest",
    "ResearchEngineError",
    "Settings",
    "__version__",
    "add_claim",
    "add_sub_question",
    "check_deliverable",
    "close_verification",
    "control",
    "fetch_policy",
    "finish_deliverable",
    "lock_brief",
    "open_run",
    "prepare_verification",
    "record_verdict",
    "resume_batch",
    "resume_research",
    "retrieve_pages",
    "run_batch",
    "run_research",
    "validate_run",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'research_engine' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # the same names for type checkers and editors
    from research_engine.batch import BatchOptions, resume_batch, run_batch
    from research_engine.brief import lock as lock_brief
    from research_engine.claims import add_claim
    from research_engine.controller import control
    from research_engine.decompose import add as add_sub_question
    from research_engine.engine.config import EngineOptions
    from research_engine.engine.loop import resume as resume_research
    from research_engine.engine.loop import run as run_research
    from research_engine.errors import ExitCode, ResearchEngineError
    from research_engine.net.policy import fetch_policy
    from research_engine.report import check as check_deliverable
    from research_engine.report import finish as finish_deliverable
    from research_engine.retrieve.pages import PageRequest, retrieve_pages
    from research_engine.settings import Settings
    from research_engine.trace import open_run
    from research_engine.validate import validate_run
    from research_engine.verify import close as close_verification
    from research_engine.verify import prepare as prepare_verification
    from research_engine.verify import record as record_verdict
