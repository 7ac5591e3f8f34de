"""Adapters over HTTP: a local pytest-httpserver replays the recorded API answers in ../shared/fixtures/apis.

Every body, status, content type and (where recorded) response header comes from the
recording and its `.request.txt` sidecar. The few answers that are NOT recordings are
built in `synthesized_*` helpers below and say so where they are used.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import shared_path
from werkzeug.wrappers import Request, Response

from research_engine.errors import BadInput, NotConfigured, Refused, UpstreamFailed
from research_engine.net import HttpClient, RetryPolicy, fetch_policy
from research_engine.settings import Settings
from research_engine.sources import openalex, search, worldbank


def env() -> Settings:
    """The settings as the environment says now (each test sets its variables first)."""
    return Settings.from_env()


_DROPPED_HEADERS = {
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "date",
    "content-type",
    "server",
    "vary",
    "keep-alive",
}


def recorded(name: str) -> tuple[bytes, int, str, dict[str, str]]:
    """(body, status, content type, replayable headers) of a recorded answer and its sidecar."""
    path = shared_path("fixtures", "apis", *name.split("/"))
    sidecar = path.with_name(path.name.rsplit(".", 1)[0] + ".request.txt").read_text(encoding="utf-8")
    status = int(re.search(r"^status:.*?\b(\d{3})\b", sidecar, re.M).group(1))
    content_type = re.search(r"^content-type:\s*([^\n(]+)", sidecar, re.M).group(1).strip()
    headers: dict[str, str] = {}
    in_headers = False
    for line in sidecar.splitlines():
        if line.startswith("response-headers:"):
            in_headers = True
            continue
        if in_headers and line.startswith("  ") and ":" in line:
            key, _, value = line.strip().partition(":")
            if key.lower() not in _DROPPED_HEADERS:
                headers[key] = value.strip()
    return path.read_bytes(), status, content_type, headers


def answer(name: str, *, status: int | None = None) -> Response:
    body, recorded_status, content_type, headers = recorded(name)
    return Response(body, status=status or recorded_status, headers=headers, content_type=content_type)


@pytest.fixture
def apis(httpserver, monkeypatch):
    """Every source's base URL pointed at the local server (loopback needs the explicit opt-in)."""
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_PRIVATE", "1")
    base = httpserver.url_for("/").rstrip("/")
    monkeypatch.setenv("RESEARCH_ENGINE_OPENALEX_URL", f"{base}/openalex")
    monkeypatch.setenv("RESEARCH_ENGINE_WORLDBANK_URL", f"{base}/wb/v2")
    monkeypatch.setenv("RESEARCH_ENGINE_BRAVE_URL", f"{base}/brave/res/v1")
    monkeypatch.setenv("RESEARCH_ENGINE_TAVILY_URL", f"{base}/tavily")
    monkeypatch.setenv("RESEARCH_ENGINE_DUCKDUCKGO_URL", f"{base}/ddg/html/")
    # DuckDuckGo's page is crawled like any page, so robots.txt is asked: this server has none.
    httpserver.expect_request("/robots.txt").respond_with_data("not found", status=404)
    return httpserver


@pytest.fixture
def client(apis):
    policy = fetch_policy(env(), use_cache=False)
    # One retry, as the sources expect of their client; its backoff is recorded, never slept.
    waits: list[float] = []
    with policy.client(per_host_interval=0, retry=RetryPolicy(attempts=1, sleep=waits.append)) as http:
        yield http


def requests_to(server, path: str) -> list[Request]:
    return [req for req, _ in server.log if req.path == path]


# --- OpenAlex -------------------------------------------------------------------------------------


def test_openalex_work_by_doi_reconstructs_the_abstract(apis, client):
    apis.expect_request("/openalex/works/https://doi.org/10.1073/pnas.1414271111").respond_with_response(
        answer("openalex/work_by_doi.json")
    )
    fetched = openalex.get_work("10.1073/pnas.1414271111", client=client, settings=env())
    assert fetched.work.doi == "10.1073/pnas.1414271111"
    assert fetched.work.abstract.startswith("Significance The inadequate mechanical properties")
    assert fetched.response.status == 200 and len(fetched.response.sha256) == 64


