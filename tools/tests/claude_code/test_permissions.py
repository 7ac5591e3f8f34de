"""What each install way grants, under the documented invocation: the toolkit runs; nothing else does;
no file is written by the model anywhere; WebFetch and WebSearch never fetch."""

from __future__ import annotations

from claude_code.stub import Script, main_session, subagent, text, tool

COMPLETE_BRIEF = "---\nobjective: How do tides work?\ndeliverable: a memo\noutput_path: {out}\n---\n"
# How the pinned client words a call it did not run (a permission it lacks, a hook's denial, a tool it does
# not offer in this context, a shell construct it will not approve).
REFUSAL_WORDS = (
    "approval",
    "haven't granted",
    "allow rule",
    "hook error",
    "not allowed",
    "denied",
    "disabled",
    "blocked",
    "No such tool available",
    "undergoes shell expansion",
)


def refused(call) -> bool:
    return call.is_error and any(w in (call.result or "") for w in REFUSAL_WORDS)


def test_the_toolkit_runs_with_its_input_on_stdin_and_nothing_else_runs(ws, tmp_path, httpserver):
    out = tmp_path / "runs-out"
    heredoc = f"research-engine brief check - --json <<'EOF'\n{COMPLETE_BRIEF.format(out=out)}EOF"
    sentinel = httpserver.url_for("/sentinel")
    others = [
        f"touch {ws.cwd}/touched",
        f"curl -s {sentinel}",
        f"python3 -c \"open('{ws.cwd}/py-wrote', 'w').write('x')\"",
        f"research-engine --version && touch {ws.cwd}/chained",
        f"research-engine --version > {ws.cwd}/redirected",
        f"research-engine brief check - --json <<EOF\nobjective: $(touch {ws.cwd}/expanded)\nEOF",
    ]
    script = Script().add(
        "main",
        main_session("BASH-RULES"),
        [[tool("Bash", command=heredoc)], *[[tool("Bash", command=c)] for c in others]],
    )
    stub, result = ws.run(script, "BASH-RULES")
    assert result.returncode == 0, result.stderr
    toolkit, *rest = stub.calls("main")
    assert not toolkit.is_error and toolkit.envelope()["ok"], toolkit.result
    for call in rest:
        assert refused(call), f"{call.input['command']!r} ran: {call.result}"
    for name in ("touched", "py-wrote", "chained", "redirected", "expanded"):
        assert not (ws.cwd / name).exists(), name
    assert not httpserver.log, "nothing reached the network"


def test_the_client_itself_allows_read_only_commands_in_the_working_directory(ws):
    """Not a grant of ours: Claude Code runs read-only commands (ls, cat) inside the working directory
    without any rule. The docs say so; this pins it for the pinned client."""
    script = Script().add(
        "main", main_session("READ-ONLY"), [[tool("Bash", command="ls")], [tool("Bash", command="ls /")]]
    )
    stub, result = ws.run(script, "READ-ONLY")
    inside, outside = stub.calls("main")
    assert not inside.is_error, inside.result
    assert refused(outside), outside.result


