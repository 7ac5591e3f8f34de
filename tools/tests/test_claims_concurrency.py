"""claims: concurrent `claims add` calls from separate processes neither collide nor lose writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers_core import add_source, add_sq

from research_engine import claims, validate
from research_engine.schemas import validate as validate_schema

N = 64


@pytest.mark.slow
def test_64_concurrent_claims_add_give_64_distinct_ids_and_a_ledger_holding_all(locked_run):
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
    lines = locked_run.path("claims_log").read_bytes().split(b"\n")
    assert lines.pop() == b""  # every record is a whole line: none torn, none glued to another
    records = [json.loads(line) for line in lines]
    assert len(records) == N
    assert all(validate_schema(r, "claim-record") == [] for r in records)
    assert [r["id"] for r in records] == [f"CLM-{i:02d}" for i in range(1, N + 1)]  # appended in id order
    ledger = claims.load(locked_run)
    assert validate_schema(ledger, "claims") == []
    assert {c["id"] for c in ledger["claims"]} == printed
    assert {c["text"] for c in ledger["claims"]} == {
        f"Region {i} reports {1000 + i:,} tonnes." for i in range(N)
    }
    assert len(claims.active_claims(locked_run)) == N
    assert validate.validate_run(locked_run).ok
