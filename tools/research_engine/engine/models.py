"""The model interface: who supplies judgement to a headless run, and the shapes it returns.

A headless run (`research-engine run`) drives the same stages as the skill bundle;
where an agent would write text (sub-questions, queries, selection reasons,
claims, verdicts, gaps, the deliverable) it calls a `Model`. Three kinds:

- `extractive` (`engine.extractive`, the default): no LLM, no key. Rules and BM25;
  every claim is a verbatim sentence of a fetched source, so it cannot fabricate.
- `openai` (`engine.openai`): any OpenAI-compatible chat-completions endpoint,
  configured by RESEARCH_ENGINE_MODEL_BASE_URL, RESEARCH_ENGINE_MODEL and
  RESEARCH_ENGINE_MODEL_API_KEY; it falls back to the extractive rule whenever a
  reply cannot be used.
- `scripted` (`engine.scripted`): canned responses, for tests.

`engine.factory` is the registry of these names; the run imports a model only through it and this module.

A model never writes an artifact and never decides routing: the tools check
and place what it returns (the claims gate, the verifier's floor, `report check`),
and the controller decides from the artifacts. This module does no I/O.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from research_engine.documents import Passage
from research_engine.vocabulary import SelectionHint, Verdict

VERDICTS: tuple[str, ...] = tuple(Verdict)  # kept for the openai adapter
SELECTION_HINTS: tuple[str, ...] = tuple(SelectionHint)  # a selection judgement's verdict hint, or None


@dataclass
class StageUse:
    """One stage's model use: calls, tokens and seconds, and what went wrong, by kind."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failures: dict[str, int] = field(default_factory=dict)  # vocabulary.ModelFailure -> count
    rejections: dict[str, int] = field(default_factory=dict)  # vocabulary.ModelRejection -> count
    reasks: int = 0  # a second call after a rejected or failed first one
    fallbacks: int = 0  # answers given by the extractive rule instead
    picked: int = 0  # claims (or pages) the model picked by number
    replaced: int = 0  # picked claims whose text said more than the quote: the quote stands as the text

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 3),
            "failures": dict(sorted(self.failures.items())),
            "rejections": dict(sorted(self.rejections.items())),
            "reasks": self.reasks,
            "fallbacks": self.fallbacks,
            "picked": self.picked,
            "replaced": self.replaced,
        }


@dataclass
class Usage:
    """Running totals for one model (model_tokens = prompt + completion), and the same per stage."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: int = 0  # replies that could not be used, replaced by the extractive rule
    stages: dict[str, StageUse] = field(default_factory=dict)

    @property
    def model_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def stage(self, name: str) -> StageUse:
        return self.stages.setdefault(name, StageUse())

    def add(
        self,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        *,
        stage: str | None = None,
        seconds: float = 0.0,
    ) -> None:
        prompt_tokens, completion_tokens = max(0, int(prompt_tokens)), max(0, int(completion_tokens))
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        if stage is not None:
            use = self.stage(stage)
            use.calls += 1
            use.prompt_tokens += prompt_tokens
            use.completion_tokens += completion_tokens
            use.seconds += seconds

    def count(self, stage: str, kind: str, *, failure: bool) -> None:
        """One failure (a call that got no reply) or rejection (a reply not used) of `kind` in `stage`."""
        bucket = self.stage(stage).failures if failure else self.stage(stage).rejections
        bucket[kind] = bucket.get(kind, 0) + 1

    def fell_back(self, stage: str) -> None:
        self.fallbacks += 1
        self.stage(stage).fallbacks += 1

    def to_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_tokens": self.model_tokens,
            "fallbacks": self.fallbacks,
        }

    def per_stage(self) -> dict[str, dict[str, Any]]:
        return {name: use.to_dict() for name, use in self.stages.items()}


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
    """A claim as a model proposes it. `origin` says whose it is: "rule" (the extractive ranking's) or
    "model" (a model's pick: its quote copied by the tool, its text held to the quote). `spans`, one per
    evidence entry when known, is the sentence reference the quote was copied from (`SQ-01/SRC-02#p05.s2`)."""

    text: str
    evidence: list[tuple[str, str]]  # (source ref, verbatim quote)
    confidence: str = "medium"
    origin: str = "rule"
    spans: list[str | None] = field(default_factory=list)


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
    def select_judgements(
        self, brief: dict[str, Any], sq: dict[str, Any], candidates: list[dict[str, Any]]
    ) -> list[SelectionJudgement]: ...
    def consolidate(
        self,
        brief: dict[str, Any],
        sq: dict[str, Any],
        sources: list[SourceText],
        stated: Collection[str] = (),
    ) -> list[ClaimDraft]: ...
    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft: ...
    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]: ...
    def write(self, brief: dict[str, Any], sections: list[Section]) -> str: ...
