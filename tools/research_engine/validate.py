"""The whole-run check behind `research-engine validate RUN`.

Each artifact kind has a checker that reads the files present, validates their
front matter (or JSON) against the schema in `schema/`, and checks the
cross-references it owns. Checkers are listed in `CHECKERS`; stage modules add
theirs as they gain artifacts. Missing optional artifacts are fine (a run in
progress is valid); present ones must conform.

Two checkers here look across artifacts for what only a second writer or a hand
edit leaves behind: `check_tree` (symbolic links inside the run, paths that
resolve outside it) and `check_duplicates` (two sources of one sub-question with
one canonical key, two active claims stating the same text on the same quote of the same source,
ids out of sequence or beyond their counters).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from research_engine import bounded, claims, critic, decompose, ids, runstate, selection, trace
from research_engine.artifacts import ValidationReport, load_checked, read_counted, read_markdown
from research_engine.brief import RECOMMENDED, REQUIRED, digest_text
from research_engine.errors import BadInput, ResearchEngineError
from research_engine.grounding import normalize
from research_engine.schemas import validate
from research_engine.trace import Run

__all__ = ["CHECKERS", "ValidationReport", "load_checked", "read_counted", "validate_run"]

# "module:function" checkers, each called as fn(run, report).
CHECKERS = [
    "research_engine.validate:check_tree",
    "research_engine.validate:check_brief_and_run",
    "research_engine.validate:check_sources",
    "research_engine.decompose:check_sub_questions",
    "research_engine.selection.candidates:check_candidates",
    "research_engine.selection.log:check_selections",
    "research_engine.claims:check_claims",
    "research_engine.verify.contestation:check_verify",
    "research_engine.controller:check_loop_log",
    "research_engine.critic:check_gaps",
    "research_engine.critic:check_answers",
    "research_engine.report:check_result",
    "research_engine.validate:check_duplicates",
    "research_engine.validate:check_store",
]
# The content-addressed stores of a run: every file is named by the sha256 of its bytes.
STORES = ("snapshots", "cassette/bodies")
SNAPSHOT_REF = re.compile(rb"snapshots/([0-9a-f]{64})")
DIGEST_NAME = re.compile(r"[0-9a-f]{64}")
# Renderings and bookkeeping that may mention snapshots without being what names them.
NOT_REFERRERS = ("snapshots", "cassette", ".state", "view.html")


def validate_run(run: Run) -> ValidationReport:
    report = ValidationReport(root=run.root)
    if trace.tree_problems(run.root):
        # Reading through a link would check files outside the run (and Run.path refuses them anyway).
        check_tree(run, report)
        return report
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
        try:
            brief_text = bounded.read_bytes(brief_path, "brief").decode("utf-8", errors="replace")
            meta = bounded.front_matter(brief_text)[0]
        except BadInput as exc:
            report.add(brief_path, exc.message, exc.code)
            meta = None
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
        record = bounded.load_json(bounded.read_bytes(run_path), "run.json")
    except BadInput as exc:
        report.add(run_path, exc.message, "malformed-artifact")
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
        record = bounded.load_json(bounded.read_bytes(run.path("run")), "run.json")
        listed = {s.get("id") for s in record.get("sources", []) if isinstance(s, dict)}
    except (BadInput, AttributeError):
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
        elif _digest(snapshot) != meta["sha256"]:
            report.add(
                path,
                f"snapshot {meta['snapshot']} no longer has digest {meta['sha256']}",
                "cross-reference",
                "sha256",
            )
        if listed and meta["id"] not in listed:
            report.add(path, f"{meta['id']} is not listed in run.json sources", "cross-reference", "id")


def _digest(path: Any) -> str | None:
    try:
        return bounded.sha256_file(path, "snapshot")
    except BadInput:
        return None  # too large or unreadable: it cannot be the snapshot it claims to be


def check_store(run: Run, report: ValidationReport) -> None:
    """Every file under `snapshots/` and `cassette/bodies/` has the digest of its name, whichever artifact
    refers to it; a snapshot that some artifact names must exist; one that none names is stray (a warning:
    a run cut short can leave one, and it misleads nobody)."""
    stored: set[str] = set()
    for store in STORES:
        directory = run.root / store
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if path.name.startswith("."):
                continue  # the temporary file of a write cut short; never read as content
            report.checked_files += 1
            if not DIGEST_NAME.fullmatch(path.name) or not path.is_file():
                report.add(path, f"{store}/{path.name} is not a file named by a sha256", "digest-mismatch")
                continue
            actual = _digest(path)
            if actual != path.name:
                report.add(
                    path,
                    f"altered: its bytes have sha256 {actual or '(unreadable)'}, not the one it is named for",
                    "digest-mismatch",
                )
            if store == "snapshots":
                stored.add(path.name)
    named = _named_snapshots(run)
    for digest, referrer in sorted(named.items()):
        if digest not in stored:
            report.add(referrer, f"names snapshots/{digest}, which is missing", "cross-reference")
    for digest in sorted(stored - set(named)):
        report.warn(run.root / "snapshots" / digest, f"snapshots/{digest} is named by no artifact", "stray")


def _named_snapshots(run: Run) -> dict[str, Path]:
    """Each snapshot digest some artifact names, with the first artifact naming it."""
    named: dict[str, Path] = {}
    for path in sorted(run.root.rglob("*")):
        rel = path.relative_to(run.root)
        if rel.parts[0] in NOT_REFERRERS or not path.is_file() or path.is_symlink():
            continue
        try:
            data = bounded.read_bytes(path, "snapshot")
        except BadInput:
            continue  # over its cap or unreadable: the artifact's own checker says so
        for match in SNAPSHOT_REF.finditer(data):
            named.setdefault(match.group(1).decode("ascii"), path)
    return named


def check_tree(run: Run, report: ValidationReport) -> None:
    """No symbolic link inside the run: a linked `retrieve/` or `snapshots/` would put the run's files
    elsewhere (and the tools refuse to write through one)."""
    for rel, why in trace.tree_problems(run.root):
        report.add(rel, why, "symlink-in-run")


def check_duplicates(run: Run, report: ValidationReport) -> None:
    """What two writers leave behind: the same work recorded twice, the same claim twice, ids out of
    sequence or beyond the counters that hand them out."""
    counters = ids.peek(run)
    _duplicate_sources(run, report, counters)
    _duplicate_claims(run, report)
    _id_sequences(run, report, counters)


def _duplicate_sources(run: Run, report: ValidationReport, counters: dict[str, Any]) -> None:
    keys: dict[tuple[str, str], str] = {}
    for ref in _source_refs(run):
        sq, src = ids.parse_source_ref(ref)
        path = run.path("source", sq=sq, src=src)
        try:
            meta, _ = read_markdown(path)
        except ResearchEngineError:
            continue  # reported by check_sources
        key = meta.get("canonical_key")
        if isinstance(key, str) and key:
            if (sq, key) in keys:
                report.add(
                    path,
                    f"{ref} is the same work as {keys[(sq, key)]} (canonical key {key}): one sub-question "
                    "records a work once",
                    "duplicate-source",
                )
            else:
                keys[(sq, key)] = ref
        counter = int((counters.get("SRC") or {}).get(sq, 0)) if isinstance(counters.get("SRC"), dict) else 0
        if counters and ids.parse_id(src)[1] > counter:
            report.add(path, f"{ref} is beyond the SRC counter of {sq} ({counter})", "id-sequence")
    try:
        record = bounded.load_json(bounded.read_bytes(run.path("run")), "run.json")
        listed = [s.get("id") for s in record.get("sources", [])]
    except (BadInput, AttributeError):
        return
    seen: set[Any] = set()
    for ref in listed:
        if ref in seen:
            report.add(run.path("run"), f"sources lists {ref} twice", "duplicate-source")
        seen.add(ref)


def _source_refs(run: Run) -> list[str]:
    refs = []
    for path in (run.root / "retrieve").glob("SQ-*/SRC-*.md"):
        ref = f"{path.parent.name}/{path.stem}"
        if ids.SOURCE_REF_RE.match(ref):
            refs.append(ref)
    return sorted(refs, key=ids.sort_key)


def _duplicate_claims(run: Run, report: ValidationReport) -> None:
    try:
        ledger = claims.load(run)
    except ResearchEngineError:
        return  # reported by check_claims
    # Two claims may rest on one sentence (it can state two facts); the same claim twice may not.
    cited: dict[tuple[str, str, str], str] = {}
    for claim in ledger["claims"]:
        if claim.get("status") != "active":
            continue
        text = normalize(claim["text"])
        for ev in claim.get("evidence") or []:
            key = (text, ev["source"], normalize(ev["quote"]))
            if key in cited and cited[key] != claim["id"]:
                report.add(
                    run.path("claims_log"),
                    f"{claim['id']} is {cited[key]} again: the same claim on one quote of {ev['source']}",
                    "duplicate-claim",
                    claim["id"],
                )
                break
            cited.setdefault(key, claim["id"])


def _in_order(values: list[str]) -> list[str]:
    """The ids of `values` that are not above every id before them (out of sequence, or repeated)."""
    out, highest = [], 0
    for value in values:
        try:
            number = ids.parse_id(value)[1]
        except ResearchEngineError:
            continue
        if number <= highest:
            out.append(value)
        highest = max(highest, number)
    return out


def _id_sequences(run: Run, report: ValidationReport, counters: dict[str, Any]) -> None:
    def check(path: Any, prefix: str, values: list[str], what: str) -> None:
        for value in _in_order(values):
            report.add(path, f"{value} is out of sequence in {what} (ids only grow)", "id-sequence")
        numbers = [ids.parse_id(v)[1] for v in values if ids.ID_RE.match(v)]
        if counters and numbers and max(numbers) > int(counters.get(prefix, 0) or 0):
            report.add(
                path,
                f"{ids.format_id(prefix, max(numbers))} is beyond the {prefix} counter "
                f"({counters.get(prefix, 0)})",
                "id-sequence",
            )

    try:
        check(run.path("sub_questions"), "SQ", [q["id"] for q in decompose.load(run)], "the sub-questions")
        check(run.path("gaps"), "G", [g["id"] for g in critic.load(run)["gaps"]], "the gaps")
        challenges = [c["id"] for m in runstate.all_contestations(run) for c in m.get("challenges", [])]
        check(run.path("contestation"), "CHL", challenges, "the verdicts, cycle by cycle")
        for sq in [q["id"] for q in decompose.load(run)]:
            meta = selection.load(run, sq)
            rounds = [r.get("round") for r in (meta or {}).get("rounds", [])]
            if rounds != list(range(1, len(rounds) + 1)):
                report.add(
                    run.path("selection", sq=sq),
                    f"rounds are numbered {rounds}, not 1..{len(rounds)}",
                    "id-sequence",
                )
    except (ResearchEngineError, KeyError, TypeError):
        return  # a malformed artifact: its own checker reports it
