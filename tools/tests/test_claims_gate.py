"""claims: the grounding gate at entry (`claims add`)."""

from __future__ import annotations

import json

import pytest
from helpers_core import add_source, add_sq

from research_engine import claims
from research_engine.errors import BadInput, CheckFailed
from research_engine.schemas import validate

PAGE = (
    "Household survey 2023\n\n"
    "In 2023 the programme reached 3.5 million households in 12 regions.\n\n"
    "Coverage rose by 4% compared with 2022, the ministry said."
)


@pytest.fixture
def run_with_sources(locked_run):
    sq = add_sq(locked_run, "How many households did the programme reach?", "quantitative")
    add_source(locked_run, sq, PAGE, url="https://stats.example.org/survey")
    add_source(
        locked_run,
        sq,
        "A second page that says 3.5 million households were reached.",
        url="https://news.example.com/story",
    )
    return locked_run


def test_a_grounded_claim_is_recorded_with_its_evidence(run_with_sources, cli):
    code, out, _, env = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SQ-01/SRC-01",
        "--quote",
        "the programme reached 3.5 million households",
        "--confidence",
        "high",
        "The programme reached 3.5 million households in 2023.",
        "--json",
    )
    assert code == 1  # 2023 is in the claim but not in the quote
    assert env["errors"][0]["code"] == "number-not-in-quote" and "2023" in env["errors"][0]["message"]
    code, _, _, env = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SQ-01/SRC-01",
        "--quote",
        "In 2023 the programme reached 3.5 million households",
        "--confidence",
        "high",
        "The programme reached 3,500,000 households in 2023.",
        "--json",
    )
    assert code == 0 and env["data"]["id"] == "CLM-01"
    (line,) = run_with_sources.path("claims_log").read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert validate(record, "claim-record") == []
    assert (record["event"], record["id"]) == ("claim-added", "CLM-01")
    ledger = claims.load(run_with_sources)
    assert validate(ledger, "claims") == []
    claim = ledger["claims"][0]
    assert env["data"]["claim"] == claim
    assert claim["evidence"] == [
        {
            "source": "SQ-01/SRC-01",
            "quote": "In 2023 the programme reached 3.5 million households",
            "match": "exact",
            "score": 1.0,
            "passage": "p02",
        }
    ]
    assert (claim["status"], claim["confidence"], claim["cycle"]) == ("active", "high", 1)
    assert not run_with_sources.path("draft").exists()  # an add appends to the log and renders nothing
    code, _, _, _ = cli("claims", "list", "--run", run_with_sources.root)
    assert code == 0
    body = run_with_sources.path("draft").read_text(encoding="utf-8")
    assert "as of its first record:" in body
    assert "## SQ-01: How many households did the programme reach?" in body
    assert "SQ-01/SRC-01 [p02]" in body


def test_citing_a_source_that_does_not_exist_exits_1_naming_it(run_with_sources, cli):
    code, _, err, env = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SQ-01/SRC-01",
        "--source",
        "SQ-01/SRC-09",
        "--quote",
        "3.5 million households",
        "Reached 3.5 million households.",
        "--json",
    )
    assert code == 1
    assert "SQ-01/SRC-09" in env["errors"][0]["message"] and "SRC-01" not in env["errors"][0]["message"]
    assert env["data"]["offending_sources"] == ["SQ-01/SRC-09"]
    assert not run_with_sources.path("claims_log").exists()


def test_a_source_without_stored_text_fails_the_gate(run_with_sources):
    add_source(run_with_sources, "SQ-01", "", url="https://empty.example.org/")
    with pytest.raises(CheckFailed) as caught:
        claims.add_claim(run_with_sources, "SQ-01", "Something.", ["SQ-01/SRC-03"], ["anything at all"])
    assert caught.value.problems[0].code == "no-stored-text" and "SQ-01/SRC-03" in caught.value.message


def test_a_quote_with_one_changed_number_is_rejected_with_the_closest_passage(run_with_sources, cli):
    code, _, err, env = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SQ-01/SRC-01",
        "--quote",
        "the programme reached 3.6 million households",
        "The programme reached 3.6 million households.",
        "--json",
    )
    assert code == 1
    assert env["errors"][0]["code"] == "quote-not-found"
    assert "[p02]" in env["errors"][0]["message"]
    assert env["data"]["not_found"][0]["closest"] == "the programme reached 3.5 million households"
    code, _, err, _ = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SQ-01/SRC-01",
        "--quote",
        "the programme reached 3.6 million households",
        "The programme reached 3.6 million households.",
    )
    assert "closest passage [p02]" in err


def test_a_normalized_match_is_recorded_as_normalized(run_with_sources):
    clm = claims.add_claim(
        run_with_sources,
        "SQ-01",
        "Coverage rose by 4%.",
        ["SQ-01/SRC-01"],
        ["Coverage  rose by 4%\ncompared with\u00a02022"],
    )
    (ev,) = claims.get_claim(claims.load(run_with_sources), clm)["evidence"]
    assert ev["match"] == "normalized" and ev["passage"] == "p03" and 0.8 < ev["score"] < 1.0


def test_one_quote_may_serve_several_sources_only_if_found_in_each(run_with_sources):
    clm = claims.add_claim(
        run_with_sources,
        "SQ-01",
        "3.5 million households were reached.",
        ["SQ-01/SRC-01", "SQ-01/SRC-02"],
        ["3.5 million households"],
    )
    assert [e["source"] for e in claims.get_claim(claims.load(run_with_sources), clm)["evidence"]] == [
        "SQ-01/SRC-01",
        "SQ-01/SRC-02",
    ]
    with pytest.raises(CheckFailed) as caught:
        claims.add_claim(
            run_with_sources,
            "SQ-01",
            "Coverage rose.",
            ["SQ-01/SRC-01", "SQ-01/SRC-02"],
            ["Coverage rose by 4%"],
        )
    assert "SQ-01/SRC-02" in caught.value.message


def test_mismatched_quote_and_source_counts_are_bad_input(run_with_sources, cli):
    code, _, _, env = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SQ-01/SRC-01",
        "--quote",
        "3.5 million",
        "--quote",
        "12 regions",
        "--quote",
        "4%",
        "x",
        "--json",
    )
    assert code == 2 and env["errors"][0]["code"] == "quote-source-mismatch"


def test_an_unknown_sub_question_fails(run_with_sources):
    with pytest.raises(BadInput) as caught:
        claims.add_claim(run_with_sources, "SQ-07", "x", ["SQ-01/SRC-01"], ["3.5 million households"])
    assert caught.value.code == "unknown-sub-question"


def test_a_malformed_source_reference_is_bad_input(run_with_sources, cli):
    code, _, _, env = cli(
        "claims",
        "add",
        "--run",
        run_with_sources.root,
        "--sq",
        "SQ-01",
        "--source",
        "SRC-01",
        "--quote",
        "3.5 million households",
        "x",
        "--json",
    )
    assert code == 2 and env["errors"][0]["code"] == "bad-source-ref"