def test_openalex_sends_mailto_and_api_key_but_never_reports_the_key(apis, client, monkeypatch):
    monkeypatch.setenv("RESEARCH_ENGINE_MAILTO", "me@example.org")
    monkeypatch.setenv("OPENALEX_API_KEY", "secret-key-1")
    apis.expect_request("/openalex/works/W2162348455").respond_with_response(
        answer("openalex/work_single_2026.json")
    )
    fetched = openalex.get_work("W2162348455", client=client, settings=env())
    sent = requests_to(apis, "/openalex/works/W2162348455")[0].args
    assert sent["api_key"] == "secret-key-1" and sent["mailto"] == "me@example.org"
    assert "secret-key-1" not in fetched.response.url and "mailto=me%40example.org" in fetched.response.url
    assert fetched.rate_limit["x-ratelimit-remaining-usd"] == "199.929"  # replayed recorded header
    assert fetched.work.abstract is None


def test_openalex_unknown_doi_answers_404_html_and_is_not_found(apis, client):
    apis.expect_request(re.compile("/openalex/works/.*")).respond_with_response(
        answer("openalex/error_404_work_not_found.html")
    )
    with pytest.raises(BadInput) as caught:
        openalex.get_work("10.1046/j.1365-2699.2003.00795", client=client, settings=env())
    assert caught.value.code == "not-found" and "HTTP 404" in caught.value.message


def test_openalex_invalid_filter_400_is_a_clear_bad_request(apis, client):
    apis.expect_request("/openalex/works").respond_with_response(
        answer("openalex/error_400_invalid_filter.json")
    )
    with pytest.raises(BadInput) as caught:
        openalex.search_works(None, filter_="DOESNTEXIST:1", client=client, settings=env())
    assert caught.value.code == "openalex-bad-request" and "HTTP 400" in caught.value.message


def test_openalex_invalid_select_400_is_a_clear_bad_request(apis, client):
    apis.expect_request("/openalex/works/W1775749144").respond_with_response(
        answer("openalex/error_400_invalid_select.json")
    )
    with pytest.raises(BadInput) as caught:
        openalex.get_work("W1775749144", select="DOESNTEXIST", client=client, settings=env())
    assert caught.value.code == "openalex-bad-request"


def test_openalex_rejected_key_401_says_which_variable(apis, client, monkeypatch):
    monkeypatch.setenv("OPENALEX_API_KEY", "bad")
    apis.expect_request("/openalex/works/W1").respond_with_response(
        answer("openalex/error_401_invalid_api_key.json")
    )
    with pytest.raises(NotConfigured) as caught:
        openalex.get_work("W1", client=client, settings=env())
    assert "OPENALEX_API_KEY" in caught.value.message


def test_openalex_429_is_a_per_source_rate_limit_failure(apis, client):
    # The status is the documented one (no 429 body was recorded); the body is the recorded 401 JSON shape.
    apis.expect_request("/openalex/works").respond_with_response(
        answer("openalex/error_401_invalid_api_key.json", status=429)
    )
    with pytest.raises(UpstreamFailed) as caught:
        openalex.search_works("x", client=client, settings=env())
    assert caught.value.code == "openalex-rate-limited"
    assert "OPENALEX_API_KEY" in caught.value.message
    assert len(requests_to(apis, "/openalex/works")) == 2  # the client retried once, then gave up


def test_openalex_cursor_paging_stops_at_the_empty_page_with_null_cursor(apis, client):
    first = json.loads(recorded("openalex/works_cursor_seq_page1.json")[0])
    next_cursor = first["meta"]["next_cursor"]

    def handler(request: Request) -> Response:
        if request.args["cursor"] == "*":
            return answer("openalex/works_cursor_seq_page1.json")
        assert request.args["cursor"] == next_cursor
        return answer("openalex/works_cursor_seq_page2_end.json")

    apis.expect_request("/openalex/works").respond_with_handler(handler)
    found = openalex.search_works(
        None, filter_="openalex:W3045921891|W3046863325", limit=50, client=client, settings=env()
    )
    assert len(found.pages) == 2
    assert len(found.works) == len(first["results"]) == found.total_count
    assert not found.truncated
    assert [w.id for w in found.works] == [r["id"] for r in first["results"]]


