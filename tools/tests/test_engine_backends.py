"""The engine against failing parts: a search backend that fails mid-run, a model that returns broken JSON."""

from __future__ import annotations

import json
import re

import httpx
import pytest
import yaml
from engine_web import BRIEF, write_mini_web
from werkzeug.wrappers import Response

from research_engine import decompose, runrecord, trace
from research_engine.corpus import CorpusServer

pytestmark = pytest.mark.slow


@pytest.fixture
def corpus(tmp_path):
    with CorpusServer(write_mini_web(tmp_path / "web")) as server:
        yield server


def brief_at(tmp_path, **fields):
    path = tmp_path / "brief.yaml"
    path.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs"), **fields}))
    return path


def test_a_search_backend_failing_mid_run_moves_the_chain_on(corpus, httpserver, tmp_path, monkeypatch, cli):
    calls = {"searxng": 0, "brave": 0}

    def searxng(request):
        calls["searxng"] += 1
        if calls["searxng"] > 3:  # healthy at first, then down for the rest of the run
            return Response("upstream engines down", status=502)
        answer = httpx.get(f"{corpus.url}/search", params=dict(request.args))
        return Response(answer.content, status=answer.status_code, content_type="application/json")

    def brave(request):
        calls["brave"] += 1
        found = httpx.get(f"{corpus.url}/search", params={"q": request.args["q"], "format": "json"}).json()
        web = [{"title": r["title"], "url": r["url"], "description": r["content"]} for r in found["results"]]
        return Response(
            json.dumps({"type": "search", "web": {"results": web}}), content_type="application/json"
        )

    httpserver.expect_request("/searxng/search").respond_with_handler(searxng)
    httpserver.expect_request("/brave/web/search").respond_with_handler(brave)
    monkeypatch.setenv("SEARXNG_URL", httpserver.url_for("/searxng"))
    monkeypatch.setenv("BRAVE_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("RESEARCH_ENGINE_BRAVE_URL", httpserver.url_for("/brave"))
    monkeypatch.setenv("RESEARCH_ENGINE_SEARCH_ORDER", "searxng,brave")

    code, out, _, env = cli("run", str(brief_at(tmp_path)), "--allow-private", "--json")
    assert code == 0, out
    assert calls["searxng"] > 3 and calls["brave"] > 0
    run = trace.open_run(env["data"]["run_root"])
    backends = set()
    for path in (run.root / "select").glob("SQ-*.candidates.json"):
        for query in json.loads(path.read_text())["queries"]:
            backends.add(query["backend"])
            if query["backend"] == "brave":
                assert query["chain"][0]["backend"] == "searxng" and query["chain"][0]["outcome"] == "failed"
    assert backends == {"searxng", "brave"}
    assert env["data"]["status"] == "complete"


def test_a_model_that_returns_broken_json_then_valid_json_is_understood(
    corpus, httpserver, tmp_path, monkeypatch, cli
):
    asked = {"decompose": 0, "other": 0}
    plan = {
        "sub_questions": [
            {
                "text": "How does the global interpreter lock limit Python threads?",
                "claim_type": "technical",
                "angle": "entity",
                "answers": "what the GIL allows threads to do",
            },
            {
                "text": "What limitations of threads lead Python programs to use processes?",
                "claim_type": "technical",
                "angle": "counter",
                "answers": "the limitations and the alternative",
            },
        ]
    }

    def chat(request):
        body = json.loads(request.data)
        task = body["messages"][1]["content"]
        if task.startswith("Decompose the research objective"):
            asked["decompose"] += 1
            content = (
                '<think>let me see</think> Sure! {"sub_questions": [oops'
                if asked["decompose"] == 1
                else "```json\n" + json.dumps(plan) + "\n```"
            )
        else:
            asked["other"] += 1
            content = "I cannot answer in JSON today."  # unusable: the extractive rule answers instead
        reply = {
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10},
        }
        return Response(json.dumps(reply), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(chat)
    monkeypatch.setenv("SEARXNG_URL", corpus.url)
    monkeypatch.setenv("RESEARCH_ENGINE_MODEL_BASE_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("RESEARCH_ENGINE_MODEL", "stub-model")

    code, out, _, env = cli(
        "run",
        str(brief_at(tmp_path, budget={"provider_calls": 2000})),
        "--model",
        "openai",
        "--allow-private",
        "--json",
    )
    assert code == 0, out
    assert asked["decompose"] == 2  # the broken reply was asked for again once, and the second one was used
    run = trace.open_run(env["data"]["run_root"])
    assert [sq["text"] for sq in decompose.load(run)] == [item["text"] for item in plan["sub_questions"]]
    record = runrecord.read(run)
    assert record["model"]["name"] == "openai:stub-model"
    assert env["data"]["figures"]["model"]["fallbacks"] > 0  # the other, unusable replies fell back
    assert record["budgets"]["spent"]["model_tokens"] >= 60 * (asked["decompose"] + asked["other"])


def run_with_model(chat, corpus, httpserver, tmp_path, monkeypatch, cli):
    """A run with `--model openai` on a loopback endpoint answering with `chat`; the run, once it exits 0."""
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(chat)
    monkeypatch.setenv("SEARXNG_URL", corpus.url)
    monkeypatch.setenv("RESEARCH_ENGINE_MODEL_BASE_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("RESEARCH_ENGINE_MODEL", "stub-model")
    brief = brief_at(tmp_path, budget={"provider_calls": 2000})
    code, out, _, env = cli("run", str(brief), "--model", "openai", "--allow-private", "--json")
    assert code == 0, out
    return trace.open_run(env["data"]["run_root"])


def test_a_model_deliverable_keeps_its_grounded_sentences_and_loses_the_invented_one(
    corpus, httpserver, tmp_path, monkeypatch, cli
):
    """The model writes the deliverable: one sentence per claim, as the claim says, plus one sentence that
    cites a real claim but states a figure it does not hold. `report check` refuses that sentence, the engine
    drops it (an event names it), and the rest of the model's text is the deliverable; so goes a sentence
    stating an absolute its claim never states. run.json and the footer count the drops by kind."""
    invented = "That figure rose to 987 percent by 1999"
    absolute = "This always holds for every single case, guaranteed"

    def chat(request):
        task = json.loads(request.data)["messages"][1]["content"]
        if not task.startswith("Write the deliverable"):
            content = "I cannot answer in JSON today."  # every other stage falls back to the extractive rule
        else:
            lines = re.findall(r"^  (CLM-\d+) \[supported\]: (.+)$", task, re.M)
            body = "\n\n".join(f"{text} [{clm}]" for clm, text in lines)
            tail = f"{invented} [{lines[0][0]}]. {absolute} [{lines[0][0]}]."
            content = json.dumps({"markdown": f"# Memo\n\n{body}\n\n{tail}\n"})
        reply = {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}
        return Response(json.dumps(reply), content_type="application/json")

    run = run_with_model(chat, corpus, httpserver, tmp_path, monkeypatch, cli)
    result = run.path("result").read_text(encoding="utf-8")
    assert result.startswith("---") and "# Memo" in result  # the model's own deliverable, not the fallback
    assert invented not in result and absolute not in result
    record = runrecord.read(run)
    dropped = [e for e in record["events"] if e["kind"] == "deliverable-sentences-dropped"]
    assert len(dropped) == 1 and "987 percent" in dropped[0]["sentences"][0]
    assert record["prose"]["dropped"] == {"number": 1, "overclaim": 1}
    assert "the check dropped 2 sentence(s) of the writer's (1 number, 1 overclaim)" in result
    assert record["model"]["use"]["write"]["rejections"] == {"prose-check": 2}
    assert record["model"]["use"]["write"]["fallbacks"] == 0


def test_a_model_deliverable_that_cannot_be_repaired_falls_back_visibly(
    corpus, httpserver, tmp_path, monkeypatch, cli
):
    """A deliverable citing a claim the run does not have fails `report check` for more than its sentences:
    the extractive writer writes it instead, and run.json counts and announces the write stage's fallback."""

    def chat(request):
        task = json.loads(request.data)["messages"][1]["content"]
        content = "no JSON here"
        if task.startswith("Write the deliverable"):
            content = json.dumps(
                {"markdown": "# Memo\n\nThe answer is settled by a claim of its own [CLM-99].\n"}
            )
        reply = {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}
        return Response(json.dumps(reply), content_type="application/json")

    run = run_with_model(chat, corpus, httpserver, tmp_path, monkeypatch, cli)
    assert "CLM-99" not in run.path("result").read_text(encoding="utf-8")
    record = runrecord.read(run)
    assert record["model"]["use"]["write"]["fallbacks"] == 1
    assert any(e["kind"] == "model-fallback" and e["stage"] == "write" for e in record["events"])
