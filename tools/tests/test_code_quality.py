"""The tree stays lint-clean, formatted and type-checked: ruff and mypy run here exactly as CI would.

Both read their settings from pyproject.toml ([tool.ruff], [tool.mypy]); these tests only run them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINTED = ["tools", "bench"]


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )


def findings(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n{result.stdout}\n{result.stderr}".strip()


def test_ruff_finds_no_lint_and_nothing_to_reformat():
    lint = run_tool("ruff", "check", "--no-cache", *LINTED)
    assert lint.returncode == 0, "ruff check found problems:\n" + findings(lint)
    form = run_tool("ruff", "format", "--check", "--no-cache", *LINTED)
    assert form.returncode == 0, "ruff format would change these files:\n" + findings(form)


def test_mypy_finds_no_type_errors(tmp_path):
    # A fresh cache outside the tree: the result never depends on an earlier run's leftovers.
    result = run_tool("mypy", "--config-file", "pyproject.toml", "--cache-dir", str(tmp_path / "mypy"))
    assert result.returncode == 0, "mypy found type errors:\n" + findings(result)
    assert "Success: no issues found" in result.stdout


def test_the_layer_contracts_hold():
    """`lint-imports` checks the import-linter contracts in pyproject.toml (docs/architecture.md's layers)."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, "lint-imports found a broken contract:\n" + findings(result)
    assert "0 broken" in result.stdout
