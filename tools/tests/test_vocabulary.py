"""Each closed set of names is defined once (research_engine.vocabulary) and equals the schemas' enums."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import pytest
import yaml

from research_engine import vocabulary as v
from research_engine.artifacts import render_markdown
from research_engine.schemas import schema_dir


def _enum_at(schema: str, pointer: str) -> list[Any]:
    """The `enum` list at `pointer` (slash-separated keys) in schema/<schema>.schema.json."""
    node: Any = json.loads((schema_dir() / f"{schema}.schema.json").read_text(encoding="utf-8"))
    for key in pointer.split("/"):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return list(node["enum"])


def _named(values: list[Any]) -> list[Any]:
    return [x for x in values if x is not None]  # `null` in a schema enum means "optional", not a name


# (enum, schema, pointer to the property holding the enum, extra members the schema allows)
CASES = [
    (v.Depth, "brief", "properties/depth", []),
    (v.Depth, "run", "properties/depth", []),
    (v.ClaimType, "brief", "properties/claim_types/items", []),
    (v.ClaimType, "sub-questions", "properties/sub_questions/items/properties/claim_type", []),
    (v.ClaimType, "selection", "properties/claim_type", []),
    (v.Angle, "sub-questions", "properties/sub_questions/items/properties/angle", []),
    (v.Reproducibility, "brief", "properties/reproducibility", []),
    (v.Reproducibility, "result", "$defs/label", ["no-sources"]),
    (v.Reproducibility, "run", "properties/reproducibility/properties/label", ["pending", "no-sources"]),
    (v.RunStatus, "run", "properties/status", []),
    (v.Verdict, "contestation", "$defs/verdict", []),
    (v.Verdict, "worksheet", "$defs/verdict", []),
    (v.Confidence, "claims", "properties/claims/items/properties/confidence", []),
    (v.ClaimStatus, "claims", "properties/claims/items/properties/status", []),
    (v.TensionStatus, "claims", "properties/tensions/items/properties/status", []),
    (v.QuoteMatch, "claims", "properties/claims/items/properties/evidence/items/properties/match", []),
    (v.QuoteMatch, "worksheet", "$defs/entry/properties/match", []),
    (v.GapSeverity, "gaps", "properties/gaps/items/properties/severity", []),
    (v.GapStatus, "gaps", "properties/gaps/items/properties/status", []),
    (v.Action, "loop-log", "properties/cycles/items/properties/decision/properties/action", []),
    (v.SourceKind, "source", "properties/kind", []),
    (v.CandidateKind, "candidates", "items/properties/kind", []),
    (v.CandidateKind, "candidate-log", "$defs/candidate/properties/kind", []),
    (v.CandidateKind, "selection", "properties/rounds/items/properties/candidates/items/properties/kind", []),
    (v.AccessTier, "source", "properties/access_tier", []),
    (v.AccessTier, "run", "properties/sources/items/properties/access_tier", []),
    (v.AccessTier, "candidates", "items/properties/access_tier", []),
    (v.SourceType, "candidates", "items/properties/source_type", []),
    (v.Backend, "candidate-log", "$defs/candidate/properties/backend", []),
    (v.GatherCommand, "candidate-log", "properties/queries/items/properties/command", []),
    (
        v.ChainOutcome,
        "candidate-log",
        "properties/queries/items/properties/chain/items/properties/outcome",
        [],
    ),
    (v.SelectionHint, "candidates", "items/properties/verdict_hint", []),
    (
        v.SelectionVerdict,
        "selection",
        "properties/rounds/items/properties/candidates/items/properties/verdict",
        [],
    ),
]


@pytest.mark.parametrize(
    "enum, schema, pointer, extra", CASES, ids=[f"{c[0].__name__}-{c[1]}" for c in CASES]
)
def test_each_enum_equals_the_schema_enum_in_order(enum, schema, pointer, extra):
    assert _named(_enum_at(schema, pointer)) == [*list(enum), *extra]


def test_the_skipped_rungs_are_the_actions_after_stop():
    skipped = _enum_at("loop-log", "properties/cycles/items/properties/decision/properties/skipped/items")
    assert skipped == [a for a in v.Action if a != v.Action.STOP]


def test_verdicts_are_ordered_strictest_first_and_a_floor_only_tightens():
    assert list(v.Verdict) == ["refuse", "partial", "supported"]
    assert v.stricter_or_equal("refuse", "partial") and v.stricter_or_equal("partial", "partial")
    assert not v.stricter_or_equal("supported", "partial")


def test_every_depth_has_a_cycle_ceiling_and_deeper_means_more_cycles():
    assert [v.CYCLE_CEILING[d] for d in v.Depth] == [1, 2, 3]


def test_a_budget_stop_names_a_known_budget():
    assert v.budget_stop("model_tokens") == "budget:model_tokens"
    with pytest.raises(ValueError):
        v.budget_stop("coffee")


def test_members_are_their_words_in_json_and_in_artifacts():
    assert json.dumps({"v": v.Verdict.REFUSE}) == '{"v": "refuse"}'
    front = render_markdown({"verdict": v.Verdict.REFUSE, "kind": v.SourceKind.WEB}, "body")
    assert yaml.safe_load(front.split("---")[1]) == {"verdict": "refuse", "kind": "web"}


def test_no_module_outside_the_vocabulary_spells_out_a_closed_set():
    """A literal tuple of a vocabulary's words anywhere else in the package is a second definition."""
    import ast
    from pathlib import Path

    package = Path(v.__file__).parent
    sets = [frozenset(member.value for member in enum) for enum in _all_enums()]
    offenders = []
    for path in package.rglob("*.py"):
        # The compiled validators repeat the schemas' enums by construction (test_compiled_schemas keeps them
        # in step with schema/, and this module's first test keeps schema/ in step with the vocabulary).
        if path.name == "vocabulary.py" or path.parent.name == "_validators":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 3:
                words = [
                    e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                if len(words) == len(node.elts) and frozenset(words) in sets:
                    offenders.append(f"{path.relative_to(package)}:{node.lineno} {words}")
    assert not offenders, offenders


def _all_enums() -> list[type[StrEnum]]:
    return [
        value
        for value in vars(v).values()
        if isinstance(value, type) and issubclass(value, StrEnum) and value is not StrEnum
    ]
