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


def test_a_consolidate_cut_short_between_two_claims_resumes_to_the_same_claims(tmp_path, monkeypatch):
    """The narrow window the kill test finds only now and then, made certain: the process dies after a
    sub-question's first claim is recorded and before its second; the redone step must choose as the first
    try did (its own first claim is not "stated before"), so the run ends with the reference's claims."""
    from research_engine.engine import loop
    from research_engine.settings import Settings

    web = write_mini_web(tmp_path / "web")
    with CorpusServer(web) as server:
        monkeypatch.setenv("SEARXNG_URL", server.url)
        monkeypatch.setenv("RESEARCH_ENGINE_CACHE_DIR", str(tmp_path / "cache"))

        def brief_for(out: Path) -> Path:
            path = tmp_path / f"{out.name}.yaml"
            path.write_text(yaml.safe_dump({**BRIEF, "output_path": str(out)}), encoding="utf-8")
            return path

        options = loop.EngineOptions(allow_private=True)
        reference = loop.run(brief_for(tmp_path / "ref"), options, settings=Settings.from_env())
        first_sq = sorted(
            {c["sub_question"] for c in claims.active_claims(trace.open_run(reference.run_root))}
        )[0]
        assert (
            sum(
                c["sub_question"] == first_sq
                for c in claims.active_claims(trace.open_run(reference.run_root))
            )
            >= 2
        )

        record, calls = claims.record_claim, []

        def dies_before_the_second(*args, **kw):
            calls.append(args[1])
            if len(calls) == 2:
                raise KeyboardInterrupt  # what kill -9 leaves behind: the first claim recorded, no more
            return record(*args, **kw)

        monkeypatch.setattr(claims, "record_claim", dies_before_the_second)
        with pytest.raises(KeyboardInterrupt):
            loop.run(brief_for(tmp_path / "cut"), options, settings=Settings.from_env())
        monkeypatch.setattr(claims, "record_claim", record)
        run_root = next((tmp_path / "cut").glob("*/brief.md")).parent
        assert [c["sub_question"] for c in claims.active_claims(trace.open_run(run_root))] == [first_sq]

        resumed = loop.resume(run_root, settings=Settings.from_env())
    assert resumed.status == "complete"
    assert _facts(resumed.run_root) == _facts(reference.run_root)
