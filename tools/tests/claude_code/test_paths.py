"""Every file the skills tell the model to read resolves, in both install ways: the client substitutes
`${CLAUDE_SKILL_DIR}` into an absolute path, and the model's Read of it succeeds. Nothing is named by a
path relative to the user's working directory (which in plugin mode is not this repository), and no agent
body carries a link its subagent could not follow."""

from __future__ import annotations

import re

import pytest

from claude_code.stub import Exchange, Script, main_session, subagent, text, tool
from claude_code.workspace import AGENTS, SKILLS

ABSOLUTE = re.compile(r"`(/[^`\s]+\.(?:md|json|ya?ml))`")
REPO_RELATIVE = re.compile(r"`((?:\.\./|\./)?(?:\.claude|docs|schema|plugin|tools|examples)/[^`\s]*)`")
RELATIVE_LINK = re.compile(r"\]\((?!https?://|#)([^)\s]+)\)")


def skill_text(ex: Exchange, folder: str) -> str:
    """The expanded skill in a request: from its 'Base directory' line on (`folder`: the skill's directory,
    its bare name in both install ways)."""
    text_ = ex.user_text
    start = text_.rindex("Base directory for this skill:")
    assert f"/{folder}\n" in text_[start : start + 500], f"{folder} is not the skill expanded here"
    return text_[start:]


def read_every_path(ex: Exchange, name: str, found: dict[str, list[str]]):
    body = skill_text(ex, name)
    paths = ABSOLUTE.findall(body)
    found[name] = paths
    return [tool("Read", file_path=p) for p in paths] or [text("no paths")]


@pytest.mark.parametrize("skill", SKILLS)
def test_every_path_a_skill_names_is_absolute_and_readable(ws, skill):
    found: dict[str, list[str]] = {}
    name = ws.name(skill)
    marker = f"/tmp/PATHS-{skill}"
    if skill == "research":
        script = Script().add(
            "main", main_session("PATHS-COMPOSER"), [lambda ex: read_every_path(ex, skill, found)]
        )
        prompt, role = f"{ws.slash()} PATHS-COMPOSER", "main"
    else:
        script = Script().add(
            "main", main_session("PATHS-LEAF"), [[tool("Skill", skill=name, args=f"{marker} all")]]
        )
        script.add("leaf", subagent(marker), [lambda ex: read_every_path(ex, skill, found)])
        prompt, role = "PATHS-LEAF", "leaf"
    stub, result = ws.run(script, prompt)
    assert result.returncode == 0, result.stderr
    body = skill_text(stub.by_role(role)[0], skill)
    assert "${" not in body, "every variable is substituted"
    assert not REPO_RELATIVE.findall(body), "repository paths relative to the user's working directory"
    assert not RELATIVE_LINK.findall(body), "relative links resolve against nothing the model knows"
    reads = [c for c in stub.calls(role) if c.name == "Read"]
    assert len(reads) == len(found[skill])
    for call in reads:
        assert not call.is_error, f"{call.input['file_path']}: {call.result}"
    base = ws.repo / (".claude" if ws.mode == "project" else "plugin")
    for path in found[skill]:
        assert path.startswith(str(base / "skills")), path


@pytest.mark.parametrize("agent", AGENTS)
def test_an_agent_prompt_names_no_file_its_subagent_cannot_resolve(ws, agent):
    task = f"PROMPT-OF-{agent}"
    script = Script().add(
        "main",
        main_session("AGENT-PROMPT"),
        [
            [
                tool(
                    "Agent",
                    subagent_type=ws.name(agent),
                    description="prompt",
                    prompt=task,
                    run_in_background=False,
                )
            ]
        ],
    )
    script.add("agent", subagent(task), [[text("done")]])
    stub, result = ws.run(script, "AGENT-PROMPT")
    assert result.returncode == 0, result.stderr
    system = stub.last("agent").system
    assert not RELATIVE_LINK.findall(system)
    assert not REPO_RELATIVE.findall(system)
    assert "../skills" not in system
