"""ids: allocation never reuses an id, sorts numerically past 99, and is safe across processes."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from research_engine import ids
from research_engine.errors import BadInput


def test_ids_start_at_01_and_are_zero_padded(locked_run):
    assert ids.next_id(locked_run, "sq") == "SQ-01"
    assert ids.next_id(locked_run, "sq") == "SQ-02"
    assert ids.next_id(locked_run, "clm") == "CLM-01"
    assert ids.next_id(locked_run, "chl") == "CHL-01"
    assert ids.next_id(locked_run, "tension") == "T-01"


def test_source_ids_are_numbered_within_their_sub_question(locked_run):
    assert ids.next_id(locked_run, "src", sq="SQ-01") == "SRC-01"
    assert ids.next_id(locked_run, "src", sq="SQ-01") == "SRC-02"
    assert ids.next_id(locked_run, "src", sq="SQ-02") == "SRC-01"


def test_source_id_needs_a_sub_question(locked_run):
    with pytest.raises(BadInput):
        ids.next_id(locked_run, "src")


def test_unknown_kind_is_bad_input(locked_run):
    with pytest.raises(BadInput):
        ids.next_id(locked_run, "xyz")


def test_ids_grow_past_99_and_sort_numerically(locked_run):
    got = ids.allocate(locked_run, "clm", count=101)
    assert got[98] == "CLM-99" and got[99] == "CLM-100" and got[100] == "CLM-101"
    shuffled = list(reversed(got))
    assert sorted(shuffled, key=ids.sort_key) == got


def test_ids_are_never_reused_even_when_state_is_lost(locked_run):
    from research_engine import documents, retrieve

    doc = documents.Document(
        kind="web",
        requested_url="https://example.org/a",
        final_url=None,
        status=200,
        retrieved_at="2026-01-01T00:00:00Z",
        body=b"x" * 300,
        passages=documents.number_passages([("paragraph", "text " * 60)]),
    )
    assert retrieve.record(locked_run, "SQ-01", doc) == "SQ-01/SRC-01"
    locked_run.path("state", name="ids").unlink()
    assert ids.next_id(locked_run, "src", sq="SQ-01") == "SRC-02"


def test_threads_allocate_distinct_ids(locked_run):
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: ids.next_id(locked_run, "clm"), range(40)))
    assert sorted(got, key=ids.sort_key) == [f"CLM-{i:02d}" for i in range(1, 41)]


def _spawn(n: int, args: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "research_engine", *args]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outs.append(out.strip())
    return outs


@pytest.mark.slow
def test_64_processes_allocating_claims_get_64_distinct_ids(locked_run):
    got = _spawn(64, ["ids", "next", "--run", str(locked_run.root), "clm"])
    assert sorted(got, key=ids.sort_key) == [f"CLM-{i:02d}" for i in range(1, 65)]


@pytest.mark.slow
def test_64_processes_allocating_sources_get_64_distinct_ids(locked_run):
    from research_engine import decompose

    decompose.add(locked_run, "What does the evidence say?", "factual")  # a SRC id needs its sub-question
    got = _spawn(64, ["ids", "next", "--run", str(locked_run.root), "src", "--sq", "SQ-01"])
    assert sorted(got, key=ids.sort_key) == [f"SRC-{i:02d}" for i in range(1, 65)]


def test_parse_source_ref():
    assert ids.parse_source_ref("SQ-01/SRC-02") == ("SQ-01", "SRC-02")
    with pytest.raises(BadInput):
        ids.parse_source_ref("SQ-01/../SRC-02")
