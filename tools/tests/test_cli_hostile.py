"""A hostile-input sweep of the whole CLI: bad input gets a clear error and a documented non-zero exit.

Every leaf command of the real typer app (walked from click's tree, never a hand-kept list) is run
with a broken run directory, broken files, malformed ids, huge and odd strings, with and without
--json. Each case asserts: the exit code is one of the documented failures (1-7; never 70, never 0
for garbage); with --json, stdout is exactly one envelope with `ok: false` and errors; no
"Traceback" anywhere; and no file of the run directory was lost or changed.

Nothing here reaches past 127.0.0.1: sources and API bases point at a closed loopback port and no
case opts in to private addresses, so the SSRF guard refuses before any packet is sent.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_engine.errors import ExitCode

DOCUMENTED_FAILURES = {int(c) for c in ExitCode if 1 <= int(c) <= 7}
LOOPBACK = "http://127.0.0.1:9"  # discard port; never contacted: no case opts in to private addresses
HUGE = "x" * 100_000
TOOLS = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ the command table

# Each leaf command's argument template. Placeholders are filled from a Case: {run} the run
# directory, {sq} {ref} {clm} {tension} {gap} {kind} ids, {text} free text, {file} a file argument,
# {url} a URL, {out} a scratch directory outside the run. The default values make a well-formed
# call; one hostile value replaces one placeholder.
TEMPLATES: dict[str, list[str]] = {
    "extract": ["{file}"],
    "fetch": ["{url}", "--run", "{run}", "--sq", "{sq}"],
    "search": ["{text}", "--run", "{run}", "--sq", "{sq}"],
    "control": ["--run", "{run}"],
    "validate": ["{run}"],
    "run": ["{file}", "--output-path", "{out}"],
    "replay": ["{run}", "--keep", "{out}"],
    "view": ["{run}"],
    "brief check": ["{file}"],
    "brief lock": ["{file}", "--output-path", "{out}"],
    "ids next": ["{kind}", "--run", "{run}", "--sq", "{sq}"],
    "url check": ["{url}", "--no-resolve"],
    "url canonical": ["{url}"],
    "robots check": ["{url}", "--robots-file", "{file}"],
    "sq add": ["{text}", "--run", "{run}", "--type", "factual"],
    "sq list": ["--run", "{run}"],
    "openalex search": ["{text}", "--run", "{run}", "--sq", "{sq}"],
    "openalex work": ["{text}", "--run", "{run}", "--sq", "{sq}"],
    "worldbank series": ["JPN", "{text}", "--run", "{run}", "--sq", "{sq}"],
    "worldbank indicators": ["{text}", "--refresh", "--run", "{run}", "--sq", "{sq}"],
    "select log": ["--run", "{run}", "--sq", "{sq}", "--candidates", "{file}"],
    "claims add": ["{text}", "--run", "{run}", "--sq", "{sq}", "--source", "{ref}", "--quote", "{quote}"],
    "claims retire": ["{clm}", "--run", "{run}", "--why", "{text}"],
    "claims list": ["--run", "{run}"],
    "claims tension add": ["--run", "{run}", "--claims", "{clm},CLM-02", "--about", "{text}"],
    "claims tension resolve": ["{tension}", "--run", "{run}", "--resolution", "{text}"],
    "verify prepare": ["--run", "{run}", "--claims", "{clm}"],
    "verify record": ["{clm}", "--run", "{run}", "--verdict", "partial", "--reason", "{text}"],
    "verify close": ["--run", "{run}"],
    "critic gap add": ["--run", "{run}", "--about", "{text}", "--query", "q", "--material", "--sq", "{sq}"],
    "critic gap close": ["{gap}", "--run", "{run}", "--why", "{text}"],
    "critic gap list": ["--run", "{run}"],
    "report check": ["{file}", "--run", "{run}"],
    "report finish": ["{file}", "--run", "{run}"],
    "corpus serve": ["{file}", "--host", "127.0.0.1", "--port", "0"],
}

# Files a command may legitimately add to a run directory even when it fails (bookkeeping), and
# files some commands write on success.
ALWAYS_ALLOWED_NEW = (".lock", ".state/")
WRITES_ON_SUCCESS = {"view": ("view.html",)}

CLAIM_TEXT = "The survey counted 42 respondents in the sample."
SOURCE_TEXT = "Background paragraph.\n\nThe survey counted 42 respondents in the sample.\n\nClosing words."


def leaf_commands() -> list[str]:
    import typer

    from research_engine.cli import app

    found: list[str] = []

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if isinstance(subs, dict):
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            found.append(" ".join(path))

    walk(typer.main.get_command(app), [])
    return sorted(found)


def test_every_leaf_command_is_in_the_sweep():
    assert set(leaf_commands()) == set(TEMPLATES), "add the new command to TEMPLATES (and its hostile cases)"


# --------------------------------------------------------------------------------- the run fixture


@pytest.fixture(scope="module")
def template_run(tmp_path_factory) -> Path:
    """A run with SQ-01, SQ-01/SRC-01 (a loopback URL), CLM-01, CLM-02, T-01 and G-01."""
    import yaml

    from research_engine import brief, claims, critic, trace
    from research_engine.cli._common import setup_logging

    setup_logging(0, False)
    base = tmp_path_factory.mktemp("template")
    brief_path = base / "brief.yaml"
    brief_path.write_text(
        yaml.safe_dump(
            {
                "objective": "How many people answered the survey?",
                "deliverable": "a cited memo",
                "output_path": str(base / "runs"),
            }
        ),
        encoding="utf-8",
    )
    run = trace.open_run(brief.lock(brief_path).run_root)
    sys.path.insert(0, str(Path(__file__).parent))
    from helpers_core import add_source, add_sq

    sq = add_sq(run, "How many people answered the survey?")
    ref = add_source(run, sq, SOURCE_TEXT, url=f"{LOOPBACK}/survey")
    quote = "The survey counted 42 respondents in the sample."
    claims.add_claim(run, sq, CLAIM_TEXT, [ref], [quote], "medium")
    claims.add_claim(run, sq, "The survey was a sample.", [ref], [quote], "low")
    claims.add_tension(run, ["CLM-01", "CLM-02"], "whether it was a sample")
    critic.add(run, "regional split", "survey regional split", severity="material", sq=sq)
    return run.root


@dataclass
class Sandbox:
    root: Path  # a scratch directory for this case
    run: Path  # a copy of the template run
    files: dict[str, Path]


@pytest.fixture
def sandbox(template_run, tmp_path, monkeypatch) -> Sandbox:
    run = tmp_path / "run" / template_run.name
    shutil.copytree(template_run, run)
    # API bases on a closed loopback port; without the private opt-in the guard refuses them.
    for var in (
        "RESEARCH_ENGINE_OPENALEX_URL",
        "RESEARCH_ENGINE_WORLDBANK_URL",
        "RESEARCH_ENGINE_BRAVE_URL",
        "RESEARCH_ENGINE_TAVILY_URL",
        "RESEARCH_ENGINE_DUCKDUCKGO_URL",
    ):
        monkeypatch.setenv(var, LOOPBACK)
    files = {}
    files["missing"] = tmp_path / "no-such-file.md"
    files["directory"] = tmp_path / "a-directory"
    files["directory"].mkdir()
    files["binary"] = tmp_path / "binary.md"
    files["binary"].write_bytes(bytes(range(256)) * 64 + b"\xff\xfe\x00\x00garbage")
    files["empty"] = tmp_path / "empty.md"
    files["empty"].write_bytes(b"")
    files["dangling-symlink"] = tmp_path / "dangling.md"
    files["dangling-symlink"].symlink_to(tmp_path / "nowhere")
    files["huge-line"] = tmp_path / "huge.md"
    files["huge-line"].write_text("---\n" + "a: " + "[" * 5000 + "\n---\n" + HUGE, encoding="utf-8")
    (tmp_path / "out").mkdir()
    return Sandbox(tmp_path, run, files)


def defaults(box: Sandbox) -> dict[str, str]:
    return {
        "run": str(box.run),
        "sq": "SQ-01",
        "ref": "SQ-01/SRC-01",
        "quote": "The survey counted 42 respondents in the sample.",
        "clm": "CLM-01",
        "tension": "T-01",
        "gap": "G-01",
        "kind": "src",
        "text": "survey respondents",
        "file": str(box.files["empty"]),
        "url": f"{LOOPBACK}/page",
        "out": str(box.root / "out"),
    }


def build_args(command: str, values: dict[str, str]) -> list[str]:
    return [*command.split(), *(part.format(**values) for part in TEMPLATES[command])]


# ------------------------------------------------------------------------------ running and checks


def tree_digest(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@dataclass
class Outcome:
    code: int
    out: str
    err: str


def invoke(args: list[str]) -> Outcome:
    from research_engine.cli import app

    result = CliRunner().invoke(app, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args[:3]}: escaped the CLI: {result.exception!r}") from result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def assert_clean_failure(args: list[str], outcome: Outcome, json_mode: bool) -> None:
    shown = " ".join(a if len(a) < 60 else a[:40] + "..." for a in args)
    assert "Traceback" not in outcome.out + outcome.err, f"{shown}: traceback\n{outcome.err[-2000:]}"
    assert outcome.code in DOCUMENTED_FAILURES, (
        f"{shown}: exit {outcome.code}, expected one of 1-7\nstdout: {outcome.out[-800:]}\n"
        f"stderr: {outcome.err[-800:]}"
    )
    if json_mode:
        lines = [line for line in outcome.out.splitlines() if line.strip()]
        assert len(lines) == 1, f"{shown}: expected one envelope line on stdout, got {len(lines)}"
        env = json.loads(lines[0])
        assert env["ok"] is False and env["exit_code"] == outcome.code, shown
        assert env["errors"] and all(e.get("message") for e in env["errors"]), shown
    else:
        assert outcome.err.strip(), f"{shown}: failed without a word on stderr"


def assert_nothing_lost(before: dict[str, str], after: dict[str, str], allowed_new=()) -> None:
    lost = sorted(set(before) - set(after))
    changed = sorted(k for k in before if k in after and before[k] != after[k] and not k.startswith(".state/"))
    new = sorted(
        k for k in set(after) - set(before) if not k.startswith((*ALWAYS_ALLOWED_NEW, *allowed_new))
    )
    assert not lost, f"files lost: {lost}"
    assert not changed, f"files changed by a failing command: {changed}"
    assert not new, f"files created by a failing command: {new}"


def run_case(box: Sandbox, command: str, overrides: dict[str, str], json_mode: bool) -> Outcome:
    values = {**defaults(box), **overrides}
    args = build_args(command, values)
    if json_mode:
        args.append("--json")
    before = tree_digest(box.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, json_mode)
    assert_nothing_lost(before, tree_digest(box.run))
    return outcome


def commands_with(placeholder: str) -> list[str]:
    return sorted(c for c, parts in TEMPLATES.items() if any("{" + placeholder + "}" in p for p in parts))


# ------------------------------------------------------------------------------- broken run dirs


def _missing(box: Sandbox) -> Path:
    return box.root / "no-such-run"


def _not_a_run(box: Sandbox) -> Path:
    return box.files["directory"]


def _a_file(box: Sandbox) -> Path:
    return box.run / "run.json"


def _truncated_run_json(box: Sandbox) -> Path:
    path = box.run / "run.json"
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    return box.run


def _run_json_not_an_object(box: Sandbox) -> Path:
    (box.run / "run.json").write_text("[1, 2, 3]\n", encoding="utf-8")
    return box.run


def _run_json_binary(box: Sandbox) -> Path:
    (box.run / "run.json").write_bytes(b"\xff\xfe\x00garbage")
    return box.run


def _garbage_brief(box: Sandbox) -> Path:
    (box.run / "brief.md").write_text("---\n: [unclosed\n\tobjective: {\n---\nbody\n", encoding="utf-8")
    return box.run


def _brief_front_matter_a_list(box: Sandbox) -> Path:
    (box.run / "brief.md").write_text("---\n- a\n- b\n---\nbody\n", encoding="utf-8")
    return box.run


BROKEN_RUNS: dict[str, Callable[[Sandbox], Path]] = {
    "missing": _missing,
    "not-a-run": _not_a_run,
    "a-file": _a_file,
    "truncated-run-json": _truncated_run_json,
    "run-json-not-an-object": _run_json_not_an_object,
    "run-json-binary": _run_json_binary,
}
# A garbage brief.md only matters to the commands that read the brief.
BRIEF_READERS = ("control", "run", "replay", "verify close", "report finish", "select log", "validate")
BROKEN_BRIEFS: dict[str, Callable[[Sandbox], Path]] = {
    "garbage-brief": _garbage_brief,
    "brief-front-matter-a-list": _brief_front_matter_a_list,
}


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("breakage", sorted(BROKEN_RUNS))
@pytest.mark.parametrize("command", commands_with("run"))
def test_a_broken_run_directory_is_a_clean_failure(sandbox, command, breakage, json_mode):
    run = BROKEN_RUNS[breakage](sandbox)
    overrides = {"run": str(run)}
    if command == "select log":
        overrides["file"] = str(_candidates_file(sandbox))
    run_case(sandbox, command, overrides, json_mode)


@pytest.mark.parametrize("breakage", sorted(BROKEN_BRIEFS))
@pytest.mark.parametrize("command", BRIEF_READERS)
def test_a_garbage_brief_is_a_clean_failure_for_its_readers(sandbox, command, breakage):
    run = BROKEN_BRIEFS[breakage](sandbox)
    overrides = {"run": str(run)}
    if command == "select log":
        overrides["file"] = str(_candidates_file(sandbox))
    if command == "run":  # `run` reads a brief file: hand it the broken brief.md itself
        overrides["file"] = str(run / "brief.md")
    run_case(sandbox, command, overrides, True)


def _candidates_file(box: Sandbox) -> Path:
    path = box.root / "candidates.json"
    path.write_text(
        json.dumps([{"url": f"{LOOPBACK}/a", "title": "A", "reason": "on topic"}]), encoding="utf-8"
    )
    return path


# ------------------------------------------------------------------------------------ bad files

BAD_FILES = ("missing", "directory", "binary", "empty", "dangling-symlink", "huge-line")


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("kind", BAD_FILES)
@pytest.mark.parametrize("command", commands_with("file"))
def test_a_bad_file_argument_is_a_clean_failure(sandbox, command, kind, json_mode):
    run_case(sandbox, command, {"file": str(sandbox.files[kind])}, json_mode)


# -------------------------------------------------------------------------------------- bad ids

BAD_IDS = {
    "short": "{P}-1",
    "letters": "{P}-x",
    "traversal": "../{P}-01",
    "trailing-newline": "{P}-01\n",
    "arabic-digits": "{P}-\u0660\u0661",
    "fullwidth-digits": "{P}-\uff10\uff11",
    "too-long-for-a-file-name": "{P}-" + "9" * 400,
    "too-long-for-an-int": "{P}-" + "1" * 5000,
    "empty": "",
    "nul": "{P}-0\x001",
}
ID_SLOTS = {"sq": "SQ", "clm": "CLM", "tension": "T", "gap": "G", "ref": "SQ-01/SRC"}


def _bad_id_cases():
    for slot, prefix in ID_SLOTS.items():
        for command in commands_with(slot):
            for name in BAD_IDS:
                yield pytest.param(command, slot, name, id=f"{command}-{slot}-{name}")


@pytest.mark.parametrize("command,slot,name", list(_bad_id_cases()))
def test_a_malformed_id_is_a_clean_failure(sandbox, command, slot, name):
    value = BAD_IDS[name].replace("{P}", ID_SLOTS[slot])
    run_case(sandbox, command, {slot: value}, True)


@pytest.mark.parametrize("name", sorted(BAD_IDS))
def test_ids_next_refuses_a_malformed_sub_question(sandbox, name):
    run_case(sandbox, "ids next", {"sq": BAD_IDS[name].replace("{P}", "SQ")}, False)
