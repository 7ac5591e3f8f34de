"""The local corpus server: static pages plus a SearXNG-compatible BM25 search endpoint."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from crossprocess import outputs_of_fresh_processes

from research_engine.corpus import Corpus, CorpusServer, page_text, tokenize
from research_engine.errors import BadInput

PAGES = {
    "library/threading.html": (
        "threading — Thread-based parallelism",
        "<p>CPython implementation detail: due to the Global Interpreter Lock, only one thread can execute "
        "Python code at once. Threads are still useful for I/O-bound tasks.</p>",
    ),
    "library/multiprocessing.html": (
        "multiprocessing — Process-based parallelism",
        "<p>The multiprocessing package side-steps the Global Interpreter Lock by using subprocesses "
        "instead of threads, leveraging multiple processors.</p>",
    ),
    "library/asyncio.html": (
        "asyncio — Asynchronous I/O",
        "<p>asyncio is a library to write concurrent code using the async/await syntax.</p>",
    ),
}


def write_corpus(root):
    for rel, (title, body) in PAGES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"<html><head><title>{title}</title></head><body><nav>menu threads</nav>"
            f"<div role='main'><h1>{title}</h1>{body}</div></body></html>",
            encoding="utf-8",
        )
    (root / "_sources").mkdir()
    (root / "_sources" / "skip.html").write_text("<title>x</title><p>threads threads</p>")
    return root


@pytest.fixture
def corpus_server(tmp_path):
    with CorpusServer(write_corpus(tmp_path / "corpus")) as server:
        yield server


def test_a_utf8_page_without_a_declared_charset_is_indexed_as_utf8(tmp_path):
    page = "<html><head><title>threading \u2014 Thread-based parallelism</title></head><body>x</body></html>"
    (tmp_path / "p.html").write_text(page, encoding="utf-8")
    assert page_text((tmp_path / "p.html").read_bytes())[0] == "threading \u2014 Thread-based parallelism"


def test_an_xhtml_page_with_an_xml_declaration_is_indexed():
    """PostgreSQL's documentation is XHTML opening with an XML declaration (a real page, as shipped)."""
    page = Path(__file__).parent / "fixtures" / "docs" / "postgresql-15-runtime-config-resource.html"
    title, text = page_text(page.read_bytes())
    assert title == "20.4. Resource Consumption"
    assert "The default is typically 128 megabytes (128MB)" in text


def test_search_answers_in_searxng_shape(corpus_server, shared):
    reference = json.loads(shared("fixtures", "apis", "searxng", "search_python_page1.json").read_text())
    got = httpx.get(
        f"{corpus_server.url}/search", params={"q": "global interpreter lock", "format": "json"}
    ).json()
    assert set(reference) <= set(got)
    assert set(reference["results"][0]) <= set(got["results"][0])
    assert got["query"] == "global interpreter lock"
    assert got["unresponsive_engines"] == []


def test_search_ranks_pages_by_bm25_relevance(corpus_server):
    got = httpx.get(
        f"{corpus_server.url}/search", params={"q": "subprocesses processors", "format": "json"}
    ).json()
    urls = [r["url"] for r in got["results"]]
    assert urls == [f"{corpus_server.url}/library/multiprocessing.html"]
    assert got["results"][0]["positions"] == [1]
    assert "subprocesses" in got["results"][0]["content"]


def test_search_skips_build_internals_and_navigation(corpus_server):
    got = httpx.get(f"{corpus_server.url}/search", params={"q": "menu", "format": "json"}).json()
    assert got["results"] == []
    got = httpx.get(f"{corpus_server.url}/search", params={"q": "threads", "format": "json"}).json()
    assert all("_sources" not in r["url"] for r in got["results"])


def test_search_results_are_the_same_from_every_server_process(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    code = (
        "import httpx\n"
        "from research_engine.corpus import CorpusServer\n"
        f"with CorpusServer({str(corpus)!r}) as server:\n"
        "    for q in ('threads lock', 'asyncio event loop', 'global interpreter lock'):\n"
        "        print(httpx.get(f'{server.url}/search', params={'q': q, 'format': 'json'}).text)\n"
    )
    first, second = (re.sub(r"127\.0\.0\.1:\d+", "HOST", out) for out in outputs_of_fresh_processes(code))
    assert first == second and '"results"' in first


def test_search_refuses_non_json_and_empty_queries(corpus_server):
    assert httpx.get(f"{corpus_server.url}/search", params={"q": "x"}).status_code == 403
    assert httpx.get(f"{corpus_server.url}/search", params={"q": " ", "format": "json"}).status_code == 400
    assert (
        httpx.get(
            f"{corpus_server.url}/search", params={"q": "x", "format": "json", "pageno": "0"}
        ).status_code
        == 400
    )


def test_pages_are_served_with_etag_and_revalidation(corpus_server):
    response = httpx.get(f"{corpus_server.url}/library/asyncio.html")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert b"async/await" in response.content
    again = httpx.get(
        f"{corpus_server.url}/library/asyncio.html", headers={"If-None-Match": response.headers["etag"]}
    )
    assert again.status_code == 304


def test_paths_outside_the_corpus_are_not_served(corpus_server):
    assert httpx.get(f"{corpus_server.url}/../../etc/passwd").status_code == 404
    assert httpx.get(f"{corpus_server.url}/%2e%2e/%2e%2e/etc/passwd").status_code == 404
    assert httpx.get(f"{corpus_server.url}/nothing.html").status_code == 404


def test_robots_txt_allows_everything(corpus_server):
    assert "Allow: /" in httpx.get(f"{corpus_server.url}/robots.txt").text


def test_a_directory_without_pages_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="no readable documents"):
        Corpus(tmp_path)
    with pytest.raises(BadInput, match="does not exist"):
        Corpus(tmp_path / "absent")


