"""verify prepare/record/close against the verifier's own fresh copy, served on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from core_testkit import allow_robots, fast_verifier, fetch_into_run, locked_private_run, page, serve

from research_engine import claims, decompose, runrecord, verify
from research_engine.errors import BadInput, CheckFailed

GOOD = (
    "Solar capacity in Freedonia reached 42 gigawatts in 2023, according to the national grid operator. "
    "The operator publishes its capacity register every quarter."
)


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file)


def _one_claim(
    run,
    httpserver,
    text="Freedonia had 42 gigawatts of solar capacity in 2023.",
    quote="Solar capacity in Freedonia reached 42 gigawatts in 2023",
):
    allow_robots(httpserver)
    url = serve(httpserver, "/grid", page("Grid report", GOOD))
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    ref = fetch_into_run(run, sq, url)
    return claims.add_claim(run, sq, text, [ref], [quote]), ref


def _serve_changed(httpserver, path, html_text):
    httpserver.clear()
    allow_robots(httpserver)
    serve(httpserver, path, html_text)


def test_prepare_refetches_into_evidence_and_sets_a_supported_floor(run, httpserver):
    clm, ref = _one_claim(run, httpserver)
    out = verify.prepare(run)
    row = out["claims"][0]
    assert (row["claim"], row["floor"], row["floor_reasons"]) == (clm, "supported", [])
    entry = row["evidence"][0]
    assert (
        entry["reachable"]
        and entry["quote_found"]
        and entry["match"] == "exact"
        and entry["changed"] is False
    )
    assert (run.root / "verify" / "evidence" / "SQ-01-SRC-01.md").is_file()
    assert (run.root / entry["evidence_file"]).is_file()
    assert (run.root / "verify" / "worksheet.md").is_file()


def test_prepare_judges_the_fresh_copy_not_the_retrieved_one(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    _serve_changed(
        httpserver, "/grid", page("Grid report", "Solar capacity in Freedonia reached 17 gigawatts.")
    )
    row = verify.prepare(run)["claims"][0]
    assert row["floor"] == "refuse"
    assert row["evidence"][0]["changed"] is True
    assert any("quote absent from the fresh copy" in r for r in row["floor_reasons"])
    assert row["evidence"][0]["closest"]


def test_record_cannot_mark_supported_a_quote_absent_from_the_fresh_copy(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    _serve_changed(httpserver, "/grid", page("Grid report", "This page has moved elsewhere entirely."))
    verify.prepare(run)
    with pytest.raises(CheckFailed) as exc:
        verify.record(run, clm, "supported", "looks fine to me")
    assert exc.value.code == "verdict-below-floor"
    sheet = verify.load_worksheet(run)
    chl = sheet["challenges"][0]
    assert (chl["verdict"], chl["requested_verdict"], chl["forced"]) == ("refuse", "supported", True)


def test_record_cannot_mark_supported_a_claim_whose_source_left_the_run(run, httpserver):
    clm, ref = _one_claim(run, httpserver)
    (run.root / "retrieve" / "SQ-01" / "SRC-01.md").unlink()  # the citation now points at nothing
    row = verify.prepare(run)["claims"][0]
    assert (row["cited"], row["floor"]) == (False, "refuse")
    with pytest.raises(CheckFailed):
        verify.record(run, clm, "partial", "some support")
    assert verify.load_worksheet(run)["challenges"][0]["verdict"] == "refuse"


def test_a_claim_number_missing_from_its_quote_is_flagged_and_cannot_be_supported(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    # The gate at entry stops such a claim; a hand-edited ledger is how one slips through.
    log = run.path("claims_log")
    (record,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    record["text"] = "Freedonia had 45 gigawatts of solar capacity in 2023."
    log.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert claims.load(run)["claims"][0]["text"] == record["text"]
    row = verify.prepare(run)["claims"][0]
    assert row["numbers"] == {"ok": False, "missing": ["45"]}
    assert row["floor"] == "refuse"
    with pytest.raises(CheckFailed):
        verify.record(run, clm, "supported", "numbers look right")


def test_a_stricter_verdict_than_the_floor_is_recorded_as_given(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    verify.prepare(run)
    chl = verify.record(run, clm, "partial", "the register is quarterly; the year figure is an estimate")
    assert (chl["verdict"], chl["floor"], chl["forced"]) == ("partial", "supported", False)


def test_an_unreachable_source_without_corroboration_is_refused(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    _serve_changed(httpserver, "/grid", "gone")
    httpserver.clear()
    allow_robots(httpserver)
    httpserver.expect_request("/grid").respond_with_data("gone", status=404)
    row = verify.prepare(run)["claims"][0]
    assert row["all_unreachable"] and row["floor"] == "refuse"
    with pytest.raises(CheckFailed):
        verify.record(run, clm, "partial", "probably fine")


def test_a_corroboration_query_lifts_unreachable_to_partial_and_only_once(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    httpserver.clear()
    allow_robots(httpserver)
    httpserver.expect_request("/grid").respond_with_data("gone", status=404)
    verify.prepare(run)
    chl = verify.record(
        run,
        clm,
        "partial",
        "the operator's press release repeats the figure",
        corroboration_query="Freedonia solar capacity 2023 gigawatts",
    )
    assert (chl["verdict"], chl["floor"]) == ("partial", "partial")
    verify.close(run)
    # next cycle: the same claim may not spend a second corroboration query
    _advance_cycle(run)
    verify.prepare(run)
    with pytest.raises(CheckFailed) as exc:
        verify.record(run, clm, "partial", "again", corroboration_query="another search")
    assert exc.value.code == "corroboration-exhausted"
    assert any(e["kind"] == "corroboration-refused" for e in runrecord.read(run)["events"])


def _advance_cycle(run):
    from research_engine import controller

    assert controller.control(run)["action"] != "stop"


def test_a_second_verdict_in_the_same_cycle_is_refused(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    verify.prepare(run)
    verify.record(run, clm, "supported", "quote matches")
    with pytest.raises(CheckFailed) as exc:
        verify.record(run, clm, "refuse", "changed my mind")
    assert exc.value.code == "already-judged"


def test_record_needs_prepare_first(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    with pytest.raises(BadInput) as exc:
        verify.record(run, clm, "supported", "fine")
    assert exc.value.code == "not-prepared"


def test_close_writes_the_summary_and_archives_the_previous_cycle(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    _serve_changed(httpserver, "/grid", page("Grid report", "Nothing about capacity here at all, sorry."))
    verify.prepare(run)
    out = verify.close(run)  # the refuse floor is recorded mechanically
    assert out["auto_refused"] == [clm]
    assert out["summary"] == {
        "checked": 1,
        "supported": 0,
        "partial": 0,
        "refused": 1,
        "checkable": 1,
        "grounding_score": 0.0,
    }
    record = runrecord.read(run)
    assert record["refused_ever"] is True and record["refused_claims"] == [clm]
    assert record["grounding"]["refused"] == 1
    _advance_cycle(run)
    _serve_changed(httpserver, "/grid", page("Grid report", GOOD))
    verify.prepare(run)
    verify.record(run, clm, "supported", "the page is back")
    out = verify.close(run)
    assert out["archived"] == "verify/contestation.cycle-01.md"
    archived = verify.all_contestations(run)
    assert [m["cycle"] for m in archived] == [1, 2]
    assert archived[0]["challenges"][0]["verdict"] == "refuse"
    assert runrecord.read(run)["refused_ever"] is True  # refusals are never forgotten


def test_close_refuses_while_a_judgeable_claim_has_no_verdict(run, httpserver):
    clm, _ = _one_claim(run, httpserver)
    verify.prepare(run)
    with pytest.raises(CheckFailed) as exc:
        verify.close(run)
    assert exc.value.code == "unjudged-claims" and clm in exc.value.message


def test_floor_of_is_strictest_first():
    entries = [{"source": "SQ-01/SRC-01", "in_run": True, "reachable": True, "quote_found": True}]
    assert verify.floor_of(True, entries, True, [], None) == ("supported", [])
    half = entries + [{"source": "SQ-01/SRC-02", "in_run": True, "reachable": False, "quote_found": None}]
    assert verify.floor_of(True, half, True, [], None)[0] == "partial"
    assert verify.floor_of(True, half, False, ["9%"], None)[0] == "refuse"
    assert verify.floor_of(False, [], True, [], None)[0] == "refuse"


def test_the_worksheet_and_contestation_schemas_share_one_challenge_shape():
    from research_engine.schemas import load_schema

    assert load_schema("worksheet")["$defs"]["challenge"] == load_schema("contestation")["$defs"]["challenge"]
