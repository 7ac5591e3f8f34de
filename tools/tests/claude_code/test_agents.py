"""The agents get exactly the tools they declare, every leaf forks into the agent it names, and a verify
leaf that cannot reach the verifier is loud about it, never a silent general-purpose verifier."""

from __future__ import annotations

import shutil

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run

from claude_code.stub import Script, main_session, subagent, text, tool
from claude_code.workspace import AGENTS, ROOT, make_workspace
from research_engine import decompose, verify

NEVER = {"WebFetch", "WebSearch", "Write", "Edit", "NotebookEdit", "Agent"}


def declared_tools(agent: str) -> set[str]:
    import frontmatter

    meta = frontmatter.loads(
        (ROOT / ".claude" / "agents" / f"{agent}.md").read_text(encoding="utf-8")
    ).metadata
    tools = meta["tools"]
    return {t.strip() for t in tools.split(",")} if isinstance(tools, str) else set(tools)


def agent_system_marker(ws, agent: str) -> str:
    """The first line of the agent's body, as this install way ships it: only that agent's system prompt
    holds it."""
    import frontmatter

    folder = ".claude/agents" if ws.mode == "project" else "plugin/agents"
    body = frontmatter.loads((ws.repo / folder / f"{agent}.md").read_text(encoding="utf-8")).content
    lines = [line for line in body.strip().splitlines() if line.strip() and not line.startswith("<!--")]
    return lines[0]


@pytest.mark.parametrize("agent", AGENTS)
def test_an_agent_is_offered_exactly_the_tools_it_declares(ws, agent):
    task = f"TASK-FOR-{agent}"
    script = Script().add(
        "main",
        main_session("AGENT-TOOLS"),
        [
            [
                tool(
                    "Agent",
                    subagent_type=ws.name(agent),
                    description="check tools",
                    prompt=task,
                    run_in_background=False,
                )
            ]
        ],
    )
    script.add("agent", subagent(task), [[text("done")]])
    stub, result = ws.run(script, "AGENT-TOOLS")
    assert result.returncode == 0, result.stderr
    call = stub.calls("main")[0]
    assert not call.is_error, call.result
    offered = set(stub.last("agent").tools)
    assert offered == declared_tools(agent), "a declared tool the client does not offer is silently dropped"
    assert not offered & NEVER
    assert agent_system_marker(ws, agent) in stub.last("agent").system


@pytest.mark.parametrize(
    ("leaf", "agent"),
    [
        ("research-verify", "research-verifier"),
        ("research-select", "research-searcher"),
        ("research-retrieve", "research-searcher"),
        ("research-control", "research-critic"),
    ],
)
def test_a_leaf_forks_into_the_agent_it_names(ws, leaf, agent):
    marker = f"RUN-FOR-{leaf}"
    script = Script().add(
        "main", main_session("LEAF-FORK"), [[tool("Skill", skill=ws.name(leaf), args=f"/tmp/{marker} all")]]
    )
    script.add("fork", subagent(marker), [[text("done")]])
    stub, result = ws.run(script, "LEAF-FORK")
    assert result.returncode == 0, result.stderr
    call = stub.calls("main")[0]
    assert not call.is_error and "forked execution" in (call.result or ""), call.result
    fork = stub.last("fork")
    assert set(fork.tools) == declared_tools(agent), f"{leaf} forked something other than {agent}"
    assert agent_system_marker(ws, agent) in fork.system
    assert f"/{leaf}\n" in fork.first_user, "the fork's task is the leaf's own instructions"


@pytest.fixture
def claim_run(ws, monkeypatch, brief_file, httpserver):
    """A locked run with one grounded claim whose source is served on 127.0.0.1, for a real verify prepare."""
    fast_verifier(monkeypatch)
    run = locked_private_run(brief_file)
    sq = decompose.add(run, "What did the operator report?", "factual")
    grounded_claim(run, httpserver, sq, "/report", "The operator reported 42 outages in 2023.")
    ws.env_extra["RESEARCH_ENGINE_ALLOW_PRIVATE"] = "1"
    return run


def test_the_verify_leaf_runs_as_the_verifier_and_the_run_records_it(ws, claim_run):
    run = str(claim_run.root)
    script = Script().add(
        "main", main_session("VERIFY-LEAF"), [[tool("Skill", skill=ws.name("research-verify"), args=run)]]
    )
    script.add(
        "verifier",
        subagent(f"`{run}`"),
        [
            [
                tool(
                    "Bash",
                    command=f"research-engine verify prepare --run {run} "
                    f"--agent {ws.name('research-verifier')} --json",
                )
            ]
        ],
    )
    stub, result = ws.run(script, "VERIFY-LEAF")
    assert result.returncode == 0, result.stderr
    (prepare,) = stub.calls("verifier")
    assert not prepare.is_error, prepare.result
    assert prepare.envelope()["data"]["prepared_by"] == [ws.name("research-verifier")]
    assert verify.load_worksheet(claim_run)["prepared_by"] == [ws.name("research-verifier")]
    assert set(stub.last("verifier").tools) == {"Bash", "Read"}


