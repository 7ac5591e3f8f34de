"""The whole-run check behind `research-engine validate RUN`.

Each artifact kind has a checker that reads the files present, validates their
front matter (or JSON) against the schema in `schema/`, and checks the
cross-references it owns. Checkers are listed in `CHECKERS`; stage modules add
theirs as they gain artifacts. Missing optional artifacts are fine (a run in
progress is valid); present ones must conform.
"""

from __future__ import annotations

import hashlib
import importlib
import json

from research_engine import libraries
from research_engine.artifacts import ValidationReport, load_checked, read_counted
from research_engine.brief import RECOMMENDED, REQUIRED, digest_text
from research_engine.schemas import validate
from research_engine.trace import Run

__all__ = ["CHECKERS", "ValidationReport", "load_checked", "read_counted", "validate_run"]

# "module:function" checkers, each called as fn(run, report).
CHECKERS = [
    "research_engine.validate:check_brief_and_run",
    "research_engine.validate:check_sources",
    "research_engine.decompose:check_sub_questions",
    "research_engine.selection.candidates:check_candidates",
    "research_engine.selection.log:check_selections",
    "research_engine.claims:check_claims",
    "research_engine.verify.contestation:check_verify",
    "research_engine.controller:check_loop_log",
    "research_engine.critic:check_gaps",
    "research_engine.report:check_result",
]


def validate_run(run: Run) -> ValidationReport:
    report = ValidationReport(root=run.root)
    for spec in CHECKERS:
        module, _, func = spec.partition(":")
        getattr(importlib.import_module(module), func)(run, report)
    return report


def check_brief_and_run(run: Run, report: ValidationReport) -> None:
    brief_path = run.path("brief")
    brief_text = None
    if not brief_path.is_file():
        report.add(brief_path, "brief.md is missing", "missing-artifact")
    else:
        report.checked_files += 1
        brief_text = brief_path.read_text(encoding="utf-8", errors="replace")
        try:
            meta = dict(libraries.frontmatter().loads(brief_text).metadata)
        except Exception as exc:
            report.add(brief_path, f"front matter is unreadable: {exc}", "malformed-artifact")
            meta = None
        if meta is not None:
            report.extend(validate(meta, "brief"), brief_path)
            for name in REQUIRED + RECOMMENDED + ("locked",):
                if name not in meta:
                    report.add(brief_path, f"locked brief lacks {name}", "missing-field", name)

    run_path = run.path("run")
    if not run_path.is_file():
        report.add(run_path, "run.json is missing", "missing-artifact")
        return
    report.checked_files += 1
    try:
        record = json.loads(run_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        report.add(run_path, f"not valid JSON: {exc}", "malformed-artifact")
        return
    report.extend(validate(record, "run"), run_path)
    if isinstance(record, dict):
        if record.get("run_id") not in (None, run.run_id) and not run.run_id.startswith(
            str(record.get("run_id"))
        ):
            report.add(
                run_path,
                f"run_id {record.get('run_id')!r} does not match directory {run.run_id!r}",
                "cross-reference",
            )
        if brief_text is not None and record.get("brief_digest") != digest_text(brief_text):
            report.add(
                run_path,
                "brief_digest does not match brief.md (the locked brief was edited)",
                "cross-reference",
                "brief_digest",
            )


def check_sources(run: Run, report: ValidationReport) -> None:
    """retrieve/SQ-NN/SRC-NN.md: schema, id matches its path, the snapshot exists and still has its digest,
    and run.json lists the source."""

    listed: set[str | None] = set()  # an entry without an id still makes the list non-empty
    try:
        record = json.loads(run.path("run").read_text(encoding="utf-8"))
        listed = {s.get("id") for s in record.get("sources", []) if isinstance(s, dict)}
    except (OSError, ValueError, AttributeError):
        pass  # run.json problems are reported by check_brief_and_run
    for path in sorted((run.root / "retrieve").glob("*/*.md")):
        meta = load_checked(run, report, path, "source")
        if meta is None:
            continue
        expected = f"{path.parent.name}/{path.stem}"
        if meta["id"] != expected:
            report.add(path, f"id {meta['id']} does not match its path {expected}", "cross-reference", "id")
        snapshot = run.root / meta["snapshot"]
        if not snapshot.is_file():
            report.add(path, f"snapshot {meta['snapshot']} is missing", "cross-reference", "snapshot")
        elif hashlib.sha256(snapshot.read_bytes()).hexdigest() != meta["sha256"]:
            report.add(
                path,
                f"snapshot {meta['snapshot']} no longer has digest {meta['sha256']}",
                "cross-reference",
                "sha256",
            )
        if listed and meta["id"] not in listed:
            report.add(path, f"{meta['id']} is not listed in run.json sources", "cross-reference", "id")
