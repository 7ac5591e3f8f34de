"""arXiv, Crossref, Europe PMC and Wikipedia against a local server replaying their recorded real answers
(../shared/fixtures/apis/{arxiv,crossref,europepmc,wikipedia}/): search, lookup, empty result, error,
rate limit with Retry-After, DOI dedup across sources, and each service's pacing measured on the wire."""

from __future__ import annotations

import json
import time

import pytest
from conftest import shared_path
from werkzeug.wrappers import Request, Response

from research_engine.engine import apigather
from research_engine.errors import BadInput, UpstreamFailed
from research_engine.net import fetch_policy
from research_engine.selection.scoring import decide
from research_engine.settings import Settings
from research_engine.sources import arxiv, crossref, europepmc, wikipedia


def fixture(source: str, name: str) -> bytes:
    return shared_path("fixtures", "apis", source, name).read_bytes()


class Recorded:
    """Answers by path and query, from the recordings; `status` forces an error answer for every request."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.seen: list[tuple[float, Request]] = []

    def __call__(self, request: Request) -> Response:
        self.seen.append((time.monotonic(), request))
        if self.status:
            return Response("Rate exceeded.", status=self.status, headers={"Retry-After": "1"})
        path, args = request.path, request.args
        xml, js = "application/atom+xml; charset=utf-8", "application/json; charset=utf-8"
        if path == "/arxiv/api/query":
            ids = args.get("id_list", "")
            if ids == "1605.08386":
                return Response(fixture("arxiv", "id_list_single.xml"), content_type=xml)
            if ids:
                return Response(fixture("arxiv", "empty_unknown_id.xml"), content_type=xml)
            if "zzzz" in args.get("search_query", ""):
                return Response(fixture("arxiv", "error_400_malformed_id.xml"), status=400, content_type=xml)
            return Response(fixture("arxiv", "search_all_testing_page1.xml"), content_type=xml)
        if path == "/crossref/works":
            if args.get("query") == "abs12032jsdafn":
                return Response(fixture("crossref", "works_title_query_no_results.json"), content_type=js)
            return Response(fixture("crossref", "works_query_rows2.json"), content_type=js)
        if path == "/crossref/works/10.1371/journal.pone.0033693":
            return Response(fixture("crossref", "work_by_doi.json"), content_type=js)
        if path.startswith("/crossref/works/"):
            return Response(
                fixture("crossref", "error_404_doi_not_found.txt"), status=404, content_type="text/plain"
            )
        if path == "/epmc/search":
            query = args.get("query", "")
            if query.startswith("EXT_ID:39466770"):
                return Response(fixture("europepmc", "record_by_pmid_core.json"), content_type=js)
            if "asdkfj" in query:
                return Response(fixture("europepmc", "search_no_results.json"), content_type=js)
            if query == "cancer":
                first = args.get("cursorMark") == "*"
                name = "search_cancer_lite_cursor_page1" if first else "search_cancer_lite_cursor_page2"
                return Response(fixture("europepmc", f"{name}.json"), content_type=js)
            return Response(fixture("europepmc", "search_title_core_end_of_results.json"), content_type=js)
        if path == "/wiki/w/api.php":
            if args.get("list") == "search":
                name = (
                    "search_no_results"
                    if args.get("srsearch") == "asdfadfaadfadfs"
                    else "search_python_programming"
                )
                return Response(fixture("wikipedia", f"{name}.json"), content_type=js)
            if args.get("titles") == "Python (programming language)":
                return Response(fixture("wikipedia", "extract_plaintext_python.json"), content_type=js)
            return Response(fixture("wikipedia", "page_info_missing.json"), content_type=js)
        if path == "/wiki/api/rest_v1/page/summary/Moscow":
            return Response(fixture("wikipedia", "rest_summary_moscow.json"), content_type=js)
        return Response("not recorded", status=404)


@pytest.fixture
def apis(httpserver):
    recorded = Recorded()
    httpserver.expect_request(__import__("re").compile(".*")).respond_with_handler(recorded)
    base = httpserver.url_for("/").rstrip("/")
    settings = Settings(
        base_urls={
            "arxiv": f"{base}/arxiv/api",
            "arxiv_web": f"{base}/arxiv",
            "crossref": f"{base}/crossref",
            "europepmc": f"{base}/epmc",
            "wikipedia": f"{base}/wiki",
        },
        allow_private=True,
        mailto="research@example.org",
    )
    # The published pacing would make every test wait; the pacing test below measures it on its own.
    client = fetch_policy(settings, client_options={"host_intervals": {}, "per_host_interval": 0.0}).client()
    recorded.settings, recorded.client = settings, client
    yield recorded
    client.close()


def test_arxiv_search_lookup_empty_and_error(apis):
    found = arxiv.search("software testing", client=apis.client, settings=apis.settings)
    assert found.total == 214881 and len(found.candidates) == 10
    first = found.candidates[0]
    assert first.kind == "arxiv" and first.url.startswith(apis.settings.base_url("arxiv_web") + "/abs/")
    assert first.extra["pdf_url"].endswith("/pdf/" + first.extra["arxiv_id"])
    sent = apis.seen[-1][1].args
    assert sent["search_query"] == "all:software AND all:testing" and sent["max_results"] == "10"
    (paper,) = arxiv.lookup(["1605.08386"], client=apis.client, settings=apis.settings).record
    assert paper.title == "Heat-bath random walks with Markov bases" and paper.authors == [
        "Caprice Stanley",
        "Tobias Windisch",
    ]
    assert paper.arxiv_id == "1605.08386v1"
    with pytest.raises(BadInput) as empty:
        arxiv.lookup(["0000.0000"], client=apis.client, settings=apis.settings)
    assert empty.value.code == "not-found"
    with pytest.raises(BadInput) as refused:
        arxiv.search("zzzz", client=apis.client, settings=apis.settings)
    assert refused.value.code == "arxiv-bad-request" and "incorrect id format" in refused.value.message
    with pytest.raises(BadInput):
        arxiv.lookup(["not an id"], client=apis.client, settings=apis.settings)


def test_crossref_search_lookup_with_references_empty_and_404(apis):
    found = crossref.search("ecology", limit=2, client=apis.client, settings=apis.settings)
    assert len(found.candidates) == 2 and all(c.doi and c.kind == "crossref" for c in found.candidates)
    sent = apis.seen[-1][1]
    assert sent.args["mailto"] == "research@example.org"  # the polite pool
    assert "mailto:research@example.org" in sent.headers["User-Agent"]
    work = crossref.lookup(
        "https://doi.org/10.1371/journal.pone.0033693", client=apis.client, settings=apis.settings
    ).record
    assert work.title.startswith("Methylphenidate Exposure Induces Dopamine Neuron Loss")
    assert work.container == "PLoS ONE" and work.issued == "2012-03-21" and len(work.references) > 20
    assert work.references[0].startswith("AF Arnsten. (2006). Stimulants")
    empty = crossref.search("abs12032jsdafn", client=apis.client, settings=apis.settings)
    assert empty.candidates == [] and empty.total == 0
    with pytest.raises(BadInput) as missing:
        crossref.lookup("10.1371/notarealdoi", client=apis.client, settings=apis.settings)
    assert missing.value.code == "not-found" and "Resource not found" in missing.value.message


def test_europepmc_search_record_paging_and_empty(apis):
    found = europepmc.search("Chile traffic law", client=apis.client, settings=apis.settings)
    assert found.total == 3 and len(found.candidates) == 3 and len(found.responses) == 1  # no cursor: the end
    (record,) = [c for c in found.candidates if c.extra["record"] == "MED:25432938"]
    assert record.url == "https://europepmc.org/article/MED/25432938" and record.extra["full_text"] is None
    rec = europepmc.lookup("MED:39466770", client=apis.client, settings=apis.settings).record
    assert rec.open_access and rec.pmcid == "PMC11516011" and rec.doi == "10.1371/journal.pone.0311879"
    paged = europepmc.search("cancer", limit=150, client=apis.client, settings=apis.settings)
    assert len(paged.candidates) == 150 and len(paged.responses) == 2
    cursors = [r.args["cursorMark"] for _, r in apis.seen if r.args.get("query") == "cancer"]
    assert cursors == ["*", "AoIIP4T93Cg1MzE0OTUzNA=="] and not any("page" in r.args for _, r in apis.seen)
    assert (
        europepmc.search(
            "asdkfjhasdkfjhasdfasdasdasdfgsagsd", client=apis.client, settings=apis.settings
        ).candidates
        == []
    )


def test_wikipedia_search_article_summary_missing_and_empty(apis):
    found = wikipedia.search("Python programming", client=apis.client, settings=apis.settings)
    assert found.total == 6045 and found.candidates[0].title == "Python (programming language)"
    assert found.candidates[0].url == "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert (
        "<span" not in found.candidates[0].snippet
        and "high-level, general-purpose" in found.candidates[0].snippet
    )
    assert "mailto:research@example.org" in apis.seen[-1][1].headers["User-Agent"]
    article = wikipedia.article(
        "Python (programming language)", client=apis.client, settings=apis.settings
    ).record
    chunks = wikipedia.article_chunks(article.text)
    assert chunks[0][1].startswith("Python is a high-level, general-purpose programming language.")
    assert ("heading", "History") in chunks
    summary = wikipedia.summary("Moscow", client=apis.client, settings=apis.settings).record
    assert summary["title"] == "Moscow" and summary["extract"]
    with pytest.raises(BadInput) as missing:
        wikipedia.article("NonExistentPage_WikiAPI_Test_12345", client=apis.client, settings=apis.settings)
    assert missing.value.code == "not-found"
    assert wikipedia.search("asdfadfaadfadfs", client=apis.client, settings=apis.settings).candidates == []


@pytest.mark.parametrize(
    "call",
    [
        lambda a: arxiv.search("testing", client=a.client, settings=a.settings),
        lambda a: crossref.search("ecology", client=a.client, settings=a.settings),
        lambda a: europepmc.search("cancer", client=a.client, settings=a.settings),
        lambda a: wikipedia.search("python", client=a.client, settings=a.settings),
    ],
    ids=["arxiv", "crossref", "europepmc", "wikipedia"],
)
def test_a_rate_limit_is_waited_out_once_then_a_clear_error(apis, call):
    apis.status = 429
    start = time.monotonic()
    with pytest.raises(UpstreamFailed) as limited:
        call(apis)
    assert limited.value.code.endswith("-rate-limited") and limited.value.data["retry_after"] == 1.0
    times = [t for t, _ in apis.seen]
    assert len(times) >= 2 and times[1] - times[0] >= 0.9  # Retry-After honoured before the retry
    assert time.monotonic() - start < 30


def test_one_work_from_three_sources_is_one_source_with_the_best_full_text(apis):
    """SYNTHESIZED overlap: the recorded Crossref work answer and the recorded OpenAlex search row, each with
    its DOI replaced by the DOI of the recorded Europe PMC record (an open-access article)."""
    from research_engine.sources.openalex import parse_work, work_candidate

    epmc = europepmc.record_candidate(
        europepmc.lookup("MED:39466770", client=apis.client, settings=apis.settings).record, 1
    )
    doi = epmc.doi
    message = json.loads(fixture("crossref", "work_by_doi.json"))["message"]
    cross = crossref.work_candidate(crossref.parse_work({**message, "DOI": doi}), 1)
    row = json.loads(fixture("openalex", "works_cursor_seq_page1.json"))["results"][0]
    alex = work_candidate(
        parse_work({**row, "doi": f"https://doi.org/{doi}", "open_access": {}, "best_oa_location": None}), 1
    )
    cands = [c.to_dict() for c in (cross, alex, epmc)]
    assert len({c["canonical_key"] for c in cands}) == 1  # one work
    items = [{"key": c["canonical_key"], "domain": c["kind"], "rank": 1} for c in cands]
    from datetime import date

    from research_engine.selection.scoring import Context, Facts, score

    ctx = Context("factual", "any", date(2026, 1, 1), question="traffic law enforcement")
    scores = [
        score(
            Facts(
                c["kind"],
                c["source_type"],
                True,
                "https",
                "open",
                None,
                0,
                c["title"],
                c["snippet"],
                c["url"],
                1,
            ),
            ctx,
        )
        for c in cands
    ]
    decisions = decide(items, scores, budget=4)
    assert sum(d.verdict == "chosen" for d in decisions) == 1  # deduplicated by DOI across sources
    chosen = cands[next(i for i, d in enumerate(decisions) if d.verdict == "chosen")]
    best = apigather.best_full_text(chosen, cands)
    assert best["kind"] == "europepmc" and best["extra"]["full_text"] == "jats"


@pytest.mark.slow
def test_each_service_is_paced_as_it_asks(apis):
    """Measured on the wire: arXiv one request every 3 s, Europe PMC one a second (the client's default
    pacing for those hosts, `Settings.polite_intervals`, on a client built as every command builds one)."""
    client = fetch_policy(apis.settings, allow_private=True).client(per_host_interval=0.0)
    base = apis.settings.base_urls
    try:
        for url in (f"{base['arxiv']}/query", f"{base['arxiv']}/query", f"{base['europepmc']}/search"):
            client.get(
                url,
                params={"id_list": "1605.08386", "query": "x", "format": "json"},
                accept=("xml", "json"),
                check_robots=False,
            )
        client.get(f"{base['europepmc']}/search", params={"query": "x"}, accept=("json",), check_robots=False)
    finally:
        client.close()
    times = [t for t, r in apis.seen]
    assert times[1] - times[0] >= 2.9  # arXiv: 3 s
    assert times[3] - times[2] >= 0.9  # Europe PMC: 1 s


def test_a_stand_in_on_a_port_paces_only_that_port(httpserver):
    """A service's pacing is keyed by its base's host:port when the base names a port: arXiv's 3 s for a
    stand-in on 127.0.0.1 never spaces the requests to another server on the same address (a corpus)."""
    settings = Settings.from_env({"RESEARCH_ENGINE_ARXIV_URL": "http://127.0.0.1:9/arxiv"})
    assert (
        settings.polite_intervals()["127.0.0.1:9"] == 3.0 and "127.0.0.1" not in settings.polite_intervals()
    )
    assert Settings.from_env({}).polite_intervals()["export.arxiv.org"] == 3.0
    httpserver.expect_request("/page").respond_with_data("<p>hello</p>", content_type="text/html")
    client = fetch_policy(settings, allow_private=True).client(per_host_interval=0.0)
    try:
        start = time.monotonic()
        for _ in range(3):
            client.get(httpserver.url_for("/page"), check_robots=False)
        assert time.monotonic() - start < 2.0  # three requests, no 3 s between them
    finally:
        client.close()


class World(Recorded):
    """The recordings, plus what a whole run also asks and no recording holds (each SYNTHESIZED, saying how):
    a lookup answers with the entry of the recorded search that has that id; the arXiv PDF is a stand-in
    (tools/tests/fixtures/documents/wal.pdf); the Europe PMC open-access record (record_by_pmid_core) joins
    the recorded search results, and its full text is JATS built from that record's own abstract."""

    def __call__(self, request: Request) -> Response:
        from pathlib import Path

        from research_engine import libraries

        path, args = request.path, request.args
        xml, js = "application/atom+xml; charset=utf-8", "application/json; charset=utf-8"
        if path == "/arxiv/api/query" and args.get("id_list"):
            etree = libraries.lxml_etree()
            feed = etree.fromstring(fixture("arxiv", "search_all_testing_page1.xml"))
            for entry in feed.findall(f"{arxiv.ATOM}entry"):
                if not entry.findtext(f"{arxiv.ATOM}id").endswith("/" + args["id_list"]):
                    feed.remove(entry)
            return Response(etree.tostring(feed, xml_declaration=True, encoding="UTF-8"), content_type=xml)
        if path.startswith("/arxiv/pdf/"):
            pdf = Path(__file__).parent / "fixtures" / "documents" / "wal.pdf"
            return Response(pdf.read_bytes(), content_type="application/pdf")
        if path.startswith("/crossref/works/"):
            doi = path.removeprefix("/crossref/works/").lower()
            body = json.loads(fixture("crossref", "works_query_rows2.json"))
            for item in body["message"]["items"]:
                if item["DOI"].lower() == doi:
                    return Response(
                        json.dumps({"status": "ok", "message-type": "work", "message": item}), content_type=js
                    )
        if path == "/epmc/search":
            oa = json.loads(fixture("europepmc", "record_by_pmid_core.json"))["resultList"]["result"][0]
            body = json.loads(fixture("europepmc", "search_title_core_end_of_results.json"))
            rows = body["resultList"]["result"] + [oa]
            query = args.get("query", "")
            if query.startswith("EXT_ID:"):
                ident = query.split()[0].removeprefix("EXT_ID:")
                rows = [r for r in rows if r["id"] == ident]
            body["resultList"]["result"], body["hitCount"] = rows, len(rows)
            return Response(json.dumps(body), content_type=js)
        if path == "/epmc/PMC11516011/fullTextXML":
            oa = json.loads(fixture("europepmc", "record_by_pmid_core.json"))["resultList"]["result"][0]
            paragraphs = "".join(f"<p>{p}</p>" for p in europepmc.plain(oa["abstractText"]).split(". ") if p)
            jats = (
                f"<article><front><article-meta><title-group><article-title>{oa['title']}</article-title>"
                f"</title-group></article-meta></front><body><sec><title>Results</title>{paragraphs}</sec>"
                "</body></article>"
            )
            return Response(jats.encode(), content_type="application/xml")
        if path == "/wiki/w/api.php" and args.get("prop") == "extracts":
            return Response(fixture("wikipedia", "extract_plaintext_python.json"), content_type=js)
        return super().__call__(request)


