"""The plugin brings its own toolkit and takes its settings from Claude Code, on a machine where no
`research-engine` is on PATH (a fresh HOME; `claude plugin marketplace add <clone>`, `claude plugin install`).

- The first `research-engine ... --json` call of `/research-engine:research` goes to the plugin's
  `bin/research-engine`, which installs the toolkit from the plugin's own source into the plugin's data
  directory (real pip, from the package registry) and then runs it.
- The user's plugin settings (`claude plugin configure`, a SearXNG URL and a sensitive Brave key) reach the
  toolkit: a search through a local SearXNG-compatible server succeeds, and so does one through a local
  Brave stand-in that answers only to the configured key. The key is never written under the run or the
  plugin root, and never reaches the model.
- A second `claude` run reuses the install; a developer's `research-engine` on PATH runs first, and the
  plugin's bin/ still works and says which one ran.
- Two `claude` runs starting at once on a fresh machine both succeed, with one install between them.

Each of the two tests installs once (about half a minute with pip's cache warm: the cache is shared by every
session of the suite, outside the repository). One test per install keeps pytest-xdist from running an
install twice. The Bash tool's timeout is raised to ten minutes here so that a cold download stays in the
foreground; with the default two minutes the client moves a longer call to the background and it goes on.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_sources_http import answer

from claude_code.stub import Script, main_session, subagent, tool
from claude_code.workspace import PLUGIN, Workspace, make_workspace

pytestmark = pytest.mark.slow

INSTALLING = re.compile(
    r"research-engine: first use of plugin version (\S+): installing the toolkit into (\S+)"
)
# The sensitive setting, made up per session so that no file holds it beforehand.
CANARY = f"brave-canary-{secrets.token_hex(12)}"
VERSION = json.loads((Path(__file__).resolve().parents[3] / ".claude-plugin" / "plugin.json").read_text())[
    "version"
]


def pip_cache() -> Path:
    """pip's cache for the plugin's installs, shared by every session of the suite (a fresh HOME per test
    would otherwise download every wheel again)."""
    base = os.environ.get("RESEARCH_ENGINE_PIP_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "research-engine-tests" / "pip"


def installed(binary: Path, tmp: Path) -> Workspace:
    """The plugin installed from a clone as docs/claude-code.md says, on a machine with no toolkit."""
    ws = make_workspace("plugin", binary, tmp)
    ws.toolkit_on_path = False
    ws.env_extra.update(PIP_CACHE_DIR=str(pip_cache()), BASH_DEFAULT_TIMEOUT_MS="600000")
    for argv in (
        ("plugin", "marketplace", "add", str(ws.repo)),
        ("plugin", "install", f"{PLUGIN}@{PLUGIN}"),
    ):
        done = ws.claude(*argv)
        assert done.returncode == 0, done.stdout + done.stderr
    ws.mode = "installed"
    return ws


def installed_from_a_pinned_catalogue(binary: Path, tmp: Path) -> tuple[Workspace, Path]:
    """The plugin as a team's catalogue publishes it (docs/claude-code.md, "A published copy"): an entry
    pinned to a commit of the repository, here a git URL of a local repository, since nothing here reaches
    GitHub. A later commit exists, so the pin is what is installed. Returns the workspace and the
    installed copy (the plugin root)."""
    ws = make_workspace("plugin", binary, tmp)
    ws.toolkit_on_path = False
    ws.env_extra.update(PIP_CACHE_DIR=str(pip_cache()), BASH_DEFAULT_TIMEOUT_MS="600000")

    def git(*args: str) -> str:
        identity = ("-c", "user.name=research-engine tests", "-c", "user.email=tests@research-engine.dev")
        done = subprocess.run(["git", "-C", str(ws.repo), *identity, *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    git("add", "-A")
    git("commit", "-qm", "the published commit")
    sha = git("rev-parse", "HEAD")
    (ws.repo / "AFTER-THE-PIN").write_text("a later commit\n")
    git("add", "-A")
    git("commit", "-qm", "a later commit")
    (entry,) = json.loads((ws.repo / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    entry["source"] = {"source": "url", "url": f"file://{ws.repo}", "sha": sha}
    catalogue = tmp / "team-catalogue"
    (catalogue / ".claude-plugin").mkdir(parents=True)
    listing = {"name": "team-catalogue", "owner": {"name": "a team"}, "plugins": [entry]}
    (catalogue / ".claude-plugin" / "marketplace.json").write_text(json.dumps(listing))
    for argv in (
        ("plugin", "marketplace", "add", str(catalogue)),
        ("plugin", "install", f"{PLUGIN}@team-catalogue"),
    ):
        done = ws.claude(*argv)
        assert done.returncode == 0, done.stdout + done.stderr
    ws.mode, ws.marketplace = "installed", "team-catalogue"
    record = json.loads((ws.home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    (copy,) = record["plugins"][f"{PLUGIN}@team-catalogue"]
    assert copy["gitCommitSha"] == sha
    root = Path(copy["installPath"])
    assert (root / "bin" / "research-engine").is_file() and not (root / "AFTER-THE-PIN").exists()
    return ws, root


def files_of(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def holding(root: Path, secret: str) -> list[str]:
    """Files under `root` whose bytes hold `secret`."""
    return [str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def bash(command: str):
    return tool("Bash", command=command)


def test_the_plugin_installs_its_toolkit_on_first_use_and_takes_its_settings_from_claude_code(
    claude_binary, tmp_path, httpserver
):
    ws = installed(claude_binary, tmp_path)
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/sx/search").respond_with_response(answer("searxng/search_python_page1.json"))
    httpserver.expect_request(
        "/brave/res/v1/web/search", headers={"X-Subscription-Token": CANARY}
    ).respond_with_response(answer("brave/web_search_hello_world.json"))
    settings = {"SEARXNG_URL": f"{base}/sx", "BRAVE_API_KEY": CANARY}
    configured = subprocess.run(
        [str(claude_binary), "plugin", "configure", f"{PLUGIN}@{PLUGIN}", "--values-stdin"],
        input=json.dumps(settings),
        cwd=ws.cwd,
        env=ws.env("http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    ws.env_extra.update(
        RESEARCH_ENGINE_ALLOW_PRIVATE="1",  # the search servers are on 127.0.0.1
        RESEARCH_ENGINE_BRAVE_URL=f"{base}/brave/res/v1",
        RESEARCH_ENGINE_CACHE_DIR=str(tmp_path / "cache"),
    )
    plugin_files = files_of(ws.repo)
    out = tmp_path / "research-out"
    brief = f"---\nobjective: How do tides work?\ndeliverable: a short memo\noutput_path: {out}\n---\n"
    state: dict[str, str] = {}

    def keep_run(ex):
        state["run"] = [c for c in ex.calls() if c.result is not None][-1].envelope()["data"]["run_root"]
        return [
            bash(f'research-engine sq add "How do tides work?" --run {state["run"]} --type factual --json')
        ]

    script = Script().add(
        "main",
        main_session("How do tides work?"),
        [
            [bash(f"research-engine brief lock - --json <<'EOF'\n{brief}EOF")],
            keep_run,
            lambda ex: [
                bash(
                    f"research-engine search python --backend searxng --run {state['run']} --sq SQ-01 --json"
                )
            ],
            [bash('research-engine search "hello world" --backend brave --limit 5 --json')],
        ],
        final="searched",
    )

    # 1. The first call of /research-engine:research installs the toolkit through the plugin's bin/.
    started = time.monotonic()
    stub, first = ws.run(script, f"{ws.slash()} How do tides work?", timeout=900)
    first_seconds = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    lock, sq, searxng, brave = stub.calls("main")
    for call in (lock, sq, searxng, brave):
        assert not call.is_error and call.envelope()["ok"], call.result
    installing = INSTALLING.search(lock.result or "")
    assert installing, f"the first call did not install: {lock.result}"
    venv = ws.plugin_data / f"venv-{VERSION}"
    assert installing.groups() == (VERSION, str(venv))
    assert (venv / ".installed").is_file()
    assert not INSTALLING.search(sq.result or ""), "installed once"

    # 2. The settings reached the toolkit: SearXNG by its URL, Brave by the key (the stand-in answers only
    # to it), and the key stayed out of the run, the plugin root, the session's env files and the model.
    assert searxng.envelope()["data"]["backend"] == "searxng" and searxng.envelope()["data"]["candidates"]
    assert brave.envelope()["data"]["backend"] == "brave" and brave.envelope()["data"]["candidates"]
    run = Path(state["run"])
    assert run.parent == out and (run / "select").exists()
    assert holding(run, CANARY) == []
    assert holding(ws.repo, CANARY) == []
    assert files_of(ws.repo) == plugin_files, "nothing is written inside the plugin root"
    assert holding(ws.home / ".claude" / "session-env", CANARY) == []
    assert CANARY not in json.dumps([ex.body for ex in stub.exchanges])
    config = ws.plugin_data / "config.env"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600 and holding(ws.plugin_data, CANARY) == [str(config)]

    # 3. A second claude run reuses the install: in the main session, in a forked leaf, and when the
    # session is continued (`--continue`, as after the composer's intake questions).
    plugin_bin = ws.repo / "bin" / "research-engine"
    plugin_version = f"research-engine {VERSION} (the Claude Code plugin: {plugin_bin}, installed in {venv})"
    marker = (venv / ".installed").stat().st_mtime_ns
    reuse = Script().add(
        "main",
        main_session("AGAIN"),
        [
            [bash("research-engine --version")],
            [tool("Skill", skill=ws.name("research-decompose"), args="/tmp/REUSE")],
        ],
    )
    reuse.add("leaf", subagent("/tmp/REUSE"), [[bash("research-engine --version")]])
    started = time.monotonic()
    stub, second = ws.run(reuse, "AGAIN")
    second_seconds = time.monotonic() - started
    assert second.returncode == 0, second.stderr
    (in_main, _), (in_leaf,) = stub.calls("main"), stub.calls("leaf")
    # The continued conversation holds the first one's three assistant turns.
    again = Script().add("main", main_session("AGAIN"), [[], [], [], [bash("research-engine --version")]])
    stub, continued = ws.run(again, "more", "--continue")
    assert continued.returncode == 0, continued.stderr
    for call in (in_main, in_leaf, stub.calls("main")[-1]):
        assert not call.is_error and call.result.strip() == plugin_version, call.result
    assert (venv / ".installed").stat().st_mtime_ns == marker

    # 4. Interactive, as a person types in `claude`: the same bin/ and the same settings, in the main
    # session and in a forked leaf (which runs in the background there).
    live = Script().add(
        "main",
        main_session("INTERACTIVE"),
        [
            [bash("research-engine search python --backend searxng --limit 3 --json")],
            [tool("Skill", skill=ws.name("research-decompose"), args="/tmp/LIVE")],
        ],
        final="done",
    )
    live.add("leaf", subagent("/tmp/LIVE"), [[bash("research-engine --version")]])
    stub, screen = ws.interactive(live, "INTERACTIVE", roles=("main", "leaf"))
    search, _ = stub.calls("main")
    assert search.envelope()["ok"] and search.envelope()["data"]["backend"] == "searxng", search.result
    assert stub.calls("leaf")[0].result.strip() == plugin_version, stub.calls("leaf")[0].result

    # 5. A developer's research-engine on PATH runs first (a plugin's bin/ comes after the user's PATH);
    # the plugin's bin/ still works, and --version says which one ran.
    ws.toolkit_on_path = True
    stub, third = ws.run(
        Script().add("main", main_session("DEV"), [[bash("research-engine --version")]]), "DEV"
    )
    (dev,) = stub.calls("main")
    assert dev.result.strip() == f"research-engine {VERSION}", "the developer's own"
    env = ws.env("http://127.0.0.1:9") | {"RESEARCH_ENGINE_PLUGIN_DATA": str(ws.plugin_data)}
    direct = subprocess.run(
        [str(plugin_bin), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert direct.returncode == 0 and direct.stdout.strip() == plugin_version, direct.stdout + direct.stderr

    # 6. A new plugin version installs afresh (stopped here at the interpreter check, to spend no second
    # install: the launcher went for venv-<new version>, and the installed one is untouched).
    manifest = ws.repo / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace(f'"version": "{VERSION}"', '"version": "99.0.0"', 1))
    env |= {"RESEARCH_ENGINE_PYTHON": str(tmp_path / "no-python-here")}
    bumped = subprocess.run(
        [str(plugin_bin), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert bumped.returncode == 5 and "needs Python 3.11 or newer" in bumped.stderr, bumped.stderr
    assert (
        not (ws.plugin_data / "venv-99.0.0").exists() and (venv / ".installed").stat().st_mtime_ns == marker
    )
    print(f"\nfirst claude run (installs): {first_seconds:.1f} s; second (reuses): {second_seconds:.1f} s")


def test_two_claude_runs_starting_at_once_both_succeed_with_one_install(claude_binary, tmp_path):
    """From a catalogue entry pinned to a commit (the plugin root is then the client's copy of that commit,
    not a clone): two sessions whose first calls come at once; one installs, the other waits for it."""
    ws, root = installed_from_a_pinned_catalogue(claude_binary, tmp_path)
    plugin_files = files_of(root)

    def one(marker: str):
        script = Script().add(
            "main",
            main_session(marker),
            [[bash("research-engine brief check - --json <<'EOF'\nobjective: How do tides work?\nEOF")]],
        )
        return ws.run(script, marker, timeout=900)

    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(one, ["AT-ONCE-1", "AT-ONCE-2"]))
    results = []
    for stub, result in runs:
        assert result.returncode == 0, result.stderr
        (check,) = stub.calls("main")
        envelope = check.envelope()
        assert envelope["command"] == "brief check" and envelope["exit_code"] == 2, check.result  # incomplete
        results.append(check.result or "")
    installer, waiter = sorted(results, key=lambda r: not INSTALLING.search(r))
    assert INSTALLING.search(installer) and not INSTALLING.search(waiter), results
    assert "waiting for another call that is installing the toolkit" in waiter, "the second first call waited"
    log = (ws.plugin_data / "install.log").read_text()
    assert log.count(" -m venv ") == 1, "one install between them"
    assert (ws.plugin_data / f"venv-{VERSION}" / ".installed").is_file()
    assert files_of(root) == plugin_files, "nothing is written inside the plugin root"
