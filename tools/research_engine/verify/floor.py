"""The mechanical checks of a claim against the verifier's fresh copies, and the floor they set. Pure.

Owns `check_claim` (one claim: cited at all, each source in the run and reachable,
changed since retrieval, quote found exact or normalized with its score, else the
closest window; numbers in the claim carried by its quotes) and `floor_of`, the
loosest verdict those checks allow (the rules are in the package docstring). Never
fetches, reads or writes anything: the fresh copies come from `refetch`, and the
worksheet that keeps the result is `worksheet`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from research_engine import grounding
from research_engine.sentences import locate
from research_engine.vocabulary import Verdict

if TYPE_CHECKING:  # the shape only: the checks read a fresh copy, they never make one
    from research_engine.verify.refetch import FreshCopy

# The one refusal a corroboration query can lift (`worksheet.record` looks for it).
UNREACHABLE_REASON = "every cited source is unreachable"


def check_claim(claim: dict[str, Any], copies: dict[str, FreshCopy | None]) -> dict[str, Any]:
    """The mechanical checks of one claim against fresh copies (None: the source is not in the run)."""
    evidence = claim.get("evidence") or []
    entries: list[dict[str, Any]] = []
    for ev in evidence:
        fresh = copies.get(ev.get("source"))
        entry: dict[str, Any] = {"source": ev.get("source"), "quote": ev.get("quote") or ""}
        if ev.get("span"):
            entry["span"] = ev["span"]  # named by reference at entry: the sentences it was copied from
        if fresh is None:
            entry.update(
                in_run=False,
                reachable=False,
                fetch_error="not-in-run",
                changed=None,
                quote_found=False,
                match=None,
                score=0.0,
                closest=None,
                evidence_file=None,
            )
        else:
            entry.update(
                in_run=True,
                reachable=fresh.reachable,
                fetch_error=fresh.error,
                changed=fresh.changed,
                retrieved_sha256=fresh.retrieved_sha256,
                fresh_sha256=fresh.fresh_sha256,
            )
            if fresh.reachable:
                found = grounding.find_quote(entry["quote"], fresh.text)
                entry.update(
                    quote_found=found.found, match=found.match, score=found.score, closest=found.closest
                )
                if found.found and found.start is not None and found.end is not None:
                    # Where the fresh copy says it, by sentence id, so the verifier can read it there.
                    entry["fresh_span"] = locate(fresh.passages, found.start, found.end)
            else:
                entry.update(quote_found=None, match=None, score=None, closest=None)
        entries.append(entry)
    quotes = " \n ".join(e["quote"] for e in entries)
    numbers_ok, missing = grounding.numbers_supported(claim.get("text", ""), quotes)
    cited = bool(entries) and all(e["in_run"] and e["quote"].strip() for e in entries)
    floor, reasons = floor_of(cited, entries, numbers_ok, missing, claim.get("corroboration_query"))
    return {
        "claim": claim["id"],
        "sub_question": claim.get("sub_question"),
        "text": claim.get("text", ""),
        "cited": cited,
        "evidence": entries,
        "numbers": {"ok": numbers_ok, "missing": missing},
        "all_unreachable": bool(entries) and not any(e["reachable"] for e in entries),
        "floor": floor,
        "floor_reasons": reasons,
    }


def floor_of(
    cited: bool,
    entries: list[dict[str, Any]],
    numbers_ok: bool,
    missing: list[str],
    corroboration: str | None,
) -> tuple[Verdict, list[str]]:
    """The loosest verdict the mechanical checks allow, and why. Pure."""
    reasons: list[str] = []
    if not cited:
        absent = [e["source"] for e in entries if not e.get("in_run")]
        reasons.append(
            "un-cited: "
            + (f"{', '.join(map(str, absent))} not in the run" if absent else "no source and quote")
        )
    reachable = [e for e in entries if e.get("reachable")]
    if entries and not reachable and cited and not corroboration:
        reasons.append(f"{UNREACHABLE_REASON} and no corroboration query was made")
    for e in reachable:
        if not e.get("quote_found"):
            reasons.append(f"quote absent from the fresh copy of {e['source']}")
    if not numbers_ok:
        reasons.append(f"number(s) {', '.join(missing)} in the claim are not in its quote(s)")
    if reasons:
        return Verdict.REFUSE, reasons
    if len(reachable) < len(entries):
        down = [e["source"] for e in entries if not e.get("reachable")]
        why = f"source(s) {', '.join(down)} could not be re-read"
        if not reachable:
            why += " (corroboration query recorded)"
        return Verdict.PARTIAL, [why]
    return Verdict.SUPPORTED, []
