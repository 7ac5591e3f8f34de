"""The headless loop gathers from all three modalities: a local mini-web searched SearXNG-style, and a local
server replaying the recorded OpenAlex and World Bank answers from ../shared/fixtures/apis.

Answers that are not byte-for-byte recordings are built in the `synthesized_*` helpers and say how.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml
from conftest import shared_path
from werkzeug.wrappers import Request, Response

from research_engine import claims, report, retrieve, runrecord, trace, validate
from research_engine.corpus import CorpusServer
from research_engine.engine import apigather, loop
from research_engine.engine.extractive import ExtractiveModel
from research_engine.engine.models import ClaimDraft
from research_engine.engine.scripted import ScriptedModel
from research_engine.settings import Settings

pytestmark = pytest.mark.slow

OBJECTIVE = (
    "How large is GDP in Japan and the United States, and do open access articles receive more citations?"
)
PAGES = {
    "economy/japan-us.html": (
        "GDP of Japan and the United States",
        [
            "The GDP of the United States is several times larger than the GDP of Japan in current US "
            "dollars.",
            "Japan has the larger economy of the two only when measured per square kilometre of land.",
            "Both countries report national accounts to the World Bank, which publishes them as GDP series.",
            "Exchange rates move the comparison from year to year, as GDP in current US dollars is "
            "converted.",
            "Statistical offices revise GDP figures for several years after a first estimate is published.",
        ],
    ),
}


def run_engine(*args, **kw):
    """`loop.run` configured from the environment the test set up (as the CLI would be)."""
    return loop.run(*args, settings=Settings.from_env(), **kw)


def start_engine(*args, **kw):
    return loop.start(*args, settings=Settings.from_env(), **kw)


def fixture_json(name: str):
    return json.loads(shared_path("fixtures", "apis", *name.split("/")).read_text(encoding="utf-8"))


def synthesized_countries() -> str:
    # SYNTHESIZED country list in one page: the recorded rows of countries_page1_per_page2 (Aruba,
    # Afghanistan) and country_JPN, plus the United States as the recorded series rows name it.
    meta, rows = fixture_json("worldbank/countries_page1_per_page2.json")
    _, japan = fixture_json("worldbank/country_JPN.json")
    usa = {
        "id": "USA",
        "iso2Code": "US",
        "name": "United States",
        "region": {"id": "NAC", "value": "North America"},
    }
    rows = rows + japan + [usa]
    return json.dumps([{**meta, "pages": 1, "per_page": "400", "total": len(rows)}, rows])


def synthesized_catalogue() -> str:
    # SYNTHESIZED indicator catalogue in one page: the recorded rows of indicators_list_page1 and
    # indicators_by_topic, plus NY.GDP.MKTP.CD named as the recorded series names it (no catalogue row
    # for it was recorded; the real call asks per_page=20000 and gets the whole list at once).
    meta, rows = fixture_json("worldbank/indicators_list_page1.json")
    _, topic_rows = fixture_json("worldbank/indicators_by_topic.json")
    gdp = {
        "id": "NY.GDP.MKTP.CD",
        "name": "GDP (current US$)",
        "unit": "",
        "source": {"id": "2", "value": "World Development Indicators"},
        "sourceNote": "",
        "topics": [],
    }
    rows = rows + topic_rows + [gdp]
    return json.dumps([{**meta, "pages": 1, "per_page": "20000", "total": len(rows)}, rows])


def synthesized_series() -> str:
    # The recorded JPN;USA page (byte-exact rows) with its metadata saying one page: the engine asks
    # per_page=1000, which holds every row in one page; the recording asked 50 a page.
    meta, rows = fixture_json("worldbank/indicator_two_countries.json")
    return json.dumps([{**meta, "page": 1, "pages": 1, "per_page": 1000, "total": len(rows)}, rows])


class Apis:
    """The OpenAlex and World Bank answers, served from the recordings; `openalex_status` forces a failure."""

    def __init__(self) -> None:
        self.openalex_status: int | None = None
        self.page1 = fixture_json("openalex/works_cursor_seq_page1.json")

    def __call__(self, request: Request) -> Response:
        path = unquote(request.path)
        json_type = "application/json;charset=utf-8"
        if path.startswith("/openalex/"):
            if self.openalex_status:
                return Response(
                    json.dumps({"error": "Too Many Requests", "message": "rate limited"}),
                    status=self.openalex_status,
                    headers={"Retry-After": "0"},
                    content_type="application/json",
                )
            if path == "/openalex/works":
                first = request.args.get("cursor") == "*"
                name = "works_cursor_seq_page1" if first else "works_cursor_seq_page2_end"
                return Response(
                    shared_path("fixtures", "apis", "openalex", f"{name}.json").read_bytes(),
                    content_type="application/json",
                )
            for work in self.page1["results"]:  # SYNTHESIZED singleton: the recorded search row of that work
                if work["doi"].removeprefix("https://doi.org/").lower() in path.lower():
                    return Response(json.dumps(work), content_type="application/json")
            return Response("<html>not found</html>", status=404, content_type="text/html")
        if path == "/wb/v2/country":
            return Response(synthesized_countries(), content_type=json_type)
        if path == "/wb/v2/indicator":
            return Response(synthesized_catalogue(), content_type=json_type)
        if path == "/wb/v2/country/JPN;USA/indicator/NY.GDP.MKTP.CD":
            return Response(synthesized_series(), content_type=json_type)
        return Response("not recorded", status=404)


@pytest.fixture
def world(tmp_path, httpserver, monkeypatch):
    """Mini-web + search on one local server, the data APIs on another; every base URL points at them."""
    root = tmp_path / "web"
    for rel, (title, paragraphs) in PAGES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        path.write_text(
            f"<!doctype html><html lang='en'><head><title>{title}</title></head><body>"
            f"<div role='main'><h1>{title}</h1>{body}</div></body></html>",
            encoding="utf-8",
        )
    apis = Apis()
    httpserver.expect_request(re.compile(".*")).respond_with_handler(apis)
    base = httpserver.url_for("/").rstrip("/")
    monkeypatch.setenv("RESEARCH_ENGINE_OPENALEX_URL", f"{base}/openalex")
    monkeypatch.setenv("RESEARCH_ENGINE_WORLDBANK_URL", f"{base}/wb/v2")
    monkeypatch.setenv("OPENALEX_API_KEY", "test-openalex-key-0000")
    with CorpusServer(root) as corpus:
        monkeypatch.setenv("SEARXNG_URL", corpus.url)
        apis.server = httpserver
        yield apis


def brief_at(tmp_path: Path, **fields) -> Path:
    path = tmp_path / "brief.yaml"
    data = {
        "objective": OBJECTIVE,
        "deliverable": "a cited memo",
        "depth": "quick",
        "claim_types": ["quantitative"],
        "recency": "any",
        "output_path": str(tmp_path / "runs"),
        **fields,
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def sources_by_kind(run) -> dict[str, list[tuple[str, dict]]]:
    out: dict[str, list[tuple[str, dict]]] = {}
    for ref in retrieve.list_sources(run):
        meta, _ = retrieve.load_source(run, ref)
        out.setdefault(meta["kind"], []).append((ref, meta))
    return out


def data_reading_model() -> ScriptedModel:
    """The extractive model, plus what an LLM does with a data source: state a reported value in its own
    words, quoting the passage that carries it (the extractive model states the passage itself)."""
    extractive = ExtractiveModel()

    def consolidate(brief, sq, sources):
        drafts = extractive.consolidate(brief, sq, sources)
        for source in sources:
            for passage in source.passages:
                match = re.match(r"^(Japan), (GDP \(current US\$\)), (\d{4}): ([\d.]+)$", passage.text)
                if match:
                    country, indicator, year, value = match.groups()
                    drafts.append(
                        ClaimDraft(
                            f"{country}'s {indicator} was {value} in {year}.", [(source.ref, passage.text)]
                        )
                    )
                    break
        return drafts

    return ScriptedModel({"consolidate": consolidate}, fallback=extractive)


THREE = ["web", "openalex", "worldbank"]  # the keyless sources have their own end-to-end test


def test_a_run_gathers_from_web_openalex_and_worldbank_and_claims_cite_them(world, tmp_path):
    options = loop.EngineOptions(allow_private=True, sources=THREE)
    outcome = run_engine(brief_at(tmp_path), options, model=data_reading_model())
    run = trace.open_run(outcome.run_root)
    kinds = sources_by_kind(run)
    assert {"openalex", "worldbank"} <= set(kinds), sorted(kinds)
    logged = json.loads(run.path("candidates", sq="SQ-01").read_text())
    commands = {q["command"] for q in logged["queries"]}
    assert commands == {"search", "openalex search", "worldbank indicators"}  # all three were asked

    base = world.server.url_for("/").rstrip("/")
    work_urls = {meta["requested_url"] for _, meta in kinds["openalex"]}
    series_urls = {meta["requested_url"] for _, meta in kinds["worldbank"]}
    assert all(u.startswith(f"{base}/openalex/works/") and "api_key" not in u for u in work_urls)
    series = "/wb/v2/country/JPN;USA/indicator/NY.GDP.MKTP.CD?format=json&per_page=1000&page=1"
    assert series_urls == {base + series}
    asked = [r for r, _ in world.server.log if r.path.startswith("/openalex/")]
    assert any(r.args.get("api_key") == "test-openalex-key-0000" for r in asked)  # sent...
    kept = [p for p in run.root.rglob("*") if p.is_file() and b"test-openalex-key-0000" in p.read_bytes()]
    assert kept == []  # ...and never kept anywhere in the trace

    cited = {e["source"] for c in claims.active_claims(run) for e in c.get("evidence") or []}
    api_refs = {ref for kind in ("openalex", "worldbank") for ref, _ in kinds[kind]}
    assert {ref for ref, _ in kinds["worldbank"]} & cited, "no claim cites the World Bank series"
    assert {ref for ref, _ in kinds["openalex"]} & cited, "no claim cites an OpenAlex work"

    # The verifier re-issued exactly the recorded API request of every cited API source.
    sent = [unquote(f"{base}{r.full_path}").rstrip("?") for r, _ in world.server.log]
    for ref in api_refs & cited:
        meta, _ = retrieve.load_source(run, ref)
        assert unquote(meta["requested_url"]) in sent, meta["requested_url"]
        evidence = run.path("evidence", sq=ref.split("/")[0], src=ref.split("/")[1])
        assert evidence.is_file(), ref
    assert validate.validate_run(run).ok
    assert report.check(run, run.path("result")).ok
    record = runrecord.read(run)
    assert record["gather"] == {"sources": ["web", "openalex", "worldbank"]}
    api_calls = sum(1 for r, _ in world.server.log if r.path.startswith(("/openalex", "/wb/")))
    assert record["budgets"]["spent"]["provider_calls"] >= api_calls


def test_sources_option_limits_the_gather_and_is_recorded(world, tmp_path, cli):
    code, out, _, env = cli(
        "run", str(brief_at(tmp_path)), "--allow-private", "--sources", "web,worldbank", "--record", "--json"
    )
    assert code == 0, out
    run = trace.open_run(env["data"]["run_root"])
    assert set(sources_by_kind(run)) <= {"web", "worldbank"} and "worldbank" in sources_by_kind(run)
    assert not [r for r, _ in world.server.log if r.path.startswith("/openalex")]
    assert runrecord.read(run)["gather"]["sources"] == ["web", "worldbank"]
    engine_json = json.loads((run.path("cassette_dir") / "engine.json").read_text())
    assert engine_json["sources"] == ["web", "worldbank"]


def test_a_recorded_run_with_the_apis_replays_its_gather(world, tmp_path, cli):
    code, out, _, env = cli(
        "run", str(brief_at(tmp_path)), "--allow-private", "--sources", ",".join(THREE), "--record", "--json"
    )
    assert code == 0, out
    code, out, _, replayed = cli("replay", env["data"]["run_root"], "--json")
    assert code == 0, out
    assert replayed["data"]["identical"] is True and replayed["data"]["cassette_misses"] == []


def test_openalex_answering_429_is_an_event_and_the_run_completes(world, tmp_path):
    world.openalex_status = 429
    outcome = run_engine(brief_at(tmp_path), loop.EngineOptions(allow_private=True, sources=THREE))
    assert outcome.status == "complete", outcome.stop_reason
    run = trace.open_run(outcome.run_root)
    events = [e for e in runrecord.read(run)["events"] if e["kind"] == "source-failed"]
    assert len(events) == 1  # one failure, then OpenAlex is left alone for the rest of the run
    assert events[0]["source"] == "openalex" and events[0]["code"] == "openalex-rate-limited"
    assert events[0]["status"] == 429 and events[0]["skipped_for_rest_of_run"] is True
    assert runrecord.read(run)["gather"]["down"] == {"openalex": "openalex-rate-limited"}
    assert "worldbank" in sources_by_kind(run) and "openalex" not in sources_by_kind(run)
    assert validate.validate_run(run).ok


def test_bad_sources_option_is_refused(cli, tmp_path):
    code, out, _, env = cli("run", str(brief_at(tmp_path)), "--sources", "web,scholar", "--json")
    assert code == 2
    assert env["errors"][0]["code"] == "bad-sources" and "scholar" in env["errors"][0]["message"]


def test_a_cassette_without_a_sources_list_replays_web_only(tmp_path):
    cassette = tmp_path / "cassette"
    cassette.mkdir()
    config = {"env": {"SEARXNG_URL": "http://127.0.0.1:9"}, "keyed": [], "as_of": "2026-01-01"}
    (cassette / "engine.json").write_text(json.dumps(config))
    (cassette / "index.json").write_text(json.dumps({"schema_version": 1, "hosts": {}, "exchanges": []}))
    options = loop.EngineOptions(replay=str(cassette), output_path=str(tmp_path / "runs"))
    engine = start_engine(brief_at(tmp_path), options)
    engine.close()
    assert engine.sources == ["web"]
    assert engine.journal.data["config"]["sources"] == ["web"]


def test_country_and_indicator_rules():
    countries = [
        {"id": "JPN", "iso2": "JP", "name": "Japan", "aggregate": False},
        {"id": "PNG", "iso2": "PG", "name": "Papua New Guinea", "aggregate": False},
        {"id": "GIN", "iso2": "GN", "name": "Guinea", "aggregate": False},
        {"id": "WLD", "iso2": "1W", "name": "World", "aggregate": True},
        {"id": "EGY", "iso2": "EG", "name": "Egypt, Arab Rep.", "aggregate": False},
    ]
    text = "What is the population of Papua New Guinea, Egypt and Japan in the world?"
    named = apigather.match_countries(text, countries)
    assert [c["id"] for c in named] == ["PNG", "EGY", "JPN"]
    words = apigather.indicator_words(text, [c["said"] for c in named])
    assert words == ["population", "world"]
    catalogue = [
        {"id": "SP.POP.TOTL", "name": "Population, total", "source": "World Development Indicators"},
        {
            "id": "SP.POP.GROW",
            "name": "Population growth (annual %)",
            "source": "World Development Indicators",
        },
        {"id": "X.TOTL", "name": "Total rate", "source": "Other"},
    ]
    assert [i["id"] for i in apigather.rank_indicators(catalogue, words)] == ["SP.POP.TOTL", "SP.POP.GROW"]
    assert apigather.rank_indicators(catalogue, ["total", "rate"]) == []  # weak words alone choose nothing
    url = apigather.series_url(["JPN", "USA"], "NY.GDP.MKTP.CD", "https://api.worldbank.org/v2")
    assert apigather.parse_series_url(url) == (["JPN", "USA"], "NY.GDP.MKTP.CD", None, None)


def test_the_extractive_model_cites_a_world_bank_series_and_an_openalex_work_end_to_end(world, tmp_path):
    options = loop.EngineOptions(allow_private=True, sources=THREE)
    outcome = run_engine(brief_at(tmp_path), options, model=ExtractiveModel())
    run = trace.open_run(outcome.run_root)
    kinds = sources_by_kind(run)
    ledger, verdicts = report.claim_state(run)
    supported = [
        c
        for c in ledger.values()
        if c["status"] == "active" and (verdicts.get(c["id"]) or {}).get("verdict") == "supported"
    ]
    by_source = {e["source"]: c for c in supported for e in c["evidence"]}

    series_refs = [ref for ref in by_source if ref in {r for r, _ in kinds["worldbank"]}]
    assert series_refs, "no supported claim cites the World Bank series"
    data_claims = [by_source[ref] for ref in series_refs]
    # Each data claim states its point in the passage's own words: text and quote are one passage.
    for claim in data_claims:
        (entry,) = claim["evidence"]
        _, passages = retrieve.load_source(run, entry["source"])
        assert claim["text"] == entry["quote"] in [p.text for p in passages if p.kind == "data"]
    texts = {c["sub_question"]: c["text"] for c in data_claims}
    # The recorded series' 2020 value is null: the latest point with a value is 2019 ...
    assert "Japan, GDP (current US$), 2019: 5081769542379.77" in texts.values()
    # ... and the time angle states where the ten-year trend ("recency: any") starts.
    assert "Japan, GDP (current US$), 2009: 5231382674593.7" in texts.values()
    assert len(texts) == len(set(texts.values()))  # one sub-question per point

    work_refs = [ref for ref in by_source if ref in {r for r, _ in kinds["openalex"]}]
    assert work_refs, "no supported claim cites an OpenAlex work"
    meta, passages = retrieve.load_source(run, work_refs[0])
    # The claim quotes an abstract sentence; the work itself (title, year, DOI) stays with its source.
    assert meta["title"] and meta["metadata"]["year"] == 2020 and meta["metadata"]["doi"]
    assert any(p.kind == "data" and "Published 2020" in p.text for p in passages)
    assert any(p.kind == "heading" and p.text == meta["title"] for p in passages)
    result = run.path("result").read_text(encoding="utf-8")
    references = result.split("## References", 1)[1]
    assert f"**{work_refs[0]}** {meta['title']}" in references
    # One series request cited from two sub-questions is one reference naming both source ids.
    series_lines = [line for line in references.splitlines() if "World Bank: GDP (current US$)" in line]
    assert len(series_lines) == 1 and all(f"**{ref}**" in series_lines[0] for ref in series_refs)

    assert validate.validate_run(run).ok
    assert report.check(run, run.path("result")).ok
