"""The repository's front door stays true: README commands, CI script, required layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

from research_engine import report, trace, validate

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)


def test_readme_opens_with_exactly_two_copy_paste_commands_before_any_section():
    text = (ROOT / "README.md").read_text()
    head = text.split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n```", head, flags=re.S)
    assert len(blocks) == 2
    assert all("\n" not in b.strip() for b in blocks), "each command is one copy-paste line"


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = readme_commands()[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()


def test_required_top_level_layout_exists():
    for name in (
        ".claude",
        "schema",
        "docs",
        "tools",
        "examples",
        "runs",
        "AGENTS.md",
        "CLAUDE.md",
        "bin/research-engine",
        "repo-manifest.json",
        "pyproject.toml",
        "README.md",
    ):
        assert (ROOT / name).exists(), name
    assert (ROOT / "runs" / ".keep").exists()
    assert "runs/*" in (ROOT / ".gitignore").read_text()


def test_claude_md_imports_agents_md_and_repeats_none_of_it():
    """Claude Code in a clone loads CLAUDE.md, and AGENTS.md only through CLAUDE.md's import (measured with
    the pinned client: tools/tests/claude_code/test_plugin.py). So CLAUDE.md imports it and adds only what
    is Claude-specific: short, and no sentence of it says again what AGENTS.md says."""
    text = (ROOT / "CLAUDE.md").read_text()
    assert text.splitlines()[0] == "@AGENTS.md"
    assert len(text.splitlines()) <= 25
    agents = " ".join((ROOT / "AGENTS.md").read_text().split())
    words = " ".join(text.split()).split(" ")
    repeated = {" ".join(words[i : i + 8]) for i in range(len(words) - 7)} & {
        " ".join(agents.split(" ")[i : i + 8]) for i in range(len(agents.split(" ")) - 7)
    }
    assert not repeated, repeated


def test_repo_manifest_is_valid_json_with_boundaries():
    manifest = json.loads((ROOT / "repo-manifest.json").read_text())
    assert {"what", "maturity", "entry_points", "boundaries"} <= set(manifest)
    assert {"always", "ask_first", "never"} <= set(manifest["boundaries"])


def test_every_schema_file_is_valid_json_schema():
    from jsonschema import Draft202012Validator

    schemas = sorted((ROOT / "schema").glob("*.schema.json"))
    assert schemas
    for path in schemas:
        Draft202012Validator.check_schema(json.loads(path.read_text()))


def test_readme_main_job_names_the_committed_example_and_runs_offline(cli, tmp_path):
    import shlex

    command = readme_commands()[0].strip()
    engine_part = command.split("&&")[-1].strip()
    args = shlex.split(engine_part)[1:]
    assert args[0] == "run" and "--replay" in args, "the main job is a replayed headless run"
    for arg in args:
        if arg.startswith("examples/"):
            assert (ROOT / arg).exists(), arg
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in args]
    args[args.index("--output-path") + 1] = str(tmp_path / "runs")
    code, out, _, env = cli(*args, "--json")
    assert code == 0, out
    assert env["data"]["status"] == "complete"
    assert env["data"]["figures"]["replay_misses"] == []
    run = trace.open_run(env["data"]["run_root"])
    assert validate.validate_run(run).ok
    assert report.check(run, run.path("result")).ok
