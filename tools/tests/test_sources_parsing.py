"""Pure parsing of recorded API answers (../shared/fixtures/apis): no HTTP here."""

from __future__ import annotations

import json

import pytest
from conftest import shared_path

from research_engine.errors import BadInput, UpstreamFailed
from research_engine.settings import Settings
from research_engine.sources import openalex, search, worldbank
from research_engine.sources.candidate import Candidate
from research_engine.sources.endpoints import ApiResponse, redact_url


def fixture_json(*parts: str):
    return json.loads(shared_path("fixtures", "apis", *parts).read_bytes())


def fixture_text(*parts: str) -> str:
    return shared_path("fixtures", "apis", *parts).read_text(encoding="utf-8")


# --- OpenAlex -------------------------------------------------------------------------------------


def test_abstract_reconstruction_puts_every_word_at_its_recorded_position():
    work = fixture_json("openalex", "work_by_doi.json")
    index = work["abstract_inverted_index"]
    words = openalex.reconstruct_abstract(index).split(" ")
    assert len(words) == sum(len(positions) for positions in index.values())
    for word, positions in index.items():
        for position in positions:
            assert words[position] == word


def test_abstract_reconstruction_reads_as_the_published_abstract():
    abstract = openalex.reconstruct_abstract(
        fixture_json("openalex", "work_W2741809807.json")["abstract_inverted_index"]
    )
    assert abstract.startswith(
        "Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet need for "
        "large-scale, up-to-date, and reproducible studies assessing the prevalence and characteristics "
        "of OA."
    )


def test_null_abstract_index_gives_no_abstract():
    work = openalex.parse_work(fixture_json("openalex", "work_single_2026.json"))
    assert work.abstract is None
    assert work.id.endswith("W2162348455")


def test_parse_work_takes_doi_year_venue_citations_and_oa_url():
    work = openalex.parse_work(fixture_json("openalex", "works_filter_title_search.json")["results"][0])
    assert work.doi == "10.1038/s42256-024-00832-8"
    assert work.year == 2024
    assert work.venue == "Nature Machine Intelligence"
    assert work.cited_by_count == 236
    assert work.oa_url == "https://www.nature.com/articles/s42256-024-00832-8.pdf"
    assert work.authors[0] == "Andres M. Bran"
    assert work.source_type() == "peer"


def test_work_candidate_is_keyed_by_doi():
    work = openalex.parse_work(fixture_json("openalex", "work_by_doi.json"))
    candidate = openalex.work_candidate(work, 1)
    assert candidate.kind == "openalex"
    assert candidate.canonical_key == "doi:10.1073/pnas.1414271111"
    assert candidate.year == 2014 and candidate.cited_by_count == work.cited_by_count
    assert candidate.access_tier == "open"


def test_api_key_makes_the_tier_free_key():
    assert openalex.access_tier(Settings(openalex_api_key="k-123")) == "free-key"
    assert openalex.access_tier(Settings()) == "open"


@pytest.mark.parametrize(
    "value, path",
    [
        ("W2741809807", "W2741809807"),
        ("https://openalex.org/W2741809807", "W2741809807"),
        ("10.1073/pnas.1414271111", "https://doi.org/10.1073%2Fpnas.1414271111"),
        ("https://doi.org/10.1073/PNAS.1414271111", "https://doi.org/10.1073%2Fpnas.1414271111"),
        ("doi:10.1073/pnas.1414271111", "https://doi.org/10.1073%2Fpnas.1414271111"),
    ],
)
def test_work_path_accepts_ids_and_dois(value, path):
    assert openalex.work_path(value) == path


def test_work_path_rejects_anything_else():
    with pytest.raises(BadInput):
        openalex.work_path("not-an-id")


def test_year_from_is_added_to_the_filter():
    assert openalex.build_filter("type:article", 2020) == "type:article,from_publication_date:2020-01-01"
    assert openalex.build_filter(None, None) is None


# --- World Bank ------------------------------------------------------------------------------------


