"""Metering a headless run: spend is on disk as it happens (the spend ledger), so kill -9 and a resume never
forget it; provider calls are search and API requests only, and the model is metered in tokens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from core_testkit import interactive_sigint
from engine_web import BRIEF, CountingCorpusServer, write_mini_web
from werkzeug.wrappers import Response

from research_engine import eventlog, runrecord, trace
from research_engine.engine.metering import Budget, Meter, SpendLedger

TOOLS = Path(__file__).resolve().parents[1]


def test_every_spend_is_appended_to_the_ledger_as_it_happens(tmp_path):
    ledger = SpendLedger(tmp_path / "spend.jsonl")
    budget = Budget.from_brief({"budget": {"provider_calls": 10}}, ledger=ledger)
    meter = Meter(budget, ("http://search.example/search",))
    meter.sending("GET", "http://search.example/search?q=x")
    meter.received("GET", "http://search.example/search?q=x", 120)
    meter.sending("GET", "http://pages.example/a")  # a page: bytes only
    meter.received("GET", "http://pages.example/a", 1000)
    records = eventlog.read(tmp_path / "spend.jsonl").records
    assert [r.get("provider_calls", 0) for r in records] == [1, 0, 0]
    assert sum(r.get("fetched_bytes", 0) for r in records) == 1120
    # A new session (a resume) starts from the ledger's totals, not from zero.
    again = Budget.from_brief(
        {"budget": {"provider_calls": 10}}, ledger=SpendLedger(tmp_path / "spend.jsonl")
    )
    assert again.spent()["provider_calls"] == 1 and again.spent()["fetched_bytes"] == 1120


def test_a_run_from_before_the_ledger_carries_the_journal_figures_into_it(tmp_path):
    ledger = SpendLedger(tmp_path / "spend.jsonl")
    Budget.from_brief({}, carried={"provider_calls": 7, "fetched_bytes": 99}, ledger=ledger)
    assert ledger.totals()["provider_calls"] == 7 and ledger.totals()["fetched_bytes"] == 99
    # Once the ledger exists it is the truth; the journal's (older) figures are not added again.
    budget = Budget.from_brief({}, carried={"provider_calls": 3}, ledger=ledger)
    assert budget.spent()["provider_calls"] == 7


# ------------------------------------------------------------------------------ kill -9, then resume


def _env(server_url: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY"))}
    env.update(SEARXNG_URL=server_url, RESEARCH_ENGINE_CACHE_DIR=str(cache), PYTHONPATH=str(TOOLS))
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "research_engine", "-q", *args]


@pytest.mark.slow
def test_kill_9_while_fetching_then_resume_keeps_every_provider_call_the_server_saw(tmp_path):
    web = write_mini_web(tmp_path / "web")
    brief = tmp_path / "brief.yaml"
    brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
    with CountingCorpusServer(web, delay=0.1) as server:
        env = _env(server.url, tmp_path / "cache")
        proc = subprocess.Popen(_cmd("run", str(brief), "--allow-private", "--json"), env=env)
        deadline = time.monotonic() + 60
        # Kill in the middle of fetching: searches answered and pages being read.
        while sum(n for path, n in server.seen.items() if path.endswith(".html")) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the run never fetched a page"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        searched = server.seen["/search"]
        run_root = next((tmp_path / "runs").iterdir())
        ledger = SpendLedger(run_root / ".state" / "spend.jsonl").totals()
        assert ledger["provider_calls"] >= searched >= 1
        assert ledger["fetched_bytes"] > 0

        done = subprocess.run(
            _cmd("run", "--resume", str(run_root), "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        searched = server.seen["/search"]
    spent = runrecord.read(trace.open_run(run_root))["budgets"]["spent"]
    assert spent["provider_calls"] >= searched
    assert json.loads(done.stdout)["data"]["figures"]["budgets"]["spent"]["provider_calls"] >= searched


# --------------------------------------------------------------------------- what a provider call is


@pytest.mark.slow
def test_model_calls_are_metered_in_tokens_not_as_provider_calls(tmp_path, httpserver, monkeypatch, cli):
    calls = {"n": 0}

    def chat(request):
        calls["n"] += 1
        reply = {
            "choices": [{"message": {"role": "assistant", "content": "no JSON today"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10},
        }
        return Response(json.dumps(reply), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(chat)
    with CountingCorpusServer(write_mini_web(tmp_path / "web")) as counting:
        monkeypatch.setenv("SEARXNG_URL", counting.url)
        monkeypatch.setenv("RESEARCH_ENGINE_MODEL_BASE_URL", httpserver.url_for("/v1"))
        monkeypatch.setenv("RESEARCH_ENGINE_MODEL", "stub-model")
        brief = tmp_path / "brief.yaml"
        fields = {**BRIEF, "output_path": str(tmp_path / "runs"), "budget": {"provider_calls": 2000}}
        brief.write_text(yaml.safe_dump(fields), encoding="utf-8")
        code, out, _, env = cli(
            "run", str(brief), "--model", "openai", "--sources", "web", "--allow-private", "--json"
        )
        searched = counting.seen["/search"]
    assert code == 0, out
    spent = env["data"]["figures"]["budgets"]["spent"]
    assert calls["n"] > 0 and searched > 0
    assert spent["provider_calls"] == searched  # every search, and not one model call
    assert spent["model_tokens"] == 60 * calls["n"]  # prompt + completion, from the server's usage


# ------------------------------------------------------------------- run.json after any exit of `run`


@pytest.mark.slow
def test_a_model_endpoint_that_dies_mid_run_does_not_sink_the_run(tmp_path, httpserver, monkeypatch, cli):
    """The model endpoint fails for good after a few calls: every later stage falls back to the extractive
    rule, visibly (run.json events and per-stage counts, the deliverable's footer), and the run ends with a
    deliverable; the spend is recorded."""
    state = {"calls": 0}

    def chat(request):
        state["calls"] += 1
        if state["calls"] > 3:
            return Response("upstream exploded", status=500)
        reply = {
            "choices": [
                {"message": {"role": "assistant", "content": "no JSON today"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1},
        }
        return Response(json.dumps(reply), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(chat)
    with CountingCorpusServer(write_mini_web(tmp_path / "web")) as corpus:
        monkeypatch.setenv("SEARXNG_URL", corpus.url)
        monkeypatch.setenv("RESEARCH_ENGINE_MODEL_BASE_URL", httpserver.url_for("/v1"))
        monkeypatch.setenv("RESEARCH_ENGINE_MODEL", "stub-model")
        brief = tmp_path / "brief.yaml"
        brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
        code, out, _, env = cli(
            "run", str(brief), "--model", "openai", "--sources", "web", "--allow-private", "--json"
        )
    assert code in (0, 8), out
    run_root = Path(env["data"]["run_root"])
    record = runrecord.read(trace.open_run(run_root))
    assert record["status"] == "complete"
    use = record["model"]["use"]
    assert use["decompose"]["rejections"] == {"not-json": 2} and use["decompose"]["fallbacks"] == 1
    assert sum(stage.get("failures", {}).get("server-error", 0) for stage in use.values()) >= 2
    assert all(stage["fallbacks"] >= 1 for stage in use.values())
    kinds = [e["kind"] for e in record["events"]]
    assert "model-call-failed" in kinds and kinds.count("model-fallback") >= len(use)
    assert record["budgets"]["spent"]["model_tokens"] == 18  # the three calls that answered
    result = (run_root / "synthesis" / "result.md").read_text(encoding="utf-8")
    assert "extractive fallback" in result and "server-error" in result


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_is_recorded_failed_with_its_spend_and_resumes(tmp_path, stop):
    """Ctrl-C or SIGTERM in the middle of fetching: exit 130; run.json says failed, why, and what was spent;
    `run --resume` completes the run."""
    web = write_mini_web(tmp_path / "web")
    brief = tmp_path / "brief.yaml"
    brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
    with CountingCorpusServer(web, delay=0.1) as server:
        env = _env(server.url, tmp_path / "cache")
        proc = subprocess.Popen(
            _cmd("run", str(brief), "--allow-private", "--json"), env=env, preexec_fn=interactive_sigint
        )
        deadline = time.monotonic() + 60
        while sum(n for path, n in server.seen.items() if path.endswith(".html")) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the run never fetched a page"
            time.sleep(0.01)
        proc.send_signal(stop)
        assert proc.wait(timeout=60) == 130
        run_root = next((tmp_path / "runs").iterdir())
        record = runrecord.read(trace.open_run(run_root))
        assert record["status"] == "failed" and record["stop_reason"] == "failed:interrupted"
        assert record["events"][-1]["kind"] == "run-failed"
        assert record["budgets"]["spent"]["provider_calls"] >= 1
        done = subprocess.run(
            _cmd("run", "--resume", str(run_root), "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    record = runrecord.read(trace.open_run(run_root))
    assert record["status"] == "complete" and not record["stop_reason"].startswith("failed:")
