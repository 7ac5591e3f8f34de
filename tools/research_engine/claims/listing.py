"""`claims list --json` within the bound a model's context holds (`excerpts`): one page of claims, each
with its evidence by source, span and quote, the counts, and where the rest is (the ledger, the next page).
"""

from __future__ import annotations

from typing import Any

from research_engine import excerpts
from research_engine.trace import Run

_EVIDENCE_FIELDS = ("source", "span", "passage", "quote")


def claim_view(claim: dict[str, Any]) -> dict[str, Any]:
    """A claim as a model reads it: the gate's match figures left out (the ledger keeps them)."""
    view = {k: v for k, v in claim.items() if k != "evidence" and v is not None}
    view["evidence"] = [{k: ev[k] for k in _EVIDENCE_FIELDS if ev.get(k)} for ev in claim.get("evidence", [])]
    return view


def bound_listing(data: dict[str, Any], run: Run, *, page: int, status: str) -> None:
    """Page `page` of `data["claims"]` and the tensions, so the envelope stays within the bound."""
    views = [claim_view(c) for c in data["claims"]]
    room = excerpts.ENVELOPE_CHARS - 1500 - excerpts.size({**data, "claims": []})
    shown, pages = excerpts.page_of(views, max(room, 1000), page)
    data["claims"] = shown
    rest: dict[str, Any] = {
        "shown": len(shown),
        "of": len(views),
        "page": page,
        "pages": pages,
        "file": str(run.path("claims_log")),
    }
    if page < pages:
        command = f"research-engine claims list --run {run.root} --status {status}"
        rest["next"] = f"{command} --page {page + 1} --json"
    data["rest"] = rest
    cut = excerpts.fit_list(data, "tensions")
    if cut is not None:
        rest["tensions"] = cut
