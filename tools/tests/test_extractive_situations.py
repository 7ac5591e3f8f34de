"""What of a stated situation a planned question leans on (`engine.extractive.situations`)."""

from __future__ import annotations

from research_engine.engine.extractive.situations import in_sentence, situation_referent


def test_one_stands_for_what_the_situation_names_with_a():
    situation = "my editor uses clangd and wants a compile_commands.json file"
    assert situation_referent("How do I get CMake to write one", situation) == "a compile_commands.json file"
    assert situation_referent("How do I make one", "I need a custom lexer") == "a custom lexer"


def test_which_one_and_the_one_are_no_stand_ins():
    assert situation_referent("Which one should I pick", "I have two databases") == ""
    assert situation_referent("Is the one I have enough", "I have a license") == ""


def test_a_statement_written_on_inside_a_question_reads_as_one_sentence():
    assert in_sentence("Nightly builds fail on the new runner") == "nightly builds fail on the new runner"
    assert in_sentence("Since upgrading, the log is empty") == "since upgrading, the log is empty"
    joined = "my cron job runs twice, and it sends two mails"
    assert in_sentence("My cron job runs twice. It sends two mails") == joined
    assert in_sentence("Multi-threaded dumps hang") == "multi-threaded dumps hang"
    # A name stays as written: a word no dictionary has, one written with a dot, "I", one capitalised again.
    assert in_sentence("Postfix rejects every message") == "Postfix rejects every message"
    assert in_sentence("Coverage.py misses lines") == "Coverage.py misses lines"
    assert in_sentence("I moved the repository") == "I moved the repository"
    assert in_sentence("Apache starts, but Apache logs nothing") == "Apache starts, but Apache logs nothing"


def test_questions_after_a_situation_each_carry_it_and_read_as_written():
    from research_engine.engine.extractive.plan import plan_of

    texts = [
        p.text
        for p in plan_of(
            {
                "objective": "Every night the backup job copies the whole disk again. Is the cache broken? "
                "Why does this happen and how do I make the job copy only what changed?",
                "recency": "any",
            }
        )
    ]
    situation = "every night the backup job copies the whole disk again"
    assert texts[:3] == [
        f"Is the cache broken, given that {situation}?",
        f"Why does this happen, given that {situation}?",
        f"How do I make the job copy only what changed, given that {situation}?",
    ]
    # A bare "why?" asks the statement itself.
    assert (
        plan_of({"objective": "I build in a container, and every build downloads all the crates. Why?"})[
            0
        ].text
        == "Why is it that I build in a container, and every build downloads all the crates?"
    )
