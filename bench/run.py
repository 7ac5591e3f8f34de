"""Benchmark: wall time of a replayed headless run, and the share of time in fetch / extract / model / tools.

    .venv/bin/python bench/run.py [RUN_DIR] [--repeat N]

RUN_DIR defaults to the committed example (examples/*/ with a cassette). Each repeat replays the run
offline from its cassette into a temporary directory (`research-engine run BRIEF --replay CASSETTE`) and
reads the engine's own exclusive timers (engine.metering.Clock, kept in .state/engine.json):

- fetch:    HTTP time of page fetches and the verifier's re-fetches (served by the cassette);
- provider: HTTP time of search/API/model requests (served by the cassette);
- extract:  HTML -> passages for retrieved pages (the verifier's extraction is inside verify, so "tools");
- model:    the model's judgement calls (decompose, queries, select reasons, consolidate, verify, critic,
            write);
- tools:    everything else: selection, the claims gate, verify (re-extraction, checks), controller,
            report, artifact writes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))


def main() -> None:
    from research_engine.engine import loop
    from research_engine.engine.progress import Progress

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", help="a recorded run (default: the committed example)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run_dir = (
        Path(args.run)
        if args.run
        else sorted(p.parent.parent for p in (ROOT / "examples").glob("*/cassette/index.json"))[0]
    )
    walls, shares = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as scratch:
            options = loop.EngineOptions(replay=str(run_dir / "cassette"), output_path=scratch)
            started = time.perf_counter()
            outcome = loop.run(run_dir / "brief.md", options, progress=Progress.quiet())
            wall = time.perf_counter() - started
            timings = outcome.figures["timings"]
        walls.append(wall)
        total = sum(timings.values()) or 1.0
        shares.append({k: v / total for k, v in timings.items()})
    print(
        f"replayed {run_dir.name}: {args.repeat} run(s), wall time median {statistics.median(walls):.2f}s "
        f"(min {min(walls):.2f}s, max {max(walls):.2f}s)"
    )
    for cat in ("fetch", "provider", "extract", "model", "tools"):
        values = [s.get(cat, 0.0) for s in shares]
        print(f"  {cat:<9} {100 * statistics.median(values):5.1f}% of engine time")


if __name__ == "__main__":
    main()
