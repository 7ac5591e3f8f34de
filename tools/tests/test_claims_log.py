"""claims: the ledger's log (consolidate/claims.jsonl), torn lines, the id floor, the draft, migration."""

from __future__ import annotations

import json

import pytest
from helpers_core import add_source, add_sq

from research_engine import claims, eventlog, ids, runrecord, validate
from research_engine.artifacts import render_markdown
from research_engine.claims import log
from research_engine.errors import BadInput, CheckFailed
from research_engine.schemas import load_schema
from research_engine.schemas import validate as validate_schema
from research_engine.vocabulary import ClaimStatus, Confidence, LedgerEvent, QuoteMatch, TensionStatus

TEXT = (
    "The river is 120 km long.\n\n"
    "Another survey measured it at 118 km in 2019.\n\n"
    "The basin holds 2.4 million people.\n\n"
    "The delta covers 900 square km."
)


@pytest.fixture
def run(locked_run):
    add_sq(locked_run, "How long is the river?", "quantitative")
    add_source(locked_run, "SQ-01", TEXT, url="https://geo.example.org/river")
    return locked_run


def add(run, quote: str, text: str | None = None) -> str:
    return claims.add_claim(run, "SQ-01", text or quote, ["SQ-01/SRC-01"], [quote])


def lines(run) -> list[dict]:
    return [json.loads(line) for line in run.path("claims_log").read_text(encoding="utf-8").splitlines()]


def problems(run) -> list[str]:
    return [p.message for p in validate.validate_run(run).problems]


def test_each_write_appends_one_record_and_load_folds_them_in_order(run):
    a = add(run, "The river is 120 km long.")
    b = add(run, "measured it at 118 km in 2019", "A 2019 survey measured 118 km.")
    claims.retire(run, b, "superseded")
    t = claims.add_tension(run, [a, add(run, "The basin holds 2.4 million people.")], "scope")
    claims.resolve_tension(run, t, "different questions")
    assert [(r["event"], r["id"]) for r in lines(run)] == [
        ("claim-added", "CLM-01"),
        ("claim-added", "CLM-02"),
        ("claim-retired", "CLM-02"),
        ("claim-added", "CLM-03"),
        ("tension-added", "T-01"),
        ("tension-resolved", "T-01"),
    ]
    ledger = claims.load(run)
    assert [(c["id"], c["status"]) for c in ledger["claims"]] == [
        ("CLM-01", "active"),
        ("CLM-02", "retired"),
        ("CLM-03", "active"),
    ]
    assert ledger["claims"][1]["retired_why"] == "superseded"
    assert ledger["tensions"][0] | {"added_at": None, "resolved_at": None} == {
        "id": "T-01",
        "claims": ["CLM-01", "CLM-03"],
        "about": "scope",
        "status": "resolved",
        "resolution": "different questions",
        "added_at": None,
        "resolved_at": None,
    }
    assert problems(run) == []


def test_adding_a_claim_reads_nothing_of_the_ledger(run, monkeypatch):
    """What keeps `claims add` flat: the add path never reads or folds the log, it only appends."""
    add(run, "The river is 120 km long.")

    def refuse(*args, **kwargs):
        raise AssertionError("claims add read the whole ledger")

    monkeypatch.setattr(eventlog, "read", refuse)
    monkeypatch.setattr(log, "load", refuse)
    monkeypatch.setattr(claims, "load", refuse)
    claim = claims.record_claim(
        run, "SQ-01", "The delta covers 900 square km.", ["SQ-01/SRC-01"], ["900 square km"]
    )
    assert claim["id"] == "CLM-02" and claim["status"] == "active"
    monkeypatch.undo()
    assert claims.get_claim(claims.load(run), "CLM-02") == claim


def test_a_record_that_breaks_its_schema_is_refused_before_anything_is_written(run):
    add(run, "The river is 120 km long.")
    before = run.path("claims_log").read_bytes()
    bad = log.record(LedgerEvent.CLAIM_RETIRED, "CLM-01", "2026-01-01T00:00:00Z", why="")
    with pytest.raises(CheckFailed) as caught:
        log.append(run, bad)
    assert caught.value.code == "artifact-invalid"
    assert run.path("claims_log").read_bytes() == before


