#!/usr/bin/env python3
"""Start-up time of the CLI, measured side by side with a bare interpreter.

Claude Code calls `research-engine` dozens of times a run, so start-up is a feature.
Prints the median wall time of N runs of each command and its ratio to `python -c pass`.

    .venv/bin/python bench/startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def median_ms(cmd: list[str], runs: int) -> float:
    subprocess.run(cmd, capture_output=True, check=False)  # warm the page cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    exe = shutil.which("research-engine", path=str(Path(sys.executable).parent)) or "research-engine"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "research-engine --version": [exe, "--version"],
        "research-engine brief check --help": [exe, "brief", "check", "--help"],
        "research-engine --help": [exe, "--help"],
    }
    base = None
    print(f"{'command':40} {'median ms':>10} {'x python':>9}")
    for name, cmd in cases.items():
        ms = median_ms(cmd, args.runs)
        base = base or ms
        print(f"{name:40} {ms:10.1f} {ms / base:9.2f}")


if __name__ == "__main__":
    main()
