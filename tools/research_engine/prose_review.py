"""The verifier reads the prose: the prose worksheet (verify/prose.md) and a verdict per sentence.

In the skill bundle the deliverable is judged twice before it is finished: mechanically by the
sentence-support check (`support`), and by the independent verifier, who reads each sentence beside the
verbatim quotes of the claims it cites.

- `prepare` (`report check --prose-worksheet`): keeps the draft at synthesis/draft.md and writes the
  worksheet: each sentence that states a fact (`S-NN`), the claims its citation covers, the check's floor
  (`refuse` when the check fails it, else `supported`), and the verdicts already recorded for a sentence with
  the same words and citations (a mended draft is judged again only where it changed).
- `record` (`verify prose S-NN`, which the bundle's guard lets only the verifier run): one verdict,
  supported, partial or refuse, with a reason and the agent's name. A verdict looser than the floor is not
  accepted: the floor is recorded (`forced`) and the call exits 1, as for claims.
- `for_finish`: once a worksheet exists, `report finish` takes only a deliverable whose every fact sentence
  the verifier judged supported or partial, judged by the verifier agent; the verdicts go into the support
  record (`support_record`) with who judged.

Nothing here judges meaning: the verifier does, through `record`. Fetched text is data.
"""

from __future__ import annotations

import hashlib
from typing import Any

from research_engine import claims as ledger
from research_engine import support
from research_engine.artifacts import read_markdown, write_markdown
from research_engine.errors import BadInput, CheckFailed
from research_engine.prose import plain_text
from research_engine.trace import Run, atomic_write_text, iso
from research_engine.vocabulary import VERIFIER_AGENT, VERIFIER_NAMES, Verdict, stricter_or_equal

SCHEMA = "prose-worksheet"
VERDICTS = tuple(Verdict)
QUOTE_CHARS = 600  # a quote longer than this is shown cut in the worksheet's body (the front matter is whole)


def sentence_key(text: str, claims: list[str]) -> str:
    """A sentence's words and citations, hashed: the same sentence in a mended draft keeps its verdict."""
    words = " ".join(plain_text(text).split()).casefold()
    return hashlib.sha256(f"{words}|{','.join(sorted(claims))}".encode()).hexdigest()[:16]


def load(run: Run) -> dict[str, Any] | None:
    path = run.path("prose_worksheet")
    if not path.is_file():
        return None
    meta, _ = read_markdown(path)
    return meta