def run_against(world, httpserver, monkeypatch, tmp_path, cli, objective: str, sources: str):
    """`run --record` of `objective` gathering from `sources`, every service answered by `world`."""
    import yaml

    from research_engine import trace

    httpserver.expect_request(__import__("re").compile(".*")).respond_with_handler(world)
    base = httpserver.url_for("/").rstrip("/")
    for name, path in (
        ("ARXIV", "arxiv/api"),
        ("ARXIV_WEB", "arxiv"),
        ("CROSSREF", "crossref"),
        ("EUROPEPMC", "epmc"),
        ("WIKIPEDIA", "wiki"),
    ):
        monkeypatch.setenv(f"RESEARCH_ENGINE_{name}_URL", f"{base}/{path}")
    brief = tmp_path / "brief.yaml"
    fields = {
        "objective": objective,
        "deliverable": "a cited memo",
        "depth": "quick",
        "claim_types": ["factual"],
        "recency": "any",
        "output_path": str(tmp_path / "runs"),
    }
    brief.write_text(yaml.safe_dump(fields))
    host = base.removeprefix("http://")
    code, out, _, env = cli("run", brief, "--sources", sources, "--allow-host", host, "--record", "--json")
    assert code in (0, 8), out
    return trace.open_run(env["data"]["run_root"])


