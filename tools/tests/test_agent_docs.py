"""AGENTS.md, CLAUDE.md, repo-manifest.json and docs/claude-code.md agree with the code.

Every command they name is walked through the typer app's command tree, and every path they name
exists (repository paths on disk, trace-tree paths in `trace.artifact_path`).
"""

from __future__ import annotations

import json
import tomllib

import pytest
from _bundle import (
    ROOT,
    check_command_line,
    classify_mention,
    click_root,
    inline_code,
    normalise_run_path,
    repo_path_exists,
    run_path_patterns,
)

DOCS = ["AGENTS.md", "CLAUDE.md", "docs/claude-code.md"]


def named_commands(text: str, root) -> list[str]:
    """Inline spans that name a command: `research-engine sq add ...` or a bare `sq add`."""
    out = []
    for span in inline_code(text):
        span = span.strip()
        if "..." in span:
            continue
        words = span.split()
        if words and words[0] == "research-engine" and len(words) > 1:
            out.append(span)
        elif (
            words
            and words[0] in root.commands
            and (len(words) > 1 or not hasattr(root.commands[words[0]], "commands"))
            and not any("/" in w for w in words[1:2])
        ):  # a bare group name (`brief`, `ids`) is a module name in prose, not a command; nor is a shell
            # line whose first word happens to be one (`source .venv/bin/activate`)
            out.append("research-engine " + " ".join(w for w in words if not w.startswith("<")))
    return out


@pytest.mark.parametrize("rel", DOCS)
def test_every_command_the_doc_names_exists(rel):
    root = click_root()
    text = (ROOT / rel).read_text(encoding="utf-8")
    # `a|b` spans ("verify prepare|record|close") name several subcommands at once.
    lines = []
    for line in named_commands(text, root):
        head, _, tail = line.rpartition(" ")
        lines += [f"{head} {t}" for t in tail.split("|")] if "|" in tail else [line]
    bad = {line: check_command_line(line, root, mention=True).problems for line in lines}
    assert not {k: v for k, v in bad.items() if v}, rel


@pytest.mark.parametrize("rel", DOCS)
def test_every_path_the_doc_names_exists(rel):
    patterns = run_path_patterns()
    missing = []
    for token in inline_code((ROOT / rel).read_text(encoding="utf-8")):
        kind = classify_mention(token)
        if (
            kind == "repo"
            and not repo_path_exists(token)
            or kind == "run"
            and not any(p.fullmatch(normalise_run_path(token)) for p in patterns)
        ):
            missing.append(token)
    assert not missing, f"{rel}: {missing}"


def test_agents_md_names_every_skill_and_agent_in_the_bundle():
    text = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    for agent in (ROOT / ".claude" / "agents").glob("*.md"):
        assert agent.stem in text, agent.stem
    for skill in (ROOT / ".claude" / "skills").iterdir():
        verb = skill.name.removeprefix("research-")
        assert skill.name == "research" or verb in text, skill.name


def test_repo_manifest_entry_points_exist():
    manifest = json.loads((ROOT / "repo-manifest.json").read_text(encoding="utf-8"))
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for key, value in manifest["entry_points"].items():
        if key == "cli":
            assert value in scripts, f"{value} is not a console script"
        else:
            assert (ROOT / value).exists(), f"entry point {key}: {value}"


def test_repo_manifest_commands_are_real_commands():
    manifest = json.loads((ROOT / "repo-manifest.json").read_text(encoding="utf-8"))
    root = click_root()
    for command in manifest["commands"]:
        assert check_command_line(f"research-engine {command}", root, mention=True).problems == [], command


def test_repo_manifest_names_every_command_the_skills_use():
    from _bundle import bundle_files, documented_commands

    manifest = json.loads((ROOT / "repo-manifest.json").read_text(encoding="utf-8"))
    root = click_root()
    used = set()
    for path in bundle_files():
        for line in documented_commands(path.read_text(encoding="utf-8")):
            used.add(" ".join(check_command_line(line, root).path))
    assert used <= set(manifest["commands"]), used - set(manifest["commands"])
