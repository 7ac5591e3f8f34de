"""Which stages the model does and which the extractive rule does instead, by measurement.

A stage whose model output bench/real_model.py measured worse than the rule with a given model is not asked
of that model: its tokens would buy a worse run. `MEASURED` names those stages per model (the name the
server serves it under, RESEARCH_ENGINE_MODEL) with the measurement that decided it;
RESEARCH_ENGINE_MODEL_RULE_STAGES ("select,write", or "none") overrides it for any model. The choice is
recorded in run.json (`model.stages`) and stated in the deliverable's footer. Pure.
"""

from __future__ import annotations

from research_engine.errors import BadInput
from research_engine.vocabulary import ModelStage

# model name -> {stage: why the rule does it}; from bench/results/ (bench/results/real-model-picks.md).
MEASURED: dict[str, dict[str, str]] = {
    "qwen2.5-coder-0.5b-instruct": {
        "decompose": "measured worse: six sub-questions for a one-fact objective, each with an invented "
        "expected answer, multiplying every later stage's calls (bench/results/real-model-picks.md)",
    },
}


def stage_choice(model: str, setting: str | None = None) -> dict[str, str]:
    """{stage: "model" | "rule"} for every stage, and {stage: why} for those the rule does."""
    return {str(stage): "rule" if stage in rule_stages(model, setting) else "model" for stage in ModelStage}


def rule_stages(model: str, setting: str | None = None) -> dict[str, str]:
    """The stages the extractive rule does for `model`, each with why (the setting's, else the measured)."""
    if setting is None:
        return dict(MEASURED.get(model, {}))
    named = [s.strip() for s in setting.split(",") if s.strip()]
    if named == ["none"]:
        return {}
    unknown = [s for s in named if s not in tuple(ModelStage)]
    if unknown:
        raise BadInput(
            f"RESEARCH_ENGINE_MODEL_RULE_STAGES names no stage {', '.join(unknown)}; stages: "
            f"{', '.join(ModelStage)} (or none)",
            code="bad-setting",
            field="RESEARCH_ENGINE_MODEL_RULE_STAGES",
        )
    return {s: "RESEARCH_ENGINE_MODEL_RULE_STAGES" for s in named}
