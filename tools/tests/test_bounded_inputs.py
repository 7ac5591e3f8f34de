"""Bounded inputs: every oversized or pathological input is refused within seconds under a 3 GiB memory cap,
with a one-line error and exit 2 (never a hang, a RecursionError or the kernel's OOM killer)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from research_engine import bounded
from research_engine.errors import BadInput, ExitCode

TOOLS = Path(__file__).resolve().parents[1]
MEMORY_CAP = 3 * 1024**3
CASE_TIMEOUT = 10  # seconds per case, start-up included

BILLION_LAUGHS = """objective: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
deliverable: *i
output_path: runs
"""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def capped(*args: str) -> subprocess.CompletedProcess:
    """The CLI in a real process under a 3 GiB address-space cap; a hang fails the test after seconds."""
    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    return subprocess.run(
        [sys.executable, "-m", "research_engine", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=CASE_TIMEOUT,
        preexec_fn=_cap_memory,
    )


def assert_refused(proc: subprocess.CompletedProcess, code: str) -> dict:
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["errors"][0]["code"] == code, envelope
    return envelope


@pytest.fixture
def sparse_file(tmp_path):
    """A 64 GiB file that takes no disk: a regular file larger than every cap."""
    path = tmp_path / "huge.html"
    with open(path, "wb") as fh:
        fh.truncate(64 * 1024**3)
    return path


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


# ---------------------------------------------------------------------------------- /dev/zero and kin


@pytest.mark.parametrize(
    "args",
    [
        ["extract", "/dev/zero"],
        ["brief", "check", "/dev/zero"],
        ["brief", "lock", "/dev/zero"],
        ["run", "/dev/zero"],
    ],
    ids=lambda a: " ".join(a),
)
def test_an_endless_stream_is_refused_at_its_cap(args):
    envelope = assert_refused(capped(*args, "--json"), "input-too-large")
    assert "cap" in envelope["errors"][0]["message"]


# Every command that takes a file, with an endless stream, a named pipe nobody writes to and a 64 GiB
# sparse file (the in-process sweep of test_cli_hostile.py leaves these to real, capped processes).
FILE_COMMANDS = {
    "extract": ["extract", "{file}"],
    "brief check": ["brief", "check", "{file}"],
    "brief lock": ["brief", "lock", "{file}", "--output-path", "{out}"],
    "run": ["run", "{file}", "--output-path", "{out}"],
    "select log": ["select", "log", "--run", "{run}", "--sq", "SQ-01", "--candidates", "{file}"],
    "report check": ["report", "check", "{file}", "--run", "{run}"],
    "report finish": ["report", "finish", "{file}", "--run", "{run}"],
    "robots check": ["robots", "check", "https://example.org/a", "--robots-file", "{file}"],
    "corpus serve": ["corpus", "serve", "{file}", "--port", "0"],
}
# kind -> (the exit code, the error code) per command; robots check parses a head and allows (0).
PATHOLOGICAL = {
    "endless": (ExitCode.BAD_INPUT, "input-too-large"),
    "fifo": (ExitCode.BAD_INPUT, None),
    "sparse": (ExitCode.BAD_INPUT, "input-too-large"),
}


@pytest.mark.parametrize("kind", sorted(PATHOLOGICAL))
@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_every_file_reader_refuses_a_pathological_file_within_seconds(command, kind, locked_run, tmp_path):
    from research_engine import decompose

    decompose.add(locked_run, "How many?", "factual")
    path = {"endless": Path("/dev/zero"), "fifo": tmp_path / "pipe", "sparse": tmp_path / "sparse"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(64 * 1024**3)
    values = {"file": str(path), "run": str(locked_run.root), "out": str(tmp_path / "out")}
    proc = capped(*[part.format(**values) for part in FILE_COMMANDS[command]], "--json")
    assert "Traceback" not in proc.stderr
    envelope = json.loads(proc.stdout.splitlines()[0])
    if command == "robots check":
        assert proc.returncode == 0 and envelope["data"]["allowed"] is True
        return
    expected, code = PATHOLOGICAL[kind]
    if command == "corpus serve":
        expected, code = ExitCode.BAD_INPUT, "bad-corpus"  # not a directory
    elif kind == "fifo" and command.startswith("report"):
        expected, code = ExitCode.CHECK_FAILED, None  # an empty deliverable fails its check
    assert proc.returncode == expected, proc.stdout
    if code is not None:
        assert envelope["errors"][0]["code"] == code, envelope


def test_select_log_refuses_endless_candidates(locked_run):
    from research_engine import decompose

    decompose.add(locked_run, "How many?", "factual")
    proc = capped(
        "select", "log", "--run", str(locked_run.root), "--sq", "SQ-01", "--candidates", "/dev/zero", "--json"
    )
    assert_refused(proc, "input-too-large")


def test_report_check_refuses_an_endless_deliverable(locked_run):
    proc = capped("report", "check", "/dev/zero", "--run", str(locked_run.root), "--json")
    assert_refused(proc, "input-too-large")


def test_robots_check_parses_the_first_500_kib_of_an_endless_file():
    """RFC 9309 2.5: a crawler parses at least the first 500 KiB; zeros hold no rule, so all is allowed."""
    proc = capped("robots", "check", "https://example.org/a", "--robots-file", "/dev/zero", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["data"]["allowed"] is True


@pytest.mark.parametrize("args", [["extract"], ["brief", "check"]], ids=lambda a: " ".join(a))
def test_a_huge_regular_file_is_refused_without_reading_it(sparse_file, args):
    assert_refused(capped(*args, str(sparse_file), "--json"), "input-too-large")


def test_a_fifo_without_a_writer_is_not_waited_for(fifo):
    proc = capped("brief", "check", str(fifo), "--json")
    assert (
        proc.returncode == ExitCode.BAD_INPUT
        and json.loads(proc.stdout)["errors"][0]["code"] == "empty-brief"
    )


# -------------------------------------------------------------------------------------- YAML and JSON


def test_a_yaml_alias_bomb_in_a_brief_is_refused(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS, encoding="utf-8")
    envelope = assert_refused(capped("brief", "check", str(path), "--json"), "refused-yaml")
    assert "expands beyond" in envelope["errors"][0]["message"]


def test_a_yaml_alias_bomb_in_front_matter_is_refused(tmp_path):
    path = tmp_path / "bomb.md"
    path.write_text("---\n" + BILLION_LAUGHS + "---\nbody\n", encoding="utf-8")
    assert_refused(capped("run", str(path), "--json"), "refused-yaml")


def test_deeply_nested_yaml_is_refused(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("objective: " + "[" * 20000 + "]" * 20000 + "\n", encoding="utf-8")
    envelope = assert_refused(capped("brief", "check", str(path), "--json"), "refused-yaml")
    assert "nested deeper" in envelope["errors"][0]["message"]


def test_deeply_nested_json_candidates_are_refused(locked_run, tmp_path):
    from research_engine import decompose

    decompose.add(locked_run, "How many?", "factual")
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    proc = capped(
        "select", "log", "--run", str(locked_run.root), "--sq", "SQ-01", "--candidates", str(path), "--json"
    )
    envelope = assert_refused(proc, "unreadable-candidates")
    assert "nested too deeply" in envelope["errors"][0]["message"]


def test_a_deeply_nested_run_json_is_bad_input(locked_run):
    (locked_run.root / "run.json").write_text(
        '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8"
    )
    proc = capped("claims", "list", "--run", str(locked_run.root), "--json")
    assert_refused(proc, "malformed-run-json")


def test_a_brief_with_a_repeated_key_is_refused_field_by_field(tmp_path):
    path = tmp_path / "brief.yaml"
    path.write_text(
        "objective: How many answered?\ndeliverable: memo\nobjective: Something else?\n", encoding="utf-8"
    )
    envelope = assert_refused(capped("brief", "check", str(path), "--json"), "duplicate-key")
    assert envelope["errors"][0]["field"] == "objective" and "line 3" in envelope["errors"][0]["message"]


def test_a_path_too_long_for_the_file_system_is_bad_input(tmp_path):
    long = tmp_path / ("a" * 300 + ".html")
    for args in (["extract", str(long)], ["brief", "check", str(long)]):
        assert_refused(capped(*args, "--json"), "path-too-long")


# ------------------------------------------------------------------------------------ the module itself


def test_read_bytes_refuses_one_byte_past_the_cap(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 11)
    assert bounded.read_bytes(path, "brief", cap=11) == b"x" * 11
    with pytest.raises(BadInput) as caught:
        bounded.read_bytes(path, "brief", cap=10)
    assert caught.value.code == "input-too-large" and caught.value.exit_code == 2


def test_head_bytes_reads_only_the_head():
    assert bounded.head_bytes("/dev/zero", "robots", cap=1000) == b"\0" * 1000


def test_load_yaml_keeps_ordinary_anchors_but_refuses_an_expansion_bomb():
    assert bounded.load_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}
    with pytest.raises(bounded.YamlRefused):
        bounded.load_yaml(BILLION_LAUGHS)
    with pytest.raises(bounded.YamlRefused):
        bounded.load_yaml("a: " + "[" * 100 + "]" * 100)


def test_tool_written_yaml_has_no_aliases():
    from research_engine.artifacts import dump_yaml

    shared = ["x", "y"]
    text = dump_yaml({"a": shared, "b": shared})
    assert "&" not in text and "*" not in text and yaml.safe_load(text) == {"a": shared, "b": shared}


def test_load_json_turns_deep_nesting_into_bad_input():
    with pytest.raises(BadInput) as caught:
        bounded.load_json("[" * 100_000 + "]" * 100_000)
    assert caught.value.code == "too-deep"
    with pytest.raises(BadInput):
        bounded.load_json("[" * 70 + "]" * 70)
    assert bounded.load_json('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}


def test_a_log_past_its_cap_is_refused_without_being_scanned(locked_run, tmp_path):
    """A sparse 64 GiB claims log: the id floor reads the log from its end, but never past the cap."""
    from research_engine import ids

    with open(locked_run.path("claims_log"), "wb") as fh:
        fh.truncate(64 * 1024**3)
    proc = capped("ids", "next", "clm", "--run", str(locked_run.root), "--json")
    assert_refused(proc, "input-too-large")
    with pytest.raises(BadInput):
        ids.next_id(locked_run, "clm")
