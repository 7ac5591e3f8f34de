"""Small pure helpers the engine's stages share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from research_engine.errors import ResearchEngineError


def safe_key(canonical_key: Callable[[str], str], url: str) -> str:
    try:
        return canonical_key(url)
    except ResearchEngineError:
        return url


def query_of(cand: dict[str, Any]) -> str | None:
    return cand.get("query") or None


def ref_key(ref: str) -> tuple[int, int]:
    sq, src = ref.split("/")
    return int(sq.split("-")[1]), int(src.split("-")[1])


def already_claimed(ledger: list[dict[str, Any]], sq: str, text: str, refs: list[str]) -> bool:
    """A draft the ledger already holds: the same text active under any sub-question (a run states a
    finding once, where it was first found); or retired in this sub-question with the same sources."""
    for claim in ledger:
        if " ".join(claim["text"].split()) != text:
            continue
        if claim["status"] == "active":
            return True
        if claim["sub_question"] != sq:
            continue
        cited = {e["source"] for e in claim.get("evidence") or []}
        if set(refs) == cited:
            return True  # re-adding a refused claim on the same evidence would only be refused again
    return False


def label_partial(text: str, why: str) -> str:
    """Put the partial-result caution right under the deliverable's title."""
    banner = (
        f"> **Caution:** this is a PARTIAL result. The run stopped before finishing because {why}; "
        "claims that were not verified are left out, and the gaps below are not all gaps."
    )
    lines = text.splitlines()
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join(lines[:at] + ["", banner, ""] + lines[at:]) + "\n"
