"""The Claude Code plugin's first-use install of the toolkit, run by the plugin's `bin/research-engine`
when the virtualenv of the plugin's version is missing: before this package is installed anywhere.

So it is a script on the standard library alone (`python -I selfinstall.py`; `-I` keeps the script's
directory, whose `trace.py` would shadow the standard library's, off `sys.path`). Under an exclusive lock on
`<data>/install.lock` (two first calls at once: one installs, the other waits and then runs), it creates
`<data>/venv-<version>`, upgrades pip there (the pip that Debian's Python 3.11 bundles cannot resolve the
toolkit's dependencies), installs the toolkit from the plugin root, checks that it starts, and marks the
virtualenv installed (`.installed`, written last, so a call cut short leaves nothing that looks ready).
Then it execs the launcher again, whose fast path runs the toolkit. pip's output goes to
`<data>/install.log`; the user sees one line. Virtualenvs of other versions are removed, except the most
recent one (a second session may still run the previous version). docs/claude-code.md.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_WAIT_SECONDS = 20 * 60  # longer than any pip install that is still making progress
NOT_CONFIGURED = 5  # docs/conventions.md: what the command needs is not there
UPSTREAM_FAILED = 6  # the package registry or the network failed (what usually stops an install)
BAD_INPUT = 2  # a path the file system refuses


class InstallFailed(Exception):
    def __init__(self, exit_code: int, code: str, message: str):
        super().__init__(message)
        self.exit_code, self.code, self.message = exit_code, code, message


def say(message: str) -> None:
    print(f"research-engine: {message}", file=sys.stderr, flush=True)


def is_ready(venv: Path) -> bool:
    """What the launcher's fast path checks: the install finished, and its interpreter still exists."""
    return (venv / ".installed").is_file() and os.access(venv / "bin" / "python", os.X_OK)


@contextlib.contextmanager
def install_lock(data: Path, venv: Path) -> Iterator[None]:
    """An exclusive `flock` on `<data>/install.lock` (the kernel drops it when its holder dies)."""
    fd = os.open(data / "install.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not announced:
                    say(f"waiting for another call that is installing the toolkit into {venv}")
                    announced = True
                if time.monotonic() > deadline:
                    raise InstallFailed(
                        UPSTREAM_FAILED,
                        "install-timeout",
                        f"another call has been installing the toolkit for {LOCK_WAIT_SECONDS // 60} "
                        f"minutes; see {data / 'install.log'}",
                    ) from None
                time.sleep(0.5)
        yield
    finally:
        os.close(fd)


def _last_error(log: Path) -> str:
    """pip's last `ERROR:` line, which names what failed (a package it could not fetch, a build)."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-200:]
    except OSError:
        return ""
    errors = [line.strip() for line in lines if line.strip().startswith("ERROR:")]  # also a build's, indented
    return errors[-1] if errors else ""


def install(root: Path, venv: Path, version: str, log: Path) -> None:
    """Create the virtualenv and install the toolkit into it from `root`."""
    say(
        f"first use of plugin version {version}: installing the toolkit into {venv} "
        "(a minute or so, once per version)"
    )
    if venv.exists():  # an install cut short
        shutil.rmtree(venv)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar=off"]
    steps = [
        ("creating the virtualenv", [sys.executable, "-m", "venv", str(venv)]),
        ("upgrading pip", [*pip, "--upgrade", "pip"]),
        ("installing the toolkit and its dependencies", [*pip, str(root)]),
        ("starting the toolkit", [str(venv / "bin" / "research-engine"), "--version"]),
    ]
    with log.open("w", encoding="utf-8") as out:
        for what, command in steps:
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                out.close()
                detail = _last_error(log)
                raise InstallFailed(
                    UPSTREAM_FAILED,
                    "install-failed",
                    f"could not install the toolkit: {what} failed (exit {done.returncode})"
                    + (f": {detail}" if detail else "")
                    + f"; the log is {log}",
                )
    marker = venv / ".installed"
    record = {"version": version, "root": str(root), "python": sys.executable, "at": time.time()}
    tmp = marker.with_name(f".installed.{os.getpid()}")
    tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(tmp, marker)


def prune(data: Path, keep: Path) -> None:
    """Remove the virtualenvs of other versions but the most recently installed one."""
    others = [p for p in data.glob("venv-*") if p.is_dir() and p != keep]
    others.sort(key=lambda p: (p / ".installed").stat().st_mtime if (p / ".installed").is_file() else 0)
    for old in others[:-1]:
        shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="selfinstall.py", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="the plugin root (this repository)")
    parser.add_argument("--data", type=Path, required=True, help="the plugin's persistent data directory")
    parser.add_argument("--version", required=True, help="the plugin's version")
    parser.add_argument("--launcher", required=True, help="bin/research-engine, run again once installed")
    parser.add_argument("--json", default="0", help="1: print the JSON envelope on failure")
    parser.add_argument("args", nargs="*", help="the research-engine arguments")
    opts = parser.parse_args(argv)
    root, data = opts.root.resolve(), opts.data
    venv = data / f"venv-{opts.version}"
    try:
        try:
            data.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InstallFailed(
                BAD_INPUT, "bad-path", f"cannot create the plugin's data directory {data}: {exc.strerror}"
            ) from None
        if not (root / "pyproject.toml").is_file():
            raise InstallFailed(
                NOT_CONFIGURED, "plugin-broken", f"{root} holds no pyproject.toml: reinstall the plugin"
            )
        with install_lock(data, venv):
            if not is_ready(venv):
                install(root, venv, opts.version, data / "install.log")
                prune(data, venv)
        if not is_ready(venv):
            raise InstallFailed(UPSTREAM_FAILED, "install-failed", f"{venv} is not usable after installing")
    except InstallFailed as failure:
        say(failure.message)
        if opts.json == "1":
            error = {"code": failure.code, "message": failure.message}
            envelope = {"schema_version": 1, "command": "", "ok": False, "exit_code": failure.exit_code}
            print(json.dumps({**envelope, "data": {}, "errors": [error], "warnings": []}))
        return failure.exit_code
    except KeyboardInterrupt:
        return 130
    os.execv(opts.launcher, [opts.launcher, *opts.args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
