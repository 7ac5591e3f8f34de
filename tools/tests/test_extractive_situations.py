"""What of a stated situation a planned question leans on (`engine.extractive.situations`)."""

from __future__ import annotations

from research_engine.engine.extractive.situations import situation_referent


def test_one_stands_for_what_the_situation_names_with_a():
    situation = "my editor uses clangd and wants a compile_commands.json file"
    assert situation_referent("How do I get CMake to write one", situation) == "a compile_commands.json file"
    assert situation_referent("How do I make one", "I need a custom lexer") == "a custom lexer"


def test_which_one_and_the_one_are_no_stand_ins():
    assert situation_referent("Which one should I pick", "I have two databases") == ""
    assert situation_referent("Is the one I have enough", "I have a license") == ""
