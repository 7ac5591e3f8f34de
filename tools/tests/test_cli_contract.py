"""The CLI contract: one JSON envelope, documented exit codes, text by default, no tracebacks."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from research_engine import __version__
from research_engine.errors import ExitCode

ENVELOPE_KEYS = {"schema_version", "command", "ok", "exit_code", "data", "errors", "warnings"}


def test_version_prints_the_version(cli):
    code, out, _, _ = cli("--version")
    assert code == 0 and out.strip() == f"research-engine {__version__}"


def test_envelope_shape_on_success(cli, brief_file):
    code, _, _, env = cli("brief", "check", brief_file(), "--json")
    assert code == 0
    assert set(env) == ENVELOPE_KEYS
    assert env["schema_version"] == 1 and env["command"] == "brief check" and env["ok"] is True
    assert env["errors"] == []


def test_envelope_shape_on_failure_names_fields(cli, tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text("deliverable: memo\noutput_path: runs\ndepth: extreme\n")
    code, _, _, env = cli("brief", "check", path, "--json")
    assert code == ExitCode.BAD_INPUT == 2
    assert env["ok"] is False and env["exit_code"] == 2
    assert {e["field"] for e in env["errors"]} >= {"objective", "depth"}
    assert all({"code", "message"} <= set(e) for e in env["errors"])


def test_brief_lock_prints_run_root_and_json_data(cli, brief_file):
    code, out, _, _ = cli("brief", "lock", brief_file())
    assert code == 0
    from pathlib import Path

    assert Path(out.strip()).is_dir()
    code, _, _, env = cli("brief", "lock", brief_file(), "--json")
    assert code == 0 and {"run_root", "run_id"} <= set(env["data"])


def test_unknown_run_is_bad_input_not_a_traceback(cli, tmp_path):
    code, out, err, env = cli("validate", tmp_path / "nope", "--json")
    assert code == 2
    assert env["errors"][0]["code"] == "unknown-run"
    assert "Traceback" not in out + err


def test_errors_go_to_stderr_in_text_mode(cli, tmp_path):
    code, out, err, _ = cli("ids", "next", "--run", tmp_path / "nope", "clm")
    assert code == 2 and out == "" and "error:" in err


def test_ids_next_prints_the_new_id(cli, locked_run):
    from research_engine import decompose

    code, out, _, _ = cli("ids", "next", "--run", locked_run.root, "clm")
    assert code == 0 and out.strip() == "CLM-01"
    decompose.add(locked_run, "First?", "factual")
    decompose.add(locked_run, "Second?", "factual")
    code, _, _, env = cli("ids", "next", "--run", locked_run.root, "src", "--sq", "SQ-02", "--json")
    assert env["data"]["id"] == "SRC-01"


def test_ids_next_refuses_a_sub_question_the_run_does_not_have(cli, locked_run):
    code, _, _, env = cli("ids", "next", "src", "--run", locked_run.root, "--sq", "SQ-99", "--json")
    assert code == 2 and env["errors"][0]["code"] == "unknown-sub-question"
    assert not (locked_run.root / ".state" / "ids.json").exists()


EXIT_CODE_TABLE = {
    "OK": 0,
    "CHECK_FAILED": 1,
    "BAD_INPUT": 2,
    "REFUSED": 3,
    "UNRESOLVED": 4,
    "NOT_CONFIGURED": 5,
    "UPSTREAM_FAILED": 6,
    "BUDGET_SPENT": 7,
    "NO_FINDING": 8,
    "INTERNAL": 70,
    "STORAGE_FAILED": 74,
    "RUN_BUSY": 75,
    "INTERRUPTED": 130,
}


def test_the_exit_code_table_is_pinned():
    """A code is a contract with every script and agent that reads it: changing one is a breaking change."""
    assert {code.name: int(code) for code in ExitCode} == EXIT_CODE_TABLE


def test_exit_codes_are_documented_in_conventions():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "conventions.md").read_text()
    for code in ExitCode:
        assert f"| {int(code)} | {code.name} |" in doc, (
            f"exit code {int(code)} ({code.name}) is not documented"
        )
    rows = re.findall(r"^\| (\d+) \| ([A-Z_]+) \|", doc, re.M)
    assert {name: int(value) for value, name in rows} == EXIT_CODE_TABLE  # no row beyond the table either


def test_the_errors_module_docstring_lists_every_code():
    import research_engine.errors as errors

    for code in ExitCode:
        if code is not ExitCode.OK:
            assert re.search(rf"^\s+{int(code)}\s", errors.__doc__ or "", re.M), code.name


def test_console_script_runs_as_a_real_process(brief_file):
    proc = subprocess.run(
        [sys.executable, "-m", "research_engine", "brief", "check", str(brief_file())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "valid" in proc.stdout


@pytest.mark.parametrize("args", [["brief", "check", "--help"], ["--help"]])
def test_help_works_without_side_effects(cli, args):
    code, out, _, _ = cli(*args)
    assert code == 0 and "Usage" in out
