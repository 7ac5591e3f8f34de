"""The `search`, `openalex` and `worldbank` commands, and what they record into a run.

A local pytest-httpserver replays the recorded answers (see test_sources_http.py).
"""

from __future__ import annotations

import json

import pytest
import test_sources_http as replay
from test_sources_http import answer, recorded, synthesized_pages

from research_engine import retrieve, runrecord
from research_engine.artifacts import read_markdown

apis = replay.apis  # the fixture: every source's base URL pointed at the local replay server


@pytest.fixture
def locked_run(locked_run):
    """The locked run with three sub-questions: a command records only under a sub-question of the run."""
    from research_engine import decompose

    for text in ("What is Python?", "Who maintains it?", "What research cites it?"):
        decompose.add(locked_run, text, "factual")
    return locked_run


def test_search_without_a_backend_exits_5_naming_the_variables(cli):
    code, out, err, env = cli("search", "anything", "--json")
    assert code == 5 and env["ok"] is False
    (problem,) = env["errors"]
    assert problem["code"] == "search-not-configured"
    for variable in ("SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY", "RESEARCH_ENGINE_ALLOW_DDG"):
        assert variable in problem["message"]


def test_search_records_candidates_and_appends_later_queries(cli, apis, locked_run, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search", query_string={"q": "python", "format": "json"}).respond_with_response(
        answer("searxng/search_python_page1.json")
    )
    apis.expect_request(
        "/sx/search", query_string={"q": "context manager", "format": "json"}
    ).respond_with_response(answer("searxng/search_unresponsive_engine.json"))
    code, _, _, env = cli(
        "search", "python", "--limit", "7", "--run", locked_run.root, "--sq", "SQ-01", "--json"
    )
    assert code == 0 and env["data"]["backend"] == "searxng" and len(env["data"]["candidates"]) == 7
    code, _, _, env = cli("search", "context manager", "--run", locked_run.root, "--sq", "SQ-01", "--json")
    assert code == 0 and env["data"]["recorded"]["query_id"] == "Q-02"

    log = json.loads(locked_run.path("candidates", sq="SQ-01").read_text())
    assert [q["query"] for q in log["queries"]] == ["python", "context manager"]
    assert len(log["candidates"]) == 7 + 2
    first_request = log["queries"][0]["requests"][0]
    snapshot = locked_run.root / first_request["snapshot"]
    assert snapshot.read_bytes() == recorded("searxng/search_python_page1.json")[0]
    assert log["queries"][1]["info"]["unresponsive_engines"] == [["deadapi", "HTTP connection error"]]


def test_recorded_candidates_are_what_select_reads(cli, apis, locked_run, monkeypatch):
    from research_engine import selection

    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search").respond_with_response(answer("searxng/search_python_page1.json"))
    cli("search", "python", "--run", locked_run.root, "--sq", "SQ-01", "--json")
    payload = json.loads(locked_run.path("candidates", sq="SQ-01").read_text())
    assert len(selection.load_candidates(payload)) == 7


