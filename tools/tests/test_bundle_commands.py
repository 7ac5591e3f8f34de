"""Every `research-engine` line the bundle shows is a real command with real options, and the
permission allow-list covers exactly those commands: checked against the typer app itself."""

from __future__ import annotations

import re

import pytest
from _bundle import (
    ROOT,
    agent_files,
    bash_blocks,
    block_commands,
    bundle_files,
    check_command_line,
    click_root,
    documented_commands,
    front_matter,
    inline_commands,
    rule_regex,
    settings,
    skill_files,
)

DOCS = [p.relative_to(ROOT).as_posix() for p in bundle_files()] + [
    "AGENTS.md",
    "docs/claude-code.md",
]


def all_bundle_commands() -> list[tuple[str, str]]:
    out = []
    for path in bundle_files():
        for line in documented_commands(path.read_text(encoding="utf-8")):
            out.append((path.relative_to(ROOT).as_posix(), line))
    return out


def test_the_command_checker_catches_a_wrong_command_an_unknown_option_and_a_missing_argument():
    root = click_root()
    assert (
        check_command_line("research-engine sq add <TEXT> --run <RUN> --type factual --json", root).problems
        == []
    )
    assert check_command_line("research-engine sq remove SQ-01 --run R", root).problems
    assert check_command_line(
        "research-engine sq add <TEXT> --run <RUN> --type x --colour red", root
    ).problems
    assert check_command_line("research-engine claims retire --run R --why w", root).problems
    assert check_command_line("research-engine claims", root).problems


@pytest.mark.parametrize("rel", DOCS)
def test_every_documented_command_names_a_real_command_with_real_options(rel):
    root = click_root()
    text = (ROOT / rel).read_text(encoding="utf-8")
    bad = {}
    for line in documented_commands(text):
        problems = check_command_line(line, root).problems
        if problems:
            bad[line] = problems
    for span in inline_commands(text):
        problems = check_command_line(span, root, mention=True).problems
        if problems:
            bad[span] = problems
    assert not bad, f"{rel}: {bad}"


def test_every_bash_line_in_a_skill_or_agent_is_one_research_engine_call():
    """No pipes, redirections, chains or other programs: the allow-list is `Bash(research-engine *)`."""
    for path in bundle_files():
        for block in bash_blocks(path.read_text(encoding="utf-8")):
            for line in block_commands(block):
                assert line.startswith("research-engine "), (path, line)
                assert not re.search(r"(?<![<\w-])(\|\||&&|[|;>]|\$\()", line.replace("->", "")), (path, line)


def test_every_skill_command_asks_for_json():
    for rel, line in all_bundle_commands():
        assert "--json" in line.split(), (
            f"{rel}: {line} (the agent reads the envelope, so it asks for --json)"
        )


def _bash_rules(rules: list[str]) -> list[str]:
    return [r for r in rules if r == "Bash" or r.startswith("Bash(")]


def test_settings_allow_exactly_the_toolkit_invocation_the_skills_use():
    allow = settings()["permissions"]["allow"]
    bash_rules = _bash_rules(allow)
    assert bash_rules, "the toolkit must be allow-listed"
    commands = [line for _, line in all_bundle_commands()]
    for rule in bash_rules:
        assert rule != "Bash", "a blanket Bash rule is never allowed"
        prefix = rule[len("Bash(") : -1].split("*", 1)[0].strip()
        assert prefix == "research-engine", f"{rule} is broader than, or unrelated to, the toolkit"
        assert any(rule_regex(rule).match(c) for c in commands), f"{rule} matches no command the skills use"
    for command in commands:
        assert any(rule_regex(r).match(command) for r in bash_rules), f"not allow-listed: {command}"


def test_settings_grant_the_toolkit_and_the_bundle_skills_only_and_deny_unrecorded_fetching():
    """No Write or Edit rule at all (every scratch input goes on stdin); Skill rules name only the bundle's
    own skills; WebFetch and WebSearch are denied."""
    permissions = settings()["permissions"]
    skills = {p.parent.name for p in skill_files()}
    for rule in permissions["allow"]:
        if rule.startswith("Bash("):
            continue
        m = re.fullmatch(r"Skill\((.+)\)", rule)
        assert m, f"unexpected allow rule {rule}"
        assert m.group(1) in skills, f"{rule} names no skill of the bundle"
    assert {f"Skill({s})" for s in skills} <= set(permissions["allow"])
    assert {"WebFetch", "WebSearch"} <= set(permissions.get("deny", []))


def test_skill_allowed_tools_use_the_same_toolkit_rule_as_settings():
    allowed_bash = set(_bash_rules(settings()["permissions"]["allow"]))
    for path in skill_files():
        tools = front_matter(path)[0].get("allowed-tools", "")
        tools = (
            tools if isinstance(tools, list) else [t.strip() for t in re.split(r",\s*(?![^()]*\))", tools)]
        )
        bash = set(_bash_rules(tools))
        assert bash and bash <= allowed_bash, f"{path}: {bash}"
        assert not {"WebFetch", "WebSearch"} & set(tools), path


def test_the_verifier_and_critic_cannot_write_fetch_the_web_or_start_agents():
    for path in agent_files():
        meta, _ = front_matter(path)
        tools = (
            {t.strip() for t in meta["tools"].split(",")}
            if isinstance(meta["tools"], str)
            else set(meta["tools"])
        )
        assert not {"WebFetch", "WebSearch", "Agent", "Task"} & tools, path
        if path.stem in ("research-verifier", "research-critic"):
            assert not {"Write", "Edit"} & tools, f"{path.stem} must not write files"
