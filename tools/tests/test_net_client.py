"""HttpClient against real local servers: redirects, retries, caps, content types, charsets, cache, robots."""

from __future__ import annotations

import email.utils
import gzip
import json
import logging
import os
import re
import signal
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from conftest import shared_path
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from research_engine.errors import BadInput
from research_engine.net import HttpClient, RetryPolicy, fetch_policy
from research_engine.settings import Settings

HTML = "<html><head><title>T</title></head><body><p>Some words that make a page.</p></body></html>"


@pytest.fixture
def waits() -> list[float]:
    """Every wait the clients of a test asked for (backoff, Retry-After), in order; none is slept."""
    return []


@pytest.fixture
def make_client(tmp_path, waits):
    clients = []

    def make(**kw) -> HttpClient:
        options = dict(
            allow_private=True,
            per_host_interval=0.0,
            # The default retry policy, without jitter, waiting through `waits` instead of the clock.
            retry=RetryPolicy(sleep=waits.append, random_unit=lambda: 0.0),
            timeout=2.0,
            deadline=5.0,
            cache_dir=tmp_path / "cache",
        )
        options.update(kw)
        client = HttpClient(**options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture(scope="module")
def _module_server():
    srv = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def server(_module_server):
    _module_server.clear()
    yield _module_server
    _module_server.clear()


def counting(handler):
    """Wrap a werkzeug handler so the test can count the requests it served."""
    hits: list[Request] = []

    def wrapped(request: Request) -> Response:
        hits.append(request)
        return handler(request, len(hits))

    return wrapped, hits


# ---------------------------------------------------------------- basics


def test_fetch_returns_text_digest_and_polite_user_agent(server, make_client):
    server.expect_request("/page").respond_with_data(HTML, content_type="text/html; charset=utf-8")
    result = make_client().get(server.url_for("/page"), check_robots=False)
    assert result.ok and result.status == 200 and result.content_type == "text/html"
    assert result.text == HTML and result.sha256 and len(result.sha256) == 64
    user_agent = server.log[0][0].headers["User-Agent"]
    assert re.fullmatch(
        r"research-engine/\S+ \(\+https://github.com/research-engine/research-engine\)", user_agent
    )


def test_private_address_needs_opt_in_and_the_opt_in_is_recorded(server, make_client):
    server.expect_request("/page").respond_with_data(HTML, content_type="text/html")
    refused = make_client(allow_private=False).get(server.url_for("/page"), check_robots=False)
    assert refused.error == "refused-ssrf" and server.log == []
    client = make_client(allow_private=True)
    assert client.get(server.url_for("/page"), check_robots=False).ok
    assert client.overrides[0]["kind"] == "private-address"


def test_the_private_opt_in_is_warned_about_once_a_process_and_its_addresses_logged_at_info(
    server, make_client, monkeypatch, caplog
):
    # A run opens a client for search, one for fetching and one for the verifier: one warning, not four.
    from research_engine.net import client as client_module

    monkeypatch.setattr(client_module, "_warned", set())
    server.expect_request("/page").respond_with_data(HTML, content_type="text/html")
    with caplog.at_level(logging.INFO, logger="research_engine.net"):
        for _ in range(3):
            assert make_client(allow_private=True).get(server.url_for("/page"), check_robots=False).ok
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == ["private and loopback addresses are allowed for this client (explicit opt-in)"]
    noted = [r for r in caplog.records if r.getMessage().startswith("private-address")]
    assert noted and all(r.levelno == logging.INFO for r in noted)


def test_the_environment_opt_in_reaches_clients_through_the_fetch_policy(server, monkeypatch):
    server.expect_request("/page").respond_with_data(HTML, content_type="text/html")
    with fetch_policy(Settings.from_env(), use_cache=False).client(per_host_interval=0) as client:
        assert client.get(server.url_for("/page"), check_robots=False).error == "refused-ssrf"
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_PRIVATE", "1")
    with fetch_policy(Settings.from_env(), use_cache=False).client(per_host_interval=0) as client:
        assert client.get(server.url_for("/page"), check_robots=False).ok


def test_connection_goes_to_the_checked_address_without_a_second_lookup(server, make_client):
    server.expect_request("/page").respond_with_data(HTML, content_type="text/html")
    lookups = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    client = make_client(allow_private=False, allow_addresses={f"127.0.0.1:{server.port}"}, resolver=resolver)
    result = client.get(f"http://pinned-name.test:{server.port}/page", check_robots=False)
    # The name exists only in our resolver: the socket must have used the pinned address.
    assert result.ok, result.error_detail
    assert lookups == ["pinned-name.test"]
    assert server.log[0][0].headers["Host"] == f"pinned-name.test:{server.port}"


def test_params_are_encoded_into_the_requested_url(server, make_client):
    server.expect_request("/api", query_string="q=a+b&n=2").respond_with_json({"ok": True})
    result = make_client().get(
        server.url_for("/api"), params={"q": "a b", "n": 2}, accept=("json",), check_robots=False
    )
    assert result.ok and result.json() == {"ok": True}
    assert result.url.endswith("/api?q=a+b&n=2")


def test_json_of_a_non_json_body_raises_decode_error(server, make_client):
    server.expect_request("/t").respond_with_data("not json", content_type="text/plain")
    result = make_client().get(server.url_for("/t"), accept=("text",), check_robots=False)
    with pytest.raises(BadInput) as info:
        result.json()
    assert info.value.code == "decode-error"


def test_post_json_sends_the_payload(server, make_client):
    server.expect_request("/search", method="POST", json={"query": "x"}).respond_with_json({"results": [1]})
    result = make_client().post_json(server.url_for("/search"), {"query": "x"})
    assert result.ok and result.json() == {"results": [1]}


# ---------------------------------------------------------------- redirects


def test_redirect_chain_is_followed_and_each_hop_recorded(server, make_client):
    server.expect_request("/a").respond_with_data("", status=301, headers={"Location": "/b"})
    server.expect_request("/b").respond_with_data("", status=302, headers={"Location": server.url_for("/c")})
    server.expect_request("/c").respond_with_data(HTML, content_type="text/html")
    result = make_client().get(server.url_for("/a"), check_robots=False)
    assert result.ok and result.final_url == server.url_for("/c")
    assert result.redirects == [server.url_for("/b"), server.url_for("/c")]


def test_redirect_loop_is_detected(server, make_client):
    server.expect_request("/a").respond_with_data("", status=302, headers={"Location": "/b"})
    server.expect_request("/b").respond_with_data("", status=302, headers={"Location": "/a"})
    result = make_client().get(server.url_for("/a"), check_robots=False)
    assert result.error == "redirect-loop" and len(server.log) == 2


def test_more_than_five_redirects_stop(server, make_client):
    for i in range(7):
        server.expect_request(f"/r{i}").respond_with_data("", status=307, headers={"Location": f"/r{i + 1}"})
    result = make_client().get(server.url_for("/r0"), check_robots=False)
    assert result.error == "too-many-redirects" and len(server.log) == 6


def test_redirect_to_another_private_address_is_refused_without_private_opt_in(server, make_client):
    other = HTTPServer(host="127.0.0.1", port=0)
    other.start()
    try:
        other.expect_request("/secret").respond_with_data("secret", content_type="text/plain")
        server.expect_request("/hop").respond_with_data(
            "", status=302, headers={"Location": other.url_for("/secret")}
        )
        client = make_client(allow_private=False, allow_addresses={f"127.0.0.1:{server.port}"})
        result = client.get(server.url_for("/hop"), check_robots=False)
        assert result.error == "refused-ssrf" and result.redirects == [other.url_for("/secret")]
        assert other.log == []
    finally:
        other.stop()


def test_redirect_to_metadata_is_refused_even_with_private_opt_in(server, make_client):
    server.expect_request("/hop").respond_with_data(
        "", status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}
    )
    result = make_client(allow_private=True).get(server.url_for("/hop"), check_robots=False)
    assert result.error == "refused-ssrf" and "metadata" in result.error_detail