def test_a_torn_last_line_is_never_read_and_is_moved_aside_by_the_next_write(run):
    add(run, "The river is 120 km long.")
    path = run.path("claims_log")
    torn = b'{"schema_version":1,"event":"claim-added","id":"CLM-02","sub_question":"SQ-01","text":"Half a cl'
    with path.open("ab") as fh:
        fh.write(torn)  # a crash in the middle of an append
    assert [c["id"] for c in claims.load(run)["claims"]] == ["CLM-01"]
    assert any("unterminated" in m for m in problems(run))
    new = add(run, "The basin holds 2.4 million people.")
    data = path.read_bytes()
    assert data.endswith(b"\n") and torn not in data  # never glued onto the new record
    assert [r["id"] for r in lines(run)] == ["CLM-01", new]
    assert path.with_name("claims.jsonl.torn").read_bytes() == torn + b"\n"
    (event,) = [e for e in runrecord.read(run)["events"] if e["kind"] == "ledger-repaired"]
    assert event["removed_bytes"] == len(torn) and event["kept_in"] == "consolidate/claims.jsonl.torn"
    assert problems(run) == []


def test_a_damaged_line_stops_load_and_validate_names_it(run):
    add(run, "The river is 120 km long.")
    with run.path("claims_log").open("a", encoding="utf-8") as fh:
        fh.write("not json\n")
    add(run, "The basin holds 2.4 million people.")
    with pytest.raises(BadInput) as caught:
        claims.load(run)
    assert caught.value.code == "malformed-ledger" and "line 2" in caught.value.message
    assert any(m.startswith("line 2 is not a JSON object") for m in problems(run))


def test_validate_catches_records_that_cannot_apply_or_ids_out_of_sequence(run):
    add(run, "The river is 120 km long.")
    add(run, "The basin holds 2.4 million people.")
    path = run.path("claims_log")
    first, second = path.read_text(encoding="utf-8").splitlines()
    path.write_text(f"{second}\n{first}\n", encoding="utf-8")
    assert any("CLM-01 is out of sequence" in m for m in problems(run))
    path.write_text(f"{first}\n{first}\n", encoding="utf-8")
    assert any("CLM-01 is added a second time" in m for m in problems(run))
    retire_unknown = log.record(LedgerEvent.CLAIM_RETIRED, "CLM-07", "2026-01-01T00:00:00Z", why="x")
    path.write_text(f"{first}\n{json.dumps(retire_unknown)}\n", encoding="utf-8")
    assert any("CLM-07 is retired but was never added" in m for m in problems(run))
    with pytest.raises(BadInput, match="never added"):
        claims.load(run)


def test_the_id_floor_reads_the_log_so_a_lost_counter_never_reuses_an_id(run):
    add(run, "The river is 120 km long.")
    add(run, "The basin holds 2.4 million people.")
    claims.add_tension(run, ["CLM-01", "CLM-02"], "scope")
    claims.retire(run, "CLM-02", "wrong")  # the last record is not an add: the floor still finds CLM-02
    run.path("state", name="ids").unlink()
    assert add(run, "The delta covers 900 square km.") == "CLM-03"
    assert claims.add_tension(run, ["CLM-01", "CLM-03"], "size") == "T-02"
    assert ids._highest_on_disk(run, "CLM", None) == 3


def test_the_id_floor_skips_a_torn_tail_and_reads_from_the_end(run, monkeypatch):
    monkeypatch.setattr(eventlog, "CHUNK", 64)  # records span several chunks
    for quote in ("The river is 120 km long.", "The basin holds 2.4 million people."):
        add(run, quote)
    with run.path("claims_log").open("ab") as fh:
        fh.write(b'{"schema_version":1,"event":"claim-added","id":"CLM-09"')
    assert ids._highest_on_disk(run, "CLM", None) == 2
    assert eventlog.last(run.path("claims_log"), lambda r: r["id"] == "CLM-01")["id"] == "CLM-01"


