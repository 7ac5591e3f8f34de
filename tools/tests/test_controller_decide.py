"""The controller's pure decision: criterion first, then the governor, then the ladder (property tests)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from research_engine.controller import POLICY, Signals, decide

CRIT = POLICY["criterion"]


def ids(prefix: str) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.integers(1, 40).map(lambda n: f"{prefix}-{n:02d}"), max_size=4, unique=True).map(tuple)


shares = st.floats(0.0, 1.0, allow_nan=False)
signals_strategy = st.builds(
    Signals,
    coverage=shares,
    confidence=shares,
    gap=st.integers(0, 6),
    contradiction=st.integers(0, 6),
    refused_claims=ids("CLM"),
    open_tensions=ids("T"),
    uncovered_sub_questions=ids("SQ"),
    material_gaps=ids("G"),
    unsupported_claims=ids("CLM"),
)
budget_names = st.sampled_from(POLICY["run_budgets"] + ("sources_per_sub_question",))
budgets_strategy = st.one_of(
    st.none(),
    st.builds(
        lambda limits, spent: {"set": limits, "spent": spent},
        st.dictionaries(budget_names, st.integers(1, 100), max_size=4),
        st.dictionaries(budget_names, st.integers(0, 150), max_size=4),
    ),
)


def expected(signals: Signals, cycle: int, ceiling: int, budgets: dict | None) -> tuple[str, str | None]:
    """The documented order, restated independently of the implementation."""
    if (
        signals.coverage >= CRIT["coverage_min"]
        and signals.confidence >= CRIT["confidence_min"]
        and signals.contradiction <= CRIT["contradiction_max"]
    ):
        return "stop", "criterion-met"
    if cycle >= ceiling:
        return "stop", "governor"
    for name in POLICY["run_budgets"]:
        limit = (budgets or {}).get("set", {}).get(name)
        used = (budgets or {}).get("spent", {}).get(name)
        if limit is not None and used is not None and used >= limit:
            return "stop", f"budget:{name}"
    rungs = [
        ("re-research", signals.contradiction > 0, signals.refused_claims + signals.open_tensions),
        ("supplement-gap", signals.gap > 0, signals.uncovered_sub_questions + signals.material_gaps),
        ("go-deeper", signals.coverage < CRIT["coverage_min"], signals.uncovered_sub_questions),
        ("re-retrieve", signals.confidence < CRIT["confidence_min"], signals.unsupported_claims),
    ]
    for action, fires, targets in rungs:
        if fires and targets:
            return action, None
    return "stop", "stalled"


@settings(max_examples=400, deadline=None)
@given(signals_strategy, st.integers(1, 5), st.integers(1, 3), budgets_strategy)
def test_decision_follows_the_documented_order(signals, cycle, ceiling, budgets):
    decision = decide(signals, cycle, ceiling, budgets)
    assert (decision.action, decision.stop_reason) == expected(signals, cycle, ceiling, budgets)


@settings(max_examples=300, deadline=None)
@given(signals_strategy, st.integers(1, 5), st.integers(1, 3), budgets_strategy)
def test_every_remediation_names_targets_from_its_own_rung(signals, cycle, ceiling, budgets):
    decision = decide(signals, cycle, ceiling, budgets)
    if decision.action == "stop":
        assert decision.targets == () and decision.stop_reason
    else:
        assert decision.targets and decision.stop_reason is None
        own = {
            "re-research": signals.refused_claims + signals.open_tensions,
            "supplement-gap": signals.uncovered_sub_questions + signals.material_gaps,
            "go-deeper": signals.uncovered_sub_questions,
            "re-retrieve": signals.unsupported_claims,
        }[decision.action]
        assert decision.targets == own


@settings(max_examples=200, deadline=None)
@given(signals_strategy, st.integers(1, 3))
def test_criterion_met_wins_over_the_governor_at_the_ceiling(signals, ceiling):
    met = Signals(
        coverage=max(signals.coverage, CRIT["coverage_min"]),
        confidence=max(signals.confidence, CRIT["confidence_min"]),
        gap=signals.gap,
        contradiction=0,
    )
    spent = {"set": {"provider_calls": 1}, "spent": {"provider_calls": 5}}
    decision = decide(met, ceiling, ceiling, spent)
    assert (decision.action, decision.stop_reason) == ("stop", "criterion-met")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(signals_strategy, min_size=1, max_size=8), st.sampled_from(sorted(POLICY["ceilings"].values()))
)
def test_no_sequence_of_cycles_exceeds_the_ceiling(sequence, ceiling):
    cycles_run = 0
    for cycle, signals in enumerate(sequence * 3, 1):  # more cycles offered than any ceiling allows
        cycles_run = cycle
        if decide(signals, cycle, ceiling).action == "stop":
            break
    assert cycles_run <= ceiling


def test_thresholds_are_inclusive_at_the_boundary():
    at_boundary = Signals(
        coverage=CRIT["coverage_min"], confidence=CRIT["confidence_min"], gap=0, contradiction=0
    )
    assert decide(at_boundary, 1, 2).stop_reason == "criterion-met"


def test_a_single_standing_refusal_blocks_the_criterion_and_routes_re_research():
    signals = Signals(coverage=1.0, confidence=1.0, gap=0, contradiction=1, refused_claims=("CLM-03",))
    decision = decide(signals, 1, 2)
    assert (decision.action, decision.targets) == ("re-research", ("CLM-03",))


def test_a_rung_without_targets_falls_through_to_the_next():
    signals = Signals(coverage=0.5, confidence=0.2, gap=2, contradiction=0, unsupported_claims=("CLM-01",))
    decision = decide(signals, 1, 3)
    assert decision.action == "re-retrieve"
    assert decision.skipped == ("supplement-gap", "go-deeper")


def test_no_rung_with_targets_stops_the_run_as_stalled():
    decision = decide(Signals(coverage=0.0, confidence=0.0, gap=0, contradiction=0), 1, 3)
    assert (decision.action, decision.stop_reason) == ("stop", "stalled")


def test_a_spent_run_budget_stops_with_its_name_but_a_per_question_cap_does_not():
    signals = Signals(
        coverage=0.0, confidence=0.0, gap=1, contradiction=0, uncovered_sub_questions=("SQ-01",)
    )
    spent = {
        "set": {"fetched_bytes": 100, "sources_per_sub_question": 2},
        "spent": {"fetched_bytes": 100, "sources_per_sub_question": 9},
    }
    assert decide(signals, 1, 3, spent).stop_reason == "budget:fetched_bytes"
    cap_only = {"set": {"sources_per_sub_question": 2}, "spent": {"sources_per_sub_question": 9}}
    assert decide(signals, 1, 3, cap_only).action == "supplement-gap"


def test_the_ceiling_is_checked_before_budgets():
    signals = Signals(
        coverage=0.0, confidence=0.0, gap=1, contradiction=0, uncovered_sub_questions=("SQ-01",)
    )
    spent = {"set": {"model_tokens": 1}, "spent": {"model_tokens": 1}}
    assert decide(signals, 2, 2, spent).stop_reason == "governor"


def test_ceilings_follow_depth():
    assert POLICY["ceilings"] == {"quick": 1, "standard": 2, "deep": 3}
