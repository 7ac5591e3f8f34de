#!/usr/bin/env python3
"""`research-engine claims add` at 0, 300 and 1,000 existing claims, side by side with a bare interpreter.

    .venv/bin/python bench/claims.py [--adds 9] [--sizes 0,300,1000] [--imports]

For each size, a real run is made in a temporary directory through the library: a locked brief, one
sub-question, 25 sources recorded through `retrieve.record` (Documents built in memory, no network) whose
stored text holds every quote, and a ledger of that many claims added through `claims.add_claim` (the
grounding gate, the run lock, the id counter and the log; the in-process time of those adds is printed
too). Then `research-engine claims add ... --json` runs as a real subprocess, `--adds` times per size,
each a new claim quoting the same source, interleaved with `python -c pass` in the same loop so every
figure is measured under the same load. Printed: the median wall time of each and its ratio to the
median `python -c pass`. `--imports` also prints what `claims add` and `claims list` import of the heavy
libraries (cumulative import time from `python -X importtime`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

SOURCES = 25
PASSAGES = 50  # per source: claims use passages 0-39 of each source (1,000 in all), timed adds 40-49
BUILT_PER_SOURCE = 40
HEAVY = ("jsonschema", "yaml", "frontmatter", "typer", "filelock", "httpx", "trafilatura", "lxml")


def sentence(src: int, passage: int) -> str:
    return f"Station {src + 1} logged {1000 + passage * 7 + src} readings in week {passage + 1}."


def make_run(base: Path, claims_wanted: int) -> tuple[Path, float]:
    """A locked run with its sources and `claims_wanted` claims; returns (run root, seconds per add)."""
    import yaml

    from research_engine import brief, claims, decompose, retrieve, trace
    from research_engine.documents import Document, number_passages, sha256_hex
    from research_engine.urls import canonical_key

    brief_path = base / f"brief-{claims_wanted}.yaml"
    fields = {
        "objective": "How many readings did each station log?",
        "deliverable": "a cited memo",
        "output_path": str(base / f"runs-{claims_wanted}"),
    }
    brief_path.write_text(yaml.safe_dump(fields), encoding="utf-8")
    run = trace.open_run(brief.lock(brief_path).run_root)
    sq = decompose.add(run, "How many readings did each station log?", "quantitative")
    for src in range(SOURCES):
        text = "\n\n".join(sentence(src, p) for p in range(PASSAGES))
        url = f"https://stations.example.org/station-{src + 1}"
        body = text.encode("utf-8")
        retrieve.record(
            run,
            sq,
            Document(
                kind="web",
                requested_url=url,
                final_url=url,
                status=200,
                retrieved_at=trace.iso(),
                body=body,
                passages=number_passages([("paragraph", block) for block in text.split("\n\n")]),
                content_type="text/html",
                title=f"Station {src + 1}",
                canonical_key=canonical_key(url),
                access_tier="open",
                extraction={"extractor": "bench", "sha256": sha256_hex(body)},
            ),
        )
    started = time.perf_counter()
    for i in range(claims_wanted):
        src, passage = i % SOURCES, i // SOURCES
        quote = sentence(src, passage)
        claims.add_claim(run, sq, quote, [f"{sq}/SRC-{src + 1:02d}"], [quote], "medium")
    per_add = (time.perf_counter() - started) / claims_wanted if claims_wanted else 0.0
    return run.root, per_add


def add_command(exe: str, run: Path, k: int) -> list[str]:
    quote = sentence(0, BUILT_PER_SOURCE + k)
    return [exe, "claims", "add", quote, "--run", str(run), "--sq", "SQ-01"] + [
        "--source",
        "SQ-01/SRC-01",
        "--quote",
        quote,
        "--json",
    ]


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {proc.stdout[-500:]!r}")
    return elapsed


def imports(cmd: list[str], env: dict[str, str]) -> str:
    """The heavy libraries a command imports, with their cumulative import time."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "research_engine", *cmd[1:]],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    found = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if m and m.group(3) in HEAVY:
            found[m.group(3)] = int(m.group(1)) / 1000
    return ", ".join(f"{k} {v:.0f} ms" for k, v in sorted(found.items())) or "none of them"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=9, help="timed `claims add` calls per size (at most 10)")
    parser.add_argument("--sizes", default="0,300,1000", help="existing claims, comma separated (<= 1000)")
    parser.add_argument("--imports", action="store_true", help="also list the heavy imports of add and list")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not 1 <= args.adds <= PASSAGES - BUILT_PER_SOURCE or max(sizes) > SOURCES * BUILT_PER_SOURCE:
        raise SystemExit(
            f"--adds must be 1..{PASSAGES - BUILT_PER_SOURCE}, sizes <= {SOURCES * BUILT_PER_SOURCE}"
        )
    exe = shutil.which("research-engine", path=str(Path(sys.executable).parent)) or "research-engine"
    # The CLI runs this checkout's library, with bytecode caching on as an installed package has it.
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as scratch:
        runs = {}
        for n in sizes:
            runs[n], per_add = make_run(Path(scratch), n)
            shown = f"{per_add * 1000:.1f} ms per in-process add" if n else "no claims"
            print(f"built a run with {n:5d} claims ({shown})")
        subprocess.run([sys.executable, "-c", "pass"], check=False)  # warm the page cache
        base: list[float] = []
        adds: dict[int, list[float]] = {n: [] for n in sizes}
        for k in range(args.adds):  # interleaved: every figure sees the same load
            for n in sizes:
                base.append(timed([sys.executable, "-c", "pass"], env))
                adds[n].append(timed(add_command(exe, runs[n], k), env))
        python = statistics.median(base)
        print(f"\n{'command':42} {'median ms':>10} {'x python':>9}")
        print(f"{'python -c pass':42} {python:10.1f} {1.0:9.2f}")
        for n in sizes:
            ms = statistics.median(adds[n])
            print(f"{f'claims add --json at {n} claims':42} {ms:10.1f} {ms / python:9.2f}")
        if args.imports:
            n = max(sizes)
            listing = [exe, "claims", "list", "--run", str(runs[n]), "--json"]
            print(f"\nheavy imports at {n} claims:")
            print(
                f"  claims add:                         {imports(add_command(exe, runs[n], args.adds), env)}"
            )
            print(f"  claims list (renders the draft):    {imports(listing, env)}")
            print(f"  claims list (draft already fresh):  {imports(listing, env)}")


if __name__ == "__main__":
    main()
