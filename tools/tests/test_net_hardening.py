"""The fetcher against hostile upstreams: binary bodies labelled as text, secrets echoed back, a robots.txt
past its cap, a UTF-7 page."""

from __future__ import annotations

import gzip
import json
import os

import pytest
import yaml
from engine_web import BRIEF, write_mini_web
from pytest_httpserver import HTTPServer
from werkzeug import Response

from research_engine import retrieve
from research_engine.corpus import CorpusServer
from research_engine.net import HttpClient
from research_engine.net.content import binary_reason, decode_text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
RANDOM = os.urandom(20_000)
PAGE = (
    "<html lang='en'><head><title>Threads</title></head><body><article><h1>Threads</h1>"
    + "".join(
        f"<p>Paragraph {i} explains how the interpreter schedules concurrent work.</p>" for i in range(8)
    )
    + "</article></body></html>"
)


@pytest.fixture
def server():
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.start()
    yield srv
    srv.stop()


def client(**kw) -> HttpClient:
    return HttpClient(allow_private=True, per_host_interval=0.0, max_retries=0, use_cache=False, **kw)


# ------------------------------------------------------------------------------------- binary bodies


@pytest.mark.parametrize(
    "body,ctype",
    [
        (PNG, "text/html; charset=utf-8"),
        (RANDOM, "text/html"),
        (RANDOM, "text/plain"),
        (gzip.compress(PAGE.encode()), "text/html"),  # compressed bytes served without Content-Encoding
        (b"\x7fELF\x02\x01\x01" + b"\x00" * 500, "application/json"),
    ],
    ids=["png-as-html", "random-as-html", "random-as-text", "gzip-as-html", "elf-as-json"],
)
def test_a_binary_body_labelled_as_text_is_refused_with_its_reason(server, body, ctype):
    server.expect_request("/x").respond_with_data(body, content_type=ctype)
    with client() as http:
        result = http.get(server.url_for("/x"), check_robots=False, accept=("html", "text", "json"))
    assert not result.ok and result.error == "unsupported-type"
    assert "labelled" in (result.error_detail or "") and ctype.split(";")[0] in (result.error_detail or "")


def test_text_in_any_charset_is_not_binary():
    assert binary_reason(PAGE.encode("utf-8")) is None
    assert binary_reason("Déjà vu, naïve café. ".encode("cp1252") * 50) is None
    assert binary_reason("日本語のテキストです。".encode("shift_jis") * 50) is None
    assert binary_reason(b"\xff\xfe" + PAGE.encode("utf-16-le")) is None
    assert binary_reason(PAGE.encode("utf-16-le"), "utf-16le") is None
    assert binary_reason(b"\x0c form feed and a tab\t are text\r\n" * 20) is None


def test_fetch_run_refuses_a_binary_page_and_records_nothing(server, locked_run, cli):
    from research_engine import decompose

    decompose.add(locked_run, "What is on the page?", "factual")
    server.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nAllow: /\n", content_type="text/plain"
    )
    server.expect_request("/image").respond_with_data(PNG, content_type="text/html")
    code, _, _, env = cli(
        "fetch",
        server.url_for("/image"),
        "--run",
        locked_run.root,
        "--sq",
        "SQ-01",
        "--allow-private",
        "--json",
    )
    assert code == 6 and env["errors"][0]["code"] == "unsupported-type"
    assert "PNG image" in env["errors"][0]["message"]
    assert retrieve.list_sources(locked_run) == []


# ---------------------------------------------------------------------------------- echoed secrets

SECRET = "sk-live-0123456789abcdef"


def _echo_search(request):
    token = request.headers.get("X-Subscription-Token", "")
    data = {
        "query": {"original": request.args.get("q")},
        "web": {
            "results": [
                {
                    "title": f"Result for key {token}",
                    "url": "https://example.org/a",
                    "description": f"Your token is {token}; keep it safe.",
                }
            ]
        },
    }
    body = json.dumps(data).encode()
    headers = {"X-Echo-Token": token}
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        return Response(
            gzip.compress(body),
            headers={**headers, "Content-Encoding": "gzip"},
            content_type="application/json",
        )
    return Response(body, headers=headers, content_type="application/json")


def _tree_bytes(root) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink())


def test_a_backend_that_echoes_the_key_never_gets_it_into_the_run(server, locked_run, monkeypatch, cli):
    from research_engine import decompose

    decompose.add(locked_run, "What does the backend say?", "factual")
    server.expect_request("/brave/web/search").respond_with_handler(_echo_search)
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)
    monkeypatch.setenv("RESEARCH_ENGINE_BRAVE_URL", server.url_for("/brave"))
    host = f"127.0.0.1:{server.port}"
    code, out, _, env = cli(
        "search", "threads", "--run", locked_run.root, "--sq", "SQ-01", "--allow-host", host, "--json"
    )
    assert code == 0, out
    assert SECRET not in out  # not even in what the command prints
    assert env["data"]["candidates"][0]["title"] == "Result for key REDACTED"
    tree = _tree_bytes(locked_run.root)
    assert SECRET.encode() not in tree and b"REDACTED" in tree
    # The request itself carried the key: only what came back was scrubbed.
    assert server.log[0][0].headers["X-Subscription-Token"] == SECRET