def sources_of(run) -> dict[str, list[tuple[str, dict]]]:
    from research_engine import retrieve

    kinds: dict[str, list[tuple[str, dict]]] = {}
    for ref in retrieve.list_sources(run):
        meta, _ = retrieve.load_source(run, ref)
        kinds.setdefault(meta["kind"], []).append((ref, meta))
    return kinds


OBJECTIVES = {
    "arxiv": "What does research on software testing report?",
    "crossref": "What is reported about communicating ecology?",
    "europepmc": "What makes a deep learning model interpretable for local explanations?",
    "wikipedia": "What is the Python programming language?",
}


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(OBJECTIVES))
def test_a_run_retrieves_verifies_and_replays_each_keyless_source(
    source, httpserver, tmp_path, cli, monkeypatch
):
    from research_engine import runrecord, validate

    run = run_against(World(), httpserver, monkeypatch, tmp_path, cli, OBJECTIVES[source], source)
    kinds = sources_of(run)
    assert source in kinds, sorted(kinds)
    if source == "europepmc":
        assert any(m["metadata"].get("part") == "full-text" for _, m in kinds["europepmc"])  # open full text
    if source == "arxiv":
        assert "web" in kinds and kinds["web"][0][1]["requested_url"].startswith(
            runrecord.read(run)["allow_hosts"][0].join(("http://", "/arxiv/pdf/"))
        )  # the PDF beside the abstract record
    for ref, _ in kinds[source]:
        evidence = run.path("evidence", sq=ref.split("/")[0], src=ref.split("/")[1])
        if evidence.is_file():  # the verifier re-issued the request and rebuilt the passages alike
            assert "reachable: true" in evidence.read_text()
    assert not [e for e in runrecord.read(run).get("events", []) if e["kind"] == "source-failed"]
    assert validate.validate_run(run).ok
    code, out, _, replayed = cli("replay", run.root, "--json")
    assert code == 0, out
    assert replayed["data"]["identical"] is True and replayed["data"]["cassette_misses"] == []


