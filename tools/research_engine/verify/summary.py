"""`verify prepare --json` within the bound a model's context holds (`excerpts`): per claim its floor and
why, and per source whether the quote was found; the quotes, closest windows and claim texts are in the
worksheet (verify/worksheet.md), which the verifier reads, and the fresh copies in verify/evidence/."""

from __future__ import annotations

from typing import Any

from research_engine import excerpts
from research_engine.trace import Run

_ENTRY_FIELDS = ("source", "span", "reachable", "quote_found", "match", "fresh_span", "evidence_file")


def row_view(row: dict[str, Any]) -> dict[str, Any]:
    """One claim's checks as a model reads them: the floor and its reasons, each source's outcome."""
    return {
        "claim": row["claim"],
        "sub_question": row.get("sub_question"),
        "cited": row["cited"],
        "all_unreachable": row["all_unreachable"],
        "floor": row["floor"],
        "floor_reasons": row["floor_reasons"],
        "numbers": row["numbers"],
        "evidence": [{k: e.get(k) for k in _ENTRY_FIELDS if e.get(k) is not None} for e in row["evidence"]],
    }


def bounded(out: dict[str, Any], run: Run) -> dict[str, Any]:
    """`prepare`'s result with its rows as views, cut to the bound; `rest` names the worksheet."""
    data = {**out, "claims": [row_view(r) for r in out["claims"]]}
    data["rest"] = {"worksheet": str(run.path("worksheet")), "evidence": str(run.path("evidence_dir"))}
    cut = excerpts.fit_list(data, "claims")
    if cut is not None:
        data["rest"].update(cut)
    return data
