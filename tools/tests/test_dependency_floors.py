"""Every dependency floor in pyproject.toml is one the tests pass on.

A floor nobody installs drifts: code starts using an API the floor lacks and the range in pyproject.toml
becomes a promise nobody keeps. This test builds a fresh venv with every runtime dependency pinned at
exactly its floor (`pkg==floor`, from the package index, transitive dependencies resolved as pip
resolves them), installs the project without dependencies, and runs a meaningful part of the suite
there: the CLI contract and lazy command tree, the brief, the net client, extraction, source parsing,
the claims ledger and its gate. It is slow (a minute or two, most of it pip), so it is marked `slow`;
CI runs it. Outside CI it skips when the package index cannot be reached; in CI it never skips.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]

# The part of the suite the floors must pass: every runtime dependency is exercised by at least one.
SUBSET = (
    "test_cli_contract.py",  # typer, the envelope, exit codes
    "test_cli_lazy.py",  # typer's public API for the lazy tree
    "test_brief.py",  # pyyaml, python-frontmatter, jsonschema
    "test_net_client.py",  # httpx, httpcore, charset-normalizer, filelock
    "test_net_guard.py",  # idna
    "test_net_robots.py",  # protego
    "test_extract_html.py",  # trafilatura, lxml, lxml_html_clean, readability-lxml
    "test_extract_document.py",  # pypdf
    "test_extract_formats.py",  # pypdf, python-docx, markdown-it-py
    "test_urls_canonical.py",  # tld
    "test_sources_parsing.py",
    "test_claims_ledger.py",
    "test_claims_gate.py",
    "test_view_markdown.py",  # markdown-it-py
)
# The test tools, at whatever version pip picks: the floors under test are the runtime ones.
TEST_TOOLS = ("pytest", "pytest-httpserver", "hypothesis")

pytestmark = pytest.mark.slow


def floors() -> dict[str, str]:
    """Each runtime dependency's floor, from pyproject.toml: {"httpx": "0.27", ...}."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found: dict[str, str] = {}
    for requirement in project["dependencies"]:
        match = re.match(r"^([A-Za-z0-9._-]+)\s*>=\s*([0-9][^,;\s]*)", requirement)
        assert match, f"{requirement!r} has no floor (name>=version): every dependency needs one"
        found[match[1]] = match[2]
    return found


def test_every_runtime_dependency_has_a_floor():
    assert set(floors()) >= {"typer", "httpx", "trafilatura", "jsonschema", "pyyaml"}


def run(*args: str | Path, timeout: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


def index_reachable(python: Path) -> bool:
    return run(python, "-m", "pip", "index", "versions", "pip", timeout=60).returncode == 0


def test_the_suite_passes_on_every_floor(tmp_path):
    venv = tmp_path / "floors"
    made = run(sys.executable, "-m", "venv", venv, timeout=120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    pins = [f"{name}=={version}" for name, version in floors().items()]
    install = run(python, "-m", "pip", "install", "-q", *pins, *TEST_TOOLS, timeout=600)
    if install.returncode != 0:
        if not os.environ.get("CI") and not index_reachable(python):
            pytest.skip("the package index is unreachable (outside CI)")
        pytest.fail(f"the floors do not install together:\n{' '.join(pins)}\n{install.stderr[-3000:]}")
    project = run(python, "-m", "pip", "install", "-q", "--no-deps", "-e", ROOT, timeout=300)
    assert project.returncode == 0, project.stderr[-3000:]

    listed = json.loads(run(python, "-m", "pip", "list", "--format=json", timeout=60).stdout)
    installed = {canonicalize_name(item["name"]): Version(item["version"]) for item in listed}
    for name, version in floors().items():  # pip kept every pin (6 is 6.0, PyYAML is pyyaml)
        assert installed.get(canonicalize_name(name)) == Version(version), f"{name}=={version} not installed"

    tests = [ROOT / "tools" / "tests" / name for name in SUBSET]
    result = run(python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests, timeout=900)
    assert result.returncode == 0, (
        f"the suite fails on the floors ({' '.join(pins)}):\n{result.stdout[-6000:]}"
    )
