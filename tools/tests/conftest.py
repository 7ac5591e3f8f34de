"""Shared fixtures: isolated environment, the ../shared test material, locked runs, the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED = PROJECT_ROOT.parent / "shared"

# Variables that would let a test reach a real service or read user state.
_ISOLATED_VARS = (
    "SEARXNG_URL",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "OPENALEX_API_KEY",
    "RESEARCH_ENGINE_MAILTO",
    "RESEARCH_ENGINE_ALLOW_DDG",
    "RESEARCH_ENGINE_ALLOW_PRIVATE",
    "RESEARCH_ENGINE_SEARCH_ORDER",
    "RESEARCH_ENGINE_OPENALEX_URL",
    "RESEARCH_ENGINE_WORLDBANK_URL",
    "RESEARCH_ENGINE_BRAVE_URL",
    "RESEARCH_ENGINE_TAVILY_URL",
    "RESEARCH_ENGINE_DUCKDUCKGO_URL",
    "RESEARCH_ENGINE_ARXIV_URL",
    "RESEARCH_ENGINE_ARXIV_WEB_URL",
    "RESEARCH_ENGINE_CROSSREF_URL",
    "RESEARCH_ENGINE_EUROPEPMC_URL",
    "RESEARCH_ENGINE_WIKIPEDIA_URL",
    "RESEARCH_ENGINE_MODEL_BASE_URL",
    "RESEARCH_ENGINE_MODEL",
    "RESEARCH_ENGINE_MODEL_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


_API_BASE_VARS = (
    "RESEARCH_ENGINE_OPENALEX_URL",
    "RESEARCH_ENGINE_WORLDBANK_URL",
    "RESEARCH_ENGINE_BRAVE_URL",
    "RESEARCH_ENGINE_TAVILY_URL",
    "RESEARCH_ENGINE_DUCKDUCKGO_URL",
    "RESEARCH_ENGINE_ARXIV_URL",
    "RESEARCH_ENGINE_ARXIV_WEB_URL",
    "RESEARCH_ENGINE_CROSSREF_URL",
    "RESEARCH_ENGINE_EUROPEPMC_URL",
    "RESEARCH_ENGINE_WIKIPEDIA_URL",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """No test sees the developer's services, keys or caches."""
    for name in _ISOLATED_VARS:
        monkeypatch.delenv(name, raising=False)
    # Public APIs default to the internet; point them at the unspecified address instead, which the SSRF guard
    # refuses whatever the opt-ins (so a run that allows loopback for its corpus does not wait on retries to a
    # closed port). Tests that serve recorded responses override these.
    for name in _API_BASE_VARS:
        monkeypatch.setenv(name, "http://0.0.0.0:9")
    monkeypatch.setenv("RESEARCH_ENGINE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield


def shared_path(*parts: str) -> Path:
    """A path under ../shared; skips outside CI when absent, fails in CI."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have ../shared beside the clone, but {path} is missing")
        pytest.skip(f"{path} is absent (../shared is not beside this clone)")
    return path


@pytest.fixture
def shared():
    return shared_path


@pytest.fixture
def brief_file(tmp_path):
    def make(**fields) -> Path:
        data = {
            "objective": "How do Python threads, processes and asyncio compare for concurrent work?",
            "deliverable": "a cited memo",
            "output_path": str(tmp_path / "runs"),
        }
        data.update(fields)
        data = {k: v for k, v in data.items() if v is not None}
        path = tmp_path / "brief.yaml"
        import yaml

        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        return path

    return make


@pytest.fixture
def locked_run(brief_file):
    """A freshly locked run (a trace.Run)."""
    from research_engine import brief, trace

    locked = brief.lock(brief_file())
    return trace.open_run(locked.run_root)


@pytest.fixture
def cli():
    """Invoke the CLI in-process: cli(args...) -> (exit_code, stdout, stderr, envelope-or-None)."""
    from typer.testing import CliRunner

    from research_engine.cli import app

    runner = CliRunner()

    def invoke(*args: str):
        result = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
        out = result.stdout
        env = None
        if "--json" in args:
            env = json.loads(out.strip().splitlines()[-1])
        return result.exit_code, out, result.stderr, env

    return invoke
