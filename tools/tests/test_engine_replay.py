"""The committed example replays offline with no difference (README's first command: test_repo_docs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_run() -> Path:
    runs = sorted(p.parent.parent for p in EXAMPLES.glob("*/cassette/index.json"))
    assert runs, "examples/ holds no recorded run"
    return runs[0]


def test_replay_of_the_committed_example_reports_no_difference(cli):
    code, out, _, env = cli("replay", str(example_run()), "--json")
    assert code == 0, out
    assert env["data"]["identical"] is True
    assert env["data"]["differences"] == [] and env["data"]["cassette_misses"] == []
    assert env["data"]["compared_files"] > 20


def test_a_diverging_trace_is_reported(cli, tmp_path):
    import shutil

    copy = tmp_path / example_run().name
    shutil.copytree(example_run(), copy)
    draft = copy / "consolidate" / "synthesis.draft.md"
    draft.write_text(draft.read_text() + "\nA line nobody replays.\n")
    code, out, _, env = cli("replay", str(copy), "--json")
    assert code == 1
    assert [d["path"] for d in env["data"]["differences"]] == ["consolidate/synthesis.draft.md"]
