"""`/research` end to end under the real client, in both install ways, with a scripted model: the intake
question is asked and answered (a second `claude -p --continue`), the brief is locked, every leaf is forked
with the Skill tool and does its stage through the real `research-engine` against a SearXNG-shaped search
and pages on 127.0.0.1, the verifier verifies, the controller stops, the deliverable is placed and the run
validates. The model is scripted; everything else is real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from claude_code.stub import Exchange, Script, main_session, subagent, text, tool
from research_engine import trace, verify

QUESTION = "Why are there two high tides a day?"
QUERY = "why two high tides a day"
PAGE = "/tides/why-two-high-tides"
TITLE = "Why there are two high tides a day"
BODY = (
    "The Moon's gravity raises two bulges of water on opposite sides of the Earth. "
    "As the Earth turns through both bulges, most coasts see two high tides every lunar day of about "
    "24 hours and 50 minutes. Where the shape of a basin resonates with one of the two daily bulges, a "
    "coast can instead see a single high tide a day, as parts of the Gulf of Mexico do."
)
CLAIM = "Most coasts see two high tides every lunar day of about 24 hours and 50 minutes."
QUOTE = "most coasts see two high tides every lunar day of about 24 hours and 50 minutes"


@pytest.fixture
def tide_web(httpserver):
    """robots.txt, one page, and a SearXNG-shaped /search that finds it."""
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    html = (
        f"<!doctype html><html lang='en'><head><title>{TITLE}</title></head><body><article>"
        f"<h1>{TITLE}</h1><p>{BODY}</p></article></body></html>"
    )
    httpserver.expect_request(PAGE).respond_with_data(html, content_type="text/html; charset=utf-8")
    result = {
        "url": base + PAGE,
        "title": TITLE,
        "content": BODY[:150],
        "engine": "local",
        "engines": ["local"],
        "positions": [1],
        "score": 1.0,
        "category": "general",
    }
    httpserver.expect_request("/search").respond_with_json(
        {"query": QUERY, "results": [result], "answers": [], "suggestions": [], "unresponsive_engines": []}
    )
    return base


def envelope(ex: Exchange) -> dict[str, Any]:
    done = [c for c in ex.calls() if c.result is not None]
    return done[-1].envelope()


def heredoc(command: str, body: str) -> str:
    return f"{command} <<'EOF'\n{body.rstrip()}\nEOF"


def bash(command: str) -> dict[str, Any]:
    return tool("Bash", command=command)


def test_research_runs_end_to_end_through_the_real_tools(ws, tide_web, httpserver, tmp_path):
    out = tmp_path / "research-out"
    ws.env_extra.update(
        SEARXNG_URL=tide_web,
        RESEARCH_ENGINE_SEARCH_ORDER="searxng",
        RESEARCH_ENGINE_ALLOW_PRIVATE="1",  # the mini web is on 127.0.0.1
        RESEARCH_ENGINE_CACHE_DIR=str(tmp_path / "cache"),
    )
    state: dict[str, str] = {}
    verifier = ws.name("research-verifier")

    def lock_then_decompose(ex: Exchange):
        done = envelope(ex)
        if "run_root" not in done["data"]:
            Path("/tmp/walk_debug.json").write_text(json.dumps(ex.messages, indent=1))
        assert "run_root" in done["data"]
        state["run"] = done["data"]["run_root"]
        return [tool("Skill", skill=ws.name("research-decompose"), args=state["run"])]

    def leaf(name: str, *targets: str):
        return lambda ex: [tool("Skill", skill=ws.name(name), args=" ".join([state["run"], *targets]))]

    def run_(template: str):
        """A Bash call whose command names the run (known once the brief is locked)."""
        return lambda ex: [bash(template.format(**state))]

    def select_log(ex: Exchange):
        found = envelope(ex)["data"]["candidates"]
        judged = [
            {"ref": c["ref"], "reason": "explains the mechanism directly", "source_type": "primary"}
            for c in found
        ]
        cmd = f"research-engine select log --run {state['run']} --sq SQ-01 --candidates - --json"
        return [bash(heredoc(cmd, yaml.safe_dump(judged, default_flow_style=False, sort_keys=False)))]

    def keep(key: str, field: str):
        def turn(ex: Exchange):
            done = envelope(ex)
            assert done["ok"], json.dumps(done)[:1500]
            state[key] = done["data"][field]
            return [text(f"{key} {state[key]}")]

        return turn

    draft = f"# Two high tides a day\n\n{CLAIM} (CLM-01)\n"
    complete = (
        f"---\nobjective: {QUESTION}\ndeliverable: a short cited memo\noutput_path: {out}\n"
        "depth: quick\nrecency: any\nclaim_types: [factual]\n---\n"
    )
    script = Script().add(
        "main",
        main_session(QUESTION),
        [
            # session 1: intake
            [bash(heredoc("research-engine brief check - --json", f"---\nobjective: {QUESTION}\n---\n"))],
            [text("Two questions: where should the run go (proposed: runs), and what deliverable?")],
            # session 2, after the answer: lock, then every leaf in order
            [bash(heredoc("research-engine brief lock - --json", complete))],
            lock_then_decompose,
            leaf("research-select", "all", "SQ-01"),
            leaf("research-retrieve", "all", "SQ-01"),
            leaf("research-consolidate", "SQ-01"),
            leaf("research-verify"),
            leaf("research-control"),
            leaf("research-synthesize"),
            run_("research-engine validate {run} --json"),
        ],
        final="Deliverable placed; grounding 1.0; no refusals.",
    )
    script.add(
        "decompose",
        subagent("/research-decompose\n"),
        [
            run_(
                f'research-engine sq add "{QUESTION}" --run {{run}} --type factual --angle entity '
                '--answers "the mechanism and how often" --json'
            )
        ],
    )
    script.add(
        "select",
        subagent("/research-select\n"),
        [run_(f'research-engine search "{QUERY}" --limit 10 --run {{run}} --sq SQ-01 --json'), select_log],
    )

    def fetch_chosen(ex: Exchange):
        (chosen,) = envelope(ex)["data"]["to_fetch"]  # every round's choice not yet retrieved
        where = f"--run {state['run']} --sq SQ-01"
        return [bash(f'research-engine fetch {chosen["url"]} {where} --query "{QUERY}" --json')]

    def claim_by_span(ex: Exchange):
        shown = envelope(ex)["data"]
        (span,) = [
            f"{shown['source']}#{view['id']}.{sid}"
            for view in shown["passages"]
            for sid, sentence in view["sentences"].items()
            if QUOTE in sentence.lower()
        ]  # the agent names the sentence by its id; the tool copies it
        where = f"--run {state['run']} --sq SQ-01"
        return [bash(f'research-engine claims add "{CLAIM}" {where} --span {span} --confidence high --json')]

    script.add(
        "retrieve",
        subagent("/research-retrieve\n"),
        [
            run_("research-engine select chosen --run {run} --sq SQ-01 --json"),
            fetch_chosen,
            keep("src", "source"),
        ],
    )
    script.add(
        "consolidate",
        subagent("/research-consolidate\n"),
        [
            run_(f'research-engine source show {{src}} --run {{run}} --for "{QUESTION}" --json'),
            claim_by_span,
            keep("clm", "id"),
        ],
    )
    script.add(
        "verifier",
        subagent("/research-verify\n"),
        [
            run_(f"research-engine verify prepare --run {{run}} --agent {verifier} --json"),
            lambda ex: [tool("Read", file_path=f"{state['run']}/verify/worksheet.md")],
            run_(
                "research-engine verify record {clm} --run {run} --verdict supported "
                '--reason "the fresh copy states it in the same words" --json'
            ),
            run_("research-engine verify close --run {run} --json"),
        ],
    )
    script.add(
        "critic",
        subagent("/research-control\n"),
        [
            run_("research-engine critic gap list --run {run} --json"),
            run_(
                'research-engine critic answers SQ-01 --run {run} --claims {clm} --why "it states why" --json'
            ),
            run_("research-engine control --run {run} --json"),
        ],
    )
    script.add(
        "synthesize",
        subagent("/research-synthesize\n"),
        [
            run_(heredoc("research-engine report check - --run {run} --json", draft)),
            run_(heredoc("research-engine report finish - --run {run} --json", draft)),
            run_("research-engine validate {run} --json"),
            lambda ex: [tool("Read", file_path=f"{state['run']}/run.json")],
        ],
    )

    asked, first = ws.run(script, f"{ws.slash()} {QUESTION}")
    assert first.returncode == 0, first.stderr
    (check,) = asked.calls("main")
    questions = check.envelope()["data"]["questions"]
    assert {"output_path", "deliverable"} <= {q["field"] for q in questions}
    assert first.json["result"].startswith("Two questions"), "the composer stops to ask"

    stub, second = ws.run(script, f"Write it to {out}, a short cited memo, depth quick.", "--continue")
    assert second.returncode == 0, second.stderr
    assert second.json["result"] == "Deliverable placed; grounding 1.0; no refusals."

    calls = {role: stub.calls(role) for role in ("main", "decompose", "select", "retrieve", "consolidate")}
    calls |= {role: stub.calls(role) for role in ("verifier", "critic", "synthesize")}
    for role, made in calls.items():
        assert made, f"{role} made no call"
        for call in made:
            if call.input.get("command", "").startswith("research-engine brief check"):
                continue  # exit 2: the brief is incomplete, by design
            assert not call.is_error, f"{role}: {call.name} {call.input}: {call.result}"
    assert "Agent" not in {c.name for c in calls["main"]}, "leaves are reached through the Skill tool only"
    assert set(stub.last("verifier").tools) == {"Bash", "Read"}

    decision = calls["critic"][-1].envelope()["data"]
    assert decision["action"] == "stop", decision
    run = Path(state["run"])
    assert run.parent == out
    assert (run / "synthesis" / "result.md").is_file()
    assert calls["main"][-1].envelope()["data"]["valid"]
    meta = json.loads((run / "run.json").read_text())
    assert meta["grounding"]["score"] == 1.0
    (evidence,) = json.loads((run / "consolidate" / "claims.jsonl").read_text().splitlines()[0])["evidence"]
    assert evidence["span"] == "p01.s2" and QUOTE in evidence["quote"].lower()
    searches = sum(1 for request, _ in httpserver.log if request.path == "/search")
    assert meta["budgets"]["spent"]["provider_calls"] == searches > 0  # the bundle's calls, metered
    assert verify.load_worksheet(trace.open_run(run))["prepared_by"] == [verifier]
    contestation = (run / "verify" / "contestation.md").read_text()
    assert f"- {verifier}" in contestation or verifier in contestation
    runs = ws.cwd / "runs"
    assert not runs.exists() or all(p.name.startswith(".") for p in runs.iterdir()), "no run elsewhere"