def test_failed_search_is_recorded_with_its_chain_and_exits_6(cli, apis, locked_run, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    apis.expect_request("/brave/res/v1/web/search").respond_with_data("bad gateway", status=502)
    code, _, _, env = cli("search", "x", "--run", locked_run.root, "--sq", "SQ-02", "--json")
    assert code == 6 and env["errors"][0]["code"] == "search-failed"
    (entry,) = json.loads(locked_run.path("candidates", sq="SQ-02").read_text())["queries"]
    assert entry["candidates"] == [] and entry["chain"][0]["status"] == 502


def test_run_and_sq_go_together(cli, locked_run):
    code, _, _, env = cli("openalex", "work", "W1", "--run", locked_run.root, "--json")
    assert code == 2 and env["errors"][0]["field"] == "sq"


def test_openalex_work_json_and_recorded_source(cli, apis, locked_run, monkeypatch):
    monkeypatch.setenv("OPENALEX_API_KEY", "never-in-the-trace")
    apis.expect_request("/openalex/works/W2741809807").respond_with_response(
        answer("openalex/work_W2741809807.json")
    )
    code, _, _, env = cli(
        "openalex", "work", "W2741809807", "--run", locked_run.root, "--sq", "SQ-01", "--json"
    )
    assert code == 0
    work = env["data"]["work"]
    assert work["id"] == "https://openalex.org/W2741809807" and work["doi"] == "10.7717/peerj.4375"
    assert work["year"] == 2018 and work["cited_by_count"] == 962
    assert work["title"].startswith("The state of OA")
    assert work["abstract"].startswith("Despite growing interest in Open Access (OA)")

    (ref,) = env["data"]["recorded"]
    meta, _ = read_markdown(retrieve.source_path(locked_run, ref))
    assert meta["kind"] == "openalex" and meta["access_tier"] == "free-key"
    assert meta["requested_url"].endswith("/openalex/works/W2741809807")  # the exact request, key removed
    assert meta["canonical_key"] == "doi:10.7717/peerj.4375"
    assert (locked_run.root / meta["snapshot"]).read_bytes() == recorded("openalex/work_W2741809807.json")[0]
    text = retrieve.stored_text(locked_run, ref)
    assert "We estimate that at least 28% of the scholarly literature is OA" in text
    assert "never-in-the-trace" not in "".join(p.read_text() for p in locked_run.root.rglob("*.md"))
    assert "never-in-the-trace" not in locked_run.path("run").read_text()
    kinds = [e["kind"] for e in runrecord.read(locked_run)["events"]]
    assert "private-address" in kinds  # the loopback opt-in is in the trace


def test_openalex_work_not_found_exits_2(cli, apis):
    apis.expect_request("/openalex/works/W9").respond_with_response(
        answer("openalex/error_404_work_not_found.html")
    )
    code, _, err, _ = cli("openalex", "work", "W9")
    assert code == 2 and "OpenAlex has no work W9 (HTTP 404)" in err


def test_openalex_search_keeps_works_as_candidates(cli, apis, locked_run):
    apis.expect_request("/openalex/works").respond_with_response(
        answer("openalex/works_filter_title_search_2.json")
    )
    code, _, _, env = cli(
        "openalex",
        "search",
        "paperqa",
        "--year-from",
        "2023",
        "--limit",
        "5",
        "--run",
        locked_run.root,
        "--sq",
        "SQ-03",
        "--json",
    )
    assert code == 0
    log = json.loads(locked_run.path("candidates", sq="SQ-03").read_text())
    assert log["queries"][0]["command"] == "openalex search"
    assert {c["kind"] for c in log["candidates"]} == {"openalex"}
    assert len(log["candidates"]) == len(env["data"]["works"])


def test_worldbank_series_json_keeps_nulls_and_reports_latest(cli, apis, locked_run):
    # SYNTHESIZED single page: the recorded JPN rows of page 1 with page metadata 1 of 1.
    (page,) = synthesized_pages("worldbank/indicator_two_countries.json", 50)
    apis.expect_request("/wb/v2/country/JPN/indicator/NY.GDP.MKTP.CD").respond_with_data(
        page, content_type="application/json;charset=utf-8"
    )
    code, _, _, env = cli(
        "worldbank", "series", "JPN", "NY.GDP.MKTP.CD", "--run", locked_run.root, "--sq", "SQ-01", "--json"
    )
    assert code == 0
    (series,) = env["data"]["series"]
    assert series["country"] == "JPN" and series["indicator"] == "NY.GDP.MKTP.CD"
    assert {"year": 2020, "value": None} in series["points"]
    assert series["latest"] == {"year": 2019, "value": 5081769542379.77}

    (ref,) = env["data"]["recorded"]
    meta, passages = retrieve.load_source(locked_run, ref)
    assert meta["kind"] == "worldbank" and meta["access_tier"] == "open"
    assert "/wb/v2/country/JPN/indicator/NY.GDP.MKTP.CD?" in meta["requested_url"]
    texts = [p.text for p in passages]
    assert "Japan, GDP (current US$), 2019: 5081769542379.77" in texts
    assert "Japan, GDP (current US$), 2020: no value reported (null)" in texts


def test_worldbank_country_without_data_is_said_plainly(cli, apis):
    # SYNTHESIZED single page holding only the recorded JPN rows, so USA has no rows at all.
    (page,) = synthesized_pages("worldbank/indicator_two_countries_date_range.json", 2)
    apis.expect_request("/wb/v2/country/JPN;USA/indicator/NY.GDP.MKTP.CD").respond_with_data(
        page, content_type="application/json;charset=utf-8"
    )
    code, out, _, _ = cli("worldbank", "series", "JPN;USA", "NY.GDP.MKTP.CD", "--date", "2018:2019")
    assert code == 0
    assert "Japan (JPN): latest 2019 = 5081769542379.77" in out
    assert "USA: no data for NY.GDP.MKTP.CD in 2018:2019" in out


def test_worldbank_date_and_mrv_are_exclusive(cli):
    code, _, _, env = cli(
        "worldbank", "series", "JPN", "NY.GDP.MKTP.CD", "--date", "2018:2019", "--mrv", "1", "--json"
    )
    assert code == 2 and env["errors"][0]["code"] == "bad-option"


def test_worldbank_invalid_indicator_exits_2(cli, apis):
    apis.expect_request("/wb/v2/country/JPN/indicator/INVALID.INDICATOR.ID").respond_with_response(
        answer("worldbank/error_invalid_indicator.json")
    )
    code, _, _, env = cli("worldbank", "series", "JPN", "INVALID.INDICATOR.ID", "--json")
    assert code == 2 and env["errors"][0]["code"] == "worldbank-invalid-value"


def test_worldbank_indicators_json(cli, apis, locked_run):
    # SYNTHESIZED one-page catalogue from the recorded indicator rows (see test_sources_http).
    meta, rows = json.loads(recorded("worldbank/indicators_by_topic.json")[0])
    apis.expect_request("/wb/v2/indicator").respond_with_json(
        [{**meta, "pages": 1, "total": len(rows)}, rows]
    )
    code, _, _, env = cli(
        "worldbank", "indicators", "fertilizer", "--run", locked_run.root, "--sq", "SQ-01", "--json"
    )
    assert code == 0
    assert [i["id"] for i in env["data"]["indicators"]] == ["AG.CON.FERT.PT.ZS"]
    log = json.loads(locked_run.path("candidates", sq="SQ-01").read_text())
    assert log["candidates"][0]["extra"]["indicator"] == "AG.CON.FERT.PT.ZS"


def test_recorded_run_validates(cli, apis, locked_run, monkeypatch):
    from research_engine import validate

    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search").respond_with_response(answer("searxng/search_python_page1.json"))
    apis.expect_request("/openalex/works/W2741809807").respond_with_response(
        answer("openalex/work_W2741809807.json")
    )
    cli("search", "python", "--run", locked_run.root, "--sq", "SQ-01")
    cli("openalex", "work", "W2741809807", "--run", locked_run.root, "--sq", "SQ-01")
    report = validate.validate_run(locked_run)
    mine = [p for p in report.problems if "candidates" in (p.file or "") or "retrieve/" in (p.file or "")]
    assert mine == []
    assert report.checked_files >= 3