def test_openalex_search_stops_at_the_limit_without_fetching_more(apis, client):
    apis.expect_request("/openalex/works").respond_with_response(
        answer("openalex/works_cursor_first_page.json")
    )
    found = openalex.search_works("biodiversity", limit=2, client=client, settings=env())
    assert len(found.works) == 2 and found.truncated
    sent = requests_to(apis, "/openalex/works")
    assert len(sent) == 1
    assert sent[0].args["search"] == "biodiversity" and sent[0].args["per_page"] == "2"
    assert "abstract_inverted_index" in sent[0].args["select"]


def test_openalex_filter_and_year_from_are_sent_as_one_filter(apis, client):
    apis.expect_request("/openalex/works").respond_with_response(
        answer("openalex/works_filter_title_search.json")
    )
    found = openalex.search_works(
        "chemistry",
        filter_="title.search:Augmenting large language models with chemistry tools",
        year_from=2020,
        client=client,
        settings=env(),
    )
    sent = requests_to(apis, "/openalex/works")[0].args
    assert (
        sent["filter"] == "title.search:Augmenting large language models with chemistry tools,"
        "from_publication_date:2020-01-01"
    )
    candidates = found.candidates()
    assert candidates[0].title == "Augmenting large language models with chemistry tools"
    assert candidates[0].canonical_key == "doi:10.1038/s42256-024-00832-8"


# --- World Bank ------------------------------------------------------------------------------------


def synthesized_pages(name: str, per_page: int) -> list[bytes]:
    """SYNTHESIZED, not recorded: the recorded page-1 rows of `name` re-cut into pages of `per_page`,
    with page/pages/per_page/total in the metadata set to match. The rows themselves are unchanged."""
    meta, rows = json.loads(recorded(name)[0])
    chunks = [rows[i : i + per_page] for i in range(0, len(rows), per_page)]
    out = []
    for number, chunk in enumerate(chunks, 1):
        page_meta = {**meta, "page": number, "pages": len(chunks), "per_page": per_page, "total": len(rows)}
        out.append(json.dumps([page_meta, chunk]).encode())
    return out


def test_worldbank_series_reports_latest_non_null_and_keeps_nulls(apis, client):
    # The recorded page 1 (byte-exact) says "page 1 of 3"; pages 2 and 3 were never recorded, so the
    # server answers them with the recorded no-data body, and the test checks they were asked for.
    def handler(request: Request) -> Response:
        if request.args["page"] == "1":
            return answer("worldbank/indicator_two_countries.json")
        return answer("worldbank/empty_no_data.json")

    apis.expect_request("/wb/v2/country/JPN;USA/indicator/NY.GDP.MKTP.CD").respond_with_handler(handler)
    fetched = worldbank.fetch_series("JPN;USA", "NY.GDP.MKTP.CD", client=client, settings=env())
    by_country = {s.country: s for s in fetched.series}
    assert by_country["JPN"].latest.to_dict() == {"year": 2019, "value": 5081769542379.77}
    assert {"year": 2020, "value": None} in [p.to_dict() for p in by_country["JPN"].points]
    sent = [r.args for r in requests_to(apis, "/wb/v2/country/JPN;USA/indicator/NY.GDP.MKTP.CD")]
    assert sent[0]["format"] == "json" and sent[0]["per_page"] == "1000"
    assert [a["page"] for a in sent] == ["1", "2"]  # the empty page 2 ends the paging


