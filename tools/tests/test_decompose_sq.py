"""decompose: `sq add` / `sq list` and sub-questions.md."""

from __future__ import annotations

from research_engine import decompose
from research_engine.artifacts import read_markdown
from research_engine.schemas import validate


def test_sq_add_allocates_ids_in_order_and_writes_a_valid_file(locked_run, cli):
    code, out, _, env = cli(
        "sq",
        "add",
        "--run",
        locked_run.root,
        "--type",
        "quantitative",
        "--angle",
        "time",
        "--answers",
        "a yearly series 2015-2024",
        "How many households were covered?",
        "--json",
    )
    assert code == 0 and env["data"]["id"] == "SQ-01"
    code, out, _, _ = cli("sq", "add", "--run", locked_run.root, "--type", "regulatory", "Which law applies?")
    assert code == 0 and out.strip() == "SQ-02"
    meta, body = read_markdown(locked_run.path("sub_questions"))
    assert validate(meta, "sub-questions") == []
    first = meta["sub_questions"][0]
    assert (first["id"], first["claim_type"], first["angle"], first["answers"], first["cycle"]) == (
        "SQ-01",
        "quantitative",
        "time",
        "a yearly series 2015-2024",
        1,
    )
    assert "## SQ-02 (regulatory; cycle 1)" in body and "Which law applies?" in body


def test_sq_add_rejects_an_unknown_claim_type_with_exit_2(locked_run, cli):
    code, _, _, env = cli("sq", "add", "--run", locked_run.root, "--type", "vibes", "Anything?", "--json")
    assert code == 2 and env["errors"][0]["code"] == "bad-claim-type"
    assert not locked_run.path("sub_questions").exists()


def test_sq_add_rejects_an_unknown_angle(locked_run, cli):
    code, _, _, env = cli(
        "sq",
        "add",
        "--run",
        locked_run.root,
        "--type",
        "factual",
        "--angle",
        "sideways",
        "Anything?",
        "--json",
    )
    assert code == 2 and env["errors"][0]["code"] == "bad-angle"


def test_sq_list_shows_every_sub_question(locked_run, cli):
    decompose.add(locked_run, "First question?", "factual")
    decompose.add(locked_run, "Second question?", "technical", angle="counter")
    code, out, _, _ = cli("sq", "list", "--run", locked_run.root)
    assert code == 0
    assert out.splitlines() == [
        "SQ-01  [factual]  First question?",
        "SQ-02  [technical/counter]  Second question?",
    ]
    _, _, _, env = cli("sq", "list", "--run", locked_run.root, "--json")
    assert [q["id"] for q in env["data"]["sub_questions"]] == ["SQ-01", "SQ-02"]


def test_sub_question_cycle_follows_the_loop_log(locked_run):
    from research_engine.artifacts import write_markdown

    write_markdown(locked_run.path("loop_log"), {"schema_version": 1, "cycles": [{"cycle": 1}]}, "log")
    sq = decompose.add(locked_run, "Asked in the second cycle?", "factual")
    assert decompose.get(locked_run, sq)["cycle"] == 2


def test_validate_flags_a_hand_edited_sub_questions_file(locked_run, cli):
    decompose.add(locked_run, "A question?", "factual")
    path = locked_run.path("sub_questions")
    path.write_text(path.read_text().replace("claim_type: factual", "claim_type: gossip"))
    code, _, _, env = cli("validate", locked_run.root, "--json")
    assert code == 1
    assert any("sub-questions.md" in (p.get("file") or "") for p in env["errors"])