@pytest.mark.slow
def test_one_run_routes_each_sub_question_and_says_why(httpserver, tmp_path, cli, monkeypatch):
    objective = "What is the Python programming language, and what does research on software testing report?"
    run = run_against(
        World(), httpserver, monkeypatch, tmp_path, cli, objective, "arxiv,crossref,europepmc,wikipedia"
    )
    commands = set()
    for path in run.root.glob("select/SQ-*.candidates.json"):
        commands |= {q["command"] for q in json.loads(path.read_text())["queries"]}
    assert commands == {"arxiv search", "crossref search", "europepmc search", "wikipedia search"}
    selections = " ".join(p.read_text() for p in run.root.glob("select/SQ-*.selection.md"))
    assert "asked wikipedia because a definition or background question" in selections
    assert "asked arxiv because a factual claim is scholarly" in selections


def test_the_verifier_rereads_a_pdf_the_retrieval_read(httpserver, locked_run):
    """An arXiv paper's PDF (here a stand-in PDF) is retrieved with PDFs allowed; the verifier's re-fetch
    accepts the same kind of document, so a claim quoting it can be checked."""
    from pathlib import Path

    from research_engine.retrieve.pages import PageRequest, retrieve_pages
    from research_engine.verify.refetch import fetch_fresh

    pdf = (Path(__file__).parent / "fixtures" / "documents" / "wal.pdf").read_bytes()
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    path = "/arxiv/pdf/1605.08386v1"
    httpserver.expect_request(path).respond_with_data(pdf, content_type="application/pdf")
    url = httpserver.url_for(path)
    client = fetch_policy(Settings(allow_private=True), client_options={"per_host_interval": 0.0}).client()
    try:
        (page,) = retrieve_pages(locked_run, "SQ-01", [PageRequest(url=url)], client, allow_pdf=True)
        assert page.ref is not None
        fresh = fetch_fresh(locked_run, page.ref, client)
    finally:
        client.close()
    assert fresh.reachable and fresh.changed is False
    assert "2.2. Concurrency" in [p.text for p in fresh.passages]
