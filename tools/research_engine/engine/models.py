"""The model interface: who supplies judgement to a headless run, and the shapes it returns.

A headless run (`research-engine run`) drives the same stages as the skill bundle;
where an agent would write text (sub-questions, queries, selection reasons,
claims, verdicts, gaps, the deliverable) it calls a `Model`. Three kinds:

- `extractive` (`engine.extractive`, the default): no LLM, no key. Rules and BM25;
  every claim is a verbatim sentence of a fetched source, so it cannot fabricate.
- `openai` (`engine.openai_model`): any OpenAI-compatible chat-completions endpoint,
  configured by RESEARCH_ENGINE_MODEL_BASE_URL, RESEARCH_ENGINE_MODEL and
  RESEARCH_ENGINE_MODEL_API_KEY; it falls back to the extractive rule whenever a
  reply cannot be used.
- `scripted` (here): canned responses, for tests.

A model never writes an artifact and never decides routing: the tools check
and place what it returns (the claims gate, the verifier's floor, `report check`),
and the controller decides from the artifacts. This module does no I/O.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any, Protocol, runtime_checkable

from research_engine.documents import Passage
from research_engine.engine.extractive import ExtractiveModel
from research_engine.engine.openai_model import OpenAIModel
from research_engine.errors import BadInput
from research_engine.settings import Settings
from research_engine.vocabulary import SelectionHint, Verdict

VERDICTS: tuple[str, ...] = tuple(Verdict)  # kept for the openai adapter
SELECTION_HINTS: tuple[str, ...] = tuple(SelectionHint)  # a selection judgement's verdict hint, or None
MODEL_KINDS = ("extractive", "openai", "scripted")


@dataclass
class Usage:
    """Running totals for one model: calls and tokens (model_tokens = prompt + completion)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: int = 0  # replies that could not be used, replaced by the extractive rule

    @property
    def model_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        self.calls += 1
        self.prompt_tokens += max(0, int(prompt_tokens))
        self.completion_tokens += max(0, int(completion_tokens))

    def to_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_tokens": self.model_tokens,
            "fallbacks": self.fallbacks,
        }


@dataclass
class SubQuestionPlan:
    text: str
    claim_type: str
    angle: str | None = None
    answers: str | None = None


@dataclass
class SourceText:
    ref: str  # "SQ-01/SRC-02"
    title: str | None
    url: str
    passages: list[Passage]


@dataclass
class SelectionJudgement:
    """The model's relevance call on one search candidate.

    `verdict_hint` goes to `selection.log_selection` beside the reason: "reject" is
    always honoured, "choose" breaks ties between equal scores, None leaves it to the facts.
    """

    reason: str
    verdict_hint: str | None = None  # "choose" | "reject" | None


@dataclass
class ClaimDraft:
    text: str
    evidence: list[tuple[str, str]]  # (source ref, verbatim quote)
    confidence: str = "medium"


@dataclass
class VerdictDraft:
    verdict: str  # supported | partial | refuse
    reason: str
    corroboration_query: str | None = None


@dataclass
class GapDraft:
    about: str
    query: str
    sq: str | None
    material: bool


@dataclass
class Section:
    """One sub-question's material for the deliverable.

    Each claim dict has id, text, verdict, evidence (list of {source, quote}); `gaps`
    are open gap dicts (about, query) and `refused` the refused claim dicts, which
    the writer may show only inside a marked caveat section.
    """

    sq: dict[str, Any]
    claims: list[dict[str, Any]]
    gaps: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)


@runtime_checkable
class Model(Protocol):
    name: str
    usage: Usage

    def decompose(self, brief: dict[str, Any]) -> list[SubQuestionPlan]: ...
    def queries(self, brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]: ...
    def select_judgement(
        self, brief: dict[str, Any], sq: dict[str, Any], candidate: dict[str, Any]
    ) -> SelectionJudgement: ...
    def consolidate(
        self, brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
    ) -> list[ClaimDraft]: ...
    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft: ...
    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]: ...
    def write(self, brief: dict[str, Any], sections: list[Section]) -> str: ...


def make_model(name: str = "extractive", *, settings: Settings | None = None, **kw: Any) -> Model:
    """Build a model by kind: "extractive" (default), "openai" (from the settings) or "scripted".

    `openai` takes `client=` (a `net.HttpClient`, so calls land in the cassette),
    or builds its own; see `engine.openai_model.OpenAIModel.from_settings`.
    """
    kind = (name or "extractive").split(":", 1)[0]
    if kind == "extractive":
        return ExtractiveModel(**kw)
    if kind == "openai":
        if ":" in name and "model" not in kw:
            kw["model"] = name.split(":", 1)[1]
        return OpenAIModel.from_settings(settings or Settings(), **kw)
    if kind == "scripted":
        return ScriptedModel(**kw)
    raise BadInput(
        f"unknown model {name!r}; expected one of {', '.join(MODEL_KINDS)}", code="bad-model", field="model"
    )


# ---------------------------------------------------------------------------- scripted

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

    def consolidate(
        self, brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
    ) -> list[ClaimDraft]:
        return self._answer("consolidate", brief, sq, sources)

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
