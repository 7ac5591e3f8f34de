"""The registry of models: each name a headless run accepts, and how it is built.

`make_model("extractive" | "openai[:NAME]" | "scripted", ...)`: the embedded extractive model (the default;
no LLM), any OpenAI-compatible endpoint configured by `Settings`, or the scripted model tests use. The
interface they share is `engine.models`; the run reaches a model only through these two modules (an
import-linter contract in pyproject.toml), so a new model is one entry in `BUILDERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from research_engine.engine.extractive import ExtractiveModel
from research_engine.engine.models import Model
from research_engine.engine.openai import OpenAIModel, configured_endpoint
from research_engine.engine.scripted import ScriptedModel
from research_engine.errors import BadInput
from research_engine.settings import Settings


def _openai(name: str, settings: Settings | None, **kw: Any) -> Model:
    if ":" in name and "model" not in kw:
        kw["model"] = name.split(":", 1)[1]
    return OpenAIModel.from_settings(settings or Settings(), **kw)


BUILDERS: dict[str, Callable[..., Model]] = {
    "extractive": lambda name, settings, **kw: ExtractiveModel(**kw),
    "openai": _openai,
    "scripted": lambda name, settings, **kw: ScriptedModel(**kw),
}
MODEL_KINDS: tuple[str, ...] = tuple(BUILDERS)
DEFAULT_MODEL = "extractive"


def model_kind(name: str | None) -> str:
    """The registry name of "openai:NAME" and the like; BadInput for a name not in the registry."""
    kind = (name or DEFAULT_MODEL).split(":", 1)[0]
    if kind not in BUILDERS:
        raise BadInput(
            f"unknown model {name!r}; expected one of {', '.join(MODEL_KINDS)}",
            code="bad-model",
            field="model",
        )
    return kind


def check_configured(name: str, settings: Settings) -> None:
    """NotConfigured when the model named needs settings that are missing ("openai:NAME" names the model).

    The engine calls this before it locks a brief, so a missing setting never leaves an empty run behind.
    """
    if (name or DEFAULT_MODEL).split(":", 1)[0] == "openai":
        configured_endpoint(settings, model=name.partition(":")[2] or None)


def make_model(name: str = DEFAULT_MODEL, *, settings: Settings | None = None, **kw: Any) -> Model:
    """Build a model by name: "extractive" (default), "openai[:NAME]" (from the settings) or "scripted".

    `openai` takes `client=` (a `net.HttpClient`, so calls land in the cassette), or builds its own; see
    `engine.openai.OpenAIModel.from_settings`.
    """
    return BUILDERS[model_kind(name)](name or DEFAULT_MODEL, settings, **kw)


def rule_model() -> Model:
    """The extractive rule on its own: what a dry run plans with and what answers after a budget stop."""
    return ExtractiveModel()


def is_rule_model(model: Any) -> bool:
    return isinstance(model, ExtractiveModel)