def _redirect_target(url: str) -> str:
    match = re.search(r"url=(https?://[^&]+)", url)
    if match:
        return match.group(1)
    match = re.search(r"(\d+\.\d+\.\d+\.\d+):(\d+)", url)
    if match:
        return f"http://{match.group(1)}:{match.group(2)}/"
    return "http://169.254.169.254/"


@pytest.mark.shared
def test_needs_redirect_payload_targets_are_refused_at_the_redirect_hop(server, make_client):
    cases = json.loads(shared_path("corpora", "ssrf", "payloads.json").read_text(encoding="utf-8"))
    redirecting = [c for c in cases if c["needs_redirect"]]
    assert redirecting
    client = make_client(allow_private=False, allow_addresses={f"127.0.0.1:{server.port}"})
    for i, case in enumerate(redirecting):
        target = _redirect_target(case["url"])
        server.expect_request(f"/p{i}").respond_with_data("", status=302, headers={"Location": target})
        result = client.get(server.url_for(f"/p{i}"), check_robots=False)
        assert result.error == "refused-ssrf" and result.redirects == [target], (
            case["url"],
            result.error_detail,
        )


# ---------------------------------------------------------------- retries and timeouts


def test_429_with_retry_after_is_honoured_then_succeeds(server, make_client, waits):
    def handler(request, n):
        if n == 1:
            return Response("slow down", status=429, headers={"Retry-After": "1"})
        return Response(HTML, content_type="text/html")

    wrapped, hits = counting(handler)
    server.expect_request("/p").respond_with_handler(wrapped)
    result = make_client().get(server.url_for("/p"), check_robots=False)
    assert result.ok and len(hits) == 2
    # The host is paused for the second the server asked for (less the microseconds since the answer).
    assert waits == [pytest.approx(1.0, abs=0.05)]


