#!/usr/bin/env python3
"""Wall-clock of `research-engine batch` over twelve briefs: one worker, N workers, and Ray, side by side.

The corpus is the committed real documentation pages (tools/tests/fixtures/docs) served on loopback by the
corpus server; the briefs are tools/tests/test_batch.py's twelve objectives at depth quick. Each mode runs
the same briefs into its own output directory in one sitting, in rounds that alternate the order of the
modes, and the median per mode is reported with the speed-up over one worker.

    python bench/batch.py                     # workers 1 and 2, one round
    python bench/batch.py --workers 2 --ray --rounds 2 --out bench/results/batch.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "tests"))

from test_batch import OBJECTIVES  # noqa: E402

from research_engine.corpus import CorpusServer  # noqa: E402


def one_batch(
    mode: list[str], briefs: list[Path], out: Path, env: dict[str, str], host: str
) -> tuple[float, int]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "research_engine", "batch", *map(str, briefs), *mode]
        + ["--output-path", str(out), "--allow-host", host, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"batch {' '.join(mode)} exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)["data"]["totals"]["with_deliverable"]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ray", action="store_true", help="also a local Ray instance with --workers workers")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    modes = {"workers 1": ["--workers", "1"], f"workers {args.workers}": ["--workers", str(args.workers)]}
    if args.ray:
        modes[f"ray local, {args.workers} workers"] = ["--ray", "local", "--workers", str(args.workers)]
    seconds: dict[str, list[float]] = {name: [] for name in modes}
    with tempfile.TemporaryDirectory(prefix="re-bench-batch-") as scratch:
        work = Path(scratch)
        briefs = []
        for n, objective in enumerate(OBJECTIVES, 1):
            path = work / "briefs" / f"{n:02d}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            fields = {"objective": objective, "deliverable": "a short cited answer", "output_path": "x"}
            path.write_text(yaml.safe_dump({**fields, "depth": "quick"}), encoding="utf-8")
            briefs.append(path)
        server = CorpusServer(ROOT / "tools" / "tests" / "fixtures" / "docs").start()
        host = server.url.split("//", 1)[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY"))}
        env.update(SEARXNG_URL=server.url, PYTHONPATH=str(ROOT / "tools"))
        try:
            for round_ in range(args.rounds):
                order = list(modes) if round_ % 2 == 0 else list(reversed(modes))
                for name in order:
                    env["RESEARCH_ENGINE_CACHE_DIR"] = str(work / f"cache-{round_}-{name}")
                    took, delivered = one_batch(modes[name], briefs, work / f"out-{round_}-{name}", env, host)
                    seconds[name].append(took)
                    print(f"round {round_ + 1}: {name}: {took:.1f} s, {delivered}/12 with a deliverable")
        finally:
            server.stop()
    base = statistics.median(seconds["workers 1"])
    report = {
        "briefs": len(OBJECTIVES),
        "cores": os.cpu_count(),
        "rounds": args.rounds,
        "modes": {
            name: {
                "median_seconds": round(statistics.median(v), 2),
                "speedup": round(base / statistics.median(v), 2),
            }
            for name, v in seconds.items()
        },
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
