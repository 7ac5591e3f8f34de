"""Which supported claims answer which sub-question: the reading the controller counts coverage with.

"Supported" says a quote is on the page; it does not say the claim answers its sub-question. Each
supported, active claim is read in this order:

1. **The critic's judgement** (`critic.latest_answers`, controller/answers.md): in the skill bundle the
   completeness critic reads the claims and records which answer each sub-question. A claim the latest
   judgement of its sub-question names answers; one that judgement considered and left out does not.
2. **The answer score** (`answering.relevance`), for a claim no judgement considered (the headless engine,
   or a claim added after the judgement): it answers at `answering.ANSWERS_MIN`.
3. **Together**: an explanation or yes/no sub-question none of whose unjudged supported claims answers
   alone is answered when those claims do read together (their texts joined and scored as one), because
   such an answer is often spread over several claims (a restriction per sentence). A lookup's answer (a
   version, a number, a name, an identifier) must stand in one claim, so it is never read together.

Pure: the ledger, verdicts and judgements come in as data; `readings` returns one `Reading` per claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from research_engine import answering
from research_engine.answering import AnswerKind

TOGETHER_KINDS = frozenset({AnswerKind.EXPLANATION, AnswerKind.YES_NO})


@dataclass(frozen=True)
class Reading:
    """Whether one supported claim answers its sub-question, by what reading, and why (one line)."""

    claim: str
    sub_question: str
    answers: bool
    by: str  # critic | score | together
    basis: str


def readings(
    questions: dict[str, str],
    supported: list[dict[str, Any]],
    judgements: dict[str, dict[str, Any]],
) -> dict[str, Reading]:
    """One reading per supported claim (`supported`: the active, supported claims, in ledger order)."""
    texts = list(questions.values())
    out: dict[str, Reading] = {}
    unjudged: dict[str, list[dict[str, Any]]] = {}
    for claim in supported:
        clm, sq = claim["id"], claim["sub_question"]
        judged = judgements.get(sq)
        if judged is not None and clm in judged.get("considered", []):
            answers = clm in judged.get("answering", [])
            said = "answers" if answers else "does not answer"
            why = f"critic: {said} (cycle {judged['cycle']}: {judged['why']})"
            out[clm] = Reading(clm, sq, answers, "critic", why)
            continue
        score = answering.relevance(questions.get(sq, ""), texts, str(claim.get("text") or ""))
        out[clm] = Reading(clm, sq, score.answers, "score", score.basis())
        unjudged.setdefault(sq, []).append(claim)
    for sq, group in unjudged.items():
        question = questions.get(sq, "")
        if len(group) < 2 or answering.expected_kind(question) not in TOGETHER_KINDS:
            continue
        if any(out[c["id"]].answers for c in group):
            continue
        joined = " ".join(str(c.get("text") or "") for c in group)
        together = answering.relevance(question, texts, joined)
        if not together.answers:
            continue
        # Only the claims that carry some of the terms found answer together; an off-topic one does not.
        found = set(together.terms_found)
        carrying = [c for c in group if found & set(answering.claim_terms(str(c.get("text") or "")))]
        named = ", ".join(c["id"] for c in carrying)
        for c in carrying:
            why = f"together with {named}: {together.basis()}"
            out[c["id"]] = Reading(c["id"], sq, True, "together", why)
    return out
