"""Scratch inputs on stdin (`-`): the brief, the candidates, the deliverable.

An agent passes them in a quoted heredoc inside its one `research-engine` Bash call, so it needs no Write
tool and writes nothing outside the run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all
from typer.testing import CliRunner

from research_engine import brief, controller, decompose, trace
from research_engine.cli import app


def invoke(args: list[str], stdin: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [str(a) for a in args], input=stdin, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout.strip().splitlines()[-1])


def test_brief_check_reads_front_matter_from_stdin_and_asks_for_what_is_missing():
    code, env = invoke(["brief", "check", "-", "--json"], "---\nobjective: How do tides work?\n---\n")
    assert code == 2
    assert {q["field"] for q in env["data"]["questions"]} >= {"deliverable", "output_path"}


def test_brief_check_reads_a_bare_yaml_mapping_from_stdin(tmp_path):
    text = f"objective: How do tides work?\ndeliverable: a memo\noutput_path: {tmp_path}\n"
    code, env = invoke(["brief", "check", "-", "--json"], text)
    assert code == 0 and env["data"]["source_format"] == "yaml"
    assert env["data"]["fields"]["deliverable"] == "a memo"


def test_a_plain_request_on_stdin_is_the_objective():
    code, env = invoke(["brief", "check", "-", "--json"], "How do tides work, and why twice a day?\n")
    assert code == 2 and env["data"]["fields"]["objective"].startswith("How do tides work")


def test_brief_lock_from_stdin_starts_a_run_anywhere(tmp_path):
    out = tmp_path / "elsewhere"
    text = f"---\nobjective: How do tides work?\ndeliverable: a memo\noutput_path: {out}\n---\n"
    code, env = invoke(["brief", "lock", "-", "--json"], text)
    assert code == 0
    root = env["data"]["run_root"]
    assert root.startswith(str(out))
    assert brief.load_locked(root)["locked"]["source_file"] == "(stdin)"


def test_select_log_reads_the_candidates_from_stdin(brief_file):
    run = trace.open_run(brief.lock(brief_file()).run_root)
    decompose.add(run, "How many households were covered in 2023?", "quantitative")
    candidates = [
        {
            "url": "https://stats.example.org/households-covered-2023",
            "title": "Households covered in 2023",
            "snippet": "How many households were covered in 2023: the register's count.",
            "source_type": "data",
            "reason": "the register",
        }
    ]
    code, env = invoke(
        [
            "select",
            "log",
            "--run",
            run.root,
            "--sq",
            "SQ-01",
            "--candidates",
            "-",
            "--as-of",
            "2025-06-01",
            "--json",
        ],
        json.dumps(candidates),
    )
    assert code == 0 and env["data"]["chosen"][0]["url"].endswith("/households-covered-2023")


def test_select_log_refuses_unreadable_candidates_on_stdin(brief_file):
    run = trace.open_run(brief.lock(brief_file()).run_root)
    decompose.add(run, "How many households were covered in 2023?", "quantitative")
    code, env = invoke(
        ["select", "log", "--run", run.root, "--sq", "SQ-01", "--candidates", "-", "--json"], "[{"
    )
    assert code == 2 and env["errors"][0]["code"] == "unreadable-candidates"


@pytest.fixture
def stopped_run(brief_file, monkeypatch, httpserver):
    fast_verifier(monkeypatch)
    run = locked_private_run(brief_file, depth="quick")
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    grounded_claim(run, httpserver, sq, "/solar", "The grid operator counted 42 gigawatts of solar in 2023.")
    verify_all(run)
    controller.control(run)
    return run


def test_report_check_and_finish_read_the_deliverable_from_stdin(stopped_run):
    draft = "# Solar\n\nThe grid operator counted 42 gigawatts of solar in 2023 (CLM-01).\n"
    code, env = invoke(["report", "check", "-", "--run", stopped_run.root, "--json"], draft)
    assert code == 0 and env["data"]["cited_claims"] == ["CLM-01"]
    code, env = invoke(["report", "finish", "-", "--run", stopped_run.root, "--json"], draft)
    assert code == 0
    assert "42 gigawatts" in stopped_run.path("result").read_text(encoding="utf-8")


def test_report_check_on_stdin_names_stdin_in_its_problems(stopped_run):
    code, env = invoke(
        ["report", "check", "-", "--run", stopped_run.root, "--json"], "# Solar\n\nIt is 42.\n"
    )
    assert code == 1 and {e.get("file") for e in env["errors"]} == {"(stdin)"}


def test_a_quoted_heredoc_reaches_the_real_console_script_unexpanded(tmp_path):
    """What the agent actually runs: one shell command, its input in a quoted heredoc (no expansion)."""
    script = (
        f"{sys.executable} -m research_engine brief check - --json <<'EOF'\n"
        "---\nobjective: What does $HOME cost, and `date`?\n---\nEOF\n"
    )
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    env = json.loads(done.stdout.strip().splitlines()[-1])
    assert env["data"]["fields"]["objective"] == "What does $HOME cost, and `date`?"


def test_select_log_reads_a_yaml_list_of_candidates_from_stdin(brief_file):
    """What an agent passes in a heredoc (Claude Code refuses a Bash command holding braces with quotes)."""
    run = trace.open_run(brief.lock(brief_file()).run_root)
    decompose.add(run, "How many households were covered in 2023?", "quantitative")
    listed = (
        "- url: https://stats.example.org/households-covered-2023\n"
        "  title: 'Households covered in 2023: the register'\n"
        "  snippet: How many households were covered in 2023, by region.\n"
        "  published: 2024-03-01\n"
        "  source_type: data\n"
        "  reason: the register itself\n"
    )
    code, env = invoke(
        ["select", "log", "--run", run.root, "--sq", "SQ-01", "--candidates", "-", "--json"], listed
    )
    assert code == 0, env
    assert env["data"]["chosen"][0]["url"].endswith("/households-covered-2023")


def test_select_log_refuses_candidates_that_are_neither_json_nor_yaml(brief_file):
    run = trace.open_run(brief.lock(brief_file()).run_root)
    decompose.add(run, "How many households were covered in 2023?", "quantitative")
    code, env = invoke(
        ["select", "log", "--run", run.root, "--sq", "SQ-01", "--candidates", "-", "--json"], "- a: [\n"
    )
    assert code == 2 and env["errors"][0]["field"] == "candidates"
