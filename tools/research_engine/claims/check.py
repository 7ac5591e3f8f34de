"""validate's checker for the claims ledger: the log, the ledger it folds into, and the draft view.

- every line of `consolidate/claims.jsonl` is a JSON object valid against schema
  `claim-record`, and applies to the ledger folded before it; an unterminated
  last line (a write cut short) is reported, never read;
- claim ids and tension ids are unique and appear in increasing order, and none
  is beyond the run's id counter;
- the folded ledger is valid against schema `claims`; every claim answers a
  sub-question of the run and cites sources whose stored text still holds each
  quote, and a span given with `--span` still names exactly its recorded quote;
  tensions cite existing claims;
- the draft shows exactly what the log's first N records fold into, for the N it
  states (it may lag behind the log, never contradict it).
"""

from __future__ import annotations

from typing import Any

from research_engine import bounded, decompose, grounding, ids
from research_engine.artifacts import ValidationReport
from research_engine.claims import draft, log
from research_engine.claims.gate import source_keys, source_text
from research_engine.claims.spans import check_span
from research_engine.errors import BadInput
from research_engine.schemas import validate
from research_engine.trace import Run
from research_engine.vocabulary import LedgerEvent

LEGACY_HINT = "run `research-engine claims migrate --run RUN` once"


def check_claims(run: Run, report: ValidationReport) -> None:
    path = run.path("claims_log")
    if log.legacy_draft(run):
        report.checked_files += 1
        report.add(
            run.path("draft"),
            f"the claims are kept in the draft's front matter, the format before claims.jsonl: {LEGACY_HINT}",
            "legacy-ledger",
        )
        return
    if not path.is_file():
        if run.path("draft").is_file():
            report.checked_files += 1
            report.add(
                run.path("draft"), "a draft without the ledger it renders (claims.jsonl)", "cross-reference"
            )
        return
    report.checked_files += 1
    contents = log.read(run)
    for line, why in contents.bad_lines:
        report.add(path, f"line {line} is not a JSON object: {why}", "malformed-artifact")
    if contents.torn:
        report.add(
            path,
            f"the last line is unterminated ({len(contents.torn)} bytes, a write cut short); it is not a "
            "record, and the next ledger write moves it to claims.jsonl.torn",
            "torn-record",
        )
    if contents.bad_lines:
        return  # line numbers and record numbers no longer agree: fix the lines first
    valid = _check_records(run, report, contents.records)
    conflicts: list[tuple[int, str]] = []
    ledger = log.fold(contents.records if valid else [], conflicts)
    for number, why in conflicts:
        report.add(path, f"line {number}: {why}", "cross-reference")
    if not valid or conflicts:
        return
    report.extend(validate(ledger, log.SCHEMA), path)
    _check_references(run, report, ledger)
    _check_draft(run, report, contents.records)


def _check_records(run: Run, report: ValidationReport, records: list[dict[str, Any]]) -> bool:
    """Each record against its schema (True when all are valid); then ids increasing and within the
    counter (a second add of one id is reported by the fold)."""
    path = run.path("claims_log")
    valid = True
    for number, entry in enumerate(records, 1):
        for problem in validate(entry, log.RECORD_SCHEMA):
            report.add(path, f"line {number}: {problem.message}", problem.code, problem.field)
            valid = False
    if not valid:
        return False
    counters = ids.peek(run)
    for event, prefix in ((LedgerEvent.CLAIM_ADDED, "CLM"), (LedgerEvent.TENSION_ADDED, "T")):
        highest, seen = 0, set()
        for number, entry in enumerate(records, 1):
            if entry["event"] != event or entry["id"] in seen:
                continue
            seen.add(entry["id"])
            _, value = ids.parse_id(entry["id"])
            if value < highest:
                report.add(
                    path,
                    f"line {number}: {entry['id']} is out of sequence (ids are appended in increasing order)",
                    "id-sequence",
                )
            highest = max(highest, value)
        if counters and highest > int(counters.get(prefix, 0)):
            report.add(
                run.path("state", name="ids"),
                f"the {prefix} counter ({counters.get(prefix, 0)}) is behind the ledger's "
                f"{ids.format_id(prefix, highest)}",
                "cross-reference",
            )
    return True


def _check_references(run: Run, report: ValidationReport, ledger: dict[str, Any]) -> None:
    """Claims answer existing sub-questions and cite sources whose stored text still holds each quote."""
    path = run.path("claims_log")
    try:
        known_sq = {q["id"] for q in decompose.load(run)}
    except BadInput:
        known_sq = set()
    texts: dict[str, str | None] = {}
    for claim in ledger["claims"]:
        clm = claim["id"]
        if claim["sub_question"] not in known_sq:
            report.add(
                path,
                f"{clm} answers {claim['sub_question']}, which is not a sub-question of this run",
                "cross-reference",
            )
        for ev in claim["evidence"]:
            ref = ev["source"]
            if ref not in texts:
                exists = run.path("source", **source_keys(ref)).is_file()
                texts[ref] = source_text(run, ref).text if exists else None
            text = texts[ref]
            if text is None:
                report.add(path, f"{clm} cites {ref}, which is not in this run", "cross-reference")
            elif not grounding.find_quote(ev["quote"], text).found:
                report.add(
                    path, f"{clm}: its quote is no longer found in {ref}'s stored text", "cross-reference"
                )
            elif ev.get("span"):
                why = check_span(run, ref, ev["span"], ev["quote"])
                if why is not None:
                    report.add(path, f"{clm}: {why}", "span-mismatch")


def _check_draft(run: Run, report: ValidationReport, records: list[dict[str, Any]]) -> None:
    """The draft states how many records it shows and is exactly their rendering."""
    path = run.path("draft")
    if not path.is_file():
        return  # not rendered yet: the ledger is the record
    report.checked_files += 1
    count = draft.shown(run)
    if count is None:
        report.add(path, "the draft does not say which records of claims.jsonl it shows", "cross-reference")
        return
    if count > len(records):
        report.add(
            path,
            f"the draft says it shows {count} records, but claims.jsonl holds {len(records)}",
            "cross-reference",
        )
        return
    expected = draft.render(log.fold(records[:count]), draft.questions(run), records=count)
    try:
        shown_text = bounded.read_text(path)
    except BadInput as exc:
        report.add(path, exc.message, "malformed-artifact")
        return
    if shown_text != expected:
        report.add(
            path,
            f"the draft is not the rendering of the first {count} records of claims.jsonl "
            "(edited by hand?); delete it and `research-engine claims list` renders it again",
            "cross-reference",
        )