def test_worldbank_multi_page_series_is_followed_to_the_last_page(apis, client):
    # Pages SYNTHESIZED from the recorded JPN;USA page 1 (see synthesized_pages): 50 rows as 20 + 20 + 10.
    pages = synthesized_pages("worldbank/indicator_two_countries.json", 20)

    def handler(request: Request) -> Response:
        return Response(pages[int(request.args["page"]) - 1], content_type="application/json;charset=utf-8")

    apis.expect_request("/wb/v2/country/JPN/indicator/NY.GDP.MKTP.CD").respond_with_handler(handler)
    fetched = worldbank.fetch_series("JPN", "NY.GDP.MKTP.CD", client=client, settings=env())
    assert len(fetched.pages) == 3
    (japan,) = fetched.series
    assert len(japan.points) == 50
    assert japan.points[-1].year == 2020 and japan.points[-1].value is None
    assert japan.latest.year == 2019


def test_worldbank_null_rows_mean_no_data_said_plainly(apis, client):
    apis.expect_request("/wb/v2/country/JPN/indicator/DT.AMT.DLTT.CD.OT.AR.1824.US").respond_with_response(
        answer("worldbank/empty_no_data.json")
    )
    fetched = worldbank.fetch_series(
        "JPN", "DT.AMT.DLTT.CD.OT.AR.1824.US", date="2012:2017", client=client, settings=env()
    )
    (series,) = fetched.series
    assert series.latest is None and series.points == []
    assert "no data" in series.note and "2012:2017" in series.note


def test_worldbank_200_error_envelope_is_refused(apis, client):
    apis.expect_request("/wb/v2/country/JPN;USA/indicator/INVALID.INDICATOR.ID").respond_with_response(
        answer("worldbank/error_invalid_indicator_for_countries.json")
    )
    with pytest.raises(BadInput) as caught:
        worldbank.fetch_series("JPN;USA", "INVALID.INDICATOR.ID", client=client, settings=env())
    assert caught.value.code == "worldbank-invalid-value" and "id 120" in caught.value.message


def test_worldbank_400_html_page_is_a_bad_request(apis, client):
    apis.expect_request("/wb/v2/country/JPN/indicator/NY.GDP.MKTP.CD").respond_with_response(
        answer("worldbank/error_invalid_source_400.html")
    )
    with pytest.raises(BadInput) as caught:
        worldbank.fetch_series("JPN", "NY.GDP.MKTP.CD", client=client, settings=env())
    assert caught.value.code == "worldbank-bad-request" and "HTTP 400" in caught.value.message


def test_worldbank_indicator_metadata(apis, client):
    apis.expect_request("/wb/v2/indicator/1.0.hcount.1.90usd").respond_with_response(
        answer("worldbank/indicator_metadata_single.json")
    )
    fetched = worldbank.indicator_metadata("1.0.hcount.1.90usd", client=client, settings=env())
    assert fetched.indicator.id == "1.0.HCount.1.90usd"
    assert fetched.indicator.source == "LAC Equity Lab"


def test_worldbank_indicator_search_fetches_once_then_uses_the_cache(apis, client):
    # SYNTHESIZED catalogue: the recorded rows of indicators_list_page1 and indicators_by_topic in one page
    # (the real call asks per_page=20000 and gets the whole list at once; no such answer is recorded).
    list_meta, list_rows = json.loads(recorded("worldbank/indicators_list_page1.json")[0])
    _, topic_rows = json.loads(recorded("worldbank/indicators_by_topic.json")[0])
    rows = list_rows + topic_rows
    body = json.dumps([{**list_meta, "pages": 1, "per_page": "20000", "total": len(rows)}, rows])
    apis.expect_request("/wb/v2/indicator").respond_with_data(
        body, content_type="application/json;charset=utf-8"
    )
    first = worldbank.search_indicators("fertilizer", client=client, settings=env())
    again = worldbank.search_indicators("tractors", client=client, settings=env())
    assert [i.id for i in first.matches] == ["AG.CON.FERT.PT.ZS"] and not first.from_cache
    assert [i.id for i in again.matches] == ["AG.AGR.TRAC.NO"] and again.from_cache
    assert len(requests_to(apis, "/wb/v2/indicator")) == 1
    assert worldbank.catalogue_path(env()).is_file()
    candidate = first.candidates()[0]
    assert candidate.kind == "worldbank" and candidate.source_type == "data"


