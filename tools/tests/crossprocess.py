"""Run the same code in fresh interpreters with different hash seeds, to test determinism honestly.

Comparing two results computed in one process cannot catch what changes between processes: set and
dict orders that follow string hashes (PYTHONHASHSEED), module-level caches, import order. A run is
reproducible only if a second process, started fresh, computes the same thing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def outputs_of_fresh_processes(code: str, seeds: tuple[str, ...] = ("0", "4242")) -> list[str]:
    """stdout of `code` run in one fresh interpreter per hash seed (cwd and sys.path: the tests directory)."""
    outputs = []
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(TESTS)}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=TESTS, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
    return outputs
