"""Record and replay through the real HttpClient against a real local server (pytest-httpserver)."""

from __future__ import annotations

import gzip
import json

import pytest
from werkzeug import Response

from research_engine.engine.cassette import (
    Recorder,
    Replayer,
    body_digest,
    client_kwargs,
    exchange_key,
)
from research_engine.net import HttpClient
from research_engine.redaction import REDACTED
from research_engine.settings import Settings

SECRET = "sk-test-cassette-secret-0123456789"


def _client(cassette):
    options = {"allow_private": True, "max_retries": 1, "backoff_base": 0.0, "per_host_interval": 0.0}
    return HttpClient(**{**options, **client_kwargs(cassette)})


def _serve_site(httpserver):
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nAllow: /\n", content_type="text/plain"
    )
    page = (
        "<html><head><title>Tasks</title></head>"
        "<body><p>asyncio runs one event loop per thread.</p></body></html>"
    )
    httpserver.expect_request("/page").respond_with_data(page, content_type="text/html; charset=utf-8")
    httpserver.expect_request("/gz").respond_with_response(
        Response(
            gzip.compress(b"plain text that arrived gzip-encoded"),
            headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"},
        )
    )
    httpserver.expect_request("/api", query_string={"q": "loops", "api_key": SECRET}).respond_with_json(
        {"results": [1, 2, 3]}
    )
    httpserver.expect_request("/search", method="POST").respond_with_json({"answer": "posted"})


def _record_site(tmp_path, httpserver):
    recorder = Recorder(tmp_path / "cassette", Settings.from_env().secrets)
    with _client(recorder) as client:
        results = {
            "page": client.get(httpserver.url_for("/page")),
            "gz": client.get(httpserver.url_for("/gz"), accept=("text",)),
            "api": client.get(
                httpserver.url_for("/api"),
                params={"q": "loops", "api_key": SECRET},
                accept=("json",),
                check_robots=False,
            ),
            "post": client.post_json(
                httpserver.url_for("/search"),
                {"api_key": SECRET, "query": "loops"},
                headers={"Authorization": f"Bearer {SECRET}"},
            ),
        }
    return recorder, results


def _facts(result):
    return (
        result.ok,
        result.status,
        result.error,
        result.content_type,
        result.body,
        result.text,
        result.sha256,
        result.final_url,
    )