# --- web search -----------------------------------------------------------------------------------


def test_no_backend_configured_refuses_and_names_the_variables():
    with pytest.raises(NotConfigured) as caught:
        search.search("anything", settings=env())
    for variable in ("SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY", "RESEARCH_ENGINE_ALLOW_DDG"):
        assert variable in caught.value.message


def test_named_backend_that_is_not_configured_is_refused(monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    with pytest.raises(NotConfigured) as caught:
        search.search("anything", backend="tavily", settings=env())
    assert "TAVILY_API_KEY" in caught.value.message


def test_searxng_json_results(apis, client, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search").respond_with_response(answer("searxng/search_python_page1.json"))
    outcome = search.search("python", limit=5, client=client, settings=env())
    assert outcome.backend == "searxng" and len(outcome.candidates) == 5
    assert outcome.candidates[0].engine == "pydocs"
    assert [a.outcome for a in outcome.chain] == ["ok"]


def test_searxng_pages_are_fetched_up_to_the_limit_and_deduplicated(apis, client, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))

    def handler(request: Request) -> Response:
        page = request.args.get("pageno", "1")
        if page == "3":  # not recorded: the recorded empty answer stands in for "no more results"
            return answer("searxng/search_no_results.json")
        return answer(f"searxng/search_python_page{page}.json")

    apis.expect_request("/sx/search").respond_with_handler(handler)
    outcome = search.search("python", limit=20, client=client, settings=env())
    page2 = json.loads(recorded("searxng/search_python_page2.json")[0])["results"]
    page1_urls = {r["url"] for r in json.loads(recorded("searxng/search_python_page1.json")[0])["results"]}
    repeated = sum(1 for r in page2 if r["url"] in page1_urls)
    assert repeated == 2
    assert len(outcome.candidates) == 7 + 5 - repeated
    assert len({c.url for c in outcome.candidates}) == len(outcome.candidates)
    assert [r.args.get("pageno") for r in requests_to(apis, "/sx/search")] == [None, "2", "3"]


def test_searxng_with_json_disabled_says_so_and_the_chain_moves_on(apis, client, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    monkeypatch.setenv("RESEARCH_ENGINE_SEARCH_ORDER", "searxng,tavily")
    apis.expect_request("/sx/search").respond_with_response(answer("searxng/error_403_json_disabled.html"))
    apis.expect_request("/tavily/search", method="POST").respond_with_response(
        answer("tavily/basic_search.json")
    )
    outcome = search.search("What is Pydantic AI?", client=client, settings=env())
    assert [(a.backend, a.outcome) for a in outcome.chain] == [("searxng", "failed"), ("tavily", "ok")]
    assert outcome.chain[0].error == "json-disabled" and "search.formats" in outcome.chain[0].detail
    assert outcome.backend == "tavily" and outcome.candidates
    tavily_request = requests_to(apis, "/tavily/search")[0]
    assert tavily_request.headers["Authorization"] == "Bearer tvly-test"
    assert tavily_request.get_json()["query"] == "What is Pydantic AI?"


@pytest.mark.parametrize("name", ["searxng/error_400_no_query.json", "searxng/error_400_invalid_pageno.json"])
def test_searxng_400_json_errors_fail_that_backend(apis, client, monkeypatch, name):
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search").respond_with_response(answer(name))
    with pytest.raises(UpstreamFailed) as caught:
        search.search("python", client=client, settings=env())
    (attempt,) = caught.value.data["chain"]
    assert attempt["status"] == 400 and attempt["outcome"] == "failed"


def test_searxng_whose_engines_all_failed_is_a_failure_not_an_empty_answer(apis, client, monkeypatch):
    # The recorded unresponsive-engine answer, with its two results removed (SYNTHESIZED from the recording).
    body = json.loads(recorded("searxng/search_unresponsive_engine.json")[0])
    body["results"] = []
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search").respond_with_json(body)
    with pytest.raises(UpstreamFailed) as caught:
        search.search("context manager", client=client, settings=env())
    assert "deadapi (HTTP connection error)" in caught.value.message


def test_searxng_no_results_is_an_empty_answer(apis, client, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/sx/search").respond_with_response(answer("searxng/search_no_results.json"))
    outcome = search.search("zzyzx quux", client=client, settings=env())
    assert outcome.candidates == [] and outcome.chain[0].outcome == "empty"


def test_brave_5xx_hands_over_to_searxng(apis, client, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key")
    monkeypatch.setenv("SEARXNG_URL", apis.url_for("/sx"))
    apis.expect_request("/brave/res/v1/web/search").respond_with_data("upstream down", status=503)
    apis.expect_request("/sx/search").respond_with_response(answer("searxng/search_python_page1.json"))
    outcome = search.search("python", client=client, settings=env())
    assert [(a.backend, a.outcome, a.status) for a in outcome.chain] == [
        ("brave", "failed", 503),
        ("searxng", "ok", 200),
    ]
    assert outcome.chain[0].transient is True
    brave_requests = requests_to(apis, "/brave/res/v1/web/search")
    assert len(brave_requests) == 2  # one retry by the client before the chain moved on
    assert brave_requests[0].headers["X-Subscription-Token"] == "brave-key"


def test_brave_web_results(apis, client, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key")
    apis.expect_request("/brave/res/v1/web/search").respond_with_response(
        answer("brave/web_search_hello_world.json")
    )
    outcome = search.search("hello world", limit=5, client=client, settings=env())
    assert outcome.backend == "brave" and len(outcome.candidates) == 5
    assert requests_to(apis, "/brave/res/v1/web/search")[0].args["count"] == "5"


def test_unreachable_backend_is_a_network_failure_and_the_chain_moves_on(apis, client, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9/")  # discard port: nothing listens
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_DDG", "1")
    apis.expect_request("/ddg/html/").respond_with_response(answer("duckduckgo/html_openclaw.html"))
    outcome = search.search("openclaw", client=client, settings=env())
    assert [(a.backend, a.outcome) for a in outcome.chain] == [("searxng", "failed"), ("duckduckgo", "ok")]
    assert outcome.chain[0].error == "network"
    assert outcome.candidates[0].url.startswith("https://openclaw.ai")


def test_duckduckgo_challenge_page_is_blocked(apis, client, monkeypatch):
    # HAND-WRITTEN: no real recording of the challenge exists; the markers are those API_FACTS lists.
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_DDG", "1")
    challenge = (
        '<html><head><title>DuckDuckGo</title></head><body><div class="anomaly-modal__title">'
        "Unfortunately, bots use DuckDuckGo too.</div>"
        '<form action="//duckduckgo.com/anomaly.js?sv=html&cc=botnet"></form></body></html>'
    )
    apis.expect_request("/ddg/html/").respond_with_data(
        challenge, status=202, content_type="text/html; charset=UTF-8"
    )
    with pytest.raises(UpstreamFailed) as caught:
        search.search("anything", client=client, settings=env())
    assert caught.value.data["chain"][0]["error"] == "blocked"


def test_duckduckgo_is_never_used_unless_allowed(apis, client, monkeypatch):
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_DDG", "0")
    with pytest.raises(NotConfigured):
        search.search("anything", client=client, settings=env())
    assert not apis.log


def test_loopback_without_the_opt_in_is_refused(httpserver, monkeypatch):
    monkeypatch.setenv("RESEARCH_ENGINE_OPENALEX_URL", httpserver.url_for("/openalex"))
    with HttpClient(use_cache=False) as http, pytest.raises(Refused) as caught:
        openalex.get_work("W1", client=http, settings=env())
    assert "RESEARCH_ENGINE_ALLOW_PRIVATE=1" in caught.value.message
    assert not httpserver.log