@pytest.mark.slow
def test_a_recorded_run_keeps_no_echoed_secret_in_its_cassette(tmp_path, monkeypatch):
    """A page echoes the key in a gzip-compressed body: the cassette keeps it decoded and scrubbed, and
    the replay reproduces the trace."""
    from research_engine.engine import loop
    from research_engine.settings import Settings

    web = write_mini_web(tmp_path / "web")
    page = web / "library" / "threading.html"
    page.write_text(page.read_text().replace("</div>", f"<p>Leaked key: {SECRET} for all to see.</p></div>"))
    with CorpusServer(web) as corpus:
        monkeypatch.setenv("SEARXNG_URL", corpus.url)
        monkeypatch.setenv("RESEARCH_ENGINE_MODEL_API_KEY", SECRET)
        brief = tmp_path / "brief.yaml"
        brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
        options = loop.EngineOptions(allow_private=True, record=True, sources=["web"])
        outcome = loop.run(brief, options, settings=Settings.from_env())
    assert outcome.status == "complete"
    tree = _tree_bytes(outcome.run_root)
    assert SECRET.encode() not in tree
    assert b"Leaked key: REDACTED" in tree
    index = json.loads((outcome.run_root / "cassette" / "index.json").read_text())
    assert any(e.get("scrubbed") for e in index["exchanges"])


def test_the_cassette_keeps_a_compressed_echo_decoded_and_scrubbed(tmp_path, server):
    from research_engine.engine.cassette import Recorder, Replayer, client_kwargs

    def ask(http: HttpClient):
        headers = {"X-Subscription-Token": SECRET}
        url = server.url_for("/brave/web/search")
        return http.get(url, params={"q": "x"}, headers=headers, accept=("json",), check_robots=False)

    server.expect_request("/brave/web/search").respond_with_handler(_echo_search)
    recorder = Recorder(tmp_path / "cassette", secrets=(SECRET,))
    with HttpClient(allow_private=True, max_retries=0, secrets=(SECRET,), **client_kwargs(recorder)) as http:
        live = ask(http)
    assert live.ok, (live.error, live.error_detail)
    assert SECRET.encode() not in live.body and live.headers["x-echo-token"] == "REDACTED"
    stored = _tree_bytes(tmp_path / "cassette")
    assert SECRET.encode() not in stored
    (entry,) = json.loads((tmp_path / "cassette" / "index.json").read_text())["exchanges"]
    assert entry["scrubbed"] and "content-encoding" not in entry["headers"]
    replayer = Replayer(tmp_path / "cassette", secrets=(SECRET,))
    with HttpClient(allow_private=True, max_retries=0, secrets=(SECRET,), **client_kwargs(replayer)) as http:
        again = ask(http)
    assert again.ok and again.body == live.body and again.sha256 == live.sha256


# ----------------------------------------------------------------------------------------- robots.txt


def test_a_robots_txt_past_500_kib_is_parsed_up_to_its_first_500_kib(server):
    filler = "# " + "x" * 98 + "\n"
    body = "User-agent: *\nDisallow: /private\n" + filler * 6000 + "Disallow: /late\n"
    assert len(body) > 500 * 1024
    server.expect_request("/robots.txt").respond_with_data(body, content_type="text/plain")
    for path in ("/open", "/late", "/private"):
        server.expect_request(path).respond_with_data(PAGE, content_type="text/html")
    with client() as http:
        assert http.get(server.url_for("/open")).ok
        assert http.get(server.url_for("/late")).ok  # its rule lies past the first 500 KiB
        refused = http.get(server.url_for("/private"))
    assert refused.error == "refused-robots"


# ------------------------------------------------------------------------------------------------ UTF-7


def test_a_utf7_page_is_not_decoded_as_utf7(server):
    smuggled = b"<html><body><p>+ADw-script+AD4-alert(1)+ADw-/script+AD4-</p></body></html>"
    server.expect_request("/seven").respond_with_data(smuggled, content_type="text/html; charset=utf-7")
    with client() as http:
        result = http.get(server.url_for("/seven"), check_robots=False)
    assert result.ok and result.charset != "utf-7"
    assert "<script>" not in (result.text or "") and "+ADw-script+AD4-" in (result.text or "")


def test_no_unsafe_charset_is_honoured_declared_or_in_meta():
    body = b'<meta charset="utf-7"><p>+ADw-b+AD4-bold+ADw-/b+AD4-</p>'
    for declared in ("utf-7", "UTF7", "csUnicode11UTF7", None):
        text, used = decode_text(body, declared, "html")
        assert "<b>" not in text and used not in ("utf-7", "utf_7")
    assert decode_text("안녕".encode("iso2022_kr"), "iso-2022-kr", "text")[1] != "iso2022_kr"
