"""kill -9 at random points of a headless run, then `run --resume`: always a complete, valid tree,
nothing lost."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from engine_web import BRIEF, write_mini_web

from research_engine import claims, report, retrieve, trace, validate
from research_engine.corpus import CorpusServer

pytestmark = pytest.mark.slow


def _env(server_url: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY"))}
    env.update(SEARXNG_URL=server_url, RESEARCH_ENGINE_CACHE_DIR=str(cache), PYTHONUNBUFFERED="1")
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "research_engine", "-q", *args]


def _facts(run_root: Path) -> dict[str, object]:
    run = trace.open_run(run_root)
    sources = sorted(
        retrieve.load_source(run, ref)[0]["requested_url"].split("/", 3)[3]
        for ref in retrieve.list_sources(run)
    )
    return {"claims": sorted(c["text"] for c in claims.active_claims(run)), "sources": sources}


def test_kill_9_at_random_points_then_resume_always_completes(tmp_path):
    rng = random.Random(int(os.environ.get("RESUME_TEST_SEED", "7")))
    web = write_mini_web(tmp_path / "web")
    with CorpusServer(web) as server:
        env = _env(server.url, tmp_path / "cache")
        brief = tmp_path / "brief.yaml"

        def brief_for(out: Path) -> Path:
            brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(out)}), encoding="utf-8")
            return brief

        # The reference: the same run, never interrupted.
        started = time.monotonic()
        done = subprocess.run(
            _cmd("run", str(brief_for(tmp_path / "ref")), "--allow-private", "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        whole = time.monotonic() - started
        reference = _facts(Path(json.loads(done.stdout)["data"]["run_root"]))

        out = tmp_path / "killed"
        kills, attempts = [], 0
        run_root: Path | None = None
        while True:
            attempts += 1
            assert attempts < 30, f"the run never completed (kills at {kills})"
            if run_root is None:
                args = _cmd("run", str(brief_for(out)), "--allow-private", "--json")
            else:
                args = _cmd("run", "--resume", str(run_root), "--json")
            proc = subprocess.Popen(
                args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
            )
            if len(kills) < 5:
                delay = rng.uniform(0.3, 0.85 * whole)  # anywhere in the run: startup, lock, any stage
                time.sleep(delay)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    kills.append(round(delay, 2))
                    runs = sorted(out.glob("*/brief.md")) if out.is_dir() else []
                    run_root = runs[0].parent if runs else None
                    continue
            stdout, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0, stdout
            run_root = Path(json.loads(stdout)["data"]["run_root"])
            break

    print(f"kills at {kills} s, {attempts} attempts")
    assert kills, "no kill landed: the run finished before the first kill"
    run = trace.open_run(run_root)
    checked = validate.validate_run(run)
    assert checked.ok, [p.message for p in checked.problems]
    assert report.check(run, run.path("result")).ok
    assert _facts(run_root) == reference
