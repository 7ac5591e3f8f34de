"""`control` reads its signals from the artifacts, appends the loop log and updates run.json."""

from __future__ import annotations

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all

from research_engine import claims, controller, critic, decompose, runrecord, runstate
from research_engine.errors import CheckFailed
from research_engine.validate import validate_run

FACT_A = "The Freedonia grid operator counted 42 gigawatts of solar capacity in 2023."
FACT_B = "Freedonia's wind farms produced 12 terawatt hours of electricity in 2022."


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file)


def _two_questions(run):
    return (
        decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative"),
        decompose.add(run, "How much wind power does Freedonia produce?", "quantitative"),
    )


def test_current_cycle_is_one_before_the_first_control(run):
    assert runstate.current_cycle(run) == 1


def test_an_uncovered_sub_question_routes_supplement_gap_naming_it(run, httpserver):
    sq1, sq2 = _two_questions(run)
    grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    verify_all(run)
    signals = controller.read_signals(run)
    assert (signals.coverage, signals.confidence, signals.gap, signals.contradiction) == (0.5, 1.0, 1, 0)
    out = controller.control(run)
    assert (out["action"], out["targets"], out["cycle"]) == ("supplement-gap", [sq2], 1)
    assert runstate.current_cycle(run) == 2
    record = runrecord.read(run)
    assert record["cycles"] == 1 and record["status"] == "running"
    assert record["cycles_detail"][0]["action"] == "supplement-gap"
    assert (
        "1 of 2 sub-questions"
        in controller.load_loop_log(run)["cycles"][0]["signals"]["readings"]["coverage"]
    )


def test_full_support_stops_criterion_met_and_marks_the_run_stopped(run, httpserver):
    sq1, sq2 = _two_questions(run)
    grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    grounded_claim(run, httpserver, sq2, "/wind", FACT_B)
    verify_all(run)
    out = controller.control(run)
    assert (out["action"], out["stop_reason"]) == ("stop", "criterion-met")
    record = runrecord.read(run)
    assert (record["status"], record["stop_reason"]) == ("stopped", "criterion-met")
    with pytest.raises(CheckFailed) as exc:
        controller.control(run)
    assert exc.value.code == "run-stopped"
    assert validate_run(run).ok, validate_run(run).problems


def test_an_open_tension_is_a_contradiction_routed_to_re_research(run, httpserver):
    sq1, sq2 = _two_questions(run)
    a = grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    b = grounded_claim(run, httpserver, sq2, "/wind", FACT_B)
    verify_all(run)
    tension = claims.add_tension(run, [a, b], "the two figures use different years")
    out = controller.control(run)
    assert (out["action"], out["targets"]) == ("re-research", [tension])


def test_a_refused_claim_blocks_the_criterion_and_is_the_target(run, httpserver):
    sq1, _ = _two_questions(run)
    a = grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    verify_all(run, {a: "refuse"})
    out = controller.control(run)
    assert (out["action"], out["targets"]) == ("re-research", [a])
    assert out["signals"]["contradiction"] == 1


def test_material_gaps_feed_the_gap_signal_and_cosmetic_ones_do_not(run, httpserver):
    sq1, sq2 = _two_questions(run)
    grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    grounded_claim(run, httpserver, sq2, "/wind", FACT_B)
    verify_all(run)
    critic.add(run, "wording of the summary", "none", severity="cosmetic")
    assert controller.read_signals(run).gap == 0
    gap = critic.add(
        run, "no figure for rooftop solar", "Freedonia rooftop solar capacity", severity="material", sq=sq1
    )
    signals = controller.read_signals(run)
    assert (signals.gap, signals.material_gaps) == (1, (gap,))
    # a material gap alone does not block the criterion (coverage and confidence are met)
    assert controller.control(run)["stop_reason"] == "criterion-met"


def test_the_governor_stops_a_quick_run_after_one_cycle(brief_file, monkeypatch, httpserver):
    fast_verifier(monkeypatch)
    run = locked_private_run(brief_file, depth="quick")
    sq1, _ = _two_questions(run)
    grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    verify_all(run)
    out = controller.control(run)
    assert (out["action"], out["stop_reason"], out["governor"]["ceiling"]) == ("stop", "governor", 1)


def test_control_without_sub_questions_is_refused_and_logs_nothing(run):
    with pytest.raises(CheckFailed) as exc:
        controller.control(run)
    assert exc.value.code == "no-sub-questions"
    assert not run.path("loop_log").exists()


def test_validate_flags_a_loop_log_naming_a_refusal_no_contestation_holds(run, httpserver):
    sq1, _ = _two_questions(run)
    grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    verify_all(run)
    controller.control(run)
    log = controller.load_loop_log(run)
    log["cycles"][0]["signals"]["ids"]["refused_claims"] = ["CLM-01"]
    controller._write_loop_log(run, log)
    problems = [p.message for p in validate_run(run).problems]
    assert any("names CLM-01 as refused" in m for m in problems), problems


def test_control_refuses_while_recorded_verdicts_are_not_closed(run, httpserver):
    from research_engine import verify

    sq1, _ = _two_questions(run)
    clm = grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    verify.prepare(run)
    verify.record(run, clm, "supported", "quote matches")
    with pytest.raises(CheckFailed) as exc:
        controller.control(run)
    assert exc.value.code == "verification-not-closed"
    verify.close(run)
    assert controller.control(run)["cycle"] == 1
