"""The support record beside the deliverable (synthesis/support.json): which sentence rests on which claims.

`report finish` writes it with result.md: every sentence of the finished text that states a fact (the
sentences `support` judges), its line, the claims its citation covers, the check's verdict (always `pass`:
a failing deliverable is never finished) and, when the verifier read the prose (`prose_review`), its verdict
and who judged. `check_support` is validate's checker: the record must list exactly the sentences
result.md's text has today, each with the same claims.
"""

from __future__ import annotations

import json
import re
from typing import Any

from research_engine import escaping, prose, support
from research_engine.errors import CheckFailed
from research_engine.ids import sort_key
from research_engine.prose_review import sentence_key
from research_engine.schemas import validate
from research_engine.trace import Run, atomic_write_text
from research_engine.vocabulary import VERIFIER_AGENT, VERIFIER_NAMES

SCHEMA = "support"
OPENING_WORDS = 8  # how much of a sentence the evidence map quotes
RESTATED_QUESTION_RE = re.compile(r"^\s*\([^()]*\?\)\s*:\s*")


def build(
    sentences: list[support.Sentence], judged_by: str | None, verdicts: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    rows = []
    for n, sentence in enumerate(sentences, 1):
        judged = verdicts.get(sentence_key(sentence.text, sentence.cited)) or {}
        row: dict[str, Any] = {
            "id": f"S-{n:02d}",
            "line": sentence.line,
            "text": sentence.text,
            "claims": sentence.cited,
            "check": "pass",
            "verdict": judged.get("verdict"),
        }
        if judged.get("reason"):
            row["reason"] = judged["reason"]
        rows.append(row)
    cited = sorted({c for s in sentences for c in s.cited}, key=sort_key)
    return {
        "schema_version": 1,
        "result": "synthesis/result.md",
        "mode": "verifier" if judged_by else "mechanical",
        "judged_by": judged_by,
        "sentences": rows,
        "summary": {
            "sentences": len(rows),
            "claims": cited,
            "supported": sum(r["verdict"] == "supported" for r in rows),
            "partial": sum(r["verdict"] == "partial" for r in rows),
        },
    }


def write(run: Run, record: dict[str, Any]) -> None:
    problems = validate(record, SCHEMA, file="synthesis/support.json")
    if problems:
        raise CheckFailed(
            "refusing to write synthesis/support.json: it breaks support.schema.json",
            code="artifact-invalid",
            problems=problems,
        )
    atomic_write_text(run.path("support"), json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def load(run: Run) -> dict[str, Any] | None:
    path = run.path("support")
    if not path.is_file():
        return None
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else None


def resting_on(sentences: list[support.Sentence]) -> dict[str, list[str]]:
    """For the evidence map: each claim, the opening words of the sentences that rest on it."""
    out: dict[str, list[str]] = {}
    for sentence in sentences:
        # the citation and the "(source: SQ-01/SRC-02)" aside are the map's own columns, not the sentence's
        plain = prose.plain_text(support.TOOL_ASIDE_RE.sub(" ", prose.CLAIM_REF_RE.sub(" ", sentence.text)))
        words = RESTATED_QUESTION_RE.sub("", plain).split()  # "(the sub-question): the finding"
        opening = " ".join(words[:OPENING_WORDS]) + ("..." if len(words) > OPENING_WORDS else "")
        for clm in sentence.cited:
            if opening not in out.setdefault(clm, []):
                out[clm].append(opening)
    return out


def evidence_note(openings: list[str]) -> str:
    """The sentences of the deliverable resting on a claim, by their opening words (synthesis/support.json
    has them whole)."""
    if not openings:
        return ""
    shown = "; ".join(f"\u201c{escaping.text(o)}\u201d" for o in openings[:3])
    more = f" and {len(openings) - 3} more" if len(openings) > 3 else ""
    return f" (carries {shown}{more})"


def footer_line(support_rec: dict[str, Any], prose: dict[str, Any]) -> str:
    """The footer's line on the prose: how it was judged and, for a model's text, what the check dropped."""
    summary = support_rec["summary"]
    line = (
        f"Prose: {summary['sentences']} sentence(s) resting on {len(summary['claims'])} claim(s), each held "
        "to its claims by the sentence-support check"
    )
    if support_rec["mode"] == "verifier":
        line += (
            f" and judged by {support_rec['judged_by']} ({summary['supported']} supported, "
            f"{summary['partial']} partial)"
        )
    dropped = prose.get("dropped") or {}
    if dropped:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(dropped.items()))
        line += f"; the check dropped {sum(dropped.values())} sentence(s) of the writer's ({counts})"
    return line + " (synthesis/support.json)."


def check_support(run: Run, report: Any, sentences: list[support.Sentence] | None = None) -> None:
    """validate: synthesis/support.json matches result.md's sentences, claims and (verifier mode) verdicts.
    `sentences` are result.md's, as `report` judges them (its checker passes them in)."""
    path = run.path("support")
    if not path.is_file():
        if sentences is not None and run.path("result").is_file() and _expects_record(run):
            report.add(path, "result.md has no support record (synthesis/support.json)", "missing")
        return
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        report.add(path, f"not readable JSON: {exc}", "unreadable")
        return
    problems = validate(record, SCHEMA, file="synthesis/support.json")
    if problems:
        report.extend(problems, path)
        return
    if sentences is None:
        return
    rows = record["sentences"]
    if len(rows) != len(sentences):
        report.add(
            path,
            f"records {len(rows)} sentence(s), but result.md states facts in {len(sentences)}",
            "cross-reference",
        )
    for row, sentence in zip(rows, sentences, strict=False):
        if sentence_key(row["text"], row["claims"]) != sentence_key(sentence.text, sentence.cited):
            report.add(
                path, f"{row['id']} is not result.md's sentence on line {sentence.line}", "cross-reference"
            )
            break
    if record["mode"] == "verifier":
        if record["judged_by"] not in VERIFIER_NAMES:
            report.add(
                path,
                f"the prose was judged by {record['judged_by']!r}, not the {VERIFIER_AGENT} agent",
                "agent",
            )
        unjudged = [r["id"] for r in rows if r["verdict"] not in ("supported", "partial")]
        if unjudged:
            report.add(path, f"no verifier verdict passing {', '.join(unjudged)}", "cross-reference")


def _expects_record(run: Run) -> bool:
    """Runs finished before the support record existed have none; a run that has a prose worksheet must."""
    return run.path("prose_worksheet").is_file()
