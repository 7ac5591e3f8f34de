"""The Claude Code plugin copy of the skill bundle, generated from the project copy under `.claude/`.

Claude Code names a project's skills and agents by their plain names (`research-verifier`) and a plugin's
with the plugin's prefix (`research-engine:research-verifier`). A name that does not resolve is not an
error: the research-verify skill's `agent:` silently forks a general-purpose agent with every tool instead
of the independent verifier. So one set of files cannot serve both install ways. `.claude/` (project mode)
is the source; `plugin/` is generated from it with every reference to a bundle skill or agent namespaced,
and the hooks `.claude/settings.json` declares become `plugin/hooks/hooks.json` (a plugin ships no
settings). `.claude-plugin/plugin.json` points Claude Code at `plugin/`.

This module only rewrites text and compares files; `research-engine bundle plugin --root .` writes the copy
and `--check` fails when the committed copy is stale. It works on a checkout (the wheel holds no `.claude/`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from research_engine import bounded
from research_engine.errors import BadInput
from research_engine.trace import atomic_write_text

PLUGIN = "research-engine"
GENERATED_DIR = "plugin"
PROJECT_HOOK_DIR = "$CLAUDE_PROJECT_DIR/.claude/hooks/"
PLUGIN_HOOK_DIR = "${CLAUDE_PLUGIN_ROOT}/" + GENERATED_DIR + "/hooks/"
NOTICE = (
    "<!-- Generated from {source} by `research-engine bundle plugin --root .`: edit that file, then "
    "regenerate. -->"
)
README = """# The research-engine Claude Code plugin (generated)

Everything in this directory is generated from `.claude/` by `research-engine bundle plugin --root .`, with
every skill and agent name namespaced for the plugin (`research-engine:research-verifier`); edit `.claude/`
and regenerate. `.claude-plugin/plugin.json` at the repository root points Claude Code here. See
`docs/claude-code.md`.
"""


def bundle_names(root: Path) -> tuple[list[str], list[str]]:
    """The skill names and agent names of the project copy."""
    claude = root / ".claude"
    skills = sorted(p.parent.name for p in (claude / "skills").glob("*/SKILL.md"))
    agents = sorted(p.stem for p in (claude / "agents").glob("*.md"))
    if not skills:
        raise BadInput(f"no skills under {claude / 'skills'}: not a research-engine checkout", field="root")
    return skills, agents


def namespaced(text: str, names: list[str], plugin: str = PLUGIN) -> str:
    """`text` with every reference to a bundle skill or agent written as `<plugin>:<name>`.

    A reference is a name standing alone (`research-verifier`, `Skill(research-select)`) or a slash
    command (`/research`, `/research-select`). Not rewritten: a front-matter `name:` (Claude Code adds
    the prefix itself), a path segment (`../research-select/SKILL.md`), a name already namespaced, a
    longer word (`research-verifier` is not `research-verify`), and the composer's bare word `research`,
    which is ordinary English everywhere except as `/research`.
    """
    ordered = sorted(names, key=len, reverse=True)
    alternation = "|".join(re.escape(n) for n in ordered)
    slash = re.compile(rf"(?<![\w/.:-])/({alternation})(?![\w-])")
    words = [n for n in ordered if n != "research"]
    bare = re.compile(rf"(?<![\w/.:-])({'|'.join(re.escape(n) for n in words)})(?![\w-])") if words else None

    def rewrite(line: str) -> str:
        line = slash.sub(lambda m: f"/{plugin}:{m.group(1)}", line)
        return bare.sub(lambda m: f"{plugin}:{m.group(1)}", line) if bare else line

    lines = text.split("\n")
    out = []
    in_front = bool(lines) and lines[0] == "---"
    for i, line in enumerate(lines):
        if in_front and i > 0 and line == "---":
            in_front = False
            out.append(line)
            continue
        if in_front and line.startswith("name:"):
            out.append(line)
            continue
        out.append(rewrite(line))
    return "\n".join(out)


def _with_notice(text: str, source: str) -> str:
    """The generated-file notice, placed after the front matter (Claude Code reads front matter first)."""
    notice = NOTICE.format(source=source)
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4) + len("\n---\n")
        return text[:end] + "\n" + notice + "\n" + text[end:]
    return notice + "\n\n" + text


def plugin_hooks(settings: dict) -> dict:
    """The plugin's hooks.json: the project settings' hooks, pointed at the plugin's copy of the scripts."""
    text = json.dumps({"hooks": settings.get("hooks", {})}, indent=2)
    return json.loads(text.replace(PROJECT_HOOK_DIR, PLUGIN_HOOK_DIR))


def plugin_files(root: Path) -> dict[str, str]:
    """Every file of the generated plugin copy: repository-relative path -> content."""
    root = Path(root)
    skills, agents = bundle_names(root)
    names = skills + agents
    claude = root / ".claude"
    files: dict[str, str] = {f"{GENERATED_DIR}/README.md": README}
    for skill in skills:
        source = claude / "skills" / skill / "SKILL.md"
        rel = source.relative_to(root).as_posix()
        text = namespaced(bounded.read_text(source), names)
        files[f"{GENERATED_DIR}/skills/{skill}/SKILL.md"] = _with_notice(text, rel)
    for agent in agents:
        source = claude / "agents" / f"{agent}.md"
        rel = source.relative_to(root).as_posix()
        text = namespaced(bounded.read_text(source), names)
        files[f"{GENERATED_DIR}/agents/{agent}.md"] = _with_notice(text, rel)
    for script in sorted((claude / "hooks").glob("*")):
        if script.is_file():
            files[f"{GENERATED_DIR}/hooks/{script.name}"] = bounded.read_text(script)
    settings = bounded.load_json(bounded.read_bytes(claude / "settings.json"), "settings.json")
    files[f"{GENERATED_DIR}/hooks/hooks.json"] = json.dumps(plugin_hooks(settings), indent=2) + "\n"
    return files


def _on_disk(root: Path) -> set[str]:
    base = root / GENERATED_DIR
    return (
        {p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file()} if base.is_dir() else set()
    )


def stale_files(root: Path) -> list[str]:
    """Paths where the committed plugin copy differs from what `.claude/` generates (missing, changed,
    extra)."""
    root = Path(root)
    wanted = plugin_files(root)
    stale = [
        rel
        for rel, text in wanted.items()
        if not (root / rel).is_file() or bounded.read_text(root / rel) != text
    ]
    stale += sorted(_on_disk(root) - set(wanted))
    return sorted(stale)


def write_plugin(root: Path) -> list[str]:
    """Write the plugin copy (and remove files it no longer has); returns the paths that changed."""
    root = Path(root)
    changed = stale_files(root)
    wanted = plugin_files(root)
    for rel in changed:
        path = root / rel
        if rel in wanted:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, wanted[rel])
            if rel.endswith(".sh"):
                path.chmod(0o755)
        else:
            path.unlink()
    return changed
