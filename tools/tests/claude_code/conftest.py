"""Fixtures of the Claude Code conformance suite: the pinned client, and a workspace per install way.

The client is installed from npm on first use (see `client.py`). Outside CI, a machine without npm or
without a reachable registry skips the suite; in CI (`CI=true`) that is a failure.
"""

from __future__ import annotations

import os

import pytest

from claude_code import client
from claude_code.workspace import Workspace, make_workspace

MODES = ("project", "plugin")


@pytest.fixture(scope="session")
def claude_binary():
    try:
        return client.install()
    except client.ClientUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"CI must run the Claude Code conformance suite, but the client is unavailable: {exc}"
            )
        pytest.skip(f"Claude Code {client.CLIENT_VERSION} is unavailable here: {exc}")


@pytest.fixture(params=MODES)
def ws(request, claude_binary, tmp_path) -> Workspace:
    """A fresh workspace for the parametrized install way."""
    return make_workspace(request.param, claude_binary, tmp_path)


@pytest.fixture
def project_ws(claude_binary, tmp_path) -> Workspace:
    return make_workspace("project", claude_binary, tmp_path)


@pytest.fixture
def plugin_ws(claude_binary, tmp_path) -> Workspace:
    return make_workspace("plugin", claude_binary, tmp_path)
