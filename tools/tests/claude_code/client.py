"""The pinned Claude Code client: install it from npm into a cache directory, run it against the stub.

The client is the real native binary from `@anthropic-ai/claude-code` at exactly `CLIENT_VERSION`,
installed with npm into `$RESEARCH_ENGINE_CLAUDE_CODE_CACHE` (default
`~/.cache/research-engine-tests/claude-code/<version>`), outside the repository. Every run gets a fresh
`HOME`, the stub's `ANTHROPIC_BASE_URL`, a dummy key and every switch that stops the client from
calling anything but that base URL.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENT_VERSION = "2.1.330"
PACKAGE = "@anthropic-ai/claude-code"
CACHE_VAR = "RESEARCH_ENGINE_CLAUDE_CODE_CACHE"


class ClientUnavailable(RuntimeError):
    """npm or the registry could not provide the pinned client."""


def cache_dir() -> Path:
    base = os.environ.get(CACHE_VAR) or str(Path.home() / ".cache" / "research-engine-tests" / "claude-code")
    return Path(base) / CLIENT_VERSION


def _reports_version(binary: Path) -> bool:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip().startswith(CLIENT_VERSION + " ")


def _find_binary(prefix: Path) -> Path | None:
    """The wrapper package's bin (the postinstall copies the native binary over it); failing that, the
    platform package's binary itself (when npm ran without install scripts)."""
    modules = prefix / "node_modules" / "@anthropic-ai"
    candidates = [modules / "claude-code" / "bin" / "claude.exe"]
    candidates += sorted(modules.glob("claude-code-*/claude"))
    for binary in candidates:
        if binary.is_file() and _reports_version(binary):
            return binary
    return None


def install() -> Path:
    """The path of the pinned client's binary, installing it first when the cache does not hold it."""
    from filelock import FileLock

    prefix = cache_dir()
    prefix.mkdir(parents=True, exist_ok=True)
    with FileLock(str(prefix) + ".lock", timeout=900):
        found = _find_binary(prefix)
        if found:
            return found
        npm = shutil.which("npm")
        if not npm:
            raise ClientUnavailable("npm is not installed")
        try:
            done = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(prefix),
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                    f"{PACKAGE}@{CLIENT_VERSION}",
                ],
                capture_output=True,
                text=True,
                timeout=900,
            )
        except subprocess.TimeoutExpired as exc:
            raise ClientUnavailable(f"npm install timed out: {exc}") from exc
        if done.returncode != 0:
            raise ClientUnavailable(f"npm install {PACKAGE}@{CLIENT_VERSION} failed: {done.stderr[-2000:]}")
        found = _find_binary(prefix)
        if not found:
            raise ClientUnavailable(
                f"npm installed {PACKAGE}@{CLIENT_VERSION} but no binary reports that version"
            )
        return found


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        """The `--output-format json` result object."""
        for line in reversed(self.stdout.strip().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)
        raise AssertionError(
            f"no JSON result on stdout: {self.stdout[-2000:]!r} stderr: {self.stderr[-2000:]!r}"
        )


def client_env(
    home: Path, base_url: str, path_dirs: list[Path] | None = None, path: str | None = None, **extra: str
) -> dict[str, str]:
    """A clean environment: nothing from the caller's except PATH (or `path`) and the locale."""
    base = path if path is not None else os.environ.get("PATH", "/usr/bin:/bin")
    path = os.pathsep.join([*(str(p) for p in path_dirs or []), base])
    env = {
        "HOME": str(home),
        "PATH": path,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TERM": "dumb",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "NO_COLOR": "1",
    }
    env.update(extra)
    return env


def run(binary: Path, args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 180) -> Result:
    done = subprocess.run(
        [str(binary), *args],
        cwd=str(cwd),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Result(done.returncode, done.stdout, done.stderr)