def test_the_draft_says_how_far_it_shows_the_ledger_and_is_rendered_at_boundaries(run, cli):
    add(run, "The river is 120 km long.")
    assert not run.path("draft").exists()
    assert claims.refresh(run) is True
    assert "as of its first record: 1 active claim, 0 retired, 0 tensions" in run.path("draft").read_text()
    assert claims.refresh(run) is False  # already showing the whole ledger: not written again
    add(run, "The basin holds 2.4 million people.")
    stale = run.path("draft").read_text()
    assert "CLM-02" not in stale and problems(run) == []  # behind the ledger, saying so, is valid
    code, _, _, env = cli("claims", "list", "--run", run.root, "--json")
    assert code == 0 and [c["id"] for c in env["data"]["claims"]] == ["CLM-01", "CLM-02"]
    fresh = run.path("draft").read_text()
    assert "as of its first 2 records: 2 active claims" in fresh and "**CLM-02**" in fresh


def test_validate_catches_a_draft_that_contradicts_the_log(run):
    add(run, "The river is 120 km long.")
    claims.refresh(run)
    draft = run.path("draft")
    text = draft.read_text()
    draft.write_text(text.replace("120 km", "150 km"))
    assert any("is not the rendering of the first 1 records" in m for m in problems(run))
    draft.write_text(text.replace("as of its first record", "as of its first 5 records"))
    assert any("says it shows 5 records, but claims.jsonl holds 1" in m for m in problems(run))


def test_a_run_from_before_the_log_is_refused_until_migrated_then_identical(run, cli):
    add(run, "The river is 120 km long.")
    add(run, "measured it at 118 km in 2019", "A 2019 survey measured 118 km.")
    claims.retire(run, "CLM-02", "superseded")
    claims.add_tension(run, ["CLM-01", add(run, "900 square km", "The delta covers 900 square km.")], "x")
    ledger = claims.load(run)
    # The old format: the whole ledger as the draft's front matter, no log.
    run.path("claims_log").unlink()
    run.path("draft").write_text(render_markdown(ledger, "# Synthesis draft"), encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        claims.load(run)
    assert caught.value.code == "legacy-ledger" and "claims migrate" in caught.value.message
    with pytest.raises(BadInput):
        add(run, "The basin holds 2.4 million people.")
    assert any("the format before claims.jsonl" in m for m in problems(run))
    code, out, _, _ = cli("claims", "migrate", "--run", run.root)
    assert code == 0 and out.strip() == "5 records written to consolidate/claims.jsonl"
    assert claims.load(run) == ledger
    assert "as of its first 5 records" in run.path("draft").read_text()
    assert problems(run) == []
    code, _, _, env = cli("claims", "migrate", "--run", run.root, "--json")
    assert code == 1 and env["errors"][0]["code"] == "nothing-to-migrate"


def test_the_record_schema_and_the_ledger_schema_agree_with_each_other_and_the_vocabulary():
    record, ledger = load_schema("claim-record"), load_schema("claims")
    claim, tension = ledger["properties"]["claims"]["items"], ledger["properties"]["tensions"]["items"]
    assert record["$defs"]["evidence"] == claim["properties"]["evidence"]["items"]
    assert record["properties"]["event"]["enum"] == [e.value for e in LedgerEvent]
    assert set(record["$defs"]) >= {e.value for e in LedgerEvent}
    assert record["$defs"]["claim-added"]["properties"]["confidence"]["enum"] == [c.value for c in Confidence]
    assert claim["properties"]["confidence"]["enum"] == [c.value for c in Confidence]
    assert claim["properties"]["status"]["enum"] == [s.value for s in ClaimStatus]
    assert tension["properties"]["status"]["enum"] == [s.value for s in TensionStatus]
    assert record["$defs"]["evidence"]["properties"]["match"]["enum"] == [m.value for m in QuoteMatch]


@pytest.mark.parametrize(
    "change",
    [
        {"event": "claim-edited"},
        {"schema_version": 2},
        {"evidence": []},
        {"confidence": "certain"},
        {"cycle": 0},
        {"at": "yesterday"},
        {"extra": "field"},
        {"id": "T-01"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_the_record_schema_refuses_a_malformed_claim_added_record(run, change):
    add(run, "The river is 120 km long.")
    (good,) = lines(run)
    assert validate_schema(good, "claim-record") == []
    assert validate_schema({**good, **change}, "claim-record") != []
