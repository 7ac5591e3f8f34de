"""The plugin as Claude Code's own tools see it: `claude plugin validate` finds nothing to report but that a
CLAUDE.md at a plugin root is not plugin context, the generated copy under plugin/ is current, the
documented marketplace install from a local clone gives the same skills and agents as `--plugin-dir`, and
README's two commands work as written. The clone's CLAUDE.md (project mode) is loaded once, with AGENTS.md
once, and never in plugin mode."""

from __future__ import annotations

import json
import re
import shlex
import tomllib

from claude_code.stub import Script, main_session, text
from claude_code.workspace import AGENTS, PLUGIN, ROOT, SKILLS
from research_engine import bundle

CLAUDE_MD_NOTICE = (
    "CLAUDE.md at the plugin root is not loaded as project context. To ship context with your plugin, use a "
    "skill (skills/<name>/SKILL.md) instead."
)


def test_claude_plugin_validate_reports_only_that_claude_md_is_not_plugin_context(plugin_ws):
    """CLAUDE.md is for a clone (project mode); at a plugin root the client ignores it, and `validate`
    says so. That one notice is all it reports: no error, no other warning, nothing from the plugin
    directory's checks (the icon is there). `--strict` turns the notice into its exit code 1."""
    result = plugin_ws.claude("plugin", "validate", str(plugin_ws.repo))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Validation passed with warnings" in out
    for skill in SKILLS:
        assert f"skills: {PLUGIN}:{skill}\n" in out, skill
    for agent in AGENTS:
        assert f"agents: {PLUGIN}:{agent}\n" in out, agent
    assert "PreToolUse WebFetch|WebSearch" in out, "the plugin ships its own WebFetch/WebSearch denial"
    assert "SessionStart command" in out and "bin: research-engine\n" in out

    strict = plugin_ws.claude("plugin", "validate", "--strict", "--json", str(plugin_ws.repo))
    assert strict.returncode == 1, strict.stdout + strict.stderr
    report = json.loads(strict.stdout)
    parts = [report["manifest"], *report["contents"]]
    assert [e for part in parts for e in part["errors"]] == []
    assert [w["message"] for part in parts for w in part["warnings"]] == [CLAUDE_MD_NOTICE]
    assert report["directory"]["findings"] == [] and report["advice"] == []
    assert report["hosts"]["declared"]["plugin"] is True, "the plugin states the hosts it reaches"
    assert report["provides"]["bin"] == ["research-engine"]


def test_the_committed_plugin_copy_is_what_the_project_copy_generates():
    assert bundle.stale_files(ROOT) == [], "run `research-engine bundle plugin --root .`"


def readme_plugin_commands() -> list[str]:
    """The command block of README's "Using it in Claude Code"."""
    section = (ROOT / "README.md").read_text().split("## Using it in Claude Code", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```\n(.*?)\n```", section, flags=re.S)
    return block.splitlines()


def test_readmes_two_commands_install_the_plugin_as_written(plugin_ws):
    """README's plugin install, run as written but for the marketplace source: the GitHub repository
    becomes a local clone of it (nothing here reaches GitHub). No --plugin-dir afterwards; the setting
    given with --config is stored by the client and handed to the toolkit's side at session start."""
    commands = readme_plugin_commands()
    homepage = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Homepage"]
    github = homepage.removeprefix("https://github.com/")
    assert len(commands) == 2 and all(c.startswith("claude plugin ") for c in commands), commands
    assert commands[0] == f"claude plugin marketplace add {github}"
    for command in commands:
        done = plugin_ws.claude(*shlex.split(command.replace(github, str(plugin_ws.repo)))[1:])
        assert done.returncode == 0, done.stdout + done.stderr
    settings = json.loads((plugin_ws.home / ".claude" / "settings.json").read_text())
    given = dict(a.split("=", 1) for a in shlex.split(commands[1]) if "=" in a)
    assert settings["pluginConfigs"][f"{PLUGIN}@{PLUGIN}"]["options"] == given

    plugin_ws.mode = "installed"  # names stay namespaced; no --plugin-dir
    stub, result = plugin_ws.run(Script().add("main", main_session("INSTALLED"), [[text("ok")]]), "INSTALLED")
    assert result.returncode == 0, result.stderr
    system = stub.last("main").system
    for skill in SKILLS:
        assert f"- {PLUGIN}:{skill}:" in system, skill
    for agent in AGENTS:
        assert f"- {PLUGIN}:{agent}:" in system, agent
    config = (plugin_ws.plugin_data / "config.env").read_text()
    assert all(f"{name}='{value}'; export {name}" in config for name, value in given.items()), config


def test_a_clone_loads_claude_md_and_agents_md_once_each_and_a_plugin_user_neither(ws):
    """In the default `instructionFiles` mode the client loads AGENTS.md only when there is no CLAUDE.md,
    so CLAUDE.md imports it; each then arrives once. A plugin never brings its root's CLAUDE.md."""
    stub, result = ws.run(Script().add("main", main_session("MEMORY"), [[text("ok")]]), "MEMORY")
    assert result.returncode == 0, result.stderr
    assert_loaded(json.dumps(stub.last("main").body), times=1 if ws.mode == "project" else 0)


def test_an_interactive_session_in_a_clone_loads_them_once_too(project_ws):
    stub, _ = project_ws.interactive(Script().add("main", main_session("MEMORY"), [[text("ok")]]), "MEMORY")
    assert_loaded(json.dumps(stub.last("main").body), times=1)


def assert_loaded(context: str, times: int) -> None:
    """CLAUDE.md's and AGENTS.md's first headings each appear `times` times in what the client sent."""
    for rel in ("CLAUDE.md", "AGENTS.md"):
        heading = next(line for line in (ROOT / rel).read_text().splitlines() if line.startswith("#"))
        assert context.count(json.dumps(heading)[1:-1]) == times, (rel, heading)
