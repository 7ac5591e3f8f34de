"""One ledger for every mode: the toolkit calls the skill bundle makes with `--run` (search, OpenAlex, World
Bank, fetch, the verifier's re-fetch) meter provider calls and fetched bytes into the run's spend ledger, the
controller sees them, and a call past a budget is refused with exit 7 before anything is sent.

Everything is served by a real local server (pytest-httpserver) replaying recorded answers; its own log is
the measure of what was served."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import shared_path

from research_engine import runrecord, trace
from research_engine.spend import SpendLedger

TOOLS = Path(__file__).resolve().parents[1]
DOI = "10.1073/pnas.1414271111"
ONE_PAGE = ("--limit", "5")  # the recorded SearXNG page holds more: one request per search
PAGE = (
    "<!doctype html><html lang='en'><head><title>Threads in CPython</title></head><body><article>"
    "<h1>Threads in CPython</h1><p>In CPython the global interpreter lock allows only one thread to execute "
    "Python bytecode at a time. Threads remain useful for I/O-bound work because the lock is released while "
    "a thread waits on the network or the disk.</p></article></body></html>"
)


@pytest.fixture
def web(httpserver, monkeypatch):
    """A SearXNG-shaped search, two pages, robots.txt and a recorded OpenAlex work, all on 127.0.0.1."""
    apis = shared_path("fixtures", "apis")
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/search").respond_with_data(
        (apis / "searxng" / "search_python_page1.json").read_bytes(), content_type="application/json"
    )
    for path in ("/docs/threads.html", "/docs/threads-again.html"):
        httpserver.expect_request(path).respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.expect_request("/openalex/works/https://doi.org/10.1073/pnas.1414271111").respond_with_data(
        (apis / "openalex" / "work_by_doi.json").read_bytes(), content_type="application/json"
    )
    monkeypatch.setenv("SEARXNG_URL", base)
    monkeypatch.setenv("RESEARCH_ENGINE_SEARCH_ORDER", "searxng")
    monkeypatch.setenv("RESEARCH_ENGINE_OPENALEX_URL", f"{base}/openalex")
    return httpserver


def lock(cli, tmp_path: Path, server, **budget: int) -> str:
    """A run locked with the server's host allowed (so every `--run` command may reach it) and one
    sub-question."""
    fields = {
        "objective": "How does the global interpreter lock limit Python threads?",
        "deliverable": "a cited memo",
        "output_path": str(tmp_path / "runs"),
        "depth": "standard",  # cycle 1 of 2: the ceiling does not stop the run first
    }
    if budget:
        fields["budget"] = budget
    brief = tmp_path / "brief.yaml"
    brief.write_text(yaml.safe_dump(fields), encoding="utf-8")
    host = f"{server.host}:{server.port}"
    code, _, _, env = cli("brief", "lock", brief, "--allow-host", host, "--json")
    assert code == 0, env
    run = env["data"]["run_root"]
    code, _, _, env = cli("sq", "add", "What does the GIL do?", "--run", run, "--type", "technical", "--json")
    assert code == 0, env
    return run


def served(server) -> tuple[int, int]:
    """(provider calls, body bytes) the server answered: searches and API requests are provider calls;
    every body but robots.txt's counts in bytes."""
    calls = sum(1 for req, _ in server.log if req.path == "/search" or req.path.startswith("/openalex"))
    sizes = sum(len(resp.get_data()) for req, resp in server.log if req.path != "/robots.txt")
    return calls, sizes


