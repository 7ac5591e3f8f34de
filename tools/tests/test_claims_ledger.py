"""claims: retire, tensions, list, the rendered draft, and validate's cross-references."""

from __future__ import annotations

import pytest
from helpers_core import add_source, add_sq

from research_engine import claims
from research_engine.errors import BadInput, CheckFailed

TEXT = (
    "The river is 120 km long.\n\n"
    "Another survey measured it at 118 km in 2019.\n\n"
    "The basin holds 2.4 million people."
)


@pytest.fixture
def ledger_run(locked_run):
    add_sq(locked_run, "How long is the river?", "quantitative")
    add_source(locked_run, "SQ-01", TEXT, url="https://geo.example.org/river")
    claims.add_claim(
        locked_run, "SQ-01", "The river is 120 km long.", ["SQ-01/SRC-01"], ["The river is 120 km long."]
    )
    claims.add_claim(
        locked_run,
        "SQ-01",
        "A 2019 survey measured 118 km.",
        ["SQ-01/SRC-01"],
        ["measured it at 118 km in 2019"],
        confidence="low",
    )
    return locked_run


def test_retire_keeps_the_claim_marked_with_the_reason(ledger_run, cli):
    code, out, _, _ = cli(
        "claims", "retire", "CLM-02", "--run", ledger_run.root, "--why", "superseded by CLM-01"
    )
    assert code == 0 and out.strip() == "CLM-02 retired"
    ledger = claims.load(ledger_run)
    assert [c["id"] for c in claims.active_claims(ledger_run)] == ["CLM-01"]
    retired = claims.get_claim(ledger, "CLM-02")
    assert (retired["status"], retired["retired_why"]) == ("retired", "superseded by CLM-01")
    assert cli("claims", "list", "--run", ledger_run.root)[0] == 0  # renders the draft again
    body = ledger_run.path("draft").read_text(encoding="utf-8")
    assert "as of its first 3 records: 1 active claim, 1 retired" in body
    assert "## Retired claims" in body and "retired: superseded by CLM-01" in body
    code, _, _, env = cli("claims", "retire", "CLM-02", "--run", ledger_run.root, "--why", "again", "--json")
    assert code == 1 and env["errors"][0]["code"] == "already-retired"


def test_retiring_an_unknown_claim_is_bad_input(ledger_run, cli):
    code, _, _, env = cli("claims", "retire", "CLM-77", "--run", ledger_run.root, "--why", "x", "--json")
    assert code == 2 and env["errors"][0]["code"] == "unknown-claim"


def test_tension_add_and_resolve(ledger_run, cli):
    code, out, _, _ = cli(
        "claims",
        "tension",
        "add",
        "--run",
        ledger_run.root,
        "--claims",
        "CLM-01,CLM-02",
        "--about",
        "length differs by 2 km",
    )
    assert code == 0 and out.strip() == "T-01"
    assert [t["id"] for t in claims.open_tensions(ledger_run)] == ["T-01"]
    code, _, _, env = cli(
        "claims",
        "tension",
        "resolve",
        "T-01",
        "--run",
        ledger_run.root,
        "--resolution",
        "different measuring points",
        "--json",
    )
    assert code == 0 and env["data"]["tension"]["status"] == "resolved"
    assert claims.open_tensions(ledger_run) == []
    claims.refresh(ledger_run)
    body = ledger_run.path("draft").read_text(encoding="utf-8")
    assert (
        "**T-01** (CLM-01, CLM-02): length differs by 2 km *(resolved: different measuring points)*" in body
    )
    code, _, _, env = cli(
        "claims", "tension", "resolve", "T-01", "--run", ledger_run.root, "--resolution", "again", "--json"
    )
    assert code == 1 and env["errors"][0]["code"] == "already-resolved"


def test_a_tension_needs_two_existing_active_claims(ledger_run):
    with pytest.raises(BadInput) as caught:  # an id naming nothing in the run is bad input
        claims.add_tension(ledger_run, ["CLM-01", "CLM-09"], "x")
    assert "CLM-09" in caught.value.message
    claims.retire(ledger_run, "CLM-02", "wrong")
    with pytest.raises(CheckFailed, match="retired"):
        claims.add_tension(ledger_run, ["CLM-01", "CLM-02"], "x")


def test_claims_list_shows_active_and_retired_with_counts(ledger_run, cli):
    claims.retire(ledger_run, "CLM-02", "superseded")
    code, out, _, _ = cli("claims", "list", "--run", ledger_run.root)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("CLM-01  SQ-01  [medium]  The river is 120 km long.")
    assert lines[1].startswith("CLM-02  SQ-01  [low] (retired)")
    _, _, _, env = cli("claims", "list", "--run", ledger_run.root, "--status", "active", "--json")
    assert [c["id"] for c in env["data"]["claims"]] == ["CLM-01"]
    assert env["data"]["counts"] == {"active": 1, "retired": 1, "open_tensions": 0}


def test_ids_are_never_reused_after_retirement(ledger_run):
    claims.retire(ledger_run, "CLM-02", "wrong")
    new = claims.add_claim(
        ledger_run,
        "SQ-01",
        "The basin holds 2.4 million people.",
        ["SQ-01/SRC-01"],
        ["The basin holds 2.4 million people."],
    )
    assert new == "CLM-03"


def test_validate_passes_on_the_ledger_and_catches_a_tampered_quote(ledger_run, cli):
    claims.add_tension(ledger_run, ["CLM-01", "CLM-02"], "length")
    code, _, _, env = cli("validate", ledger_run.root, "--json")
    assert code == 0, env["errors"]
    ledger = ledger_run.path("claims_log")
    ledger.write_text(
        ledger.read_text().replace(
            '"quote":"The river is 120 km long."', '"quote":"The river is 150 km long."'
        )
    )
    code, _, _, env = cli("validate", ledger_run.root, "--json")
    assert code == 1
    assert any("CLM-01: its quote is no longer found in SQ-01/SRC-01" in p["message"] for p in env["errors"])


def test_validate_flags_a_claim_citing_a_source_that_is_gone(ledger_run, cli):
    ledger_run.path("source", sq="SQ-01", src="SRC-01").unlink()
    code, _, _, env = cli("validate", ledger_run.root, "--json")
    assert code == 1
    assert any("cites SQ-01/SRC-01, which is not in this run" in p["message"] for p in env["errors"])
