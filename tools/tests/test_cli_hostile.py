"""A hostile-input sweep of the whole CLI: bad input gets a clear error and its documented exit code.

Every leaf command of the real typer app (walked from click's tree, never a hand-kept list) is run
with a broken run directory, broken files, malformed ids, huge and odd strings, with and without
--json. Each case asserts: the exit code is THE documented code for that case (docs/conventions.md,
"Exit codes": 2 for input and usage errors, 1 for a check that fails, 3 for a URL the guard or
robots.txt refuses, 5 for a service that is not configured; never 70, never 0 for garbage); with
--json, stdout is exactly one envelope with `ok: false` and errors; no "Traceback" anywhere; and no
file of the run directory was lost or changed.

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
from core_testkit import interactive_sigint
from typer.testing import CliRunner

from research_engine.errors import ExitCode

BAD_INPUT, CHECK_FAILED, REFUSED = int(ExitCode.BAD_INPUT), int(ExitCode.CHECK_FAILED), int(ExitCode.REFUSED)
NOT_CONFIGURED = int(ExitCode.NOT_CONFIGURED)
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
    "batch": ["{file}", "--output-path", "{out}"],
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
    "select chosen": ["--run", "{run}", "--sq", "{sq}"],
    "claims add": ["{text}", "--run", "{run}", "--sq", "{sq}", "--source", "{ref}", "--quote", "{quote}"],
    "claims retire": ["{clm}", "--run", "{run}", "--why", "{text}"],
    "claims list": ["--run", "{run}"],
    "source show": ["{ref}", "--run", "{run}"],
    "claims migrate": ["--run", "{run}"],
    "claims tension add": ["--run", "{run}", "--claims", "{clm},CLM-02", "--about", "{text}"],
    "claims tension resolve": ["{tension}", "--run", "{run}", "--resolution", "{text}"],
    "verify prepare": ["--run", "{run}", "--claims", "{clm}"],
    "verify record": ["{clm}", "--run", "{run}", "--verdict", "partial", "--reason", "{text}"],
    "verify close": ["--run", "{run}"],
    "verify prose": ["S-01", "--run", "{run}", "--verdict", "partial", "--reason", "{text}", "--agent", "x"],
    "critic gap add": ["--run", "{run}", "--about", "{text}", "--query", "q", "--material", "--sq", "{sq}"],
    "critic gap close": ["{gap}", "--run", "{run}", "--why", "{text}"],
    "critic gap list": ["--run", "{run}"],
    "critic answers": ["{sq}", "--run", "{run}", "--claims", "{clm}", "--why", "{text}"],
    "report check": ["{file}", "--run", "{run}"],
    "report finish": ["{file}", "--run", "{run}"],
    "corpus serve": ["{file}", "--host", "127.0.0.1", "--port", "0"],
    "bundle plugin": ["--root", "{out}", "--check"],
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
    claims.refresh(run)  # the draft view, as `claims list` renders it
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
    # Endless streams, named pipes and sparse giants are swept in real processes under a memory cap and a
    # timeout (test_bounded_inputs.py): in this process a regression would exhaust memory or hang.
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


def assert_clean_failure(args: list[str], outcome: Outcome, json_mode: bool, expected: int) -> None:
    shown = " ".join(a if len(a) < 60 else a[:40] + "..." for a in args)
    assert "Traceback" not in outcome.out + outcome.err, f"{shown}: traceback\n{outcome.err[-2000:]}"
    assert expected in {int(c) for c in ExitCode} and expected not in (0, int(ExitCode.INTERNAL))
    assert outcome.code == expected, (
        f"{shown}: exit {outcome.code}, expected {expected} ({ExitCode(expected).name})\n"
        f"stdout: {outcome.out[-800:]}\nstderr: {outcome.err[-800:]}"
    )
    if json_mode:
        lines = [line for line in outcome.out.splitlines() if line.strip()]
        assert len(lines) == 1, f"{shown}: expected one envelope line on stdout, got {len(lines)}"
        env = json.loads(lines[0])
        assert env["ok"] is False and env["exit_code"] == outcome.code, shown
        assert env["errors"] and all(e.get("message") for e in env["errors"]), shown
    elif outcome.code != ExitCode.CHECK_FAILED:  # a failed check's report is the output (stdout)
        assert outcome.err.strip(), f"{shown}: failed without a word on stderr"
    else:
        assert (outcome.out + outcome.err).strip(), f"{shown}: failed without a word"
    if not json_mode:
        assert_said_once(shown, outcome)


def assert_said_once(shown: str, outcome: Outcome) -> None:
    """One message per failure: what an error line says is not said again, on stdout or stderr."""
    said = outcome.out + outcome.err
    for line in outcome.err.splitlines():
        if line.startswith("error: ") and len(line) > 12:
            message = line.removeprefix("error: ")
            assert said.count(message) == 1, f"{shown}: said {said.count(message)} times: {message}\n{said}"


def assert_nothing_lost(before: dict[str, str], after: dict[str, str], allowed_new=()) -> None:
    lost = sorted(set(before) - set(after))
    changed = sorted(
        k for k in before if k in after and before[k] != after[k] and not k.startswith(".state/")
    )
    new = sorted(k for k in set(after) - set(before) if not k.startswith((*ALWAYS_ALLOWED_NEW, *allowed_new)))
    assert not lost, f"files lost: {lost}"
    assert not changed, f"files changed by a failing command: {changed}"
    assert not new, f"files created by a failing command: {new}"


def run_case(
    box: Sandbox, command: str, overrides: dict[str, str], json_mode: bool, expected: int = BAD_INPUT
) -> Outcome:
    values = {**defaults(box), **overrides}
    args = build_args(command, values)
    if json_mode:
        args.append("--json")
    before = tree_digest(box.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, json_mode, expected)
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
BRIEF_READERS = ("run", "select log", "validate")
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
    # validate opens the run and reports it invalid (1); the others cannot use the brief at all (2).
    run_case(sandbox, command, overrides, True, CHECK_FAILED if command == "validate" else BAD_INPUT)


def _candidates_file(box: Sandbox) -> Path:
    path = box.root / "candidates.json"
    path.write_text(
        json.dumps([{"url": f"{LOOPBACK}/a", "title": "A", "reason": "on topic"}]), encoding="utf-8"
    )
    return path


# ------------------------------------------------------------------------------------ bad files

BAD_FILES = ("missing", "directory", "binary", "empty", "dangling-symlink", "huge-line")


# Inputs that are not garbage for one command. RFC 9309 2.3.1.3/2.2.2: a robots.txt with no
# parsable rule (empty, binary, anything) allows everything. `extract` reads a long Markdown file.
NOT_GARBAGE = {
    ("robots check", "empty"),
    ("robots check", "binary"),
    ("robots check", "huge-line"),
    ("extract", "huge-line"),
}


def _bad_file_cases():
    for command in commands_with("file"):
        for kind in BAD_FILES:
            if (command, kind) not in NOT_GARBAGE:
                yield pytest.param(command, kind, id=f"{command}-{kind}")


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("command,kind", list(_bad_file_cases()))
def test_a_bad_file_argument_is_a_clean_failure(sandbox, command, kind, json_mode):
    run_case(sandbox, command, {"file": str(sandbox.files[kind])}, json_mode, _bad_file_code(command, kind))


WRONG_SHAPES = {
    "an-object": {"url": "http://example.org/a"},
    "no-url": [{"title": "A", "reason": "on topic"}],
    "url-not-a-string": [{"url": 7, "title": "A"}],
}


@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("shape", sorted(WRONG_SHAPES))
def test_a_candidates_file_of_the_wrong_shape_is_bad_input(sandbox, shape, json_mode):
    """docs/conventions.md: an input file that fails its schema is bad input (2), as a malformed brief is."""
    path = sandbox.root / "candidates.json"
    path.write_text(json.dumps(WRONG_SHAPES[shape]), encoding="utf-8")
    outcome = run_case(sandbox, "select log", {"file": str(path)}, json_mode, BAD_INPUT)
    if json_mode:
        assert {e["code"] for e in json.loads(outcome.out)["errors"]} <= {"schema-violation", "missing-field"}


def test_a_refused_fetch_is_said_once(sandbox):
    outcome = invoke(["fetch", f"{LOOPBACK}/page"])
    assert outcome.code == REFUSED and outcome.out == ""
    assert outcome.err.count("loopback address 127.0.0.1") == 1, outcome.err


def _bad_file_code(command: str, kind: str) -> int:
    """A file that cannot be read as the command's input is bad input (2); a deliverable that reads as text
    but fails its checks (empty, citing nothing while the run has claims to cite) fails the check (1)."""
    if command in ("report check", "report finish") and kind in ("empty", "huge-line"):
        return CHECK_FAILED
    return BAD_INPUT


@pytest.mark.parametrize("kind", ["empty", "binary"])
def test_robots_check_reads_an_unparsable_robots_file_as_allow_all(sandbox, kind):
    values = {**defaults(sandbox), "file": str(sandbox.files[kind])}
    outcome = invoke([*build_args("robots check", values), "--json"])
    assert outcome.code == 0 and json.loads(outcome.out)["data"]["allowed"] is True


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


# Commands that take a comma-separated list of claims strip the whitespace around each id.
STRIPS_WHITESPACE = {"claims tension add", "verify prepare"}


def _bad_id_cases():
    for slot in ID_SLOTS:
        for command in commands_with(slot):
            for name in BAD_IDS:
                if name == "trailing-newline" and command in STRIPS_WHITESPACE:
                    continue
                yield pytest.param(command, slot, name, id=f"{command}-{slot}-{name}")


@pytest.mark.parametrize("command,slot,name", list(_bad_id_cases()))
def test_a_malformed_id_is_a_clean_failure(sandbox, command, slot, name):
    value = BAD_IDS[name].replace("{P}", ID_SLOTS[slot])
    run_case(sandbox, command, {slot: value}, True)


@pytest.mark.parametrize("name", sorted(BAD_IDS))
def test_ids_next_refuses_a_malformed_sub_question(sandbox, name):
    run_case(sandbox, "ids next", {"sq": BAD_IDS[name].replace("{P}", "SQ")}, False)


# --------------------------------------------------------------------------- odd and huge strings

ODD_TEXTS = {
    "huge": HUGE,
    "unicode": "Ünïcødé 調査 \U0001f600 \u202eRTL\u202c \u200b zero-width",
    "control-characters": "a\x00b\x07c\r\nd\x1b[31me",
    "front-matter-fence": "---\nobjective: hijacked\n---\n",
    "yaml-and-markdown": "- [x] *not* a list: {a: b} | table | <script>alert(1)</script>",
    "only-whitespace": " \t\n ",
    "lone-surrogate": "bad \udcff surrogate",
}
TEXT_SLOTS = ("text", "quote")


def _odd_text_cases():
    for slot in TEXT_SLOTS:
        for command in commands_with(slot):
            for name in ODD_TEXTS:
                yield pytest.param(command, slot, name, id=f"{command}-{slot}-{name}")


# What each command does with each odd text: 0 (accepted) or the documented failure. Text that starts with
# "-" as a positional argument is a usage error (2); an empty or undecodable text is bad input (2); a
# quote the source does not hold fails the grounding gate (1); a valid query goes out and meets the
# sandbox: no search backend (5), API bases on a loopback port without the opt-in (3).
ODD_DEFAULT = {
    "lone-surrogate": BAD_INPUT,
    "only-whitespace": BAD_INPUT,
    "front-matter-fence": 0,
    "yaml-and-markdown": 0,
    "huge": 0,
    "unicode": 0,
    "control-characters": 0,
}
POSITIONAL_DASH = {"front-matter-fence": BAD_INPUT, "yaml-and-markdown": BAD_INPUT}
QUERY = {**POSITIONAL_DASH, "huge": BAD_INPUT}  # a query over 2,000 characters is never sent
ODD_EXPECTED: dict[tuple[str, str], dict[str, int]] = {
    ("claims add", "text"): {**POSITIONAL_DASH, "control-characters": CHECK_FAILED},  # "31" is in no quote
    ("claims add", "quote"): {
        "huge": CHECK_FAILED,
        "unicode": CHECK_FAILED,
        "control-characters": CHECK_FAILED,
        "front-matter-fence": CHECK_FAILED,
        "yaml-and-markdown": CHECK_FAILED,
    },
    ("sq add", "text"): POSITIONAL_DASH,
    ("search", "text"): {**QUERY, "unicode": NOT_CONFIGURED, "control-characters": NOT_CONFIGURED},
    ("openalex search", "text"): {**QUERY, "unicode": REFUSED, "control-characters": REFUSED},
    ("worldbank indicators", "text"): {**QUERY, "unicode": REFUSED, "control-characters": REFUSED},
    ("openalex work", "text"): dict.fromkeys(ODD_TEXTS, BAD_INPUT),  # not an OpenAlex id or a DOI
    ("worldbank series", "text"): dict.fromkeys(ODD_TEXTS, BAD_INPUT),  # not an indicator code
    ("verify record", "text"): dict.fromkeys(ODD_TEXTS, BAD_INPUT),  # nothing prepared to record against
    ("verify prose", "text"): dict.fromkeys(ODD_TEXTS, BAD_INPUT),  # no prose worksheet to record against
}


def test_every_odd_text_case_has_its_expected_code():
    assert {(c, slot) for c, slot, _ in (p.values for p in _odd_text_cases())} >= set(ODD_EXPECTED)


@pytest.mark.parametrize("command,slot,name", list(_odd_text_cases()))
def test_odd_text_is_accepted_cleanly_or_refused_cleanly(sandbox, command, slot, name):
    """Odd text may be legitimate input; the command accepts it or refuses it with its documented code,
    and the run stays valid."""
    expected = {**ODD_DEFAULT, **ODD_EXPECTED.get((command, slot), {})}[name]
    values = {**defaults(sandbox), slot: ODD_TEXTS[name]}
    args = [*build_args(command, values), "--json"]
    before = tree_digest(sandbox.run)
    outcome = invoke(args)
    assert "Traceback" not in outcome.out + outcome.err
    env = json.loads(outcome.out)
    assert env["exit_code"] == outcome.code
    assert outcome.code == expected, f"{command} {slot}={name}: exit {outcome.code}, expected {expected}"
    if outcome.code == 0:
        after = tree_digest(sandbox.run)
        assert not set(before) - set(after), "an accepted command lost files"
        checked = invoke(["validate", str(sandbox.run), "--json"])
        assert checked.code == 0, json.loads(checked.out)["errors"]
    else:
        assert_clean_failure(args, outcome, True, expected)
        assert_nothing_lost(before, tree_digest(sandbox.run))


# ----------------------------------------------------------------------- usage errors under --json


@pytest.mark.parametrize("command", sorted(TEMPLATES))
def test_a_bare_command_with_json_prints_one_failure_envelope(sandbox, command):
    """No arguments at all: a usage error (or a missing-input error) still keeps the --json contract."""
    outcome = invoke([*command.split(), "--json"])
    assert_clean_failure([command, "--json"], outcome, True, BAD_INPUT)
    assert json.loads(outcome.out)["command"] == command


# --------------------------------------------------------------------------- bad URLs and options

BAD_URLS = {
    "empty": "",
    "not-a-url": "not a url",
    "no-host": "http://",
    "bad-ipv6": "http://[::1",
    "bad-port": "http://127.0.0.1:99999/",
    "javascript": "javascript:alert(1)",
    "file": "file:///etc/passwd",
    "huge": "http://127.0.0.1/" + "a" * 100_000,
    "credentials-loopback": "http://user:pass@127.0.0.1:9/",
    "unicode-loopback": "http://127.0.0.1:9/\u8abf\u67fb?q=\u00fc",
}
URL_COMMANDS = ("url check", "fetch", "robots check")
# url check and fetch: every one is a URL the SSRF guard refuses (3), malformed ones included (the guard
# judges URLs). robots check reads no network: a text that is not an http(s) URL with a host is bad input
# (2); the rest meets the test's `Disallow: /` (3).
NOT_HTTP_WITH_HOST = {"empty", "not-a-url", "no-host", "bad-ipv6", "javascript", "file"}


@pytest.mark.parametrize("name", sorted(BAD_URLS))
@pytest.mark.parametrize("command", URL_COMMANDS)
def test_a_bad_or_loopback_url_is_refused_cleanly(sandbox, command, name):
    overrides = {"url": BAD_URLS[name]}
    if command == "robots check":  # a robots file that disallows everything
        path = sandbox.root / "robots.txt"
        path.write_text("User-agent: *\nDisallow: /\n", encoding="utf-8")
        overrides["file"] = str(path)
    expected = BAD_INPUT if command == "robots check" and name in NOT_HTTP_WITH_HOST else REFUSED
    run_case(sandbox, command, overrides, True, expected)


# url canonical normalizes what it is given (credentials are dropped from the key, any host text is kept);
# what it cannot normalize (no host, a broken IPv6 literal or port, another scheme) is bad input.
CANONICAL_REFUSED = {"empty", "no-host", "bad-ipv6", "bad-port", "javascript", "file"}


@pytest.mark.parametrize("name", sorted(BAD_URLS))
def test_url_canonical_never_crashes(sandbox, name):
    outcome = invoke(["url", "canonical", BAD_URLS[name], "--json"])
    assert "Traceback" not in outcome.out + outcome.err
    assert outcome.code == (BAD_INPUT if name in CANONICAL_REFUSED else 0)
    assert json.loads(outcome.out)["exit_code"] == outcome.code


BAD_OPTIONS = [
    ("search", ["--limit", "-5"]),
    ("search", ["--limit", "0"]),
    ("search", ["--limit", "100000"]),
    ("search", ["--limit", "abc"]),
    ("search", ["--backend", "bogus"]),
    ("openalex search", ["--limit", "-1"]),
    ("openalex search", ["--year-from", "99999999999999999999"]),
    ("worldbank series", ["--mrv", "-1"]),
    ("worldbank series", ["--date", "not-a-date"]),
    ("worldbank indicators", ["--limit", "-3"]),
    ("select log", ["--as-of", "yesterday"]),
    ("sq add", ["--angle", "bogus"]),
    ("claims list", ["--status", "bogus"]),
    ("verify record", ["--verdict", "bogus"]),
    ("verify prose", ["--verdict", "bogus"]),
    ("corpus serve", ["--port", "99999"]),
    ("corpus serve", ["--port", "-1"]),
    ("corpus serve", ["--host", "256.1.1.1"]),
    ("run", ["--model", "bogus"]),
    ("run", ["--depth", "bogus"]),
    ("run", ["--max-model-tokens", "-5"]),
    ("ids next", ["--json", "--run"]),  # an option without its value (after --json, or --json is the value)
]


@pytest.mark.parametrize("command,extra", BAD_OPTIONS, ids=[f"{c}-{' '.join(e)}" for c, e in BAD_OPTIONS])
def test_a_bad_option_value_is_a_clean_failure(sandbox, command, extra):
    overrides = {}
    if command == "select log":
        overrides["file"] = str(_candidates_file(sandbox))
    if command == "run":
        path = sandbox.root / "brief.yaml"
        path.write_text("objective: How many answered?\ndeliverable: memo\n", encoding="utf-8")
        overrides["file"] = str(path)
    if command == "corpus serve":
        overrides["file"] = str(sandbox.files["directory"])
    values = {**defaults(sandbox), **overrides}
    args = [*build_args(command, values), *extra, "--json"]
    before = tree_digest(sandbox.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)  # every bad option value is a usage error
    assert_nothing_lost(before, tree_digest(sandbox.run))


# ------------------------------------------------------------------------- real processes (a sample)


def _process(args: list[str | bytes], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    return subprocess.run(
        [sys.executable, "-m", "research_engine", *args], capture_output=True, env=env, timeout=60, **kw
    )


def test_real_processes_fail_cleanly_on_hostile_input(sandbox):
    """A sample of the sweep in real processes: argv bytes, exit status and streams as a shell has them."""
    run = str(sandbox.run)
    _truncated_run_json(sandbox)
    cases = [
        ["claims", "list", "--run", run, "--json"],
        ["validate", str(sandbox.root / "no-such-run"), "--json"],
        ["extract", str(sandbox.files["binary"]), "--json"],
        ["ids", "next", "src", "--run", run, "--sq", "SQ-\u0660\u0661", "--json"],
        ["claims", "add", "--json"],  # a usage error
        ["sq", "add", b"not utf-8 \xff", "--run", run, "--type", "factual", "--json"],
        ["url", "canonical", "http://[::1", "--json"],
    ]
    before = tree_digest(sandbox.run)
    for args in cases:
        proc = _process(args)
        out, err = proc.stdout.decode(), proc.stderr.decode("utf-8", "replace")
        shown = [a if isinstance(a, str) else repr(a) for a in args]
        assert_clean_failure(shown, Outcome(proc.returncode, out, err), True, BAD_INPUT)
    assert_nothing_lost(before, tree_digest(sandbox.run))


def test_invalid_utf8_argument_is_bad_input_in_text_mode_too(sandbox):
    proc = _process(["sq", "add", b"\xff\xfe", "--run", str(sandbox.run), "--type", "factual"])
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == ExitCode.BAD_INPUT and "not valid UTF-8" in err and "Traceback" not in err


# ------------------------------------------------------------------- -v, logs on stderr, Ctrl-C


def _break_claims_load(monkeypatch):
    from research_engine import claims

    def broken(run):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(claims, "load", broken)


def test_an_internal_error_is_one_line_without_v(sandbox, monkeypatch):
    _break_claims_load(monkeypatch)
    outcome = invoke(["claims", "list", "--run", str(sandbox.run)])
    assert outcome.code == ExitCode.INTERNAL
    assert "Traceback" not in outcome.out + outcome.err
    assert "internal error: RuntimeError: simulated bug" in outcome.err and "-v" in outcome.err


def test_v_shows_the_traceback_of_an_internal_error_on_stderr_only(sandbox, monkeypatch):
    _break_claims_load(monkeypatch)
    outcome = invoke(["-v", "claims", "list", "--run", str(sandbox.run), "--json"])
    assert outcome.code == ExitCode.INTERNAL
    assert "Traceback" in outcome.err and "simulated bug" in outcome.err
    envelope = json.loads(outcome.out)  # stdout is still exactly the envelope
    assert envelope["errors"][0]["code"] == "internal"


def test_v_shows_no_traceback_for_an_explained_failure(sandbox):
    outcome = invoke(["-vv", "claims", "list", "--run", str(sandbox.root / "no-such-run")])
    assert outcome.code == ExitCode.BAD_INPUT and "Traceback" not in outcome.out + outcome.err


def _polling_for_the_lock(pid: int) -> bool:
    """The process sleeps between lock attempts (filelock polls); nothing else sleeps before the lock."""
    try:
        return "nanosleep" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs /proc to see the waiting process")
@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "text"])
def test_ctrl_c_while_waiting_for_the_run_lock_exits_130_cleanly(sandbox, json_mode):
    """A command blocked on the run lock (another process holds it) is interrupted with SIGINT."""
    from filelock import FileLock

    lock_path = (sandbox.run / ".lock").resolve()
    before = tree_digest(sandbox.run)
    args = ["ids", "next", "clm", "--run", str(sandbox.run)] + (["--json"] if json_mode else [])
    with FileLock(str(lock_path)):
        env = {**os.environ, "PYTHONPATH": str(TOOLS)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "research_engine", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=interactive_sigint,
        )
        deadline = time.monotonic() + 30
        seen = 0  # a sleep seen three times 0.1 s apart is the lock's poll loop, not a sleep during start-up
        while seen < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the command never reached the run lock"
            seen = seen + 1 if _polling_for_the_lock(proc.pid) else 0
            time.sleep(0.1 if seen else 0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    out_text, err_text = out.decode(), err.decode()
    assert proc.returncode == ExitCode.INTERRUPTED == 130
    assert "Traceback" not in out_text + err_text
    if json_mode:
        envelope = json.loads(out_text)
        assert envelope["ok"] is False and envelope["errors"][0]["code"] == "interrupted"
    else:
        assert out_text == "" and "interrupted" in err_text
    after = tree_digest(sandbox.run)
    assert not set(before) - set(after) and after.get(".state/ids.json") == before.get(".state/ids.json")


# ------------------------------------------------------------------ `run` with --resume and --replay


@pytest.mark.parametrize("breakage", sorted(BROKEN_RUNS) + sorted(BROKEN_BRIEFS))
def test_run_resume_of_a_broken_run_is_a_clean_failure(sandbox, breakage):
    broken = {**BROKEN_RUNS, **BROKEN_BRIEFS}[breakage](sandbox)
    args = ["run", "--resume", str(broken), "--json"]
    before = tree_digest(sandbox.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)
    assert_nothing_lost(before, tree_digest(sandbox.run))


@pytest.mark.parametrize("kind", ["missing", "empty", "binary", "directory"])
def test_run_replay_from_a_bad_cassette_is_a_clean_failure(sandbox, kind):
    brief_path = sandbox.root / "brief.yaml"
    brief_path.write_text("objective: How many answered?\ndeliverable: memo\n", encoding="utf-8")
    cassette = sandbox.files[kind]
    out = str(sandbox.root / "out")
    args = ["run", str(brief_path), "--replay", str(cassette), "--output-path", out, "--json"]
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)


# ------------------------------------------------------------- output paths that would clobber data


@pytest.mark.parametrize(
    "target", ["run.json", "brief.md", "consolidate/synthesis.draft.md", "a-directory", "."]
)
def test_view_never_writes_over_an_artifact_or_a_directory(sandbox, target):
    output = sandbox.files["directory"] if target == "a-directory" else sandbox.run / target
    args = ["view", str(sandbox.run), "--output", str(output), "--json"]
    before = tree_digest(sandbox.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)
    assert_nothing_lost(before, tree_digest(sandbox.run))


def test_view_still_writes_its_page_outside_the_run(sandbox):
    output = sandbox.root / "out" / "page.html"
    outcome = invoke(["view", str(sandbox.run), "--output", str(output), "--json"])
    assert outcome.code == 0
    assert output.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


@pytest.mark.parametrize("target", ["a-file", "inside-the-run-json"])
def test_brief_lock_into_a_file_is_a_clean_failure(sandbox, target):
    brief_path = sandbox.root / "brief.yaml"
    brief_path.write_text("objective: How many answered?\ndeliverable: memo\n", encoding="utf-8")
    output = sandbox.files["binary"] if target == "a-file" else sandbox.run / "run.json"
    args = ["brief", "lock", str(brief_path), "--output-path", str(output), "--json"]
    before = tree_digest(sandbox.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)
    assert_nothing_lost(before, tree_digest(sandbox.run))


@pytest.mark.parametrize("target", ["the-run-itself", "a-file"])
def test_replay_keep_never_clobbers(sandbox, target):
    keep = sandbox.run if target == "the-run-itself" else sandbox.files["binary"]
    args = ["replay", str(sandbox.run), "--keep", str(keep), "--json"]
    before = tree_digest(sandbox.run)
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)
    assert_nothing_lost(before, tree_digest(sandbox.run))


# ------------------------------------------------------------- a machine that refuses to store a write

STORAGE_FAILED = int(ExitCode.STORAGE_FAILED)
# Commands that write into the run on a well-formed call (the defaults above).
WRITERS = ("sq add", "claims add", "claims retire", "claims tension add", "critic gap add", "ids next")


@pytest.mark.parametrize("refused", ["ENOSPC", "EDQUOT", "EMFILE"])
@pytest.mark.parametrize("command", WRITERS)
def test_a_write_the_machine_refuses_is_74_naming_the_path_and_loses_nothing(
    sandbox, monkeypatch, command, refused
):
    import errno

    number = getattr(errno, refused)

    def refuse(fd):
        raise OSError(number, os.strerror(number))

    args = [*build_args(command, defaults(sandbox)), "--json"]
    before = tree_digest(sandbox.run)
    monkeypatch.setattr(os, "fsync", refuse)  # the write reached the file system, which refused to keep it
    outcome = invoke(args)
    monkeypatch.undo()
    assert_clean_failure(args, outcome, True, STORAGE_FAILED)
    message = json.loads(outcome.out)["errors"][0]["message"]
    assert str(sandbox.run) in message and "run the same command again" in message
    assert_nothing_lost(before, tree_digest(sandbox.run))


def test_run_replay_from_an_altered_cassette_is_a_clean_failure(sandbox):
    examples = Path(__file__).resolve().parents[2] / "examples"
    recorded = next(p for p in sorted(examples.iterdir()) if (p / "cassette" / "index.json").is_file())
    cassette = sandbox.root / "cassette"
    shutil.copytree(recorded / "cassette", cassette)
    body = sorted((cassette / "bodies").iterdir())[0]
    body.write_bytes(body.read_bytes().replace(b"<", b"[", 1))
    out = sandbox.root / "out"
    args = ["run", str(recorded / "brief.md"), "--replay", str(cassette), "--output-path", str(out), "--json"]
    outcome = invoke(args)
    assert_clean_failure(args, outcome, True, BAD_INPUT)
    assert json.loads(outcome.out)["errors"][0]["code"] == "digest-mismatch" and not any(out.iterdir())
