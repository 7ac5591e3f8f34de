"""The plugin as Claude Code's own tools see it: `claude plugin validate --strict` passes on the repository,
the generated copy under plugin/ is current, and the documented marketplace install from a local clone
gives the same skills and agents as `--plugin-dir`."""

from __future__ import annotations

import json

from claude_code.stub import Script, main_session, text
from claude_code.workspace import AGENTS, PLUGIN, ROOT, SKILLS
from research_engine import bundle


def test_claude_plugin_validate_strict_passes(plugin_ws):
    result = plugin_ws.claude("plugin", "validate", "--strict", str(plugin_ws.repo))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Validation passed" in out
    for skill in SKILLS:
        assert f"skills: {PLUGIN}:{skill}\n" in out, skill
    for agent in AGENTS:
        assert f"agents: {PLUGIN}:{agent}\n" in out, agent
    assert "PreToolUse WebFetch|WebSearch" in out, "the plugin ships its own WebFetch/WebSearch denial"


def test_a_claude_md_at_the_plugin_root_fails_strict_validation(plugin_ws):
    """Why CLAUDE.md is gone: the client never loads it for plugin users, and --strict refuses it."""
    (plugin_ws.repo / "CLAUDE.md").write_text("@AGENTS.md\n")
    result = plugin_ws.claude("plugin", "validate", "--strict", str(plugin_ws.repo))
    assert result.returncode != 0
    assert "CLAUDE.md at the plugin root is not loaded" in result.stdout + result.stderr


def test_the_committed_plugin_copy_is_what_the_project_copy_generates():
    assert bundle.stale_files(ROOT) == [], "run `research-engine bundle plugin --root .`"


def test_the_marketplace_install_from_a_local_clone_offers_the_bundle(plugin_ws):
    """docs/claude-code.md's plugin install: `claude plugin marketplace add <clone>` then
    `claude plugin install research-engine@research-engine`; no --plugin-dir afterwards."""
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    added = plugin_ws.claude("plugin", "marketplace", "add", str(plugin_ws.repo))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = plugin_ws.claude("plugin", "install", f"{PLUGIN}@{marketplace['name']}")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    plugin_ws.mode = "installed"  # names stay namespaced; no --plugin-dir
    stub, result = plugin_ws.run(Script().add("main", main_session("INSTALLED"), [[text("ok")]]), "INSTALLED")
    assert result.returncode == 0, result.stderr
    system = stub.last("main").system
    for skill in SKILLS:
        assert f"- {PLUGIN}:{skill}:" in system, skill
    for agent in AGENTS:
        assert f"- {PLUGIN}:{agent}:" in system, agent