def test_a_bundle_style_run_meters_what_the_server_served_and_control_sees_it(cli, web, tmp_path):
    run = lock(cli, tmp_path, web)
    for query in ("python global interpreter lock", "python threads"):
        code, _, _, env = cli("search", query, "--run", run, "--sq", "SQ-01", "--json")
        assert code == 0, env
    url = web.url_for("/docs/threads.html")
    code, _, _, env = cli("fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 0, env
    code, _, _, env = cli("openalex", "work", DOI, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 0, env
    quote = "the global interpreter lock allows only one thread to execute Python bytecode at a time"
    code, _, _, env = cli(
        "claims", "add", "Only one thread executes Python bytecode at a time in CPython.", "--run", run,
        "--sq", "SQ-01", "--source", "SQ-01/SRC-01", "--quote", quote, "--json",
    )  # fmt: skip
    assert code == 0, env
    code, _, _, env = cli("verify", "prepare", "--run", run, "--json")  # the verifier's own re-fetch
    assert code == 0, env

    calls, size = served(web)
    assert calls == len([r for r, _ in web.log if r.path == "/search"]) + 1  # searches (paged), one work
    record = runrecord.read(trace.open_run(run))
    assert record["budgets"]["spent"]["provider_calls"] == calls
    assert record["budgets"]["spent"]["fetched_bytes"] == size
    ledger = SpendLedger(Path(run) / ".state" / "spend.jsonl").recorded()
    assert ledger == {"provider_calls": calls, "fetched_bytes": size}

    code, _, _, env = cli("verify", "close", "--run", run, "--json")
    code, _, _, env = cli("control", "--run", run, "--json")
    assert code == 0, env
    governor = env["data"]["governor"]["budgets"]["spent"]
    assert governor["provider_calls"] == calls and governor["fetched_bytes"] == size
    loop_log = (Path(run) / "controller" / "loop-log.md").read_text()
    assert f"provider_calls {calls}/" in loop_log and f"fetched_bytes {size}/" in loop_log


def test_the_call_past_the_provider_budget_is_refused_with_exit_7_and_control_stops(cli, web, tmp_path):
    run = lock(cli, tmp_path, web, provider_calls=3)
    for n in range(3):
        code, _, _, env = cli("search", f"python {n}", *ONE_PAGE, "--run", run, "--sq", "SQ-01", "--json")
        assert code == 0, env
    code, _, err, env = cli("search", "python 3", *ONE_PAGE, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 7 and env["ok"] is False
    (problem,) = env["errors"]
    assert problem["code"] == "budget:provider_calls"
    assert "3 of 3" in problem["message"] and f"control --run {run}" in problem["message"]
    assert served(web)[0] == 3, "the fourth request was never sent"
    record = runrecord.read(trace.open_run(run))
    assert record["budgets"]["spent"]["provider_calls"] == 3
    assert [e["budget"] for e in record["events"] if e["kind"] == "budget-refused"] == ["provider_calls"]
    # An OpenAlex lookup is a provider call too: refused the same way.
    code, _, _, env = cli("openalex", "work", DOI, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 7 and served(web)[0] == 3

    code, _, _, env = cli("control", "--run", run, "--json")
    assert code == 0, env
    assert env["data"]["action"] == "stop" and env["data"]["stop_reason"] == "budget:provider_calls"


def test_a_page_fetch_is_refused_once_the_fetched_bytes_are_spent(cli, web, tmp_path):
    run = lock(cli, tmp_path, web, fetched_bytes=100)
    code, _, _, env = cli("fetch", web.url_for("/docs/threads.html"), "--run", run, "--sq", "SQ-01", "--json")
    assert code == 0, env  # the first body is read whole (its size cannot be known before)
    pages = lambda: sum(1 for req, _ in web.log if req.path.startswith("/docs/"))  # noqa: E731
    assert pages() == 1
    url = web.url_for("/docs/threads-again.html")
    code, _, _, env = cli("fetch", url, "--run", run, "--sq", "SQ-01", "--json")
    assert code == 7 and env["errors"][0]["code"] == "budget:fetched_bytes"
    assert pages() == 1
    assert not (Path(run) / "retrieve" / "SQ-01" / "SRC-02.md").exists()


def test_a_command_without_a_run_spends_nothing_of_any_run(cli, web, tmp_path):
    run = lock(cli, tmp_path, web, provider_calls=1)
    code, _, _, env = cli("search", "python", "--allow-host", f"{web.host}:{web.port}", "--json")
    assert code == 0, env
    assert not (Path(run) / ".state" / "spend.jsonl").exists()


@pytest.mark.slow
def test_parallel_leaves_share_one_budget_across_processes(cli, web, tmp_path):
    """Six searches at once from six processes against `provider_calls: 4`: exactly four are sent, the
    other two are refused with exit 7, and the ledger holds exactly four calls."""
    run = lock(cli, tmp_path, web, provider_calls=4)
    import os

    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    command = [sys.executable, "-m", "research_engine", "-q", "search"]
    procs = [
        subprocess.Popen(
            [*command, f"query {n}", "--limit", "5", "--run", run, "--sq", "SQ-01", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    codes = sorted(p.wait(timeout=120) for p in procs)
    for p in procs:
        assert p.stdout is not None
        envelope = json.loads(p.stdout.read().strip().splitlines()[-1])
        assert envelope["exit_code"] in (0, 7)
    assert codes == [0, 0, 0, 0, 7, 7]
    assert served(web)[0] == 4
    assert SpendLedger(Path(run) / ".state" / "spend.jsonl").recorded()["provider_calls"] == 4
