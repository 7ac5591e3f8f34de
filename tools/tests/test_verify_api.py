"""verify prepare re-issues API requests (OpenAlex, World Bank) and rebuilds passages like the adapters.

The local server replays recorded answers from ../shared/fixtures/apis.
"""

from __future__ import annotations

import json

import pytest
from conftest import shared_path
from core_testkit import fast_verifier, locked_private_run
from werkzeug.wrappers import Request, Response

from research_engine import claims, decompose, verify
from research_engine.net import HttpClient
from research_engine.retrieve.api import record_series, record_work
from research_engine.settings import Settings
from research_engine.sources import openalex, worldbank

WB_PATH = "/wb/v2/country/JPN;USA/indicator/NY.GDP.MKTP.CD"
JAPAN_2019 = "Japan, GDP (current US$), 2019: 5081769542379.77"


def recorded(name: str) -> bytes:
    return shared_path("fixtures", "apis", *name.split("/")).read_bytes()


@pytest.fixture
def apis(httpserver, monkeypatch, brief_file):
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_PRIVATE", "1")
    base = httpserver.url_for("/").rstrip("/")
    monkeypatch.setenv("RESEARCH_ENGINE_OPENALEX_URL", f"{base}/openalex")
    monkeypatch.setenv("RESEARCH_ENGINE_WORLDBANK_URL", f"{base}/wb/v2")
    fast_verifier(monkeypatch)
    return httpserver


@pytest.fixture
def client(apis):
    with HttpClient(allow_private=True, per_host_interval=0, max_retries=0, use_cache=False) as http:
        yield http


def _worldbank_run(apis, client, brief_file, page1: bytes):
    state = {"page1": page1}

    def handler(request: Request) -> Response:
        body = state["page1"] if request.args["page"] == "1" else recorded("worldbank/empty_no_data.json")
        return Response(body, content_type="application/json;charset=utf-8")

    apis.expect_request(WB_PATH).respond_with_handler(handler)
    run = locked_private_run(brief_file)
    sq = decompose.add(run, "How large is Japan's economy?", "quantitative")
    refs = record_series(
        run,
        sq,
        worldbank.fetch_series("JPN;USA", "NY.GDP.MKTP.CD", client=client, settings=Settings.from_env()),
    )
    clm = claims.add_claim(
        run, sq, "Japan's GDP was 5081769542379.77 current US dollars in 2019.", [refs[0]], [JAPAN_2019]
    )
    return run, clm, state


def test_a_world_bank_source_is_re_issued_and_checked_against_rebuilt_passages(apis, client, brief_file):
    run, clm, _ = _worldbank_run(apis, client, brief_file, recorded("worldbank/indicator_two_countries.json"))
    before = len([r for r, _ in apis.log if r.path == WB_PATH])
    row = verify.prepare(run)["claims"][0]
    assert len([r for r, _ in apis.log if r.path == WB_PATH]) == before + 1  # a fresh request, not a copy
    assert (row["claim"], row["floor"]) == (clm, "supported")
    assert row["evidence"][0]["match"] == "exact" and row["evidence"][0]["changed"] is False


def test_a_revised_world_bank_value_refuses_the_claim(apis, client, brief_file):
    original = recorded("worldbank/indicator_two_countries.json")
    run, clm, state = _worldbank_run(apis, client, brief_file, original)
    revised = json.loads(original)
    for row in revised[1]:
        if row["countryiso3code"] == "JPN" and row["date"] == "2019":
            row["value"] = 5148782467233.14
    state["page1"] = json.dumps(revised).encode()
    row = verify.prepare(run)["claims"][0]
    assert row["floor"] == "refuse" and row["evidence"][0]["changed"] is True


def test_an_openalex_work_is_re_issued_and_its_abstract_rebuilt(apis, client, brief_file):
    path = "/openalex/works/https://doi.org/10.1073/pnas.1414271111"
    apis.expect_request(path).respond_with_data(
        recorded("openalex/work_by_doi.json"), content_type="application/json"
    )
    run = locked_private_run(brief_file)
    sq = decompose.add(run, "What limits hydrogels as materials?", "technical")
    fetched = openalex.get_work("10.1073/pnas.1414271111", client=client, settings=Settings.from_env())
    ref = record_work(run, sq, fetched)
    quote = "The inadequate mechanical properties"
    clm = claims.add_claim(run, sq, "Hydrogels have inadequate mechanical properties.", [ref], [quote])
    row = verify.prepare(run)["claims"][0]
    assert (row["claim"], row["floor"]) == (clm, "supported")
    assert len([r for r, _ in apis.log if r.path == path]) == 2