def test_retry_after_as_an_http_date_is_honoured(server, make_client, waits):
    def handler(request, n):
        if n == 1:
            later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
            return Response("down for maintenance", status=503, headers={"Retry-After": later})
        return Response(HTML, content_type="text/html")

    wrapped, hits = counting(handler)
    server.expect_request("/p").respond_with_handler(wrapped)
    result = make_client(deadline=10.0).get(server.url_for("/p"), check_robots=False)
    assert result.ok and len(hits) == 2
    # An HTTP date has whole seconds: "now + 3 s" is 2 to 3 seconds away when it is read.
    assert len(waits) == 1 and 1.9 < waits[0] <= 3.0


def test_retry_after_beyond_the_deadline_returns_at_once_with_the_value(server, make_client, waits):
    wrapped, hits = counting(lambda r, n: Response("no", status=429, headers={"Retry-After": "30"}))
    server.expect_request("/p").respond_with_handler(wrapped)
    result = make_client(deadline=5.0).get(server.url_for("/p"), check_robots=False)
    assert result.error == "http-status" and result.status == 429 and result.retry_after == 30.0
    assert len(hits) == 1 and waits == []


def test_retry_after_over_the_cap_returns_at_once_with_the_value(server, make_client, waits):
    wrapped, hits = counting(lambda r, n: Response("no", status=429, headers={"Retry-After": "120"}))
    server.expect_request("/p").respond_with_handler(wrapped)
    result = make_client(deadline=600.0).get(server.url_for("/p"), check_robots=False)
    assert result.error == "http-status" and result.status == 429 and result.retry_after == 120.0
    assert len(hits) == 1 and waits == []


def test_503_is_retried_a_bounded_number_of_times_with_doubling_backoff(server, make_client, waits):
    wrapped, hits = counting(lambda r, n: Response("down", status=503))
    server.expect_request("/p").respond_with_handler(wrapped)
    result = make_client(max_retries=2).get(server.url_for("/p"), check_robots=False)
    assert result.error == "http-status" and result.status == 503 and len(hits) == 3
    assert waits == [0.5, 1.0]


def test_a_backoff_that_would_pass_the_deadline_is_not_waited_for(server, make_client, waits):
    wrapped, hits = counting(lambda r, n: Response("down", status=503))
    server.expect_request("/p").respond_with_handler(wrapped)
    client = make_client(retry=RetryPolicy(backoff_base=30.0, backoff_cap=30.0, sleep=waits.append))
    result = client.get(server.url_for("/p"), check_robots=False)
    assert result.status == 503 and len(hits) == 1 and waits == []


