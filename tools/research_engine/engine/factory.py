"""Choosing the model that supplies a headless run's judgement, by name.

`make_model("extractive" | "openai[:NAME]" | "scripted", ...)`: the embedded extractive model
(the default; no LLM), any OpenAI-compatible endpoint configured by `Settings`, or the scripted
model tests use. The interface they share is `engine.models`.
"""

from __future__ import annotations

from typing import Any

from research_engine.engine.extractive import ExtractiveModel
from research_engine.engine.models import Model
from research_engine.engine.openai_model import OpenAIModel
from research_engine.engine.scripted import ScriptedModel
from research_engine.errors import BadInput
from research_engine.settings import Settings

MODEL_KINDS = ("extractive", "openai", "scripted")


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
