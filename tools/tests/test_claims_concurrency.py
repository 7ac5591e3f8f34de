"""claims: concurrent `claims add` calls from separate processes neither collide nor lose writes."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers_core import add_source, add_sq

from research_engine import claims
from research_engine.artifacts import read_markdown
from research_engine.schemas import validate

N = 32


def test_32_concurrent_claims_add_give_32_distinct_ids_and_a_draft_holding_all(locked_run):
    add_sq(locked_run, "What do the figures say?", "quantitative")
    text = "\n\n".join(f"Figure {i} reports {1000 + i} tonnes in region {i}." for i in range(N))
    add_source(locked_run, "SQ-01", text, url="https://data.example.org/figures")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "research_engine",
                "claims",
                "add",
                "--run",
                str(locked_run.root),
                "--sq",
                "SQ-01",
                "--source",
                "SQ-01/SRC-01",
                "--quote",
                f"reports {1000 + i} tonnes in region {i}",
                f"Region {i} reports {1000 + i:,} tonnes.",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(N)
    ]
    results = [(p.wait(timeout=180), p.stdout.read().strip(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [r[0] for r in results] == [0] * N, [r[2] for r in results if r[0]]
    printed = {r[1] for r in results}
    assert printed == {f"CLM-{i:02d}" for i in range(1, N + 1)}
    meta, _ = read_markdown(locked_run.path("draft"))
    assert validate(meta, "claims") == []
    assert sorted(c["id"] for c in meta["claims"]) == sorted(printed)
    assert {c["text"] for c in meta["claims"]} == {
        f"Region {i} reports {1000 + i:,} tonnes." for i in range(N)
    }
    assert len(claims.active_claims(locked_run)) == N
