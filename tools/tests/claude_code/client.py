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
import re
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENT_VERSION = "2.1.330"
PACKAGE = "@anthropic-ai/claude-code"
CACHE_VAR = "RESEARCH_ENGINE_CLAUDE_CODE_CACHE"
DUMMY_KEY = "sk-ant-test-dummy-key"


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
        "ANTHROPIC_API_KEY": DUMMY_KEY,
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


_ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
INPUT_BOX = "\u276f"  # the prompt mark of the interactive input box


def interactive(
    binary: Path,
    args: list[str],
    *,
    prompt: str,
    cwd: Path,
    env: dict[str, str],
    finished: Callable[[], bool],
    timeout: float = 120,
) -> str:
    """Claude Code's interactive UI in a pseudo-terminal: type `prompt` once the input box shows, wait until
    `finished()`, then end the session. Returns what the screen showed, escape sequences removed."""
    import pty  # POSIX only, like the suite

    pid, fd = pty.fork()
    if pid == 0:  # the child: nothing but exec (the parent has threads)
        os.chdir(cwd)
        os.execve(str(binary), [str(binary), *args], {**env, "TERM": "xterm-256color"})
    screen = b""
    typed_at = 0.0
    deadline = time.monotonic() + timeout
    try:
        while not (typed_at and finished()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"interactive session: not finished in {timeout} s: {screen[-2000:]!r}")
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    screen += os.read(fd, 65536)
                except OSError:  # the client exited
                    break
            if not typed_at and INPUT_BOX.encode() in screen:
                time.sleep(1.5)  # the box draws before it takes keys
                os.write(fd, prompt.encode())
                time.sleep(0.5)
                os.write(fd, b"\r")
                typed_at = time.monotonic()
    finally:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    return _ESCAPES.sub("", screen.decode(errors="replace"))