def test_series_with_a_null_latest_year_reports_the_latest_non_null_value_and_its_year():
    meta, rows = worldbank.split_envelope(fixture_json("worldbank", "indicator_two_countries.json"), "t")
    (japan,) = worldbank.group_series(rows, ["JPN"], "NY.GDP.MKTP.CD", "all years")
    assert japan.country == "JPN"
    assert [p for p in japan.points if p.year == 2020][0].value is None  # the null is kept
    assert japan.latest.year == 2019
    assert japan.latest.value == 5081769542379.77


def test_no_data_answer_has_null_rows_and_says_so_per_country():
    meta, rows = worldbank.split_envelope(fixture_json("worldbank", "empty_no_data.json"), "t")
    assert rows == [] and meta["total"] == 0
    (series,) = worldbank.group_series(rows, ["JPN"], "DT.AMT.DLTT.CD.OT.AR.1824.US", "2012:2017")
    assert series.points == [] and series.latest is None
    assert series.note == "JPN: no data for DT.AMT.DLTT.CD.OT.AR.1824.US in 2012:2017"


def test_requested_country_missing_from_the_rows_is_reported_as_having_no_data():
    meta, rows = worldbank.split_envelope(
        fixture_json("worldbank", "indicator_two_countries_date_range.json"), "t"
    )
    series = {
        s.country: s for s in worldbank.group_series(rows, ["JPN", "USA"], "NY.GDP.MKTP.CD", "2018:2019")
    }
    assert series["JPN"].latest.year == 2019
    assert series["USA"].points == [] and "no data" in series["USA"].note


@pytest.mark.parametrize(
    "name",
    [
        "error_invalid_indicator.json",
        "error_invalid_country.json",
        "error_multi_indicator_one_invalid.json",
        "error_language_150.json",
        "error_invalid_country_metadata.json",
    ],
)
def test_http_200_message_envelopes_are_errors(name):
    with pytest.raises(BadInput) as caught:
        worldbank.split_envelope(fixture_json("worldbank", name), "the request")
    assert caught.value.code == "worldbank-invalid-value"
    assert "(id 1" in caught.value.message


def test_string_counts_on_metadata_calls_become_numbers():
    meta, rows = worldbank.split_envelope(fixture_json("worldbank", "indicator_metadata_single.json"), "t")
    assert meta["per_page"] == 50 and meta["pages"] == 1
    assert worldbank.parse_indicator(rows[0]).name == "Poverty Headcount ($1.90 a day)"


def test_unexpected_shape_is_an_upstream_failure():
    with pytest.raises(UpstreamFailed):
        worldbank.split_envelope({"page": 1}, "t")


def test_latest_non_null_ignores_trailing_nulls():
    points = [worldbank.Point(2021, None), worldbank.Point(2019, 3.5), worldbank.Point(2020, None)]
    assert worldbank.latest_non_null(points) == worldbank.Point(2019, 3.5)
    assert worldbank.latest_non_null([worldbank.Point(2020, None)]) is None


def test_indicator_matching_needs_every_keyword_and_ranks_name_hits_first():
    rows = [
        worldbank.parse_indicator(r).to_dict()
        for r in fixture_json("worldbank", "indicators_list_page1.json")[1]
        + fixture_json("worldbank", "indicators_by_topic.json")[1]
    ]
    found = worldbank.match_indicators(rows, "poverty 2.50")
    assert [i.id for i in found] == ["1.0.HCount.2.5usd"]
    fertilizer = worldbank.match_indicators(rows, "fertilizer")
    assert fertilizer[0].id == "AG.CON.FERT.PT.ZS"
    assert worldbank.match_indicators(rows, "tractors zzzz") == []


@pytest.mark.parametrize("bad", ["", "JAPAN1", "J"])
def test_bad_country_codes_are_refused(bad):
    with pytest.raises(BadInput):
        worldbank.parse_countries(bad)


# --- search backends ---------------------------------------------------------------------------------


def test_searxng_results_keep_engines_and_positions_unpaired():
    candidates, info = search.parse_searxng(fixture_json("searxng", "search_engine_crash_partial.json"))
    merged = [c for c in candidates if len(c.extra["engines"]) == 2]
    assert merged, "the recording has results merged from two engines"
    for c in merged:
        assert c.extra["engines"] == sorted(c.extra["engines"])  # a set, reported sorted
    assert [c.rank for c in candidates] == list(range(1, len(candidates) + 1))
    assert info["unresponsive_engines"] == [["pydocs", "unexpected crash"]]


