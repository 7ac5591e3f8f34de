"""What a no-finding deliverable adds to its text: what was searched (and which searches were refused, and
why), retrieved, drafted and refused, what failed, and the open questions.

A run has no finding when every active claim was refused by the verifier (or there is none):
`citable_claims` is empty. `report.check_text` then passes a deliverable that states no claim, with a
`no-finding` warning, and `report.finish` writes `account` after its generated-sections marker instead of
references and an evidence map (docs/architecture.md section 7). Every string from a source or a model is
escaped (`escaping.text`). Reads the run; writes nothing.
"""

from __future__ import annotations

from typing import Any

from research_engine import bounded, critic, decompose, escaping, retrieve
from research_engine import claims as ledger
from research_engine.errors import BadInput
from research_engine.runstate import latest_verdicts
from research_engine.trace import Run
from research_engine.vocabulary import Verdict


def citable_claims(run: Run) -> list[str]:
    """Active claims the verifier has not refused (supported, partial, or not judged yet): what a
    deliverable may state. A run without one has no finding to state."""
    claims, verdicts = ledger.load(run)["claims"], latest_verdicts(run)
    return [
        clm
        for clm, claim in ((c["id"], c) for c in claims)
        if claim.get("status") == "active" and (verdicts.get(clm) or {}).get("verdict") != Verdict.REFUSE
    ]


def _queries_of(run: Run, sq: str) -> list[dict[str, Any]]:
    """The queries recorded in select/SQ-NN.candidates.json (read here as plain JSON: the selection
    package would pull the HTTP client into every `report` command)."""
    path = run.path("candidates", sq=sq)
    if not path.is_file():
        return []
    try:
        document = bounded.load_json(bounded.read_bytes(path), str(path))
    except BadInput:
        return []
    queries = document.get("queries") if isinstance(document, dict) else None
    return [q for q in queries if isinstance(q, dict)] if isinstance(queries, list) else []


def account(run: Run, claims: dict[str, dict[str, Any]], record: dict[str, Any]) -> list[str]:
    """A no-finding deliverable's account: per sub-question what was searched, retrieved, claimed and
    refused; then the fetches that failed or were refused; then the open questions."""
    verdicts = latest_verdicts(run)
    sources = retrieve.list_sources(run)
    events = [e for e in record.get("events") or [] if isinstance(e, dict)]
    lines = ["## Method: what was searched and what was refused", ""]
    refusals = _search_refusals(events)
    if refusals and not sources:
        # Nothing was found because nothing could be searched: say so first, and never blame the sources.
        lines += [
            "Nothing was searched: every search request was refused or failed before it reached a search "
            "engine, so no source could be retrieved. " + "; ".join(escaping.text(r) for r in refusals[:5]),
            "",
        ]
    questions = decompose.load(run)
    if not questions:
        lines += ["No sub-question was recorded.", ""]
    for sq in questions:
        entries = _queries_of(run, sq["id"])
        queries = list(dict.fromkeys(str(e.get("query")) for e in entries if e.get("query")))
        failed = [e for e in events if e.get("kind") == "search-failed" and e.get("sq") == sq["id"]]
        mine = [c for c in claims.values() if c.get("sub_question") == sq["id"]]
        refused = [c["id"] for c in mine if (verdicts.get(c["id"]) or {}).get("verdict") == Verdict.REFUSE]
        retrieved = sum(1 for s in sources if s.startswith(sq["id"] + "/"))
        shown = "; ".join(escaping.text(q) for q in queries[:10])
        more = f"; and {len(queries) - 10} more" if len(queries) > 10 else ""
        lines += [
            f"- **{sq['id']}** ({escaping.text(sq['text'])}):",
            f"  - searched: {len(queries)} quer{'y' if len(queries) == 1 else 'ies'}"
            + (f" ({shown}{more})" if queries else "")
            + (f"; {len(failed)} search request(s) refused or failed" if failed else ""),
            f"  - retrieved: {retrieved} source(s)",
            f"  - claims drafted: {len(mine)}; refused by the verifier: {', '.join(refused) or 'none'}; "
            "supported: none",
        ]
    failures = [e for e in events if e.get("kind") in ("fetch-failed", "source-failed", "draft-rejected")]
    lines += ["", "Searches that were refused or failed:", ""]
    lines += [f"- {escaping.text(r)}" for r in refusals[:30]] or ["- none"]
    lines += ["", "Fetches, sources and drafts that failed or were refused:", ""]
    for event in failures[:30]:
        what = str(event.get("url") or event.get("source") or event.get("text") or "")[:160]
        why = str(event.get("error") or event.get("code") or "")
        detail = str(event.get("detail") or event.get("why") or "")[:200]
        lines.append(
            f"- {escaping.text(event.get('kind'))} ({escaping.text(event.get('sq') or '-')}): "
            f"{escaping.text(what)}: {escaping.text(why)} {escaping.text(detail)}".rstrip()
        )
    if len(failures) > 30:
        lines.append(f"- and {len(failures) - 30} more (run.json events)")
    if not failures:
        lines.append("- none")
    lines += ["", "## Open questions", ""]
    for sq in questions:
        lines.append(f"- {sq['id']}: {escaping.text(sq['text'])} (no supported answer)")
    for gap in critic.load(run).get("gaps", []):
        if gap.get("status") == "open":
            lines.append(f"- {gap['id']}: {escaping.text(gap.get('about'))}")
    lines.append("")
    return lines


def _search_refusals(events: list[dict[str, Any]]) -> list[str]:
    """Each distinct reason a search request was refused or failed (run.json `search-failed` events): the
    backend, its error code and the detail, once each, with how many requests it stopped."""
    counts: dict[str, int] = {}
    for event in events:
        if event.get("kind") != "search-failed":
            continue
        for attempt in event.get("chain") or []:
            if isinstance(attempt, dict) and attempt.get("outcome") == "failed":
                detail = str(attempt.get("detail") or "")[:200]
                why = f"{attempt.get('backend')} {attempt.get('error')}: {detail}"
                counts[why] = counts.get(why, 0) + 1
    return [f"{why} ({n} request(s))" for why, n in counts.items()]
