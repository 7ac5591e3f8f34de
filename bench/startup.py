#!/usr/bin/env python3
"""Start-up time of the CLI, measured side by side with a bare interpreter.

Claude Code calls `research-engine` dozens of times a run, so start-up is a feature. This builds a real
locked run (a sub-question, a source fetched from a local server, a claim) through the CLI itself, then
times each command N times, round-robin so machine noise falls on every command alike, and prints the
median wall time and its ratio to `python -c pass` measured in the same rounds. Commands that write
(`ids next`, `control`) run against a fresh copy of the run each time (the copy is not timed), so every
call does the same work.

    .venv/bin/python bench/startup.py [--runs 21] [--compare OTHER/bin/research-engine ...]

Commands run with bytecode caching on even where PYTHONDONTWRITEBYTECODE is set (as on these machines): an
installed package has its .pyc files (pip compiles a wheel's modules; an editable install writes them on the
first call), so compiling the package's source on every call would time something users never pay.

`--cpu` times the CPU the command used instead of wall time (steadier on a busy machine). `--compare`
(repeatable) times other installations in the same rounds (the code before a change, or
another typer, installed in another venv) and prints their medians and ratios beside this one's.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

FILLER = (
    "The study was run over three months by a team that visited each district in turn, recorded every "
    "answer on paper and typed the forms into a shared sheet at the end of each week."
)
PAGE = (
    "<html><head><title>Survey</title></head><body><article><h1>Survey</h1>"
    + "".join(f"<p>{FILLER} Paragraph {i}.</p>" for i in range(1, 6))
    + "<p>The survey counted 42 respondents in the sample.</p>"
    + "<p>Closing words on what the figures mean for the region and for the next round.</p>"
    + "</article></body></html>"
)
CLAIM = "The survey counted 42 respondents in the sample."
CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _call(exe: str, *args: str) -> dict:
    proc = subprocess.run([exe, *args, "--json"], capture_output=True, text=True, check=False, env=CHILD_ENV)
    if proc.returncode != 0:
        raise SystemExit(f"setup failed: research-engine {' '.join(args)}\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["data"]


def build_run(exe: str, base: Path) -> Path:
    """A locked run with SQ-01, SQ-01/SRC-01 (fetched from a loopback server) and CLM-01."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        brief = base / "brief.yaml"
        brief.write_text(
            "objective: How many people answered the survey?\ndeliverable: a cited memo\n", encoding="utf-8"
        )
        root = Path(_call(exe, "brief", "lock", str(brief), "--output-path", str(base / "runs"))["run_root"])
        _call(exe, "sq", "add", "How many people answered?", "--run", str(root), "--type", "quantitative")
        url = f"http://127.0.0.1:{server.server_address[1]}/survey"
        flags = ("--allow-private", "--ignore-robots")
        _call(exe, "fetch", url, "--run", str(root), "--sq", "SQ-01", *flags)
        cite = ("--source", "SQ-01/SRC-01", "--quote", CLAIM)
        _call(exe, "claims", "add", CLAIM, "--run", str(root), "--sq", "SQ-01", *cite)
    finally:
        server.shutdown()
    return root


def time_ms(cmd: list[str], before: Callable[[], None] | None, cpu: bool = False) -> float:
    """Wall time of one run of `cmd`, or with `cpu` the CPU time (user + system) the child used."""
    if before is not None:
        before()
    start, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, check=False, env=CHILD_ENV)
    if cpu:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime) * 1000
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument(
        "--cpu", action="store_true", help="time CPU used (user + system), steadier on a busy machine"
    )
    parser.add_argument(
        "--compare", action="append", default=[], help="another research-engine executable (repeatable)"
    )
    args = parser.parse_args()
    exe = shutil.which("research-engine", path=str(Path(sys.executable).parent)) or "research-engine"
    exes = {"this": exe} | {f"compare {i}": path for i, path in enumerate(args.compare, 1)}

    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        base = Path(tmp)
        template = build_run(exe, base)
        work = base / "work" / template.name

        def fresh() -> None:
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)

        fresh()
        commands: dict[str, tuple[list[str], bool]] = {
            "--version": (["--version"], False),
            "--help": (["--help"], False),
            "brief check --help": (["brief", "check", "--help"], False),
            "ids next": (["ids", "next", "clm", "--run", str(work)], True),
            "claims list": (["claims", "list", "--run", str(work)], False),
            "control": (["control", "--run", str(work)], True),
            "sq list": (["sq", "list", "--run", str(work)], False),
        }
        for name, (argv, _) in commands.items():  # each must succeed, or its timing means nothing
            for label, path in exes.items():
                fresh()
                proc = subprocess.run(
                    [path, *argv], capture_output=True, text=True, check=False, env=CHILD_ENV
                )
                if proc.returncode != 0:
                    raise SystemExit(
                        f"{label}: research-engine {name} exited {proc.returncode}\n{proc.stderr}"
                    )

        cases: dict[tuple[str, str], tuple[list[str], Callable[[], None] | None]] = {
            ("python -c pass", ""): ([sys.executable, "-c", "pass"], None)
        }
        for name, (argv, writes) in commands.items():
            for label, path in exes.items():
                cases[(name, label)] = ([path, *argv], fresh if writes else None)
        times: dict[tuple[str, str], list[float]] = {key: [] for key in cases}
        for cmd, before in cases.values():  # warm the page cache
            time_ms(cmd, before)
        for _ in range(args.runs):
            for key, (cmd, before) in cases.items():
                times[key].append(time_ms(cmd, before, args.cpu))

    median = {key: statistics.median(values) for key, values in times.items()}
    base_ms = median[("python -c pass", "")]
    what = "CPU time" if args.cpu else "wall time"
    print(f"{what}, median of {args.runs} runs, round-robin; python -c pass: {base_ms:.1f} ms")
    for label, path in exes.items():
        print(f"{label}: {path}")
    print(f"{'command':20}" + "".join(f" {label + ' ms':>14} {'x python':>8}" for label in exes))
    for name in commands:
        cells = "".join(
            f" {median[(name, label)]:14.1f} {median[(name, label)] / base_ms:8.2f}" for label in exes
        )
        print(f"{name:20}{cells}")


if __name__ == "__main__":
    main()
