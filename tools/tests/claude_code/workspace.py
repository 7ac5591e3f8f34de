"""The two ways a user installs the bundle, set up for one test each.

- **project**: `claude -p` run inside a copy of the repository, so Claude Code discovers `.claude/`.
- **plugin**: `claude -p --plugin-dir <copy>` run from an unrelated project of the user's.

The copy holds the working tree as it is (tracked and untracked, not ignored), so the suite tests what is
on disk, not the last commit. Each workspace has its own fresh HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from claude_code import client
from claude_code.stub import MessagesStub, Role, Script

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = "research-engine"
SKILLS = (
    "research",
    "research-decompose",
    "research-select",
    "research-retrieve",
    "research-consolidate",
    "research-verify",
    "research-control",
    "research-synthesize",
)
AGENTS = ("research-verifier", "research-critic", "research-searcher")

# The documented `claude -p` permissions, per install way (docs/claude-code.md shows these exact words).
DOCUMENTED_ARGS = {
    "project": ["--settings", ".claude/settings.json"],
    "plugin": ["--allowedTools", "Bash(research-engine *)", "Skill(research-engine:*)"],
}
DOCUMENTED_ARGS["installed"] = DOCUMENTED_ARGS["plugin"]  # installed from the marketplace: no --plugin-dir
_SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}


def repository_files() -> list[str]:
    """The working tree's files, as git sees them (tracked, plus untracked ones not ignored)."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        return [f for f in done.stdout.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk it
        out = []
        for path in ROOT.rglob("*"):
            rel = path.relative_to(ROOT)
            if path.is_file() and not set(rel.parts) & _SKIP_DIRS and rel.parts[0] != "runs":
                out.append(rel.as_posix())
        return out


def copy_repository(dest: Path) -> Path:
    """A copy of the repository without the committed example runs (large, and nothing here reads them)."""
    for rel in repository_files():
        if rel.startswith("examples/2"):
            continue
        src = ROOT / rel
        if not src.is_file():  # deleted in the working tree
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    (dest / "runs").mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(dest)], check=False, capture_output=True)
    return dest


@dataclass
class Workspace:
    mode: str
    binary: Path
    repo: Path
    cwd: Path
    home: Path
    env_extra: dict[str, str] = field(default_factory=dict)
    # False: PATH holds no research-engine at all (a plugin user's machine); the plugin's bin/ provides it.
    toolkit_on_path: bool = True
    marketplace: str = PLUGIN  # the marketplace an installed plugin came from

    @property
    def plugin_args(self) -> list[str]:
        return ["--plugin-dir", str(self.repo)] if self.mode == "plugin" else []

    @property
    def documented_args(self) -> list[str]:
        return list(DOCUMENTED_ARGS[self.mode])

    def name(self, bare: str) -> str:
        """A skill's or agent's name as Claude Code knows it in this install way."""
        return f"{PLUGIN}:{bare}" if self.mode in ("plugin", "installed") else bare

    def slash(self, bare: str = "research") -> str:
        return "/" + self.name(bare)

    def env(self, base_url: str) -> dict[str, str]:
        if not self.toolkit_on_path:
            return client.client_env(self.home, base_url, path=path_without_toolkit(), **self.env_extra)
        # The toolkit's console script lives beside the interpreter running the tests.
        return client.client_env(self.home, base_url, [Path(sys.executable).parent], **self.env_extra)

    @property
    def plugin_data(self) -> Path:
        """The installed plugin's persistent data directory (`${CLAUDE_PLUGIN_DATA}`)."""
        return self.home / ".claude" / "plugins" / "data" / f"{PLUGIN}-{self.marketplace}"

    def run(
        self,
        script: Script,
        prompt: str,
        *args: str,
        documented: bool = True,
        timeout: float = 90,
    ) -> tuple[MessagesStub, client.Result]:
        """One `claude -p PROMPT` under the documented permissions (unless `documented=False`)."""
        argv = ["-p", prompt, *self.plugin_args, *(self.documented_args if documented else []), *args]
        argv += ["--output-format", "json"]
        with MessagesStub(script) as stub:
            result = client.run(self.binary, argv, cwd=self.cwd, env=self.env(stub.base_url), timeout=timeout)
        return stub, result

    def interactive(
        self,
        script: Script,
        prompt: str,
        *args: str,
        roles: tuple[str, ...] = ("main",),
        timeout: float = 120,
    ) -> tuple[MessagesStub, str]:
        """One interactive session (a pseudo-terminal), as a person starts `claude` and types `prompt`: the
        trust dialog, the first-run screens and the API key question answered as a person would have once.
        Ends when the scripted turns of `roles` are spent (a forked skill runs in the background there)."""
        config = self.home / ".claude.json"
        data = json.loads(config.read_text()) if config.is_file() else {}
        data["hasCompletedOnboarding"] = True
        data["customApiKeyResponses"] = {"approved": [client.DUMMY_KEY[-20:]], "rejected": []}
        data.setdefault("projects", {}).setdefault(str(self.cwd), {})["hasTrustDialogAccepted"] = True
        config.write_text(json.dumps(data))
        waited = [role for role in script.roles if role.name in roles]

        def spent(role: Role) -> bool:
            """Answered past its last turn, or its last turn was text alone (nothing comes back then)."""
            answered = {ex.turn for ex in stub.exchanges if ex.role == role.name}
            if any(turn >= len(role.turns) for turn in answered):
                return True
            last = role.turns[-1] if role.turns else None
            text_only = isinstance(last, list) and all(block["type"] != "tool_use" for block in last)
            return text_only and len(role.turns) - 1 in answered

        def finished() -> bool:
            return all(spent(role) for role in waited)

        argv = [*self.plugin_args, *self.documented_args, *args]
        with MessagesStub(script) as stub:
            screen = client.interactive(
                self.binary, argv, prompt=prompt, cwd=self.cwd, env=self.env(stub.base_url),
                finished=finished, timeout=timeout,
            )  # fmt: skip
        return stub, screen

    def trust(self) -> None:
        """Mark the working directory trusted, as accepting the trust dialog interactively does."""
        config = self.home / ".claude.json"
        data = json.loads(config.read_text()) if config.is_file() else {}
        data.setdefault("projects", {}).setdefault(str(self.cwd), {})["hasTrustDialogAccepted"] = True
        config.write_text(json.dumps(data))

    def claude(self, *argv: str, timeout: float = 120) -> client.Result:
        """A `claude` subcommand (plugin validate, plugin marketplace ...), with no API traffic at all."""
        return client.run(
            self.binary, list(argv), cwd=self.cwd, env=self.env("http://127.0.0.1:9"), timeout=timeout
        )


def path_without_toolkit() -> str:
    """This process's PATH without any directory that holds a `research-engine` (an active venv's)."""
    dirs = os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "research-engine").exists())


def make_workspace(mode: str, binary: Path, tmp: Path) -> Workspace:
    repo = copy_repository(tmp / "research-engine")
    home = tmp / "home"
    home.mkdir()
    if mode == "project":
        cwd = repo
    else:
        cwd = tmp / "my-project"
        cwd.mkdir()
        subprocess.run(["git", "init", "-q", str(cwd)], check=False, capture_output=True)
    return Workspace(mode=mode, binary=binary, repo=repo, cwd=cwd, home=home)