def test_no_file_is_written_by_the_model_inside_or_outside_the_run(ws, tmp_path):
    """With the composer active and inside a forked leaf: Write and Edit are granted nowhere."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws.cwd / "runs").mkdir(exist_ok=True)
    targets = [
        ws.cwd / "runs" / "inside-runs.md",
        ws.cwd / "in-cwd.md",
        ws.cwd.parent / "outside.txt",
        elsewhere / "x.md",
    ]
    writes = [[tool("Write", file_path=str(p), content="x")] for p in targets]
    existing = ws.cwd / "existing.md"
    existing.write_text("old\n")
    script = Script().add(
        "main",
        main_session("tides"),
        [
            *writes,
            [tool("Read", file_path=str(existing))],
            [tool("Edit", file_path=str(existing), old_string="old", new_string="new")],
            [tool("Skill", skill=ws.name("research-select"), args=f"{ws.cwd}/runs/r all FORK-WRITES")],
        ],
    )
    script.add(
        "fork", subagent("FORK-WRITES"), [[tool("Write", file_path=str(p), content="x")] for p in targets]
    )
    stub, result = ws.run(script, f"{ws.slash()} How do tides work?")
    assert result.returncode == 0, result.stderr
    calls = [c for c in stub.calls("main") if c.name in ("Write", "Edit")] + stub.calls("fork")
    assert len(calls) == 2 * len(targets) + 1
    for call in calls:
        assert refused(call), f"{call.name} {call.input.get('file_path')} succeeded: {call.result}"
    for path in targets:
        assert not path.exists(), path
    assert existing.read_text() == "old\n"


def test_webfetch_and_websearch_never_fetch_even_when_the_invocation_allows_them(ws, httpserver):
    url = httpserver.url_for("/page")
    script = Script().add(
        "main",
        main_session("WEB"),
        [
            [tool("ToolSearch", query="select:WebFetch,WebSearch", max_results=5)],
            [tool("WebFetch", url=url, prompt="summarise")],
            [tool("WebSearch", query="tides")],
            [tool("Skill", skill=ws.name("research-decompose"), args="/tmp/FORK-WEB")],
        ],
    )
    script.add(
        "fork",
        subagent("FORK-WEB"),
        [[tool("WebFetch", url=url, prompt="summarise")], [tool("WebSearch", query="x")]],
    )
    stub, result = ws.run(script, "WEB", "--allowedTools", "WebFetch", "WebSearch")
    assert result.returncode == 0, result.stderr
    web = [c for c in stub.calls("main") + stub.calls("fork") if c.name in ("WebFetch", "WebSearch")]
    assert len(web) == 4
    for call in web:
        assert call.is_error, f"{call.name} ran: {call.result}"
    assert not httpserver.log, "WebFetch reached the network"


def test_the_documented_invocation_allows_every_leaf_skill(ws):
    leaves = [
        "research-decompose",
        "research-select",
        "research-retrieve",
        "research-consolidate",
        "research-verify",
        "research-control",
        "research-synthesize",
    ]
    script = Script().add(
        "main",
        main_session("LEAVES"),
        [[tool("Skill", skill=ws.name(leaf), args=f"/tmp/LEAF-{leaf}")] for leaf in leaves],
    )
    for leaf in leaves:
        script.add(leaf, subagent(f"/tmp/LEAF-{leaf}"), [[text(f"{leaf} done")]])
    stub, result = ws.run(script, "LEAVES")
    assert result.returncode == 0, result.stderr
    calls = stub.calls("main")
    assert [c.input["skill"] for c in calls] == [ws.name(leaf) for leaf in leaves]
    for call in calls:
        assert not call.is_error and "forked execution" in call.result, call.result
    assert result.json["permission_denials"] == []


def test_without_flags_the_composer_grants_its_own_calls_for_its_turn_only(ws):
    """An untrusted workspace under -p: outside a skill nothing is granted; the composer's allowed-tools
    grant the toolkit and its leaves while its turn lasts."""
    outside = Script().add(
        "main",
        main_session("NO-FLAGS"),
        [
            [tool("Bash", command="research-engine --version")],
            [tool("Skill", skill=ws.name("research-decompose"), args="/tmp/x")],
        ],
    )
    stub, result = ws.run(outside, "NO-FLAGS", documented=False)
    assert all(refused(c) for c in stub.calls("main")), [c.result for c in stub.calls("main")]
    if ws.mode == "project":
        assert (
            "permissions.allow entries from .claude/settings.json: this workspace has not been trusted"
            in result.stderr
        )

    inside = Script().add(
        "main",
        main_session("tides"),
        [
            [tool("Bash", command="research-engine --version")],
            [tool("Skill", skill=ws.name("research-decompose"), args="/tmp/COMPOSER-LEAF")],
        ],
    )
    inside.add("leaf", subagent("/tmp/COMPOSER-LEAF"), [[tool("Bash", command="research-engine --version")]])
    stub, result = ws.run(inside, f"{ws.slash()} How do tides work?", documented=False)
    for call in stub.calls("main") + stub.calls("leaf"):
        assert not call.is_error, call.result


def test_a_trusted_project_is_granted_by_its_settings_alone(project_ws):
    """Interactive use: once the trust dialog is accepted, .claude/settings.json grants the toolkit and the
    leaves in every turn; it still grants no write and no web access."""
    project_ws.trust()
    script = Script().add(
        "main",
        main_session("TRUSTED"),
        [
            [tool("Bash", command="research-engine --version")],
            [tool("Skill", skill="research-decompose", args="/tmp/TRUSTED-LEAF")],
            [tool("Write", file_path=str(project_ws.cwd / "runs" / "x.md"), content="x")],
            [tool("WebFetch", url="http://127.0.0.1:9/", prompt="x")],
        ],
    )
    script.add("leaf", subagent("/tmp/TRUSTED-LEAF"), [[text("done")]])
    stub, result = project_ws.run(script, "TRUSTED", documented=False)
    assert "has not been trusted" not in result.stderr
    bash, skill, write, web = stub.calls("main")
    assert not bash.is_error and not skill.is_error, (bash.result, skill.result)
    assert refused(write) and web.is_error


def test_the_client_refuses_json_in_a_heredoc_so_candidates_go_as_yaml(ws):
    """Pinned client behaviour the select leaf is written around: a Bash command holding braces with quotes
    is refused as "expansion obfuscation", even inside a quoted heredoc; the same list as YAML runs."""
    as_json = 'research-engine brief check - --json <<\'EOF\'\n{"objective": "How do tides work?"}\nEOF'
    as_yaml = "research-engine brief check - --json <<'EOF'\nobjective: How do tides work?\nEOF"
    script = Script().add(
        "main",
        main_session("JSON-HEREDOC"),
        [[tool("Bash", command=as_json)], [tool("Bash", command=as_yaml)]],
    )
    stub, result = ws.run(script, "JSON-HEREDOC")
    assert result.returncode == 0, result.stderr
    refused_json, ran_yaml = stub.calls("main")
    assert refused_json.is_error and "brace with quote" in (refused_json.result or ""), refused_json.result
    assert ran_yaml.envelope()["command"] == "brief check"