def test_404_is_not_retried(server, make_client, waits):
    wrapped, hits = counting(lambda r, n: Response("gone", status=404))
    server.expect_request("/p").respond_with_handler(wrapped)
    result = make_client(max_retries=2).get(server.url_for("/p"), check_robots=False)
    assert result.error == "http-status" and result.status == 404 and len(hits) == 1 and waits == []


def test_a_post_the_server_may_have_processed_is_not_repeated(server, make_client, waits):
    wrapped, hits = counting(lambda r, n: Response("oops", status=500))
    server.expect_request("/search", method="POST").respond_with_handler(wrapped)
    result = make_client().post_json(server.url_for("/search"), {"query": "x"})
    assert result.status == 500 and len(hits) == 1 and waits == []


def test_a_post_the_server_turned_away_is_repeated(server, make_client, waits):
    def handler(request, n):
        if n == 1:
            return Response("busy", status=503, headers={"Retry-After": "2"})
        return Response(json.dumps({"results": []}), content_type="application/json")

    wrapped, hits = counting(handler)
    server.expect_request("/search", method="POST").respond_with_handler(wrapped)
    result = make_client().post_json(server.url_for("/search"), {"query": "x"})
    assert result.ok and len(hits) == 2 and waits == [pytest.approx(2.0, abs=0.05)]


def test_a_server_that_does_not_answer_times_out(server, make_client):
    def handler(request, n):
        time.sleep(1.0)
        return Response(HTML, content_type="text/html")

    wrapped, _ = counting(handler)
    server.expect_request("/p").respond_with_handler(wrapped)
    started = time.monotonic()
    result = make_client(timeout=0.3, max_retries=0).get(server.url_for("/p"), check_robots=False)
    assert result.error == "timeout" and time.monotonic() - started < 0.9


def test_slow_drip_stops_at_the_total_deadline(server, make_client):
    def handler(request, n):
        def drip():
            for _ in range(40):
                yield b"<p>drip</p>" * 4
                time.sleep(0.1)

        return Response(drip(), content_type="text/html")

    wrapped, _ = counting(handler)
    server.expect_request("/p").respond_with_handler(wrapped)
    started = time.monotonic()
    result = make_client(timeout=2.0, deadline=0.8, max_retries=0).get(
        server.url_for("/p"), check_robots=False
    )
    assert result.error == "timeout" and "deadline" in result.error_detail
    assert time.monotonic() - started < 1.6


# ---------------------------------------------------------------- size caps


def test_body_over_the_cap_is_refused_while_streaming(server, make_client):
    def handler(request, n):
        def chunks():
            for _ in range(7):
                yield b"a" * (1024 * 1024)

        return Response(chunks(), content_type="text/plain")  # chunked, no Content-Length

    wrapped, _ = counting(handler)
    server.expect_request("/big").respond_with_handler(wrapped)
    result = make_client().get(server.url_for("/big"), accept=("text",), check_robots=False)
    assert result.error == "too-large" and result.body == b""


def test_declared_length_over_the_cap_is_refused_before_reading(server, make_client):
    server.expect_request("/big").respond_with_data(b"a" * (5 * 2**20 + 10), content_type="text/plain")
    result = make_client().get(server.url_for("/big"), accept=("text",), check_robots=False)
    assert result.error == "too-large" and "declared" in result.error_detail


def test_gzip_bomb_stops_at_the_decoded_cap(server, make_client):
    bomb = gzip.compress(b"\0" * (40 * 2**20), compresslevel=6)  # 40 MiB of zeros in ~40 KB
    assert len(bomb) < 2**20
    server.expect_request("/bomb").respond_with_data(
        bomb, content_type="text/plain", headers={"Content-Encoding": "gzip"}
    )
    started = time.monotonic()
    result = make_client().get(server.url_for("/bomb"), accept=("text",), check_robots=False)
    assert result.error == "too-large" and "decoded" in result.error_detail
    assert time.monotonic() - started < 2.0


def test_gzip_body_under_the_cap_is_decoded(server, make_client):
    server.expect_request("/z").respond_with_data(
        gzip.compress(HTML.encode()), content_type="text/html", headers={"Content-Encoding": "gzip"}
    )
    result = make_client().get(server.url_for("/z"), check_robots=False)
    assert result.ok and result.text == HTML


