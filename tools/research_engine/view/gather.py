"""What the page shows, read from the trace: every artifact of a run in any state (a missing one is empty).

Besides the run's own artifacts it reads the sentence-support record beside result.md when there is one
(`synthesis/*support*`, written by `report finish` since the faithful-prose work): each sentence of the
deliverable with its verdict and the claims it cites. Any shape with a list of records carrying a
`verdict` and claim ids is read; an absent, unreadable or unknown one is no support to show.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from research_engine import bounded, brief, claims, critic, decompose, retrieve, runrecord, selection
from research_engine.artifacts import read_markdown
from research_engine.ids import parse_source_ref
from research_engine.markdown_blocks import GENERATED_MARK
from research_engine.runstate import latest_verdicts, load_loop_log
from research_engine.trace import Run

_CLAIM_RE = re.compile(r"\bCLM-\d{2,}\b")


def _safe(load: Any, default: Any) -> Any:
    """An artifact, or `default` when it is not written yet (the viewer works on runs in any state)."""
    try:
        value = load()
    except Exception:  # a missing or half-written artifact must not stop the page
        return default
    return default if value is None else value


def split_result(text: str | None) -> dict[str, Any] | None:
    """result.md as the page shows it: its front matter (parsed, and as written), the author's text and the
    generated sections."""
    if text is None:
        return None
    raw_front = ""
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            raw_front = text[4:end].strip("\n")
            body = text[end + 4 :].lstrip("\n")
    meta = _safe(lambda: bounded.front_matter(text)[0], {}) if raw_front else {}
    written, _, generated = body.partition(GENERATED_MARK)
    return {"front": meta, "front_text": raw_front, "text": written.strip(), "generated": generated.strip()}


def _support_records(node: Any) -> list[dict[str, Any]]:
    """Every mapping under `node` that carries a verdict and names claims: the sentence-support records."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if "verdict" in node and _CLAIM_RE.search(json.dumps(node.get("claims", node.get("cited", "")))):
            found.append(node)
        else:
            for value in node.values():
                found += _support_records(value)
    elif isinstance(node, list):
        for value in node:
            found += _support_records(value)
    return found


def sentence_support(run: Run) -> dict[str, list[dict[str, Any]]]:
    """claim id -> the deliverable's sentences that cite it, each {sentence, verdict, kind, why}."""
    folder = run.path("result").parent
    paths = sorted(p for p in folder.glob("*support*") if p.is_file()) if folder.is_dir() else []
    by_claim: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        text = _safe(lambda path=path: bounded.read_text(path, "artifact"), None)
        if text is None:
            continue
        document = _safe(lambda text=text: json.loads(text), None)
        if document is None:
            document = _safe(lambda text=text: bounded.front_matter(text)[0], None)
        for record in _support_records(document):
            cited = _CLAIM_RE.findall(json.dumps(record.get("claims", record.get("cited", ""))))
            entry = {
                "sentence": str(record.get("sentence") or record.get("text") or ""),
                "verdict": str(record.get("verdict") or ""),
                "kind": record.get("kind"),
                "why": record.get("why") or record.get("reason"),
            }
            for clm in dict.fromkeys(cited):
                by_claim.setdefault(clm, []).append(entry)
    return by_claim


def gather(run: Run) -> dict[str, Any]:
    """Everything the page shows, read from the trace."""

    def verdicts() -> dict[str, Any]:
        return latest_verdicts(run)

    def loop_cycles() -> list[dict[str, Any]]:
        return load_loop_log(run).get("cycles", [])

    sub_questions = _safe(lambda: decompose.load(run), [])
    sources = {}
    for ref in _safe(lambda: retrieve.list_sources(run), []):
        meta, passages = _safe(lambda ref=ref: retrieve.load_source(run, ref), ({}, []))
        sources[ref] = {"meta": meta, "passages": passages}
    result_path = run.path("result")
    result_text = _safe(lambda: bounded.read_text(result_path), None) if result_path.is_file() else None
    return {
        "run_id": run.run_id,
        "brief": _safe(lambda: brief.load_locked(run.root), {}),
        "record": _safe(lambda: runrecord.read(run), {}),
        "sub_questions": sub_questions,
        "ledger": _safe(lambda: claims.load(run), {"claims": [], "tensions": []}),
        "verdicts": _safe(verdicts, {}),
        "gaps": _safe(lambda: critic.load(run).get("gaps", []), []),
        "selections": {
            sq["id"]: _safe(lambda sq=sq: selection.load(run, sq["id"]), None) for sq in sub_questions
        },
        "cycles": _safe(loop_cycles, []),
        "sources": sources,
        "result": split_result(result_text),
        "support": _safe(lambda: sentence_support(run), {}),
        "evidence": {ref: _safe(lambda ref=ref: _evidence_meta(run, ref), None) for ref in sources},
    }


def _evidence_meta(run: Run, ref: str) -> dict[str, Any] | None:
    """The verifier's own copy of a source (verify/evidence/), when it re-fetched it."""
    sq, src = parse_source_ref(ref)
    path: Path = run.path("evidence", sq=sq, src=src)
    return read_markdown(path)[0] if path.is_file() else None
