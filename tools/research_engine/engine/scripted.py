"""The scripted model: fixed answers per method (or callables), the extractive rule for the rest. Tests use it
to put a model's exact output into a real run.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, is_dataclass
from typing import Any

from research_engine.engine.extractive import ExtractiveModel
from research_engine.engine.models import (
    ClaimDraft,
    GapDraft,
    Model,
    Section,
    SelectionJudgement,
    SourceText,
    SubQuestionPlan,
    Usage,
    VerdictDraft,
)

_RESULT_TYPES: dict[str, Any] = {
    "decompose": SubQuestionPlan,
    "select_judgement": SelectionJudgement,
    "consolidate": ClaimDraft,
    "verify": VerdictDraft,
    "critic": GapDraft,
}


def _coerce(method: str, value: Any) -> Any:
    """Dicts in a script become the method's dataclass (lists of them for list-returning methods)."""
    kind = _RESULT_TYPES.get(method)
    if kind is None:
        return value
    if isinstance(value, list):
        return [_coerce_one(kind, v) for v in value]
    return _coerce_one(kind, value)


def _coerce_one(kind: Any, value: Any) -> Any:
    if kind is SelectionJudgement and isinstance(value, str):
        return SelectionJudgement(reason=value)  # a bare reason: no hint
    if isinstance(value, dict):
        if kind is ClaimDraft:
            value = {**value, "evidence": [tuple(e) for e in value.get("evidence", [])]}
        return kind(**value)
    return value


class ScriptedModel:
    """Canned responses for tests.

    `script` maps a method name to a list of responses (served in order; the last
    one repeats when the list runs out) or to a callable taking the method's
    arguments. Responses may be the result dataclasses or plain dicts. Methods
    without a script are answered by `fallback` (the extractive model by default).
    `tokens_per_call` charges (prompt, completion) tokens per scripted call, so
    budget tests can spend tokens without an LLM.
    """

    def __init__(
        self,
        script: dict[str, Any] | None = None,
        *,
        fallback: Model | None = None,
        tokens_per_call: tuple[int, int] = (0, 0),
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.usage = Usage()
        self.script = dict(script or {})
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.tokens_per_call = tokens_per_call
        self._positions: dict[str, int] = {}
        self._fallback = fallback

    @property
    def fallback(self) -> Model:
        if self._fallback is None:
            self._fallback = ExtractiveModel()
        return self._fallback

    def _answer(self, method: str, *args: Any) -> Any:
        self.calls.append((method, args))
        entry = self.script.get(method)
        if entry is None:
            return getattr(self.fallback, method)(*args)
        self.usage.add(*self.tokens_per_call)
        if callable(entry):
            return _coerce(method, entry(*args))
        if not isinstance(entry, list) or not entry:
            return _coerce(method, entry)
        at = self._positions.get(method, 0)
        self._positions[method] = at + 1
        return _coerce(method, entry[min(at, len(entry) - 1)])

    def decompose(self, brief: dict[str, Any]) -> list[SubQuestionPlan]:
        return self._answer("decompose", brief)

    def queries(self, brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]:
        return self._answer("queries", brief, sq, angle)

    def select_judgement(
        self, brief: dict[str, Any], sq: dict[str, Any], candidate: dict[str, Any]
    ) -> SelectionJudgement:
        return self._answer("select_judgement", brief, sq, candidate)

    def select_judgements(
        self, brief: dict[str, Any], sq: dict[str, Any], candidates: list[dict[str, Any]]
    ) -> list[SelectionJudgement]:
        return [self.select_judgement(brief, sq, c) for c in candidates]

    def consolidate(
        self,
        brief: dict[str, Any],
        sq: dict[str, Any],
        sources: list[SourceText],
        stated: Collection[str] = (),
    ) -> list[ClaimDraft]:
        return self._answer("consolidate", brief, sq, sources)  # a script answers as written

    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft:
        return self._answer("verify", claim, checks, evidence)

    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]:
        return self._answer("critic", brief, sub_questions, claims)

    def write(self, brief: dict[str, Any], sections: list[Section]) -> str:
        return self._answer("write", brief, sections)


def as_dict(value: Any) -> Any:
    """A result dataclass (or a list of them) as plain data, for logs and JSON."""
    if isinstance(value, list):
        return [as_dict(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value
