"""Who verified: `verify prepare --agent` records the agent, close carries it, validate flags a stranger."""

from __future__ import annotations

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run

from research_engine import decompose, validate, verify
from research_engine.artifacts import read_markdown
from research_engine.errors import BadInput


@pytest.fixture
def run(brief_file, monkeypatch, httpserver):
    fast_verifier(monkeypatch)
    the_run = locked_private_run(brief_file)
    sq = decompose.add(the_run, "What does the operator report?", "factual")
    grounded_claim(the_run, httpserver, sq, "/report", "The operator reported 42 outages in 2023.")
    return the_run


def _close_all(run):
    sheet = verify.load_worksheet(run)
    for row in sheet["claims"]:
        verify.record(run, row["claim"], row["floor"], "as the fresh copy states")
    return verify.close(run)


def _identity_problems(run):
    return [p for p in validate.validate_run(run).problems if p.code == "verifier-identity"]


def test_the_verifier_agent_is_recorded_in_the_worksheet_and_the_contestation(run):
    out = verify.prepare(run, agent="research-verifier")
    assert out["prepared_by"] == ["research-verifier"]
    _close_all(run)
    meta, _ = read_markdown(run.path("contestation"))
    assert meta["prepared_by"] == ["research-verifier"]
    assert _identity_problems(run) == []


def test_the_plugin_namespaced_verifier_counts_as_the_verifier(run):
    verify.prepare(run, agent="research-engine:research-verifier")
    _close_all(run)
    assert _identity_problems(run) == []


def test_validate_flags_a_cycle_prepared_by_another_agent(run):
    verify.prepare(run, agent="general-purpose")
    problems = _identity_problems(run)
    assert problems and "general-purpose" in problems[0].message and problems[0].file == "verify/worksheet.md"
    _close_all(run)
    files = {p.file for p in _identity_problems(run)}
    assert files == {"verify/worksheet.md", "verify/contestation.md"}


def test_a_verification_without_a_named_agent_records_nothing_and_is_not_flagged(run):
    """The headless engine and a person at a shell name no agent; only a named stranger is flagged."""
    out = verify.prepare(run)
    assert out["prepared_by"] == []
    _close_all(run)
    meta, _ = read_markdown(run.path("contestation"))
    assert "prepared_by" not in meta
    assert _identity_problems(run) == []


def test_an_agent_name_that_is_not_a_name_is_refused(run):
    with pytest.raises(BadInput):
        verify.prepare(run, agent="research-verifier; rm -rf /")


def test_the_cli_records_the_agent(run, cli):
    code, _, _, env = cli(
        "verify", "prepare", "--run", str(run.root), "--agent", "research-verifier", "--json"
    )
    assert code == 0 and env["data"]["prepared_by"] == ["research-verifier"]