def test_replay_serves_every_recorded_exchange_back_identically(tmp_path, httpserver, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    _serve_site(httpserver)
    _, recorded = _record_site(tmp_path, httpserver)
    assert all(r.ok for r in recorded.values()), {k: r.error_detail for k, r in recorded.items()}

    replayer = Replayer(tmp_path / "cassette", Settings.from_env().secrets)
    with _client(replayer) as client:
        replayed = {
            "post": client.post_json(
                httpserver.url_for("/search"),
                {"api_key": SECRET, "query": "loops"},
                headers={"Authorization": f"Bearer {SECRET}"},
            ),
            "api": client.get(
                httpserver.url_for("/api"),
                params={"q": "loops", "api_key": SECRET},
                accept=("json",),
                check_robots=False,
            ),
            "gz": client.get(httpserver.url_for("/gz"), accept=("text",)),
            "page": client.get(httpserver.url_for("/page")),
        }
    for name, result in recorded.items():
        assert _facts(replayed[name]) == _facts(result), name
    assert replayed["gz"].text == "plain text that arrived gzip-encoded"
    assert replayer.misses == [] and replayer.overruns == []


def test_replay_makes_no_network_connection(tmp_path):
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1")  # our own server: this test stops it
    server.start()
    try:
        _serve_site(server)
        _record_site(tmp_path, server)
        assert len(server.log) >= 5  # robots.txt, page, gz, api, post
        server.clear_log()
        url = server.url_for("/page")
        with _client(Replayer(tmp_path / "cassette")) as client:
            page = client.get(url)
        assert page.ok and "event loop" in page.text
        assert len(server.log) == 0
    finally:
        server.clear()
        server.stop()
    with _client(Replayer(tmp_path / "cassette")) as client:  # nothing listens any more
        again = client.get(url)
    assert again.ok and again.body == page.body


def test_replay_never_resolves_a_host_name(tmp_path):
    recorder = Recorder(tmp_path / "cassette")
    answers = recorder.resolver(lambda host, port: ["93.184.216.34"])
    assert answers("docs.example.org", 443) == ["93.184.216.34"]
    replayer = Replayer(tmp_path / "cassette")
    resolve = replayer.resolver()
    assert resolve("docs.example.org", 443) == ["93.184.216.34"]
    with pytest.raises(OSError, match="never resolved"):
        resolve("elsewhere.example.org", 443)


def test_no_secret_is_written_to_the_cassette(tmp_path, httpserver, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    _serve_site(httpserver)
    _record_site(tmp_path, httpserver)
    for path in (tmp_path / "cassette").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    index = json.loads((tmp_path / "cassette" / "index.json").read_text())
    post = next(e for e in index["exchanges"] if e["method"] == "POST")
    assert post["request_headers"]["authorization"] == REDACTED
    api = next(e for e in index["exchanges"] if "/api" in e["url"])
    assert "api_key" not in api["url"] and "q=loops" in api["url"]


def test_repeated_identical_requests_replay_in_recorded_order(tmp_path, httpserver):
    """A transient 503 and its successful retry are two exchanges under one key, served in order."""
    httpserver.expect_ordered_request("/flaky").respond_with_data("busy", status=503)
    httpserver.expect_ordered_request("/flaky").respond_with_json({"ok": True})
    recorder = Recorder(tmp_path / "cassette")
    with _client(recorder) as client:
        first = client.get(httpserver.url_for("/flaky"), accept=("json",), check_robots=False)
    assert first.ok and first.json() == {"ok": True}, (first.error, first.error_detail)
    statuses = [(e["seq"], e["status"]) for e in recorder.recorded]
    assert statuses == [(0, 503), (1, 200)]

    replayer = Replayer(tmp_path / "cassette")
    with _client(replayer) as client:
        replayed = client.get(httpserver.url_for("/flaky"), accept=("json",), check_robots=False)
    assert replayed.ok and replayed.json() == {"ok": True}
    assert replayer.served == 2 and replayer.unused() == []


def test_a_request_missing_from_the_cassette_fails_as_a_network_error_and_is_listed(tmp_path, httpserver):
    _serve_site(httpserver)
    _record_site(tmp_path, httpserver)
    replayer = Replayer(tmp_path / "cassette")
    with HttpClient(allow_private=True, max_retries=0, **client_kwargs(replayer)) as client:
        result = client.get(httpserver.url_for("/never-recorded"), check_robots=False)
    assert not result.ok and result.error == "network"
    assert replayer.misses and "/never-recorded" in replayer.misses[0]


def test_recording_continues_an_existing_cassette(tmp_path, httpserver):
    httpserver.expect_request("/a").respond_with_json({"n": 1})
    for _ in range(2):  # two sessions, as a resumed run would do
        with _client(Recorder(tmp_path / "cassette")) as client:
            assert client.get(httpserver.url_for("/a"), accept=("json",), check_robots=False).ok
    index = json.loads((tmp_path / "cassette" / "index.json").read_text())
    assert [e["seq"] for e in index["exchanges"]] == [0, 1]


def test_transport_errors_are_recorded_and_replayed(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/down"
    with HttpClient(allow_private=True, max_retries=0, **client_kwargs(Recorder(tmp_path / "c"))) as client:
        recorded = client.get(url, check_robots=False)
    with HttpClient(allow_private=True, max_retries=0, **client_kwargs(Replayer(tmp_path / "c"))) as client:
        replayed = client.get(url, check_robots=False)
    assert recorded.error == replayed.error == "network"


def test_secret_fields_do_not_change_the_request_key():
    a = body_digest(json.dumps({"query": "q", "api_key": "one"}).encode())
    b = body_digest(json.dumps({"api_key": "two", "query": "q"}).encode())
    assert a == b
    assert exchange_key("GET", "https://x.test/p?token=abc&q=1", b"") == "GET https://x.test/p?q=1 -"


def test_replaying_a_missing_cassette_is_bad_input(tmp_path):
    from research_engine.errors import BadInput

    with pytest.raises(BadInput, match="no cassette"):
        Replayer(tmp_path / "nothing")
