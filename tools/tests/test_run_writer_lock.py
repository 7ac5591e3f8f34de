"""A run has one writer: the writer lock (`trace.acquire_writer`), held by `run` and `run --resume` for the
whole drive, refuses a second writer with exit 75 (run busy), and a dead holder leaves no stale lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from engine_web import BRIEF, CountingCorpusServer, write_mini_web

from research_engine import trace, validate
from research_engine.errors import ExitCode, RunBusy

TOOLS = Path(__file__).resolve().parents[1]


def _holder(run_root: Path) -> subprocess.Popen:
    """Another process that takes the run's writer lock and keeps it until killed."""
    code = (
        "import sys, time\n"
        "from research_engine import trace\n"
        "trace.acquire_writer(trace.open_run(sys.argv[1]), 'test holder')\n"
        "print('held', flush=True)\n"
        "time.sleep(120)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(run_root)], stdout=subprocess.PIPE, env=env, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_while_another_process_holds_the_lock(locked_run, cli):
    proc = _holder(locked_run.root)
    try:
        with pytest.raises(RunBusy) as caught:
            trace.acquire_writer(locked_run, "second", wait=0.2)
        assert caught.value.exit_code == ExitCode.RUN_BUSY == 75
        assert f"process {proc.pid}" in caught.value.message and "busy" in caught.value.message
        # Every write of another process is refused too: its read-modify-write lock checks the writer lock.
        with pytest.raises(RunBusy), locked_run.lock():
            pass
        code, _, _, env = cli("ids", "next", "clm", "--run", locked_run.root, "--json")
        assert code == 75 and env["errors"][0]["code"] == "run-busy"
        assert not (locked_run.root / ".state" / "ids.json").exists()
    finally:
        proc.kill()
        proc.wait()


def test_a_dead_holder_leaves_no_stale_lock(locked_run):
    proc = _holder(locked_run.root)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The file still names the dead holder, but the kernel dropped its lock with the process.
    assert str(proc.pid) in (locked_run.root / ".state" / "writer.lock").read_text()
    with trace.acquire_writer(locked_run, "after the kill", wait=0.2) as lock:
        assert lock.fd is not None
        with locked_run.lock():  # this process is the writer: its own writes go ahead
            pass
    # Released: the file names nobody and a new writer takes it at once.
    assert (locked_run.root / ".state" / "writer.lock").read_text() == ""
    trace.acquire_writer(locked_run, "again", wait=0).release()


def test_the_writer_lock_is_reentrant_within_a_process(locked_run):
    first = trace.acquire_writer(locked_run, "one")
    try:
        assert trace.acquire_writer(locked_run, "two") is first
    finally:
        first.release()


# ---------------------------------------------------------------------------- two real resumes at once


def _env(server_url: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY"))}
    env.update(SEARXNG_URL=server_url, RESEARCH_ENGINE_CACHE_DIR=str(cache), PYTHONPATH=str(TOOLS))
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "research_engine", "-q", *args]


def _sessions(run_root: Path) -> int:
    try:
        return int(json.loads((run_root / ".state" / "engine.json").read_text())["sessions"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.slow
def test_two_concurrent_resumes_one_proceeds_one_is_refused_and_the_trace_validates(tmp_path):
    web = write_mini_web(tmp_path / "web")
    with CountingCorpusServer(web, delay=0.15) as server:  # a resume lasts seconds
        env = _env(server.url, tmp_path / "cache")
        brief = tmp_path / "brief.yaml"
        brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
        # A run cut short right after it started: the journal exists, nearly all work is left to do.
        first = subprocess.Popen(
            _cmd("run", str(brief), "--allow-private", "--json"), env=env, stdout=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while not list((tmp_path / "runs").glob("*/.state/engine.json")):
            assert first.poll() is None and time.monotonic() < deadline, "the run never started"
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait()
        run_root = next((tmp_path / "runs").glob("*/.state/engine.json")).parent.parent
        sessions = _sessions(run_root)

        one = subprocess.Popen(
            _cmd("run", "--resume", str(run_root), "--json"), env=env, stdout=subprocess.PIPE, text=True
        )
        while _sessions(run_root) <= sessions:  # the first resume is driving the run
            assert one.poll() is None and time.monotonic() < deadline, "the first resume never started"
            time.sleep(0.02)
        two = subprocess.run(
            _cmd("run", "--resume", str(run_root), "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        out_one, _ = one.communicate(timeout=120)

    assert two.returncode == ExitCode.RUN_BUSY, two.stdout + two.stderr
    envelope = json.loads(two.stdout)
    assert envelope["errors"][0]["code"] == "run-busy" and "busy" in envelope["errors"][0]["message"]
    assert one.returncode == 0, out_one
    assert json.loads(out_one)["data"]["status"] == "complete"
    assert _sessions(run_root) == sessions + 1  # the refused resume never touched the journal
    checked = validate.validate_run(trace.open_run(run_root))
    assert checked.ok, [p.message for p in checked.problems]
