"""Coverage that sees answers: the critic's recorded judgement of which claims answer which sub-question
decides where it exists (controller/answers.md, schema `answers`); the lexical answer score decides where
nobody judged, and reads an explanation's claims together when none answers alone."""

from __future__ import annotations

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all

from research_engine import controller, coverage, critic, decompose
from research_engine.errors import BadInput
from research_engine.validate import validate_run

# A sub-question asking for an explanation whose answer the sources state one restriction at a time.
QUESTIONS = (
    "How do task groups run several coroutines at once in asyncio?",
    "What restrictions apply when a coroutine awaits inside a task group whose sibling task fails?",
    "How does a task group differ from asyncio.gather for error handling?",
)
RESTRICTIONS = (
    "A coroutine cannot add new tasks to a group once it has started shutting down.",
    "The exceptions of failed siblings are raised together as an ExceptionGroup after every task finished.",
    "Cancelling the sibling tasks happens before the group awaits their completion.",
)
OFF_TOPIC = "When one task of the group raises, the remaining tasks are cancelled."


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file)


def questions(run) -> list[str]:
    return [decompose.add(run, text, "technical") for text in QUESTIONS]


BY_ID = dict(zip(("SQ-01", "SQ-02", "SQ-03"), QUESTIONS, strict=True))


def supported(claims: list[dict]) -> dict[str, coverage.Reading]:
    return coverage.readings(BY_ID, claims, {})


def test_an_explanation_spread_over_several_claims_is_answered_by_them_together():
    claims = [{"id": f"CLM-0{i}", "sub_question": "SQ-02", "text": t} for i, t in enumerate(RESTRICTIONS, 1)]
    alone = {c["id"]: coverage.readings(BY_ID, [c], {}) for c in claims}
    assert not any(r[c].answers for c, r in alone.items()), "no claim answers alone"
    read = supported([*claims, {"id": "CLM-04", "sub_question": "SQ-02", "text": OFF_TOPIC}])
    assert [read[c["id"]].by for c in claims] == ["together"] * 3
    assert all(read[c["id"]].answers for c in claims)
    assert read["CLM-04"].answers is False and read["CLM-04"].by == "score"  # it carries none of the terms
    assert read["CLM-01"].basis.startswith("together with CLM-01, CLM-02, CLM-03: ")


def test_a_lookup_is_never_answered_by_claims_read_together():
    question = "How many worker threads does the default executor start?"
    claims = [
        {
            "id": "CLM-01",
            "sub_question": "SQ-01",
            "text": "The default executor starts worker threads lazily.",
        },
        {"id": "CLM-02", "sub_question": "SQ-01", "text": "Its pool holds at most 32 entries in a queue."},
    ]
    read = coverage.readings({"SQ-01": question}, claims, {})
    assert not any(r.answers for r in read.values())


def test_the_critics_judgement_decides_both_ways_and_a_later_claim_is_read_lexically(run, httpserver):
    sq1, sq2, sq3 = questions(run)
    first = grounded_claim(run, httpserver, sq2, "/restriction-1", RESTRICTIONS[0])
    second = grounded_claim(run, httpserver, sq1, "/group-runs", OFF_TOPIC)
    verify_all(run)
    before = controller.read_signals(run)
    assert first in before.unanswering_claims and sq2 in before.uncovered_sub_questions

    critic.record_answers(run, sq2, [first], "it names a restriction on a coroutine in a failing group")
    critic.record_answers(run, sq1, [], "it says what happens on failure, not how tasks run at once")
    judged = controller.read_signals(run)
    assert sq2 not in judged.uncovered_sub_questions and first not in judged.unanswering_claims
    assert sq1 in judged.uncovered_sub_questions and second in judged.unanswering_claims
    assert "judged by the critic" in judged.readings["coverage"]
    assert f"{first} critic: answers (cycle 1: it names a restriction" in judged.readings["relevance"]
    assert validate_run(run).ok, validate_run(run).problems


def test_a_judged_claim_counts_only_while_it_is_supported(run, httpserver):
    _, sq2, _ = questions(run)
    clm = grounded_claim(run, httpserver, sq2, "/restriction-1", RESTRICTIONS[0])
    critic.record_answers(run, sq2, [clm], "it states the restriction")
    verify_all(run, {clm: "refuse"})
    signals = controller.read_signals(run)
    assert sq2 in signals.uncovered_sub_questions and clm in signals.refused_claims


def test_a_judgement_names_only_active_claims_of_its_sub_question(run, httpserver):
    sq1, sq2, _ = questions(run)
    clm = grounded_claim(run, httpserver, sq1, "/group-runs", OFF_TOPIC)
    with pytest.raises(BadInput) as caught:
        critic.record_answers(run, sq2, [clm], "x")
    assert caught.value.code == "unknown-claim" and "its active claims: none" in caught.value.message
    with pytest.raises(BadInput):
        critic.record_answers(run, sq1, [clm], "  ")


def test_critic_answers_on_the_command_line(cli, run, httpserver):
    sq1, *_ = questions(run)
    clm = grounded_claim(run, httpserver, sq1, "/group-runs", OFF_TOPIC)
    code, _, _, env = cli(
        "critic", "answers", sq1, "--run", run.root, "--claims", clm, "--why", "it does", "--json"
    )
    assert code == 0 and env["data"]["answering"] == [clm] and env["data"]["considered"] == [clm]
    code, _, _, env = cli(
        "critic", "answers", sq1, "--run", run.root, "--none", "--why", "it does not", "--json"
    )
    assert code == 0 and env["data"]["answering"] == []
    code, _, _, env = cli("critic", "answers", sq1, "--run", run.root, "--why", "neither", "--json")
    assert code == 2
    assert (run.root / "controller" / "answers.md").read_text().count("**SQ-01**") == 2