# ---------------------------------------------------------------- content types and charsets


def test_wrong_content_type_is_refused(server, make_client):
    server.expect_request("/img").respond_with_data(b"\x89PNG\r\n\x1a\n", content_type="image/png")
    result = make_client().get(server.url_for("/img"), check_robots=False)
    assert result.error == "unsupported-type" and result.content_type == "image/png"


def test_pdf_only_when_asked_for(server, make_client):
    server.expect_request("/doc.pdf").respond_with_data(b"%PDF-1.4\n...", content_type="application/pdf")
    client = make_client()
    assert client.get(server.url_for("/doc.pdf"), check_robots=False).error == "unsupported-type"
    assert client.get(server.url_for("/doc.pdf"), accept=("html", "pdf"), check_robots=False).ok


def _untyped(body: bytes) -> Response:
    response = Response(body)
    del response.headers["Content-Type"]
    return response


def test_missing_content_type_is_sniffed(server, make_client):
    server.expect_request("/page").respond_with_response(_untyped(HTML.encode()))
    result = make_client().get(server.url_for("/page"), check_robots=False)
    assert result.ok and result.content_type == "text/html"


def test_missing_content_type_on_binary_is_refused(server, make_client):
    server.expect_request("/bin").respond_with_response(_untyped(b"\x00\x01\x02binary"))
    result = make_client().get(server.url_for("/bin"), check_robots=False)
    assert result.error == "unsupported-type"


def test_empty_body_is_an_error_value(server, make_client):
    server.expect_request("/empty").respond_with_data(b"", content_type="text/html")
    assert make_client().get(server.url_for("/empty"), check_robots=False).error == "empty"


def test_lying_charset_header_falls_back_to_detection(server, make_client):
    body = "<html><body><p>Café crème à la française, déjà vu.</p></body></html>".encode("cp1252")
    server.expect_request("/p").respond_with_data(body, content_type="text/html; charset=utf-8")
    result = make_client().get(server.url_for("/p"), check_robots=False)
    assert result.ok and "Café crème" in result.text


@pytest.mark.parametrize("content_type", ["text/html; charset=no-such-charset", "text/html"])
def test_unknown_or_missing_charset_never_crashes(server, make_client, content_type):
    body = b"<html><body><p>bytes \xff\xfe\xc3 broken \xe2\x82 utf-8</p></body></html>"
    server.expect_request("/p").respond_with_data(body, content_type=content_type)
    result = make_client().get(server.url_for("/p"), check_robots=False)
    assert result.ok and "broken" in result.text


def test_meta_charset_is_used_when_the_header_has_none(server, make_client):
    body = '<html><head><meta charset="windows-1251"></head><body><p>Привет</p></body></html>'.encode(
        "cp1251"
    )
    server.expect_request("/p").respond_with_data(body, content_type="text/html")
    result = make_client().get(server.url_for("/p"), check_robots=False)
    assert "Привет" in result.text and result.charset == "cp1251"


# ---------------------------------------------------------------- revalidation cache


def _validated_handler(kind: str):
    def handler(request, n):
        if kind == "etag" and request.headers.get("If-None-Match") == '"v1"':
            return Response(status=304, headers={"ETag": '"v1"'})
        if kind == "date" and request.headers.get("If-Modified-Since") == "Wed, 21 Oct 2015 07:28:00 GMT":
            return Response(status=304)
        headers = {"ETag": '"v1"'} if kind == "etag" else {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}
        return Response(HTML, content_type="text/html", headers=headers)

    return handler


@pytest.mark.parametrize("kind", ["etag", "date"])
def test_warm_refetch_is_a_304_that_reuses_the_stored_body(server, make_client, kind):
    wrapped, hits = counting(_validated_handler(kind))
    server.expect_request("/p").respond_with_handler(wrapped)
    first = make_client().get(server.url_for("/p"), check_robots=False)
    second_client = make_client()  # a new client (a new process) reading the same cache directory
    second = second_client.get(server.url_for("/p"), check_robots=False)
    assert first.ok and not first.from_cache
    assert second.ok and second.from_cache and second.status == 304 and second.body == first.body
    assert second.sha256 == first.sha256 and second.text == HTML
    assert second_client.stats["full_downloads"] == 0 and len(hits) == 2