def test_the_verify_stage_is_refused_outside_the_verifier(ws, claim_run):
    """The main session, a searcher, or the verifier without its name: the guard hook refuses each."""
    run = str(claim_run.root)
    prepare = f"research-engine verify prepare --run {run} --agent {ws.name('research-verifier')} --json"
    script = Script().add(
        "main",
        main_session("VERIFY-ELSEWHERE"),
        [
            [tool("Bash", command=prepare)],
            [tool("Skill", skill=ws.name("research-select"), args=f"{run} all SEARCHER")],
            [tool("Skill", skill=ws.name("research-verify"), args=f"{run} VERIFIER")],
        ],
    )
    script.add("searcher", subagent("SEARCHER"), [[tool("Bash", command=prepare)]])
    script.add(
        "verifier",
        subagent("VERIFIER"),
        [[tool("Bash", command=f"research-engine verify prepare --run {run} --json")]],
    )
    stub, result = ws.run(script, "VERIFY-ELSEWHERE")
    assert result.returncode == 0, result.stderr
    main_call = stub.calls("main")[0]
    assert main_call.is_error and "not in the main session" in main_call.result
    (searcher_call,) = stub.calls("searcher")
    assert searcher_call.is_error and f"not in {ws.name('research-searcher')}" in searcher_call.result
    (unnamed,) = stub.calls("verifier")
    assert unnamed.is_error and f"--agent {ws.name('research-verifier')}" in unnamed.result
    assert verify.load_worksheet(claim_run) is None, "nothing was verified"


def test_a_verify_leaf_that_misses_the_verifier_is_refused_not_silently_run(plugin_ws, tmp_path):
    """Today's failure mode, rebuilt: a plugin whose verify leaf names the verifier by its project name. The
    client silently forks a general-purpose agent with every tool; the guard refuses its verify commands."""
    repo = plugin_ws.repo
    shutil.copy(
        repo / ".claude/skills/research-verify/SKILL.md", repo / "plugin/skills/research-verify/SKILL.md"
    )
    run = str(tmp_path / "some-run")
    script = Script().add(
        "main", main_session("FALLBACK"), [[tool("Skill", skill="research-engine:research-verify", args=run)]]
    )
    script.add(
        "fallback",
        subagent(f"`{run}`"),
        [
            [
                tool(
                    "Bash",
                    command=f"research-engine verify prepare --run {run} --agent research-verifier --json",
                )
            ]
        ],
    )
    stub, result = plugin_ws.run(script, "FALLBACK")
    assert result.returncode == 0, result.stderr
    fork = stub.last("fallback")
    assert {"Write", "Edit"} <= set(fork.tools), "the client fell back to a general-purpose agent"
    (call,) = stub.calls("fallback")
    assert call.is_error and "not in general-purpose" in call.result


def test_make_workspace_copies_the_working_tree(tmp_path, claude_binary):
    ws = make_workspace("project", claude_binary, tmp_path)
    assert (ws.repo / ".claude/skills/research/SKILL.md").read_text() == (
        ROOT / ".claude/skills/research/SKILL.md"
    ).read_text()
    assert not (ws.repo / ".venv").exists()


@pytest.fixture
def prose_run(claim_run):
    """claim_run, verified and stopped, with a draft checked into a prose worksheet (verify/prose.md)."""
    from core_testkit import verify_all

    from research_engine import claims, controller, prose_review, report

    verify_all(claim_run)
    controller.control(claim_run)
    draft = "# Outages\n\nThe operator reported 42 outages in 2023 [CLM-01].\n"
    checked = report.check_text(claim_run, draft)
    assert checked.ok, checked.problems
    ledger = {c["id"]: c for c in claims.load(claim_run)["claims"]}
    prose_review.prepare(claim_run, draft, checked.sentences, ledger)
    return claim_run


def prose_verdict(run: str, agent: str | None) -> str:
    named = f" --agent {agent}" if agent else ""
    return (
        f"research-engine verify prose S-01 --run {run} --verdict supported "
        f'--reason "the quote holds it"{named} --json'
    )


def test_the_verifier_records_a_prose_verdict_and_the_run_records_who_judged(ws, prose_run):
    from research_engine import prose_review

    run = str(prose_run.root)
    script = Script().add(
        "main",
        main_session("PROSE-PASS"),
        [[tool("Skill", skill=ws.name("research-verify"), args=f"{run} prose")]],
    )
    script.add(
        "verifier",
        subagent(f"`{run}`"),
        [[tool("Bash", command=prose_verdict(run, ws.name("research-verifier")))]],
    )
    stub, result = ws.run(script, "PROSE-PASS")
    assert result.returncode == 0, result.stderr
    (call,) = stub.calls("verifier")
    assert not call.is_error, call.result
    (row,) = prose_review.load(prose_run)["sentences"]
    assert (row["verdict"], row["judged_by"]) == ("supported", ws.name("research-verifier"))


def test_prose_verdicts_are_refused_outside_the_verifier(ws, prose_run):
    """The main session, the synthesize leaf's fork, or the verifier without its name: the guard refuses each;
    the sentence stays unjudged, so `report finish` would refuse the deliverable."""
    from research_engine import prose_review

    run = str(prose_run.root)
    named = prose_verdict(run, ws.name("research-verifier"))
    script = Script().add(
        "main",
        main_session("PROSE-ELSEWHERE"),
        [
            [tool("Bash", command=named)],
            [tool("Skill", skill=ws.name("research-synthesize"), args="/tmp/WRITER-RUN")],
            [tool("Skill", skill=ws.name("research-verify"), args=f"{run} prose VERIFIER")],
        ],
    )
    script.add("writer", subagent("WRITER"), [[tool("Bash", command=named)]])
    script.add("verifier", subagent("VERIFIER"), [[tool("Bash", command=prose_verdict(run, None))]])
    stub, result = ws.run(script, "PROSE-ELSEWHERE")
    assert result.returncode == 0, result.stderr
    main_call = stub.calls("main")[0]
    assert main_call.is_error and "not in the main session" in main_call.result
    (writer_call,) = stub.calls("writer")
    assert writer_call.is_error and "research-verifier agent" in writer_call.result
    (unnamed,) = stub.calls("verifier")
    assert unnamed.is_error and f"--agent {ws.name('research-verifier')}" in unnamed.result
    (row,) = prose_review.load(prose_run)["sentences"]
    assert row["verdict"] is None, "nothing was judged"
