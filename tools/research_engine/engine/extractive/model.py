"""`ExtractiveModel`: the engine's model interface answered by the rules of this package.

Owns only the wiring: each method of `engine.models.Model` is one call into the module
that owns its job (`plan`, `targets`, `series`, `picking`, `rendering`), plus the two
rules too small for a module of their own: verify returns the mechanical floor with its
reasons, and the critic names every sub-question without a supported claim as a
material gap. Stateless, like everything it calls.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from research_engine.answering import answers_text
from research_engine.engine.extractive.picking import sentence_claims
from research_engine.engine.extractive.plan import plan_of
from research_engine.engine.extractive.rendering import render_report
from research_engine.engine.extractive.series import data_claims
from research_engine.engine.extractive.targets import judge_candidate, search_queries
from research_engine.engine.models import (
    ClaimDraft,
    GapDraft,
    Section,
    SelectionJudgement,
    SourceText,
    SubQuestionPlan,
    Usage,
    VerdictDraft,
)
from research_engine.vocabulary import Angle, Verdict

MAX_CLAIMS = 5  # claims a sub-question takes
# Claims a sub-question takes from one source: as many as it takes in all (`max_claims`), so the page that
# answers may give every claim. Replayed over the kept runs (2026-11-28): dev 135, 137, 137 of 172 facts at
# 3, 4, 5 with a higher on-answer-page share at 5 (73% against 72%); the held-out sets B-H, never used to
# choose it, 102, 109, 114 of 261 (bench/results/quality-rank.md, tenth session).
PER_SOURCE_CAP = MAX_CLAIMS


class ExtractiveModel:
    """The embedded default: deterministic, no network, no key (see the package docstring)."""

    def __init__(
        self, *, max_claims: int = MAX_CLAIMS, per_source_cap: int = PER_SOURCE_CAP, name: str = "extractive"
    ) -> None:
        self.name = name
        self.usage = Usage()
        self.max_claims = max_claims
        self.per_source_cap = per_source_cap

    def decompose(self, brief: dict[str, Any]) -> list[SubQuestionPlan]:
        return [
            SubQuestionPlan(text=p.text, claim_type=p.claim_type, angle=p.angle, answers=answers_text(p.text))
            for p in plan_of(brief)
        ]

    def queries(self, brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]:
        return search_queries(brief, sq, angle)

    def select_judgement(
        self, brief: dict[str, Any], sq: dict[str, Any], candidate: dict[str, Any]
    ) -> SelectionJudgement:
        return judge_candidate(brief, sq, candidate)

    def select_judgements(
        self, brief: dict[str, Any], sq: dict[str, Any], candidates: list[dict[str, Any]]
    ) -> list[SelectionJudgement]:
        return [judge_candidate(brief, sq, c) for c in candidates]

    def consolidate(
        self,
        brief: dict[str, Any],
        sq: dict[str, Any],
        sources: list[SourceText],
        stated: Collection[str] = (),
    ) -> list[ClaimDraft]:
        return data_claims(brief, sq, sources) + sentence_claims(
            brief, sq, sources, max_claims=self.max_claims, per_source_cap=self.per_source_cap, stated=stated
        )

    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft:
        floor = checks.get("floor") or Verdict.REFUSE
        reasons = [str(r) for r in checks.get("floor_reasons") or []]
        if floor == Verdict.SUPPORTED:
            reason = "mechanical checks pass: the quote is in the verifier's fresh copy"
            reason += " and carries the claim's numbers"
        else:
            reason = "mechanical floor: " + ("; ".join(reasons) or floor)
        return VerdictDraft(verdict=floor, reason=reason)

    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]:
        supported = {c.get("sub_question") for c in claims if c.get("verdict") == Verdict.SUPPORTED}
        gaps = []
        for sq in sub_questions:
            if sq["id"] in supported:
                continue
            queries = self.queries(brief, sq, sq.get("angle") or Angle.ENTITY)
            gaps.append(
                GapDraft(
                    about=f"no supported claim answers {sq['id']}: {sq['text']}",
                    query=queries[0] if queries else sq["text"],
                    sq=sq["id"],
                    material=True,
                )
            )
        return gaps

    def write(self, brief: dict[str, Any], sections: list[Section]) -> str:
        return render_report(brief, sections)
