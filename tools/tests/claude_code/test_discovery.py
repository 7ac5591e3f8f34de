"""Claude Code finds every skill and agent of the bundle, under the names of each install way, and expands
`/research` intact."""

from __future__ import annotations

import re

from claude_code.stub import Script, main_session, text
from claude_code.workspace import AGENTS, SKILLS


def listed(system: str, header: str) -> dict[str, str]:
    """`- name: description` lines of one listing the client puts in its system messages."""
    rest = system[system.index(header) + len(header) :].lstrip("\n")
    block = rest.split("\n\n", 1)[0]
    return dict(re.findall(r"^- ([\w:.-]+): (.*)$", block, flags=re.M))


def test_every_skill_and_agent_is_offered_under_its_install_name(ws):
    stub, result = ws.run(Script().add("main", main_session("DISCOVERY"), [[text("ok")]]), "DISCOVERY")
    assert result.returncode == 0, result.stderr
    first = stub.last("main")
    skills = listed(first.system, "The following skills are available for use with the Skill tool:")
    agents = listed(first.system, "Available agent types for the Agent tool:")
    ours = {n for n in skills if "research" in n}
    assert ours == {ws.name(s) for s in SKILLS}, (
        "exactly the bundle's skills, each once, under this mode's names"
    )
    assert {n for n in agents if "research" in n} == {ws.name(a) for a in AGENTS}
    assert {"Skill", "Agent", "Bash", "Read"} <= set(first.tools)


def test_the_research_command_expands_intact_with_its_arguments_and_skill_dir(ws):
    request = "How do tides work, and why are there two a day?"
    stub, result = ws.run(
        Script().add("main", main_session("two a day"), [[text("ok")]]), f"{ws.slash()} {request}"
    )
    assert result.returncode == 0, result.stderr
    expanded = stub.last("main").user_text
    assert f"The request is: `{request}`" in expanded
    assert "# " + ws.slash() + ": the composer" in expanded
    assert "## 4. Finish: report honestly" in expanded, "the composer arrives whole"
    assert "${CLAUDE_SKILL_DIR}" not in expanded and "$ARGUMENTS" not in expanded
    skill_dir = ws.repo / (".claude/skills/research" if ws.mode == "project" else "plugin/skills/research")
    assert f"Base directory for this skill: {skill_dir}" in expanded
    assert f"{skill_dir}/../../../schema/research-brief.md" in expanded
