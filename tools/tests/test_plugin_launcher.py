"""The plugin's own pieces, without the client: `bin/research-engine` when it cannot install, the generated
SessionStart hook, and the manifests agreeing with the code. The installs themselves, under the real client,
are in claude_code/test_plugin_install.py."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from research_engine import bundle, selfinstall
from research_engine.settings import DEFAULT_BASE_URLS, VARIABLES

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "bin" / "research-engine"
MANIFEST = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())


def launch(*args: str, root: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """The launcher under /bin/sh with only the environment given (PATH included)."""
    return subprocess.run(
        ["/bin/sh", str(root / "bin" / "research-engine"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_python_the_launcher_says_what_to_install(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    data = tmp_path / "data"
    done = launch(
        "search",
        "tides",
        "--json",
        PATH=str(empty),
        HOME=str(tmp_path),
        RESEARCH_ENGINE_PLUGIN_DATA=str(data),
    )
    assert done.returncode == 5
    (line,) = done.stderr.splitlines()
    assert line.startswith("research-engine: installing the toolkit needs Python 3.11 or newer"), line
    assert "apt install python3 python3-venv" in line
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False and envelope["exit_code"] == 5
    assert envelope["errors"][0]["code"] == "no-python" and envelope["errors"][0]["message"] in line
    assert not data.exists(), "nothing is created before an interpreter is found"


def older_python() -> str | None:
    """A Python older than 3.11 on this machine, if there is one."""
    names = [f"python3.{minor}" for minor in range(6, 11)]
    found = [shutil.which(name) for name in names]
    found += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.[6-9]*/bin/python3"))]
    found += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.10*/bin/python3"))]
    return next((f for f in found if f), None)


def test_an_older_python_is_named_and_refused(tmp_path):
    old = older_python()
    if old is None:
        pytest.skip("no Python older than 3.11 on this machine")
    done = launch(
        "--version", PATH="/usr/bin:/bin", HOME=str(tmp_path), RESEARCH_ENGINE_PYTHON=old,
        RESEARCH_ENGINE_PLUGIN_DATA=str(tmp_path / "data"),
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    (line,) = done.stderr.splitlines()
    assert "needs Python 3.11 or newer" in line and f"(tried {old})" in line, line


def test_a_plugin_root_without_a_version_is_refused_in_one_line(tmp_path):
    root = tmp_path / "plugin"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(LAUNCHER, root / "bin" / "research-engine")
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "research-engine"}\n')
    done = launch("--version", root=root, PATH="/usr/bin:/bin", HOME=str(tmp_path))
    assert done.returncode == 5
    assert done.stderr.startswith("research-engine: no version in ") and done.stderr.count("\n") == 1


def test_the_launcher_reads_the_version_plugin_json_declares():
    """The fast path reads plugin.json with shell builtins: the version must be the first `"version"`."""
    first = next(
        line
        for line in (ROOT / ".claude-plugin" / "plugin.json").read_text().splitlines()
        if '"version"' in line
    )
    assert json.loads("{" + first.strip().rstrip(",") + "}")["version"] == MANIFEST["version"]


def test_versions_agree_across_plugin_json_marketplace_and_the_package():
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = marketplace["plugins"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert entry["version"] == MANIFEST["version"] == project["version"]
    for field in ("name", "displayName", "description", "license", "homepage"):
        assert entry[field] == MANIFEST[field], field
    assert entry["source"] == "./" and entry["category"]


def test_every_plugin_setting_is_a_variable_the_toolkit_reads():
    options = MANIFEST["userConfig"]
    assert set(options) <= set(VARIABLES)
    assert {"SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY", "RESEARCH_ENGINE_MAILTO"} <= set(options)
    assert {name for name, spec in options.items() if spec.get("sensitive")} == {
        "BRAVE_API_KEY",
        "TAVILY_API_KEY",
    }
    assert bundle.option_names(ROOT) == list(options)


def test_the_declared_network_hosts_cover_every_api_the_toolkit_calls():
    hosts = set(MANIFEST["network"]["hosts"])
    assert {urlsplit(url).hostname for url in DEFAULT_BASE_URLS.values()} <= hosts
    assert {"pypi.org", "files.pythonhosted.org"} <= hosts, "the first-use install"


def run_hook(tmp_path: Path, **options: str) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    data, env_file = tmp_path / "data", tmp_path / "session.sh"
    env_file.write_text("")
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_ENV_FILE": str(env_file)}
    env |= {f"CLAUDE_PLUGIN_OPTION_{name}": value for name, value in options.items()}
    hook = ROOT / "plugin" / "hooks" / bundle.SESSION_HOOK
    done = subprocess.run(["/bin/sh", str(hook)], env=env, capture_output=True, text=True, timeout=30)
    return data, env_file, done


def sourced(config: Path, *names: str, **env: str) -> dict[str, str]:
    """What the launcher sees after loading config.env in an environment holding `env`."""
    script = f'. "{config}"; ' + "; ".join(f'printf "%s\\0" "${{{n}:-}}"' for n in names)
    done = subprocess.run(
        ["/bin/sh", "-c", script], env={"PATH": "/usr/bin:/bin", **env}, capture_output=True, text=True
    )
    return dict(zip(names, done.stdout.split("\0"), strict=False))


def test_the_session_hook_hands_the_settings_to_the_launcher_and_keeps_them_private(tmp_path):
    awkward = "https://searx.example.org/?q='x'&y=$HOME `id` \"z\""
    data, env_file, done = run_hook(tmp_path, SEARXNG_URL=awkward, BRAVE_API_KEY="key-$(touch pwned)")
    assert done.returncode == 0 and done.stdout == "", (
        "a SessionStart hook's stdout would become model context"
    )
    config = data / "config.env"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert sourced(config, "SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY") == {
        "SEARXNG_URL": awkward,
        "BRAVE_API_KEY": "key-$(touch pwned)",
        "TAVILY_API_KEY": "",
    }
    assert sourced(config, "SEARXNG_URL", SEARXNG_URL="http://mine")["SEARXNG_URL"] == "http://mine", (
        "env wins"
    )
    assert not (tmp_path / "pwned").exists()
    assert env_file.read_text() == f"export RESEARCH_ENGINE_PLUGIN_DATA='{data}'\n", (
        "no setting in the env file"
    )


def test_unset_settings_leave_nothing_behind(tmp_path):
    data, _, _ = run_hook(tmp_path, BRAVE_API_KEY="old-key-123")
    data, _, done = run_hook(tmp_path)  # the user cleared it: the next session forgets it
    assert done.returncode == 0
    assert "old-key-123" not in (data / "config.env").read_text()


def test_pruning_keeps_the_current_version_and_the_most_recent_other(tmp_path):
    for i, version in enumerate(["0.1.0", "0.2.0", "0.3.0", "0.4.0"]):
        venv = tmp_path / f"venv-{version}"
        venv.mkdir()
        (venv / ".installed").write_text("{}")
        os.utime(venv / ".installed", (1000 + i, 1000 + i))
    selfinstall.prune(tmp_path, tmp_path / "venv-0.2.0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["venv-0.2.0", "venv-0.4.0"]


@pytest.mark.slow  # a virtualenv and pip's attempts: about 20 s
def test_a_failed_install_says_why_in_one_line_and_leaves_nothing_that_looks_installed(tmp_path):
    """A package index that cannot be reached (a closed port on 127.0.0.1): the virtualenv is created from
    the interpreter's own bundled pip, then pip cannot fetch anything."""
    data = tmp_path / "data"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "RESEARCH_ENGINE_PLUGIN_DATA": str(data),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
    }
    done = launch("search", "tides", "--json", **env)
    assert done.returncode == 6, done.stderr
    first, failure = done.stderr.splitlines()
    assert first.startswith("research-engine: first use of plugin version ")
    assert failure.startswith(
        "research-engine: could not install the toolkit: installing the toolkit and its dependencies failed "
        "(exit 1): ERROR: No matching distribution found for "
    ), failure
    assert failure.endswith(f"; the log is {data / 'install.log'}")
    envelope = json.loads(done.stdout)
    assert envelope["exit_code"] == 6 and envelope["errors"][0]["code"] == "install-failed"
    venv = data / f"venv-{MANIFEST['version']}"
    assert not selfinstall.is_ready(venv)
