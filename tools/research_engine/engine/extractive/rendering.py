"""The extractive deliverable: "Answer", "Key findings", the claims by sub-question, then caveats and gaps.

Owns `render_report` and the headings `report check` reads: the direct answer first (`answer_paragraph`:
the supported claims that best answer the objective's facets, at most `ANSWER_CLAIMS`, never a sentence
that only names something or speaks of the page), one cited bullet per sub-question in Key findings (its
best-answering supported claim), every supported or partial claim that answers its sub-question once under
it, partial ones marked, then the supported claims its sources hold that were not judged to answer it,
under a lead that says so (related statements, never the answer or a key finding: the lexical judgement
misses answers in other words), and a caveat section naming gaps, refused claims and how many statements
are only related. States only what the claims state, with their ids and sources; writes nothing to disk
(the engine does).
"""

from __future__ import annotations

import re
from typing import Any

from research_engine import answering
from research_engine.engine.extractive.text import about_the_page, near_key, states_a_clause
from research_engine.engine.models import Section
from research_engine.vocabulary import Angle, Confidence, Verdict

# `report check` treats a heading naming a "caveat" or "gap" as a caveat area (markdown_blocks.CAVEAT_WORDS),
# and a heading starting with "About" as framing (markdown_blocks.EXEMPT_WORDS): facts there need no citation.
ANSWER_HEADING = "## Answer"
ANSWER_CLAIMS = 3
KEY_FINDINGS_HEADING = "## Key findings"
CAVEAT_HEADING = "## Caveats and gaps"
ABOUT_HEADING = "## About this report"
RELATED_HEADING = "### Related statements, not judged to answer it"
_CONFIDENCE_RANK: dict[str, int] = {level: rank for rank, level in enumerate(Confidence)}  # high first


# A claim quoting a reference entry opens with the entry's term: a name written as code, or a plain name
# with its type ("TIG_EDITOR", "--max-old-space-size=SIZE (in megabytes)", "mouse-scroll (int)"), then
# the description, capitalised. The deliverable sets the name in code and the description after a colon.
_ENTRY_HEAD_RE = re.compile(
    r"^(?P<name>(?:--?|\+)?[A-Za-z_][\w.:+/-]*(?:=[^\s(]+)?)"
    r"(?P<type>(?:\s*\([^()]{1,40}\))?(?:\s*\[[^\[\]]{1,80}\])?(?:\s*<[^<>]{1,30}>)?)"
    r"\s+(?=[A-Z\u201c\"])"
)
_CODE_NAME_RE = re.compile(r"^--?\w|[_=]|\w[.:/-]\w|^[A-Z][A-Z0-9]+$")


def shown(text: str) -> str:
    """A claim's text as the deliverable shows it: a reference entry's term and its description together,
    "`TIG_EDITOR`: The editor command ..." (issue 32); every word as the source has it. Any other claim as
    it is."""
    m = _ENTRY_HEAD_RE.match(text)
    if not m or "`" in text:
        return text
    name, kind = m.group("name"), m.group("type").strip()
    if not (_CODE_NAME_RE.search(name) or (kind and name.islower()) or name[0].islower()):
        return text  # a sentence opening with a word, not an entry's name
    return f"`{name}`{' ' + kind if kind else ''}: {text[m.end() :]}"


def shown_claim(claim: dict[str, Any]) -> str:
    """`shown` for a claim: one made of several quotes (a sentence naming a setting, then the setting's
    entry; a release's heading, then the sentence under it) shows each as `shown` would, in order, a quote
    that is a heading (no closing punctuation) set before the rest with a colon; any other as its text."""
    text = str(claim.get("text") or "")
    quotes = list(
        dict.fromkeys(str(e.get("quote") or "") for e in claim.get("evidence") or [] if isinstance(e, dict))
    )
    if len(quotes) > 1 and " ".join(" ".join(quotes).split()) == " ".join(text.split()):
        parts = [shown(q) for q in quotes]
        return " ".join(
            p + (":" if _HEADING_QUOTE_RE.search(p) and i < len(parts) - 1 else "")
            for i, p in enumerate(parts)
        )
    return shown(text)


_HEADING_QUOTE_RE = re.compile(r"[\w)\]]$")  # ends with no punctuation: a heading, not a sentence


def _sources_of(claim: dict[str, Any]) -> str:
    return ", ".join(
        dict.fromkeys(e["source"] if isinstance(e, dict) else e[0] for e in claim.get("evidence") or [])
    )


