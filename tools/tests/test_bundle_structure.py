"""The Claude Code bundle is well formed: front matter, names, links, paths, the plugin manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _bundle import (
    AGENTS_DIR,
    LEAVES,
    ROOT,
    agent_files,
    bundle_files,
    classify_mention,
    front_matter,
    inline_code,
    links,
    normalise_run_path,
    repo_path_exists,
    run_path_patterns,
    skill_files,
)

from research_engine import schemas

BUNDLE = [p.relative_to(ROOT).as_posix() for p in bundle_files()]


def test_the_bundle_has_the_composer_every_leaf_and_the_agents():
    skills = {p.parent.name for p in skill_files()}
    assert skills == {"research", *LEAVES}
    agents = {p.stem for p in agent_files()}
    assert {"research-verifier", "research-critic", "research-searcher"} <= agents


@pytest.mark.parametrize("rel", [p for p in BUNDLE if p.endswith("SKILL.md")])
def test_skill_front_matter_validates_against_the_skill_schema(rel):
    meta, body = front_matter(ROOT / rel)
    assert schemas.validate(meta, "skill", file=rel) == []
    assert body.strip(), "a skill needs instructions"


@pytest.mark.parametrize("rel", [p for p in BUNDLE if p.startswith(".claude/agents/")])
def test_agent_front_matter_validates_against_the_agent_schema(rel):
    meta, body = front_matter(ROOT / rel)
    assert schemas.validate(meta, "agent", file=rel) == []
    assert body.strip(), "an agent needs a system prompt"


def test_a_typo_in_a_front_matter_field_is_refused_by_the_schema():
    problems = schemas.validate(
        {"name": "research", "description": "x" * 30, "allowed_tools": "Read"}, "skill"
    )
    assert problems and "allowed_tools" in problems[0].message


def test_skill_names_match_their_folders_and_agent_names_their_files():
    for path in skill_files():
        assert front_matter(path)[0]["name"] == path.parent.name, path
    for path in agent_files():
        assert front_matter(path)[0]["name"] == path.stem, path


def test_names_are_unique_across_skills_and_agents_separately():
    skill_names = [front_matter(p)[0]["name"] for p in skill_files()]
    agent_names = [front_matter(p)[0]["name"] for p in agent_files()]
    assert len(skill_names) == len(set(skill_names))
    assert len(agent_names) == len(set(agent_names))


@pytest.mark.parametrize("rel", BUNDLE + ["AGENTS.md", "docs/claude-code.md"])
def test_every_relative_link_resolves(rel):
    path = ROOT / rel
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in links(text):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        if not (path.parent / target.split("#", 1)[0]).resolve().exists():
            broken.append(target)
    assert not broken, f"{rel}: broken links {broken}"


@pytest.mark.parametrize("rel", BUNDLE + ["AGENTS.md", "docs/claude-code.md"])
def test_every_path_mentioned_resolves(rel):
    """Repository paths exist; trace-tree paths are ones `trace.artifact_path` knows."""
    patterns = run_path_patterns()
    unknown = []
    for token in inline_code((ROOT / rel).read_text(encoding="utf-8")):
        kind = classify_mention(token)
        if kind == "repo" and not repo_path_exists(token):
            unknown.append(token)
        elif kind == "run":
            candidate = normalise_run_path(token)
            if candidate and not any(p.fullmatch(candidate) for p in patterns):
                unknown.append(token)
    assert not unknown, f"{rel}: paths that do not exist or are not in the trace tree: {unknown}"


def test_a_made_up_trace_path_is_caught():
    patterns = run_path_patterns()
    assert any(p.fullmatch(normalise_run_path("retrieve/SQ-NN/SRC-NN.md")) for p in patterns)
    assert not any(p.fullmatch(normalise_run_path("decompose/notes.md")) for p in patterns)


def test_the_verify_leaf_forks_into_the_independent_verifier():
    meta, _ = front_matter(ROOT / ".claude/skills/research-verify/SKILL.md")
    assert meta.get("context") == "fork" and meta.get("agent") == "research-verifier"
    assert (AGENTS_DIR / "research-verifier.md").is_file()


def test_the_plugin_manifest_names_the_bundle_and_its_paths_exist():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "research-engine"
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert manifest["version"] == version
    paths = [manifest["skills"]] if isinstance(manifest["skills"], str) else manifest["skills"]
    paths += manifest["agents"] if isinstance(manifest["agents"], list) else [manifest["agents"]]
    for rel in paths:
        assert rel.startswith("./") and (ROOT / rel).exists(), rel
    listed = {Path(p).stem for p in manifest["agents"]}
    assert listed == {p.stem for p in agent_files()}, "every agent is shipped in the plugin"