def test_revalidate_false_downloads_again(server, make_client):
    wrapped, hits = counting(_validated_handler("etag"))
    server.expect_request("/p").respond_with_handler(wrapped)
    client = make_client()
    client.get(server.url_for("/p"), check_robots=False)
    again = client.get(server.url_for("/p"), check_robots=False, revalidate=False)
    assert again.status == 200 and not again.from_cache and "If-None-Match" not in hits[1].headers


# ---------------------------------------------------------------- robots.txt


def test_robots_disallow_refuses_and_is_fetched_once_per_origin(server, make_client):
    wrapped, robots_hits = counting(
        lambda r, n: Response("User-agent: research-engine\nDisallow: /private\n", content_type="text/plain")
    )
    server.expect_request("/robots.txt").respond_with_handler(wrapped)
    server.expect_request("/open").respond_with_data(HTML, content_type="text/html")
    client = make_client()
    assert client.get(server.url_for("/private/x")).error == "refused-robots"
    assert client.get(server.url_for("/open")).ok
    assert len(robots_hits) == 1


def test_robots_5xx_means_disallow(server, make_client):
    server.expect_request("/robots.txt").respond_with_data("oops", status=500)
    server.expect_request("/open").respond_with_data(HTML, content_type="text/html")
    result = make_client(max_retries=0).get(server.url_for("/open"))
    assert result.error == "refused-robots" and "unreachable" in result.error_detail


def test_robots_404_means_allow(server, make_client):
    server.expect_request("/robots.txt").respond_with_data("nope", status=404)
    server.expect_request("/open").respond_with_data(HTML, content_type="text/html")
    assert make_client().get(server.url_for("/open")).ok


def test_ignore_robots_is_an_override_that_is_recorded(server, make_client):
    server.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nDisallow: /\n", content_type="text/plain"
    )
    server.expect_request("/open").respond_with_data(HTML, content_type="text/html")
    client = make_client(ignore_robots=True)
    assert client.get(server.url_for("/open")).ok
    assert any(o["kind"] == "robots-ignored" for o in client.overrides)


# ---------------------------------------------------------------- politeness and batches


def test_per_host_interval_spaces_requests(server, make_client):
    server.expect_request("/p").respond_with_data(HTML, content_type="text/html")
    # Spacing is measured on the real clock, so this client waits for real (RetryPolicy's time.sleep).
    client = make_client(per_host_interval=0.2, retry=RetryPolicy())
    started = time.monotonic()
    results = client.get_many([server.url_for("/p")] * 3, check_robots=False)
    assert all(r.ok for r in results)
    assert time.monotonic() - started >= 0.39
    starts = [entry[0] for entry in server.log]
    assert len(starts) == 3


def test_ctrl_c_during_a_polite_batch_starts_no_queued_fetch(server, make_client):
    server.expect_request("/p").respond_with_data(HTML, content_type="text/html")
    client = make_client(per_host_interval=1.0, retry=RetryPolicy())
    urls = [server.url_for("/p") + f"?n={n}" for n in range(12)]  # eleven seconds of polite spacing

    def interrupted(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, interrupted)  # Ctrl-C's KeyboardInterrupt, in the main thread
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGUSR1))
    started = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            client.get_many(urls, check_robots=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    assert time.monotonic() - started < 6.0  # not the twelve queued URLs' eleven seconds
    assert len(server.log) < 6


def test_get_many_keeps_order_and_one_failure_does_not_break_the_batch(server, make_client):
    server.expect_request("/a").respond_with_data(HTML, content_type="text/html")
    server.expect_request("/b").respond_with_data("gone", status=404)
    urls = [server.url_for("/a"), "ftp://example.com/x", server.url_for("/b"), "http://169.254.169.254/"]
    results = make_client().get_many(urls, check_robots=False)
    assert [r.url for r in results] == urls
    assert [r.error for r in results] == [None, "refused-scheme", "http-status", "refused-ssrf"]