def test_searxng_without_number_of_results_and_legacy_with_it_parse_the_same():
    new, _ = search.parse_searxng(fixture_json("searxng", "search_python_page1.json"))
    old, _ = search.parse_searxng(fixture_json("searxng", "legacy_2026-05_search_python_page1.json"))
    assert len(new) == 7 and [c.url for c in new] == [c.url for c in old]


def test_searxng_plugin_answer_with_null_url_is_not_a_candidate():
    candidates, info = search.parse_searxng(fixture_json("searxng", "search_answer_hash_plugin.json"))
    assert candidates == []
    assert info["answers"][0].startswith("sha256 hash digest")


def test_brave_snippets_lose_highlight_markup_and_entities():
    candidates, _ = search.parse_brave(fixture_json("brave", "web_search_hello_world.json"))
    assert len(candidates) == 20
    first = candidates[0]
    assert first.title == '"Hello, World!" program - Wikipedia'
    assert "<strong>" not in first.snippet and "&quot;" not in first.snippet
    assert first.published == "2024-12-27T15:49:55"
    assert first.canonical_key.startswith("url:en.wikipedia.org/")


def test_brave_error_body_names_the_code():
    body = {
        "type": "ErrorResponse",
        "error": {
            "id": "x",
            "status": 422,
            "code": "SUBSCRIPTION_TOKEN_INVALID",
            "detail": "The provided subscription token is invalid.",
        },
    }
    assert "SUBSCRIPTION_TOKEN_INVALID" in search.brave_error_text(body)


def test_tavily_results_become_ranked_candidates():
    candidates, info = search.parse_tavily(fixture_json("tavily", "search_with_include_domains.json"))
    assert candidates and all("arxiv.org" in c.url for c in candidates)
    assert [c.rank for c in candidates] == list(range(1, len(candidates) + 1))
    assert info["request_id"]


def test_duckduckgo_redirect_links_are_unwrapped():
    candidates, info = search.parse_duckduckgo(
        fixture_text("duckduckgo", "html_golang_programming_language.html")
    )
    assert len(candidates) == 10
    assert candidates[0].url == "https://go.dev/"
    assert candidates[0].title == "The Go Programming Language"
    assert candidates[0].snippet.startswith("Go is an open source programming language")
    assert all("duckduckgo.com" not in c.url for c in candidates)


def test_duckduckgo_ads_are_skipped():
    candidates, info = search.parse_duckduckgo(fixture_text("duckduckgo", "html_weather_jakarta.html"))
    assert len(candidates) == 10 and info["ads_skipped"] == 1
    assert all("y.js" not in c.url and "kayak" not in c.url for c in candidates)


def test_duckduckgo_direct_links_pass_through_and_ad_links_do_not():
    assert search.unwrap_ddg_link("https://example.org/a") == "https://example.org/a"
    assert search.unwrap_ddg_link("//duckduckgo.com/y.js?ad_domain=x.com") is None


def test_search_order_rejects_unknown_names():
    with pytest.raises(BadInput) as caught:
        search.search_order(Settings(search_order="searxng,google"))
    assert "google" in caught.value.message


# --- shared pieces -----------------------------------------------------------------------------------


def test_redact_url_drops_the_api_key_and_keeps_the_rest():
    url = "https://api.openalex.org/works?filter=cites%3AW1%7CW2&api_key=secret&mailto=a%40b.org"
    assert redact_url(url) == "https://api.openalex.org/works?filter=cites:W1|W2&mailto=a%40b.org"


def test_candidate_round_trips_through_its_dict():
    c = Candidate(title="t", url="https://example.org/x?utm_source=y", snippet="s", rank=1, backend="brave")
    assert Candidate.from_dict(c.to_dict()) == c
    assert c.canonical_key == "url:example.org/x"


def test_api_response_json_refuses_html():
    response = ApiResponse(
        url="u",
        status=404,
        retrieved_at="t",
        body=shared_path("fixtures", "apis", "openalex", "error_404_work_not_found.html").read_bytes(),
    )
    with pytest.raises(BadInput):
        response.json()
