"""The extractive deliverable: "Key findings", the claims by sub-question, then caveats and gaps.

Owns `render_report` and the headings `report check` reads: one cited bullet per
sub-question in Key findings (its best supported claim), every supported or partial
claim once under its sub-question, partial ones marked, and a caveat section naming
gaps and refused claims. States only what the claims state, with their ids and sources;
writes nothing to disk (the engine does).
"""

from __future__ import annotations

from typing import Any

from research_engine.engine.extractive.text import near_key
from research_engine.engine.models import Section
from research_engine.vocabulary import Confidence, Verdict

# `report check` treats a heading naming a "caveat" or "gap" as a caveat area (markdown_blocks.CAVEAT_WORDS),
# and a heading starting with "About" as framing (markdown_blocks.EXEMPT_WORDS): facts there need no citation.
KEY_FINDINGS_HEADING = "## Key findings"
CAVEAT_HEADING = "## Caveats and gaps"
ABOUT_HEADING = "## About this report"
_CONFIDENCE_RANK: dict[str, int] = {level: rank for rank, level in enumerate(Confidence)}  # high first


def _sources_of(claim: dict[str, Any]) -> str:
    return ", ".join(e["source"] if isinstance(e, dict) else e[0] for e in claim.get("evidence") or [])


def render_report(brief: dict[str, Any], sections: list[Section]) -> str:
    """The extractive deliverable: key findings, claims by sub-question, then caveats and gaps."""
    objective = " ".join(str(brief.get("objective") or "Research report").split())
    findings: list[str] = []
    body: list[str] = []
    caveats: list[str] = []
    said: set[str] = set()  # a sentence is stated once even if two claims carry it
    for section in sections:
        sq = section.sq
        stated = []
        for claim in section.claims:
            if claim.get("verdict") not in (Verdict.SUPPORTED, Verdict.PARTIAL):
                continue
            key = near_key(str(claim.get("text") or ""))
            if key in said:
                continue
            said.add(key)
            stated.append(claim)
        body += [f"## {sq['id']}: {sq['text']}", ""]
        for claim in stated:
            caution = (
                " (partly supported: read with caution)" if claim.get("verdict") == Verdict.PARTIAL else ""
            )
            body += [f"- {claim['text']} [{claim['id']}]{caution} (source: {_sources_of(claim)})", ""]
        if stated:
            top = min(
                stated,
                key=lambda c: (
                    c.get("verdict") != Verdict.SUPPORTED,
                    _CONFIDENCE_RANK.get(str(c.get("confidence")), 3),
                    stated.index(c),
                ),
            )
            caution = " (partly supported)" if top.get("verdict") == Verdict.PARTIAL else ""
            findings.append(f"- **{sq['id']}** ({sq['text']}): {top['text']} [{top['id']}]{caution}")
        else:
            body += ["> **Gap:** no source sentence answered this sub-question.", ""]
            caveats.append(f"- Gap: no claim was supported for {sq['id']} ({sq['text']}).")
        for gap in section.gaps:
            if not stated and str(gap.get("about") or "").startswith("no supported claim answers"):
                continue  # already said just above
            caveats.append(f"- Gap ({sq['id']}): {gap.get('about')}")
        for claim in section.refused:
            caveats.append(
                f"- Refused, not established: {claim['id']} (\u201c{claim['text']}\u201d) was refused by the "
                f"verifier: {claim.get('reason') or 'its evidence did not hold up'}."
            )
    lines = [f"# {objective}", "", KEY_FINDINGS_HEADING, ""]
    if findings:
        lines += findings + [""]
    else:
        lines += ["> **Gap:** no sub-question has a supported answer.", ""]
    lines += body
    if caveats:
        lines += [CAVEAT_HEADING, ""] + list(dict.fromkeys(caveats)) + [""]
    lines += [
        ABOUT_HEADING,
        "",
        "Written by the embedded extractive model: every statement above is a verbatim sentence of the "
        "cited source, chosen by BM25 relevance and checked by the independent verifier.",
        "",
    ]
    return "\n".join(lines)
