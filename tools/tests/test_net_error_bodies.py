"""Error responses keep a small body (APIs explain themselves there); logs never show secrets."""

from __future__ import annotations

import json
import logging

from research_engine.net import HttpClient
from research_engine.net.exchange import ERROR_BODY_MAX


def client(**kw) -> HttpClient:
    return HttpClient(allow_private=True, per_host_interval=0, use_cache=False, max_retries=0, **kw)


def test_a_400_keeps_its_json_error_body(httpserver):
    payload = {"error": "Invalid query parameters error.", "message": "DOESNTEXIST is not a valid field"}
    httpserver.expect_request("/works").respond_with_json(payload, status=400)
    with client() as c:
        result = c.get(httpserver.url_for("/works"), accept=("json",), check_robots=False)
    assert not result.ok and result.error == "http-status" and result.status == 400
    assert json.loads(result.body) == payload


def test_an_error_body_is_capped(httpserver):
    httpserver.expect_request("/big").respond_with_data("x" * (ERROR_BODY_MAX * 4), status=500)
    with client() as c:
        result = c.get(httpserver.url_for("/big"), check_robots=False)
    assert result.status == 500 and 0 < len(result.body) <= ERROR_BODY_MAX


def test_secrets_in_urls_never_reach_the_log(httpserver, caplog):
    httpserver.expect_request("/w").respond_with_json({"ok": True})
    caplog.set_level(logging.DEBUG, logger="research_engine")
    with client() as c:
        c.get(httpserver.url_for("/w") + "?api_key=SECRET123&q=x", accept=("json",), check_robots=False)
        assert all("SECRET123" not in json.dumps(o) for o in c.overrides)
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("research_engine")]
    assert ours and all("SECRET123" not in m for m in ours)
