"""Reading the Claude Code bundle the way the tests need it: files, front matter, commands, paths.

Shared by the bundle and agent-doc tests. It only parses; the tests decide what is right. The
command tree comes from the typer app itself (click's command objects), never from a hand-kept list.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SKILLS_DIR = ROOT / ".claude" / "skills"
AGENTS_DIR = ROOT / ".claude" / "agents"
LEAVES = (
    "research-decompose",
    "research-select",
    "research-retrieve",
    "research-consolidate",
    "research-verify",
    "research-control",
    "research-synthesize",
)
PLACEHOLDER_RE = re.compile(r"<[A-Z][A-Z0-9_-]*>")
BASH_BLOCK_RE = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
INLINE_CODE_RE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK_RE = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE_RE = re.compile(r"^```.*?^```", re.S | re.M)


def skill_files() -> list[Path]:
    return sorted(SKILLS_DIR.glob("*/SKILL.md"))


def agent_files() -> list[Path]:
    return sorted(AGENTS_DIR.glob("*.md"))


def bundle_files() -> list[Path]:
    return skill_files() + agent_files()


def front_matter(path: Path) -> tuple[dict[str, Any], str]:
    import frontmatter

    post = frontmatter.loads(path.read_text(encoding="utf-8"))
    return dict(post.metadata), post.content


def bash_blocks(text: str) -> list[str]:
    """The fenced ```bash blocks of a Markdown text, in order."""
    return [m.group(1) for m in BASH_BLOCK_RE.finditer(text)]


HEREDOC_RE = re.compile(r"\s*<<-?\s*(['\"]?)(\w+)\1\s*$")


@dataclass
class Invocation:
    """One command of a bash block: its line (the heredoc operator removed) and the heredoc it reads on
    stdin, if any (`quoted`: the delimiter is quoted, so the shell expands nothing inside)."""

    line: str
    stdin: str | None = None
    quoted: bool = True


def block_invocations(block: str) -> list[Invocation]:
    """The commands of one bash block (continuations joined, comments and blanks dropped, heredocs read)."""
    lines = re.sub(r"\\\n\s*", " ", block).splitlines()
    out: list[Invocation] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        m = HEREDOC_RE.search(line)
        if not m:
            out.append(Invocation(line))
            continue
        body = []
        while i < len(lines) and lines[i].strip() != m.group(2):
            body.append(lines[i])
            i += 1
        i += 1  # the delimiter
        out.append(Invocation(line[: m.start()].rstrip(), "\n".join(body) + "\n", bool(m.group(1))))
    return out


def block_commands(block: str) -> list[str]:
    """The command lines of one bash block (heredoc bodies are input, not commands)."""
    return [inv.line for inv in block_invocations(block)]


def inline_commands(text: str) -> list[str]:
    """`research-engine ...` spans written inline in prose (outside fenced blocks)."""
    prose = FENCE_RE.sub("", text)
    return [
        c.strip()
        for c in INLINE_CODE_RE.findall(prose)
        if c.strip().startswith("research-engine ") and "..." not in c
    ]


def documented_commands(text: str) -> list[str]:
    """The `research-engine` command lines a Markdown text tells someone to run (fenced bash blocks)."""
    return [c for b in bash_blocks(text) for c in block_commands(b)]


def links(text: str) -> list[str]:
    prose = FENCE_RE.sub("", text)
    return LINK_RE.findall(prose)


def inline_code(text: str) -> list[str]:
    return INLINE_CODE_RE.findall(FENCE_RE.sub("", text))


# ------------------------------------------------------------------------------------ the CLI tree


@dataclass
class CommandCheck:
    line: str
    path: list[str]
    problems: list[str]


def click_root():
    import typer

    from research_engine.cli import app

    return typer.main.get_command(app)


def check_command_line(line: str, root=None, *, mention: bool = False) -> CommandCheck:
    """Walk a documented `research-engine ...` line down click's command tree.

    Checks: every word before the leaf command names a real group or command; every `--option`
    exists on the command it is given to; value options get a value; no more positional
    arguments than the command declares. Placeholders (<RUN>) count as values.
    """
    # typer >= 0.29 vendors click (typer._click), so the tree is read by duck typing: a group has
    # `commands`, a parameter says what it is in `param_type_name`.
    root = root or click_root()
    problems: list[str] = []
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return CommandCheck(line, [], [f"cannot be split like a shell line: {exc}"])
    if not words or words[0] != "research-engine":
        return CommandCheck(line, [], ["does not start with research-engine"])
    words = words[1:]
    command = root
    path: list[str] = []
    while isinstance(getattr(command, "commands", None), dict):
        if not words:
            problems.append(f"stops at the group {' '.join(path) or 'research-engine'} without a command")
            return CommandCheck(line, path, problems)
        name = words.pop(0)
        if name.startswith("-"):  # a group's own option (--help, --version)
            known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            if name not in known:
                problems.append(f"{' '.join(path) or 'research-engine'} has no option {name}")
            return CommandCheck(line, path, problems)
        sub = command.commands.get(name)
        if sub is None:
            problems.append(
                f"names no command {name!r} under {' '.join(path) or 'research-engine'} "
                f"(has: {', '.join(sorted(command.commands))})"
            )
            return CommandCheck(line, path + [name], problems)
        path.append(name)
        command = sub
    options: dict[str, Any] = {}
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    for param in command.params:
        if param.param_type_name == "option":
            for opt in (*param.opts, *param.secondary_opts):
                options[opt] = param
    max_positionals = sum(-1 if a.nargs == -1 else a.nargs for a in arguments)
    unlimited = any(a.nargs == -1 for a in arguments)
    positionals = 0
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            option = options.get(name)
            if option is None:
                problems.append(
                    f"`{' '.join(path)}` has no option {name} (has: {', '.join(sorted(options))})"
                )
            elif not (option.is_flag or option.count) and not eq:
                if i + 1 >= len(words):
                    problems.append(f"option {name} of `{' '.join(path)}` needs a value")
                i += 1
        else:
            positionals += 1
        i += 1
    if not unlimited and positionals > max_positionals:
        problems.append(
            f"`{' '.join(path)}` takes {max_positionals} argument(s), the line gives {positionals}"
        )
    required = [a for a in arguments if a.required]
    if positionals < len(required) and not mention:
        problems.append(f"`{' '.join(path)}` needs {len(required)} argument(s), the line gives {positionals}")
    return CommandCheck(line, path, problems)


# ------------------------------------------------------------------------- paths in the trace tree


def run_path_patterns() -> list[re.Pattern[str]]:
    """Regexes of every run-relative path the trace module knows (and the directories above them)."""
    import inspect

    from research_engine import trace

    kinds = re.findall(r'case "([a-z_]+)"', inspect.getsource(trace.artifact_path))
    sample = {"sq": "SQ-01", "src": "SRC-01", "cycle": 1, "digest": "0" * 64, "name": "ids"}
    patterns: set[str] = set()
    for kind in kinds:
        rel = trace.artifact_path(Path("/r"), kind, **sample).relative_to("/r").as_posix()
        regex = re.escape(rel)
        regex = regex.replace("SQ\\-01", r"SQ-\d{2,}").replace("SRC\\-01", r"SRC-\d{2,}")
        regex = regex.replace("cycle\\-01", r"cycle-\d{2,}").replace("0" * 64, "[0-9a-f]{64}")
        parts = regex.split("/")
        for n in range(1, len(parts) + 1):
            patterns.add("/".join(parts[:n]))
        if kind.endswith("_dir"):
            patterns.add(regex + "/.+")  # anything inside a directory artifact
    return [re.compile(p + "/?") for p in sorted(patterns)]


def normalise_run_path(mention: str) -> str:
    """`<RUN>/retrieve/<SQ>/<SRC>.md` -> `retrieve/SQ-01/SRC-01.md`, ready to match run_path_patterns."""
    path = mention.removeprefix("<RUN>/")
    path = path.replace("SQ-NN", "SQ-01").replace("SRC-NN", "SRC-01").replace("cycle-NN", "cycle-01")
    path = path.replace("<SQ>", "SQ-01").replace("<SRC>", "SRC-01").replace("<sha256>", "0" * 64)
    path = PLACEHOLDER_RE.sub("x", path)
    return path.replace("*", "SQ-01")  # a glob in the docs stands for a per-sub-question file


RUN_TOP = (
    "brief.md",
    "run.json",
    "decompose/",
    "select/",
    "retrieve/",
    "snapshots/",
    "consolidate/",
    "verify/",
    "controller/",
    "synthesis/",
    "work/",
    "<RUN>/",
)
REPO_TOP = (".claude/", ".claude-plugin/", "docs/", "schema/", "tools/", "examples/", "bench/", ".ci/")


def classify_mention(token: str) -> str | None:
    """'run' for a trace-tree path, 'repo' for a repository path, None for anything else."""
    token = token.strip()
    if " " in token or token.startswith(("http", "research-engine", "../")):
        return None
    if token.startswith(RUN_TOP):
        return "run"
    if token.startswith(REPO_TOP) or token in (
        "AGENTS.md",
        "README.md",
        "repo-manifest.json",
        "pyproject.toml",
    ):
        return "repo"
    return None


def repo_path_exists(token: str) -> bool:
    """A repository path exists; `<verb>`-style placeholders and `*` match any name."""
    pattern = re.sub(r"<[^>]+>", "*", token.rstrip("/"))
    if "*" in pattern:
        return any(ROOT.glob(pattern))
    return (ROOT / pattern).exists()


def settings() -> dict[str, Any]:
    import json

    return json.loads((ROOT / ".claude" / "settings.json").read_text(encoding="utf-8"))


def rule_regex(rule: str) -> re.Pattern[str]:
    """A `Bash(prefix *)` rule as a regex over command lines (`*` matches anything, as Claude Code does)."""
    m = re.fullmatch(r"Bash\((.*)\)", rule)
    assert m, rule
    body = m.group(1)
    if body.endswith(":*"):  # the legacy prefix form
        body = body[:-2] + " *"
    parts = [re.escape(p) for p in body.split("*")]
    return re.compile(".*".join(parts) + r"\Z", re.S)