def prepare(
    run: Run, draft: str, sentences: list[support.Sentence], claims: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Keep the draft and write the worksheet for it; verdicts of unchanged sentences carry over."""
    with run.lock():
        previous = {s["key"]: s for s in (load(run) or {}).get("sentences", []) if s.get("verdict")}
        draft_path = run.path("result_draft")
        atomic_write_text(draft_path, draft)
        rows = []
        for n, sentence in enumerate(sentences, 1):
            key = sentence_key(sentence.text, sentence.cited)
            row: dict[str, Any] = {
                "id": f"S-{n:02d}",
                "key": key,
                "line": sentence.line,
                "text": sentence.text,
                "claims": sentence.cited,
                "floor": "supported" if sentence.ok else "refuse",
                "verdict": None,
            }
            if not sentence.ok:
                row["faults"] = [sentence.message()]
            kept = previous.get(key)
            if kept is not None and stricter_or_equal(kept["verdict"], row["floor"]):
                for field in ("verdict", "reason", "judged_by", "judged_at", "forced"):
                    if field in kept:
                        row[field] = kept[field]
            rows.append(row)
        meta = {
            "schema_version": 1,
            "prepared_at": iso(),
            "draft": run.relative(draft_path),
            "draft_sha256": hashlib.sha256(draft.encode("utf-8")).hexdigest(),
            "sentences": rows,
        }
        _write(run, meta, claims)
    return {
        "worksheet": run.relative(run.path("prose_worksheet")),
        "draft": meta["draft"],
        "sentences": len(rows),
        "unjudged": [r["id"] for r in rows if r["verdict"] is None],
        "kept": [r["id"] for r in rows if r["verdict"] is not None],
    }


def record(run: Run, sentence_id: str, verdict: str, reason: str, agent: str) -> dict[str, Any]:
    """The verifier's verdict on one sentence, held to the check's floor (CheckFailed when forced)."""
    if verdict not in VERDICTS:
        raise BadInput(f"verdict must be one of {', '.join(VERDICTS)}", code="bad-verdict", field="verdict")
    if not reason.strip():
        raise BadInput("a verdict needs a reason", code="missing-reason", field="reason")
    if not agent.strip():
        raise BadInput("--agent names who judged (research-verifier)", code="bad-agent", field="agent")
    with run.lock():
        meta = load(run)
        if meta is None:  # the sentence id names nothing in this run
            raise BadInput(
                "no prose worksheet: the writer runs `report check --prose-worksheet` first",
                code="no-prose-worksheet",
                field="id",
            )
        row = next((s for s in meta["sentences"] if s["id"] == sentence_id), None)
        if row is None:
            raise BadInput(
                f"no sentence {sentence_id} in verify/prose.md", code="unknown-sentence", field="id"
            )
        forced = not stricter_or_equal(verdict, row["floor"])
        row.update(
            verdict=row["floor"] if forced else verdict,
            reason=reason.strip(),
            judged_by=agent,
            judged_at=iso(),
            forced=forced,
        )
        _write(run, meta, {c["id"]: c for c in ledger.load(run)["claims"]})
    if forced:
        raise CheckFailed(
            f"{sentence_id}: {verdict} is looser than the check's floor ({row['floor']}); "
            "the floor was recorded",
            code="verdict-below-floor",
            data={"sentence": row},
        )
    return row


def status(run: Run) -> dict[str, Any]:
    meta = load(run)
    if meta is None:
        return {"worksheet": None, "sentences": 0, "unjudged": [], "refused": []}
    rows = meta["sentences"]
    return {
        "worksheet": run.relative(run.path("prose_worksheet")),
        "draft": meta["draft"],
        "sentences": len(rows),
        "unjudged": [r["id"] for r in rows if r["verdict"] is None],
        "refused": [r["id"] for r in rows if r["verdict"] == "refuse"],
        "judged_by": sorted({r["judged_by"] for r in rows if r.get("judged_by")}),
    }


def for_finish(run: Run, sentences: list[support.Sentence]) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(who judged, verdicts by sentence key) for the deliverable `report finish` is placing, or (None, {})
    when no prose worksheet exists (the check alone). CheckFailed when a sentence is unjudged or refused, or
    when someone other than the verifier agent judged."""
    meta = load(run)
    if meta is None:
        return None, {}
    judged = {s["key"]: s for s in meta["sentences"]}
    problems = []
    verdicts: dict[str, dict[str, Any]] = {}
    judges: set[str] = set()
    for n, sentence in enumerate(sentences, 1):
        row = judged.get(sentence_key(sentence.text, sentence.cited))
        shown = sentence.text if len(sentence.text) <= 80 else sentence.text[:77] + "..."
        if row is None or row.get("verdict") is None:
            problems.append(f"sentence {n} ({shown!r}) has no prose verdict from the verifier")
        elif row["verdict"] == "refuse":
            problems.append(f"{row['id']} ({shown!r}) was refused by the verifier: {row.get('reason')}")
        else:
            verdicts[row["key"]] = row
            judges.add(str(row.get("judged_by")))
    strangers = sorted(j for j in judges if j not in VERIFIER_NAMES)
    if strangers:
        problems.append(f"the prose was judged by {', '.join(strangers)}, not the {VERIFIER_AGENT} agent")
    if problems:
        raise CheckFailed(
            f"the verifier has not passed every sentence of this deliverable ({len(problems)} problem(s)); "
            "mend or drop refused sentences, run `report check --prose-worksheet` again and have the "
            "verifier judge what changed",
            code="prose-not-passed",
            data={"problems": problems},
        )
    return (sorted(judges)[0] if judges else VERIFIER_AGENT), verdicts


def _write(run: Run, meta: dict[str, Any], claims: dict[str, dict[str, Any]]) -> None:
    write_markdown(run.path("prose_worksheet"), meta, _render(meta, claims), schema=SCHEMA)


def _render(meta: dict[str, Any], claims: dict[str, dict[str, Any]]) -> str:
    """For the verifier: each sentence, its floor and verdict, and beside it the verbatim quotes of the
    claims it cites."""
    rows = meta["sentences"]
    lines = [
        "# Prose worksheet",
        "",
        f"Draft: `{meta['draft']}`. {len(rows)} sentence(s) state facts; "
        f"{sum(r['verdict'] is None for r in rows)} await a verdict. Judge each sentence against the quotes "
        "below only: supported (it says no more than they hold), partial (it holds in a narrower form: say "
        "which), refuse (it does not hold). A floor of refuse means the mechanical check failed it.",
        "",
    ]
    for row in rows:
        verdict = row["verdict"] or "not judged"
        lines += [f"## {row['id']} (line {row['line']}): floor {row['floor']}, verdict {verdict}", ""]
        lines += [f"> {row['text']}", ""]
        lines += [f"- check: {fault}" for fault in row.get("faults") or []]
        for clm in row["claims"]:
            claim = claims.get(clm) or {}
            lines.append(f"- **{clm}**: {claim.get('text', '(not in the ledger)')}")
            for quote in support.claim_texts(claim)[1:]:
                shown = quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 3] + "..."
                lines.append(f"  - quote: \u201c{shown}\u201d")
        if row.get("reason"):
            lines.append(f"- verdict reason ({row.get('judged_by')}): {row['reason']}")
        lines.append("")
    return "\n".join(lines)