def test_tokenize_drops_function_words_and_keeps_identifiers():
    assert tokenize("The GIL and asyncio.run_until_complete") == ["gil", "asyncio", "run_until_complete"]


def test_tokenize_keeps_version_numbers_whole_and_folds_plurals_and_ing_forms():
    assert tokenize("Python 3.11 threads threading processes") == [
        "python",
        "3.11",
        "thread",
        "thread",
        "process",
    ]
    assert tokenize("How should we choose between X versus Y") == ["choos", "x", "y"]


def _page(title, body):
    from research_engine.corpus import CorpusPage

    terms = tokenize(f"{title} {body}")
    from collections import Counter

    counts = Counter(terms)
    return CorpusPage(
        title.lower().replace(" ", "-") + ".html",
        title,
        body,
        counts,
        sum(counts.values()),
        frozenset(tokenize(title)),
    )


def test_a_page_titled_for_the_query_outranks_one_that_merely_mentions_it_more():
    from research_engine.corpus import Bm25Index

    filler = " ".join(f"word{i}" for i in range(40))
    pages = [
        _page("Using Python on Windows", "Python 3.11 installer; a thread thread thread here. " + filler),
        _page("threading Thread-based parallelism", "A thread runs code in a program. " + filler),
    ] + [_page(f"Page {i}", f"python 3.11 program {filler}") for i in range(6)]
    ranked = [p.title for _, p in Bm25Index(pages).search("threads python 3.11")]
    assert ranked[0] == "threading Thread-based parallelism"


def test_question_words_in_a_query_do_not_rank_pages(corpus_server):
    plain = httpx.get(f"{corpus_server.url}/search", params={"q": "subprocesses", "format": "json"}).json()
    asked = httpx.get(
        f"{corpus_server.url}/search", params={"q": "what about the subprocesses?", "format": "json"}
    ).json()
    assert [r["url"] for r in asked["results"]] == [r["url"] for r in plain["results"]]


def test_a_snippet_is_chosen_for_the_query_words_it_shows_not_those_cut_off_after_it():
    from research_engine.corpus import snippet

    # The shape of a manual page's example: one sentence running on for a screenful of code, whose query
    # words all lie past the snippet's cut, beside the short option entry that answers the query.
    example = "Similarly the first video stream is linked to the second input " + "x " * 200
    example += "so the output file size limit writes are unchanged."
    entry = "-fs limit_size (output) Set the file size limit, expressed in bytes."
    text = f"{example} Other text here. {entry} More text follows."
    shown = snippet(text, "limit size output file ffmpeg writes")
    assert "-fs limit_size (output) Set the file size limit" in shown and "video stream" not in shown


def test_a_release_is_found_by_the_version_it_is_a_release_of(tmp_path):
    # Real Sphinx pages of Django 3.2's documentation: every title ends "— Django 3.2.25 documentation".
    # "Django 1.6" is how a question names the 1.6.11 release; and the site's tail, on every page, tells no
    # page apart (Tornado's "— Tornado 6.2 documentation" had drowned "What's new in Tornado 6.2.0").
    from research_engine.corpus.index import site_title

    docs = Path(__file__).parent / "fixtures" / "docs"
    for page in docs.glob("django-3.2-*.html"):
        (tmp_path / page.name).write_bytes(page.read_bytes())
    corpus = Corpus(tmp_path, cache_root=tmp_path / "cache")
    assert site_title([p.title for p in corpus.index.pages]) == "Django 3.2.25 documentation"
    ranked = [p.path for _, p in corpus.index.search("django 1.6")]
    assert ranked[0] == "django-3.2-releases-1.6.11.html"
    assert not any("documentation" in p.title_terms for p in corpus.index.pages)  # the page's own title only
