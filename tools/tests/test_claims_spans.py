"""Evidence by reference: `claims add --span SQ-NN/SRC-NN#p05.s2` copies the verbatim quote from the recorded
source; every span form, bad ids (exit 2 naming the known ids), spans across passages (refused), the gate's
number check on the copied words, `validate` holding a recorded span to its quote, and concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers_core import add_sq, hand_edit_claim

from research_engine import claims, retrieve, validate
from research_engine.documents import Document, number_passages, sha256_hex
from research_engine.sentences import parse_span, quote_of, sentences
from research_engine.trace import iso
from research_engine.urls import canonical_key

HEADING = "Exception groups and except*"
PARAGRAPH = (
    "Python 3.11 added the except* clause. It matches the exceptions of an exception group by type. "
    "A plain except clause matches the group itself, never its members."
)
CLOSING = "An except* clause cannot be mixed with plain except clauses in one try statement."


def record(run, sq: str = "SQ-01", url: str = "https://docs.example.org/whatsnew/3.11.html") -> str:
    body = "\n".join((HEADING, PARAGRAPH, CLOSING)).encode("utf-8")
    doc = Document(
        kind="web",
        requested_url=url,
        final_url=url,
        status=200,
        retrieved_at=iso(),
        body=body,
        passages=number_passages([("heading", HEADING), ("paragraph", PARAGRAPH), ("paragraph", CLOSING)]),
        content_type="text/html",
        title="What's new in Python 3.11",
        canonical_key=canonical_key(url),
        extraction={"extractor": "test", "sha256": sha256_hex(body)},
    )
    return retrieve.record(run, sq, doc)


@pytest.fixture
def run(locked_run):
    add_sq(locked_run, "How does except* differ from a plain except clause?", "technical")
    record(locked_run)
    return locked_run


def add(cli, run, text: str, *spans: str, extra: tuple[str, ...] = ()) -> tuple[int, dict]:
    args = ["claims", "add", text, "--run", str(run.root), "--sq", "SQ-01"]
    for span in spans:
        args += ["--span", span]
    code, _, _, env = cli(*args, *extra, "--json")
    return code, env


def test_the_splitter_gives_stable_sentence_ids_and_verbatim_slices():
    assert sentences(PARAGRAPH) == [
        "Python 3.11 added the except* clause.",
        "It matches the exceptions of an exception group by type.",
        "A plain except clause matches the group itself, never its members.",
    ]
    assert sentences("Threads help, e.g. for I/O. See J. Smith and the U.S. Navy. Done.") == [
        "Threads help, e.g. for I/O.",
        "See J. Smith and the U.S. Navy.",
        "Done.",
    ]
    assert sentences("Use select_related() for joins. select_related() works by a join.") == [
        "Use select_related() for joins.",
        "select_related() works by a join.",
    ]
    assert sentences("A heading. With two parts.", kind="heading") == ["A heading. With two parts."]


@pytest.mark.parametrize(
    ("span", "quote"),
    [
        ("SQ-01/SRC-01#p02.s1", "Python 3.11 added the except* clause."),
        (
            "SQ-01/SRC-01#p02.s2-s3",
            "It matches the exceptions of an exception group by type. A plain except clause matches the "
            "group itself, never its members.",
        ),
        ("SQ-01/SRC-01#p02.s2-3", None),  # the short form of the same run
        ("SQ-01/SRC-01#p03", CLOSING),
        ("SQ-01/SRC-01#p02.s3-s3", "A plain except clause matches the group itself, never its members."),
    ],
)
def test_every_span_form_copies_the_verbatim_quote_and_records_both(cli, run, span, quote):
    expected = quote if quote is not None else claims.resolve_span(run, "SQ-01/SRC-01#p02.s2-s3").quote
    code, env = add(cli, run, "except* matches an exception group's members by type.", span)
    assert code == 0, env
    (evidence,) = env["data"]["claim"]["evidence"]
    assert evidence["quote"] == expected
    assert evidence["span"] == parse_span(span).local and evidence["source"] == "SQ-01/SRC-01"
    assert evidence["match"] == "exact" and evidence["passage"] == parse_span(span).passage
    assert validate.validate_run(run).ok


def test_a_heading_is_quoted_whole_beside_the_sentence_under_it(cli, run):
    code, env = add(
        cli, run, "Python 3.11 added except* for exception groups.", "SQ-01/SRC-01#p01", "SQ-01/SRC-01#p02.s1"
    )
    assert code == 0, env
    quotes = [e["quote"] for e in env["data"]["claim"]["evidence"]]
    assert quotes == [HEADING, "Python 3.11 added the except* clause."]


def test_two_verbatim_quotes_from_one_source_are_one_claim_each_checked(cli, run):
    code, env = add(
        cli,
        run,
        "Python 3.11 added except*, which matches an exception group's members by type.",
        extra=(
            "--source", "SQ-01/SRC-01", "--quote", "Python 3.11 added the except* clause.",
            "--source", "SQ-01/SRC-01", "--quote", "matches the exceptions of an exception group by type",
        ),
    )  # fmt: skip
    assert code == 0, env
    evidence = env["data"]["claim"]["evidence"]
    assert [e["source"] for e in evidence] == ["SQ-01/SRC-01", "SQ-01/SRC-01"]
    # Each quote is checked on its own: one that is not on the page refuses the claim.
    code, env = add(
        cli, run, "except* matches members.",
        extra=(
            "--source", "SQ-01/SRC-01", "--quote", "Python 3.11 added the except* clause.",
            "--source", "SQ-01/SRC-01", "--quote", "except* matches every member whatever its type",
        ),
    )  # fmt: skip
    assert code == 1 and env["errors"][0]["code"] == "quote-not-found"
    # The same words twice are a slip, not more evidence.
    code, env = add(cli, run, "Python 3.11 added except*.", "SQ-01/SRC-01#p02.s1", "SQ-01/SRC-01#p02.s1")
    assert code == 2 and env["errors"][0]["code"] == "duplicate-evidence"


def test_numbers_are_checked_across_the_quotes_of_a_claim_together(cli, run):
    code, env = add(
        cli, run, "Python 3.11 added the except* clause for exception groups.",
        "SQ-01/SRC-01#p01", "SQ-01/SRC-01#p02.s1",
    )  # fmt: skip
    assert code == 0, env


def test_the_verifier_checks_each_quote_of_one_source(cli, run, monkeypatch):
    from research_engine import verify
    from research_engine.verify.refetch import FreshCopy

    code, env = add(cli, run, "Python 3.11 added except* for exception groups.", "SQ-01/SRC-01#p01",
                    "SQ-01/SRC-01#p02.s1")  # fmt: skip
    assert code == 0, env
    claim = env["data"]["claim"]
    _, passages = retrieve.load_source(run, "SQ-01/SRC-01")
    changed = [p for p in passages if p.id != "p01"]  # the fresh copy lost the heading
    fresh = FreshCopy(
        source="SQ-01/SRC-01", url="https://docs.example.org/whatsnew/3.11.html", reachable=True, error=None,
        error_detail=None, status=200, content_type="text/html", fresh_sha256="b" * 64,
        retrieved_sha256="a" * 64, fetched_at=iso(), text="\n\n".join(p.text for p in changed),
        passages=changed, extractor="test",
    )  # fmt: skip
    row = verify.check_claim(claim, {"SQ-01/SRC-01": fresh})
    assert [e["quote_found"] for e in row["evidence"]] == [False, True]
    assert [e.get("span") for e in row["evidence"]] == ["p01", "p02.s1"]
    assert row["evidence"][1]["fresh_span"] == "p02.s1"  # where the fresh copy says it, by sentence id
    assert row["floor"] == "refuse"
    assert any("quote absent from the fresh copy of SQ-01/SRC-01" in r for r in row["floor_reasons"])


@pytest.mark.parametrize(
    ("span", "code_", "names"),
    [
        ("SQ-01/SRC-01#p09", "unknown-span", "p01, p02, p03"),
        ("SQ-01/SRC-01#p02.s7", "unknown-span", "p02.s1, p02.s2, p02.s3"),
        ("SQ-01/SRC-01#p02.s2-s9", "unknown-span", "p02.s1, p02.s2, p02.s3"),
        ("SQ-01/SRC-04#p02.s1", "unknown-span", "SQ-01/SRC-01"),
        ("SQ-01/SRC-01#p02.s2-p03.s1", "span-across-passages", "a span of its own"),
        ("SQ-01/SRC-01#p02.s3-s2", "bad-span", "run goes forward"),
        ("SQ-01/SRC-01:p02", "bad-span", "SQ-NN/SRC-NN#p05.s2"),
    ],
)
def test_a_span_naming_nothing_is_bad_input_naming_the_known_ids(cli, run, span, code_, names):
    code, env = add(cli, run, "except* matches members by type.", span)
    assert code == 2 and env["errors"][0]["code"] == code_
    assert names in env["errors"][0]["message"]
    assert not run.path("claims_log").exists()


def test_the_gate_still_checks_numbers_against_the_copied_words(cli, run):
    code, env = add(cli, run, "Python 3.12 added the except* clause.", "SQ-01/SRC-01#p02.s1")
    assert code == 1 and env["errors"][0]["code"] == "number-not-in-quote"
    code, env = add(cli, run, "Python 3.11 added the except* clause.", "SQ-01/SRC-01#p02.s1")
    assert code == 0, env


def test_spans_and_quotes_mix_in_one_claim(cli, run):
    record(run, url="https://docs.example.org/reference/compound_stmts.html")
    code, env = add(
        cli,
        run,
        "except* cannot be mixed with plain except clauses.",
        "SQ-01/SRC-01#p03",
        extra=("--source", "SQ-01/SRC-02", "--quote", "cannot be mixed with plain except clauses"),
    )
    assert code == 0, env
    evidence = env["data"]["claim"]["evidence"]
    assert [e["source"] for e in evidence] == ["SQ-01/SRC-02", "SQ-01/SRC-01"]
    assert "span" not in evidence[0] and evidence[1]["span"] == "p03"


def test_validate_holds_a_recorded_span_to_its_quote(cli, run):
    code, env = add(cli, run, "A plain except clause matches the group itself.", "SQ-01/SRC-01#p02.s3")
    assert code == 0
    clm = env["data"]["id"]
    # A hand edit that keeps the quote on the page but no longer the span's words.
    evidence = dict(env["data"]["claim"]["evidence"][0])
    evidence["quote"] = "A plain except clause matches the group itself"
    hand_edit_claim(run, clm, evidence=[evidence])
    report = validate.validate_run(run)
    assert not report.ok
    assert [p.code for p in report.problems] == ["span-mismatch"]


def test_quote_of_is_the_library_form_of_a_span():
    _, passages = None, number_passages([("heading", HEADING), ("paragraph", PARAGRAPH)])
    assert quote_of(parse_span("SQ-01/SRC-01#p02.s2"), passages) == sentences(PARAGRAPH)[1]


@pytest.mark.slow
def test_16_concurrent_claims_add_with_spans_give_distinct_ids_and_a_valid_ledger(run):
    n = 16
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    spans = ["SQ-01/SRC-01#p02.s1", "SQ-01/SRC-01#p02.s2", "SQ-01/SRC-01#p02.s3", "SQ-01/SRC-01#p03"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "research_engine", "claims", "add", f"Claim {chr(97 + i)} on except*.",
             "--run", str(run.root), "--sq", "SQ-01", "--span", spans[i % len(spans)], "--json"],
            stdout=subprocess.PIPE, text=True, env=env,
        )
        for i in range(n)
    ]  # fmt: skip
    outs = [json.loads(p.communicate(timeout=180)[0].strip().splitlines()[-1]) for p in procs]
    assert all(o["exit_code"] == 0 for o in outs), outs
    assert sorted(o["data"]["id"] for o in outs) == [f"CLM-{i:02d}" for i in range(1, n + 1)]
    assert len(claims.load(run)["claims"]) == n
    assert validate.validate_run(run).ok