def answer_paragraph(stated: list[tuple[str, dict[str, Any], float, bool]]) -> str | None:
    """The direct answer: the supported claims that best answer the objective, verbatim and cited, as one
    paragraph (`stated`: (sub-question id, claim, answer score, whether the sub-question is a facet of the
    objective rather than an added angle) in the report's order, each sentence once).

    The facets' claims answer the objective; the time and counter angles' only when no facet has one. A
    sentence that names without saying (`text.states_a_clause`) or speaks of the page (`text.about_the_page`)
    is no answer. Each facet's best claims in turn (highest answer score, then the ranking's order), the
    first facet first, at most ANSWER_CLAIMS: the main question's best claim opens the paragraph, and a
    single-facet objective gets its best claims, not one."""
    usable = [
        (i, sq, score, facet)
        for i, (sq, claim, score, facet) in enumerate(stated)
        if claim.get("verdict") == Verdict.SUPPORTED
        and states_a_clause(str(claim.get("text") or ""))
        and not about_the_page(str(claim.get("text") or ""))
    ]
    if any(facet for *_, facet in usable):
        usable = [u for u in usable if u[3]]
    if not usable:
        return None
    by_sq: dict[str, list[tuple[float, int]]] = {}
    for i, sq, score, _ in usable:
        by_sq.setdefault(sq, []).append((-score, i))
    queues = [sorted(ranked) for ranked in by_sq.values()]  # report order of sub-questions kept
    chosen: list[tuple[int, int]] = []  # (facet order, index)
    depth = 0
    while len(chosen) < ANSWER_CLAIMS and any(depth < len(q) for q in queues):
        for order, queue in enumerate(queues):
            if depth < len(queue) and len(chosen) < ANSWER_CLAIMS:
                chosen.append((order, queue[depth][1]))
        depth += 1
    chosen.sort()
    return " ".join(f"{shown_claim(stated[i][1])} [{stated[i][1]['id']}]" for _, i in chosen)


def render_report(brief: dict[str, Any], sections: list[Section]) -> str:
    """The extractive deliverable: key findings, claims by sub-question, then caveats and gaps."""
    objective = " ".join(str(brief.get("objective") or "Research report").split())
    findings: list[str] = []
    body: list[str] = []
    caveats: list[str] = []
    said: set[str] = set()  # a sentence is stated once even if two claims carry it
    stated_all: list[tuple[str, dict[str, Any], float, bool]] = []
    questions = [str(section.sq.get("text") or "") for section in sections]
    related_count = 0
    for section in sections:
        sq = section.sq
        stated = []
        related: list[dict[str, Any]] = []  # supported, on its sources, but not judged to answer it
        relevance: dict[str, float] = {}
        for claim in section.claims:
            if claim.get("verdict") not in (Verdict.SUPPORTED, Verdict.PARTIAL):
                continue
            key = near_key(str(claim.get("text") or ""))
            if key in said:
                continue
            scored = answering.relevance(str(sq.get("text") or ""), questions, str(claim.get("text") or ""))
            if not scored.answers:  # true, but not judged an answer to this question (the controller agrees)
                if claim.get("verdict") == Verdict.SUPPORTED:
                    said.add(key)
                    related.append(claim)
                continue
            said.add(key)
            stated.append(claim)
            relevance[claim["id"]] = scored.score
            stated_all.append(
                (sq["id"], claim, scored.score, sq.get("angle") not in (Angle.TIME, Angle.COUNTER))
            )
        body += [f"## {sq['id']}: {sq['text']}", ""]
        for claim in stated:
            caution = (
                " (partly supported: read with caution)" if claim.get("verdict") == Verdict.PARTIAL else ""
            )
            body += [f"- {shown_claim(claim)} [{claim['id']}]{caution} (source: {_sources_of(claim)})", ""]
        if not stated:
            body += ["> **Gap:** no source sentence answered this sub-question.", ""]
            missing = "no supported claim answers" if related else "no claim was supported for"
            caveats.append(f"- Gap: {missing} {sq['id']} ({sq['text']}).")
        if related:
            # True statements its sources hold near the question: shown as what they are, so a reader
            # judges them, never as the answer or a key finding.
            related_count += len(related)
            body += [RELATED_HEADING, ""]
            body += [f"- {shown_claim(c)} [{c['id']}] (source: {_sources_of(c)})" for c in related] + [""]
        if stated:
            top = min(
                stated,
                key=lambda c: (
                    c.get("verdict") != Verdict.SUPPORTED,
                    -relevance[c["id"]],
                    _CONFIDENCE_RANK.get(str(c.get("confidence")), 3),
                    stated.index(c),
                ),
            )
            caution = " (partly supported)" if top.get("verdict") == Verdict.PARTIAL else ""
            findings.append(f"- **{sq['id']}** ({sq['text']}): {shown_claim(top)} [{top['id']}]{caution}")
        for gap in section.gaps:
            if not stated and str(gap.get("about") or "").startswith("no supported claim answers"):
                continue  # already said just above
            caveats.append(f"- Gap ({sq['id']}): {gap.get('about')}")
        for claim in section.refused:
            caveats.append(
                f"- Refused, not established: {claim['id']} (\u201c{claim['text']}\u201d) was refused by the "
                f"verifier: {claim.get('reason') or 'its evidence did not hold up'}."
            )
    if related_count:
        caveats.append(
            f"- {related_count} supported claim(s) are listed as related statements, not answers: each holds "
            "its quote but was not judged to answer its sub-question (the controller's loop log names them)."
        )
    lines = [f"# {objective}", ""]
    answer = answer_paragraph(stated_all)
    if answer:
        lines += [ANSWER_HEADING, "", answer, ""]
    lines += [KEY_FINDINGS_HEADING, ""]
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
        "cited source (a reference entry's name set in code before its description), chosen by a sentence "
        "ranking fitted on labelled documentation questions and checked by the independent verifier.",
        "",
    ]
    return "\n".join(lines)
