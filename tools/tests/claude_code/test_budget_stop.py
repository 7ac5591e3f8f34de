"""`/research` under the real client, in both install ways, on a brief with a small provider-call budget: the
bundle's own toolkit calls spend it (metered into the run's ledger), the call past it is refused with exit 7,
the composer turns to the control leaf, the controller stops on the budget, and the deliverable says what the
run holds. The model is scripted; everything else is real: the client, the toolkit, a local search and
page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from claude_code.stub import Exchange, Script, main_session, subagent, text, tool

QUESTION = "Why are there two high tides a day, and why do some coasts see only one?"
FOUND = "why two high tides a day"  # the one query the local search answers
PAGE = "/tides/why-two-high-tides"
TITLE = "Why there are two high tides a day"
BODY = (
    "The Moon's gravity raises two bulges of water on opposite sides of the Earth. "
    "As the Earth turns through both bulges, most coasts see two high tides every lunar day of about "
    "24 hours and 50 minutes. The Sun raises smaller bulges of its own, which is why the range of the tides "
    "grows and shrinks twice a month."
)
CLAIM = "Most coasts see two high tides every lunar day of about 24 hours and 50 minutes."
BUDGET = 4  # cycle 1: the first search pages twice, the second finds nothing (3 calls); cycle 2: one more


@pytest.fixture
def tide_web(httpserver):
    """robots.txt, one page, and a SearXNG-shaped /search that finds it for one query only."""
    from werkzeug.wrappers import Response

    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    html = (
        f"<!doctype html><html lang='en'><head><title>{TITLE}</title></head><body><article>"
        f"<h1>{TITLE}</h1><p>{BODY}</p></article></body></html>"
    )
    httpserver.expect_request(PAGE).respond_with_data(html, content_type="text/html; charset=utf-8")
    hit = {"url": base + PAGE, "title": TITLE, "content": BODY[:150], "engine": "local", "positions": [1]}

    def search(request):
        results = [hit] if request.args.get("q") == FOUND and request.args.get("pageno", "1") == "1" else []
        return Response(
            json.dumps({"query": request.args.get("q"), "results": results}), mimetype="application/json"
        )

    httpserver.expect_request("/search").respond_with_handler(search)
    return httpserver


def envelope(ex: Exchange) -> dict[str, Any]:
    done = [c for c in ex.calls() if c.result is not None]
    return done[-1].envelope()


def bash(command: str) -> dict[str, Any]:
    return tool("Bash", command=command)


def heredoc(command: str, body: str) -> str:
    return f"{command} <<'EOF'\n{body.rstrip()}\nEOF"


def test_a_run_spends_its_budget_through_the_bundle_and_stops_on_it(ws, tide_web, tmp_path):
    base = tide_web.url_for("").rstrip("/")
    out = tmp_path / "research-out"
    ws.env_extra.update(
        SEARXNG_URL=base,
        RESEARCH_ENGINE_SEARCH_ORDER="searxng",
        RESEARCH_ENGINE_CACHE_DIR=str(tmp_path / "cache"),
    )
    state: dict[str, str] = {}
    verifier = ws.name("research-verifier")
    host = f"{tide_web.host}:{tide_web.port}"
    brief = (
        f"---\nobjective: {QUESTION}\ndeliverable: a short cited memo\noutput_path: {out}\n"
        f"depth: deep\nrecency: any\nclaim_types: [factual]\nbudget:\n  provider_calls: {BUDGET}\n---\n"
    )

    def run_(template: str):
        return lambda ex: [bash(template.format(**state))]

    def keep(key: str, field: str):
        def turn(ex: Exchange):
            done = envelope(ex)
            assert done["ok"], json.dumps(done)[:1500]
            state[key] = done["data"][field]
            return [text(f"{key} {state[key]}")]

        return turn

    def locked(ex: Exchange):
        state["run"] = envelope(ex)["data"]["run_root"]
        return [tool("Skill", skill=ws.name("research-decompose"), args=state["run"])]

    def leaf(name: str, *targets: str):
        return lambda ex: [tool("Skill", skill=ws.name(name), args=" ".join([state["run"], *targets]))]

    def select_log(ex: Exchange):
        (found,) = envelope(ex)["data"]["candidates"]
        judged = [{"ref": found["ref"], "reason": "explains the mechanism", "source_type": "primary"}]
        cmd = f"research-engine select log --run {state['run']} --sq SQ-01 --candidates - --json"
        return [bash(heredoc(cmd, yaml.safe_dump(judged, sort_keys=False)))]

    def fetch_chosen(ex: Exchange):
        (chosen,) = envelope(ex)["data"]["to_fetch"]
        return [bash(f"research-engine fetch {chosen['url']} --run {state['run']} --sq SQ-01 --json")]

    def claim_by_span(ex: Exchange):
        done = envelope(ex)
        assert done["ok"], json.dumps(done)[:1500]
        shown = done["data"]
        (span,) = [
            f"{shown['source']}#{view['id']}.{sid}"
            for view in shown["passages"]
            for sid, sentence in view["sentences"].items()
            if "most coasts see two high tides" in sentence
        ]
        where = f"--run {state['run']} --sq SQ-01"
        return [bash(f'research-engine claims add "{CLAIM}" {where} --span {span} --confidence high --json')]

    def budget_refused(ex: Exchange):
        refused = envelope(ex)
        assert refused["exit_code"] == 7, json.dumps(refused)[:1500]
        state["budget_stop"] = refused["errors"][0]["code"]
        return [text(f"Stopped searching: {state['budget_stop']} (exit 7); SQ-02 has no candidates.")]

    draft = (
        f"# Two high tides a day\n\n{CLAIM} (CLM-01)\n\n## Gaps and caveats\n\n"
        "Why some coasts see a single high tide could not be established: the run's provider-call budget "
        "was spent before a source for it was found.\n"
    )
    script = (
        Script()
        .add(
            "main",
            main_session(QUESTION),
            [
                [bash(heredoc("research-engine brief lock - --allow-host " + host + " --json", brief))],
                locked,
                leaf("research-select", "all", "SQ-01", "SQ-02"),
                leaf("research-retrieve", "all", "SQ-01"),
                leaf("research-consolidate", "SQ-01"),
                leaf("research-verify"),
                leaf("research-control"),
                # supplement-gap on SQ-02: select again, whose second search is refused on the budget ...
                leaf("research-select", "all", "SQ-02"),
                # ... so the composer turns to the controller, which stops on the budget, and synthesizes.
                leaf("research-control"),
                leaf("research-synthesize"),
                run_("research-engine validate {run} --json"),
            ],
            final="Stopped on the provider-call budget; deliverable placed with one claim and a gap.",
        )
        .add(
            "decompose",
            subagent("/research-decompose\n"),
            [
                run_(
                    'research-engine sq add "Why are there two high tides a day?" --run {run} --type factual '
                    '--angle entity --answers "the mechanism" --json'
                ),
                run_(
                    'research-engine sq add "Why do some coasts see only one high tide a day?" --run {run} '
                    '--type factual --angle counter --answers "the mechanism" --json'
                ),
            ],
        )
        .add(
            "select-again",
            lambda ex: subagent("/research-select\n")(ex) and " all SQ-02" in ex.first_user,
            [
                run_(
                    'research-engine search "single daily tide basin resonance" --run {run} --sq SQ-02 --json'
                ),
                run_('research-engine search "diurnal tide coasts" --run {run} --sq SQ-02 --json'),
                budget_refused,
            ],
        )
        .add(
            "select",
            subagent("/research-select\n"),
            [
                run_(f'research-engine search "{FOUND}" --limit 10 --run {{run}} --sq SQ-01 --json'),
                select_log,
                run_('research-engine search "one high tide a day coasts" --run {run} --sq SQ-02 --json'),
            ],
        )
        .add(
            "retrieve",
            subagent("/research-retrieve\n"),
            [run_("research-engine select chosen --run {run} --sq SQ-01 --json"), fetch_chosen],
        )
        .add(
            "consolidate",
            subagent("/research-consolidate\n"),
            [
                run_('research-engine source show SQ-01/SRC-01 --run {run} --for "two high tides" --json'),
                claim_by_span,
                keep("clm", "id"),
            ],
        )
        .add(
            "verifier",
            subagent("/research-verify\n"),
            [
                run_(f"research-engine verify prepare --run {{run}} --agent {verifier} --json"),
                run_(
                    "research-engine verify record CLM-01 --run {run} --verdict supported --reason as --json"
                ),
                run_("research-engine verify close --run {run} --json"),
            ],
        )
        .add(
            "critic-after-stop",
            lambda ex: subagent("/research-control\n")(ex) and "budget_stop" in state,
            [run_("research-engine control --run {run} --json")],
        )
        .add(
            "critic",
            subagent("/research-control\n"),
            [
                run_(
                    'research-engine critic answers SQ-01 --run {run} --claims CLM-01 --why "it does" --json'
                ),
                run_("research-engine control --run {run} --json"),
            ],
        )
        .add(
            "synthesize",
            subagent("/research-synthesize\n"),
            [
                run_(heredoc("research-engine report finish - --run {run} --json", draft)),
                run_("research-engine validate {run} --json"),
            ],
        )
    )

    stub, done = ws.run(script, f"{ws.slash()} {QUESTION}", timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.json["result"].startswith("Stopped on the provider-call budget")

    # The call past the budget was refused before it was sent, with exit 7 and the controller's command.
    refused = [c for c in stub.calls("select-again") if c.result is not None][-1]
    assert refused.envelope()["exit_code"] == 7 and refused.is_error
    (problem,) = refused.envelope()["errors"]
    assert (
        problem["code"] == "budget:provider_calls" and f"control --run {state['run']}" in problem["message"]
    )
    searches = sum(1 for request, _ in tide_web.log if request.path == "/search")
    assert searches == BUDGET, "the refused search never reached the server"
    first, second = (
        c.envelope()["data"] for c in stub.calls("critic")[-1:] + stub.calls("critic-after-stop")
    )
    assert first["action"] == "supplement-gap" and first["targets"] == ["SQ-02"]
    assert (second["action"], second["stop_reason"]) == ("stop", "budget:provider_calls")

    run = Path(state["run"])
    meta = json.loads((run / "run.json").read_text())
    served = sum(len(r.get_data()) for q, r in tide_web.log if q.path != "/robots.txt")
    assert meta["budgets"]["spent"] == {"provider_calls": BUDGET, "fetched_bytes": served}
    assert meta["stop_reason"] == "budget:provider_calls"
    assert [e["budget"] for e in meta["events"] if e["kind"] == "budget-refused"] == ["provider_calls"]
    assert "budget:provider_calls" in (run / "synthesis" / "result.md").read_text()
    assert stub.calls("main")[-1].envelope()["data"]["valid"]
    for role in (
        "main",
        "decompose",
        "select",
        "retrieve",
        "consolidate",
        "verifier",
        "critic",
        "synthesize",
    ):
        for call in stub.calls(role):
            assert not call.is_error, f"{role}: {call.input}: {call.result}"
