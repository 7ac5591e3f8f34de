"""The control and critic commands at the CLI: envelopes, exit codes, gaps.md."""

from __future__ import annotations

from research_engine import controller, critic, decompose, trace


def _run(cli, brief_file):
    code, out, _, env = cli("brief", "lock", str(brief_file()), "--json")
    assert code == 0, out
    return env["data"]["run_root"]


def test_control_prints_the_decision_json(cli, brief_file):
    run = _run(cli, brief_file)
    decompose.add(trace.open_run(run), "How much solar capacity does Freedonia have?", "quantitative")
    code, _, _, env = cli("control", "--run", run, "--json")
    assert code == 0
    assert {k: env["data"][k] for k in ("action", "targets", "stop_reason", "cycle")} == {
        "action": "supplement-gap",
        "targets": ["SQ-01"],
        "stop_reason": None,
        "cycle": 1,
    }


def test_control_without_sub_questions_exits_1(cli, brief_file):
    run = _run(cli, brief_file)
    code, _, _, env = cli("control", "--run", run, "--json")
    assert code == 1 and env["errors"][0]["code"] == "no-sub-questions"


def test_control_on_an_unknown_run_exits_2(cli, tmp_path):
    code, _, _, env = cli("control", "--run", str(tmp_path / "nope"), "--json")
    assert code == 2


def test_critic_gap_add_and_close_round_trip(cli, brief_file):
    run = _run(cli, brief_file)
    r = trace.open_run(run)
    decompose.add(r, "How much solar capacity does Freedonia have?", "quantitative")
    code, _, _, env = cli(
        "critic",
        "gap",
        "add",
        "--run",
        run,
        "--about",
        "rooftop solar is missing",
        "--query",
        "Freedonia rooftop solar",
        "--sq",
        "SQ-01",
        "--material",
        "--json",
    )
    assert code == 0 and env["data"]["id"] == "G-01"
    assert [g["id"] for g in critic.open_material_gaps(r)] == ["G-01"]
    assert controller.read_signals(r).material_gaps == ("G-01",)
    code, _, _, _ = cli(
        "critic", "gap", "close", "G-01", "--run", run, "--why", "found in the register", "--json"
    )
    assert code == 0
    assert critic.open_material_gaps(r) == []
    assert "closed: found in the register" in r.path("gaps").read_text()
    code, _, _, env = cli("critic", "gap", "close", "G-01", "--run", run, "--why", "again", "--json")
    assert code == 1 and env["errors"][0]["code"] == "gap-closed"


def test_critic_gap_add_needs_a_severity_and_a_known_sub_question(cli, brief_file):
    run = _run(cli, brief_file)
    code, _, _, env = cli("critic", "gap", "add", "--run", run, "--about", "x y", "--query", "q", "--json")
    assert code == 2 and env["errors"][0]["field"] == "severity"
    code, _, _, env = cli(
        "critic",
        "gap",
        "add",
        "--run",
        run,
        "--about",
        "x y",
        "--query",
        "q",
        "--sq",
        "SQ-07",
        "--cosmetic",
        "--json",
    )
    assert code == 2 and "SQ-07" in env["errors"][0]["message"]


def test_gap_ids_are_never_reused(cli, brief_file):
    run = _run(cli, brief_file)
    r = trace.open_run(run)
    first = critic.add(r, "a", "q", severity="cosmetic")
    critic.close(r, first, "done")
    assert critic.add(r, "b", "q", severity="material") == "G-02"
