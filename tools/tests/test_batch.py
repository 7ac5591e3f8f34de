"""`research-engine batch`: many briefs as ordinary runs, one record, shared politeness, failure isolation.

The corpus is the committed real documentation pages (tools/tests/fixtures/docs: PostgreSQL's and Django's
pages from Debian) served by the corpus server behind a logging proxy, so every request the batch makes is
seen with its start and end times. Ray cases start a real local Ray instance on loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from core_testkit import interactive_sigint

from research_engine.errors import ExitCode

FIXTURE_DOCS = Path(__file__).parent / "fixtures" / "docs"
TOOLS = Path(__file__).resolve().parents[1]
OBJECTIVES = (
    "What is the maximum size of a table in PostgreSQL?",
    "How does PostgreSQL store jsonb compared to json?",
    "What does VACUUM FULL do in PostgreSQL?",
    "What is the default transaction isolation level in PostgreSQL?",
    "What is the schema search path in PostgreSQL?",
    "Which password authentication methods does PostgreSQL support?",
    "How does PostgreSQL store timestamp with time zone values?",
    "What does the work_mem setting control in PostgreSQL?",
    "What changed in PostgreSQL 15?",
    "How does Django protect against cross site request forgery?",
    "What is an application configuration in Django?",
    "Does Django support asynchronous views?",
)


class LoggingProxy:
    """A real HTTP server that forwards every GET to `upstream` and logs (start, end) per request."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.log: list[tuple[float, float, str]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                started = time.monotonic()
                try:
                    with urllib.request.urlopen(proxy.upstream + self.path, timeout=30) as answer:
                        body, status = answer.read(), answer.status
                        kind = answer.headers.get("Content-Type", "text/html")
                except urllib.error.HTTPError as exc:
                    body, status, kind = exc.read(), exc.code, "text/plain"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client stopped mid-way
                    self.wfile.write(body)
                with proxy._lock:
                    proxy.log.append((started, time.monotonic(), self.path))

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def most_in_flight(self) -> int:
        events = sorted([(s, 1) for s, _, _ in self.log] + [(e, -1) for _, e, _ in self.log])
        level = peak = 0
        for _, step in events:
            level += step
            peak = max(peak, level)
        return peak

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def corpus():
    from research_engine.corpus import CorpusServer

    server = CorpusServer(FIXTURE_DOCS).start()
    yield server
    server.stop()


@pytest.fixture
def proxy(corpus):
    served = LoggingProxy(corpus.url)
    yield served
    served.close()


def _briefs(folder: Path, objectives=OBJECTIVES) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, objective in enumerate(objectives, 1):
        path = folder / f"{n:02d}.yaml"
        fields = {
            "objective": objective,
            "deliverable": "a short cited answer",
            "output_path": "ignored",
            "depth": "quick",
        }
        path.write_text(yaml.safe_dump(fields), encoding="utf-8")
        paths.append(path)
    return paths


def _env(proxy: LoggingProxy, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY"))}
    env.update(
        SEARXNG_URL=proxy.url,
        RESEARCH_ENGINE_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=str(TOOLS),
        HOME=str(tmp_path / "home"),  # Ray keeps a token and its session files under HOME and /tmp
    )
    return env


def _batch(
    args: list[str], proxy: LoggingProxy, tmp_path: Path, **kwargs
) -> subprocess.CompletedProcess[str]:
    host = proxy.url.split("//", 1)[1]
    return subprocess.run(
        [sys.executable, "-m", "research_engine", "batch", *args, "--allow-host", host, "--json"],
        env=_env(proxy, tmp_path),
        capture_output=True,
        text=True,
        timeout=1500,
        **kwargs,
    )


def _check_batch(batch_dir: Path, briefs: list[Path]) -> dict:
    """batch.json validates, names each brief once and matches each run's run.json; each run validates."""
    from research_engine import trace
    from research_engine.schemas import validate
    from research_engine.validate import validate_run

    record = json.loads((batch_dir / "batch.json").read_text())
    assert validate(record, "batch") == []
    assert [Path(e["brief"]) for e in record["runs"]] == [p.resolve() for p in briefs]
    run_dirs = [e["run_dir"] for e in record["runs"]]
    assert len(set(run_dirs)) == len(run_dirs), "two briefs share a run directory"
    for entry in record["runs"]:
        run = trace.open_run(entry["run_dir"])
        report = validate_run(run)
        assert report.ok, (entry["run_dir"], report.problems)
        run_json = json.loads((run.root / "run.json").read_text())
        assert (entry["status"], entry["stop_reason"], entry["cycles"]) == (
            run_json["status"],
            run_json["stop_reason"],
            run_json["cycles"],
        )
        assert entry["exit_code"] in (0, 7, 8) and (run.root / "synthesis" / "result.md").is_file()
        assert entry["provider_calls"] == run_json["budgets"]["spent"]["provider_calls"]
    table = (batch_dir / "batch.md").read_text()
    assert sum(1 for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()) == len(briefs)
    return record


def _cache_intact(cache: Path) -> None:
    """Every entry of the shared revalidation cache is whole JSON naming a body that has its digest."""
    import hashlib

    entries = list((cache / "http" / "entries").glob("*.json"))
    for path in entries:
        entry = json.loads(path.read_text())
        body = (cache / "http" / "bodies" / entry["body_sha256"]).read_bytes()
        assert hashlib.sha256(body).hexdigest() == entry["body_sha256"]


@pytest.mark.slow
def test_twelve_briefs_on_two_workers_each_a_valid_run_with_one_true_record(proxy, tmp_path):
    briefs = _briefs(tmp_path / "briefs")
    done = _batch(
        [*map(str, briefs), "--workers", "2", "--output-path", str(tmp_path / "out")], proxy, tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    envelope = json.loads(done.stdout)
    record = _check_batch(Path(envelope["data"]["batch_dir"]), briefs)
    assert record["totals"]["with_deliverable"] == 12 and record["status"] == "complete"
    assert record["executor"] == "local" and record["workers"] == 2
    # Politeness held for the batch as a whole: never more requests in flight to the corpus host than one
    # client allows (per_host_concurrency 2), although two runs fetched from it at once.
    assert len({e["run_dir"] for e in record["runs"]}) >= 2
    assert proxy.most_in_flight() <= 2, proxy.most_in_flight()
    _cache_intact(tmp_path / "cache")


def _fetch_from_three_processes(proxy: LoggingProxy, ledger: Path | None) -> list[float]:
    """Three processes, each its own HttpClient with a 0.5 s per-host interval, fetch four times each from
    one host that is not exempt from the interval; the server's log of request starts, sorted."""
    port = proxy.httpd.server_address[1]
    shared = f"host_ledger=FileHostLedger({str(ledger)!r})" if ledger else "host_ledger=None"
    script = f"""
from research_engine.net import HttpClient
from research_engine.net.hostledger import FileHostLedger
client = HttpClient(allow_addresses={{"127.0.0.1:{port}"}}, per_host_interval=0.5, ignore_robots=True,
                    use_cache=False, {shared})
for n in range(4):
    assert client.get("{proxy.url}/search?q=table&format=json", accept=("json",)).ok
"""
    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env) for _ in range(3)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    return sorted(s for s, _, _ in proxy.log)


def test_starts_to_one_host_are_spaced_across_processes_by_the_shared_ledger(tmp_path, corpus):
    alone = LoggingProxy(corpus.url)
    starts = _fetch_from_three_processes(alone, None)
    alone.close()
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) < 0.25, gaps  # each process polite on its own: together they are not

    shared = LoggingProxy(corpus.url)
    starts = _fetch_from_three_processes(shared, tmp_path / "ledger")
    shared.close()
    assert len(starts) == 12
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    # Starts are reserved 0.5 s apart; the server sees them after a connection and a thread switch whose
    # length varies (tens of milliseconds on a loaded machine), so a gap may read a little short.
    assert min(gaps) >= 0.4 and sum(gaps) / len(gaps) >= 0.49, gaps


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_recorded_and_resume_completes_every_brief(proxy, tmp_path):
    briefs = _briefs(tmp_path / "briefs", OBJECTIVES[:3])
    host = proxy.url.split("//", 1)[1]
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "research_engine", "batch", *map(str, briefs), "--workers", "2"]
        + ["--output-path", str(out), "--allow-host", host, "--json"],
        env=_env(proxy, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    announced: list[Path] = []
    while not announced:  # a worker has started its run: kill it now, mid-run
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        announced = sorted(out.glob("batch-*/.runs/*[0-9].json"))
        time.sleep(0.05)
    announcement = json.loads(announced[0].read_text())
    victim = announcement["run_dir"]
    os.kill(announcement["pid"], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == ExitCode.CHECK_FAILED, stderr[-2000:]
    record = json.loads(stdout)["data"]
    entry = next(e for e in record["runs"] if e["run_dir"] == victim)
    assert entry["status"] == "killed" and entry["exit_code"] is None
    batch_dir = Path(record["batch_dir"])

    done = _batch(["--resume", str(batch_dir)], proxy, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    final = _check_batch(batch_dir, briefs)
    resumed = next(e for e in final["runs"] if e["index"] == entry["index"])
    assert resumed["run_dir"] == victim and resumed["attempts"] == 2  # the same run, continued
    assert len(list(out.glob("2*"))) == 3  # no second run directory for the killed brief


@pytest.mark.slow
def test_a_batch_researches_a_corpus_folder_served_once_for_all_its_runs(tmp_path):
    briefs = _briefs(tmp_path / "briefs", OBJECTIVES[:3])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARXNG", "BRAVE", "TAVILY"))}
    env.update(RESEARCH_ENGINE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(TOOLS))
    done = subprocess.run(
        [sys.executable, "-m", "research_engine", "batch", *map(str, briefs), "--workers", "2"]
        + ["--corpus", str(FIXTURE_DOCS), "--output-path", str(tmp_path / "out"), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = _check_batch(Path(json.loads(done.stdout)["data"]["batch_dir"]), briefs)
    assert record["options"]["corpus"] == [str(FIXTURE_DOCS.resolve())]
    served = {
        json.dumps(json.loads((Path(e["run_dir"]) / "run.json").read_text())["corpus"])
        for e in record["runs"]
    }
    assert len(served) == 1  # one server, the same URL, for every run


@pytest.mark.slow
def test_ctrl_c_stops_the_batch_cleanly_and_resume_continues_it(proxy, tmp_path):
    briefs = _briefs(tmp_path / "briefs", OBJECTIVES[3:6])
    host = proxy.url.split("//", 1)[1]
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "research_engine", "batch", *map(str, briefs), "--workers", "2"]
        + ["--output-path", str(out), "--allow-host", host, "--json"],
        env=_env(proxy, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job has
        preexec_fn=interactive_sigint,  # Ctrl-C as a terminal gives it, even to a suite run in the background
    )
    deadline = time.monotonic() + 300
    while len(list(out.glob("2*/decompose/sub-questions.md"))) < 2:  # two runs at work
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the driver and every worker
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == ExitCode.INTERRUPTED, stderr[-2000:]
    assert "Traceback" not in stderr
    batch_dir = next(out.glob("batch-*"))
    record = json.loads((batch_dir / "batch.json").read_text())
    assert record["status"] == "interrupted"
    cut = [e for e in record["runs"] if e["status"] == "interrupted"]
    assert cut and all(e["run_dir"] for e in cut)
    for entry in cut:  # each run says what `run` says when Ctrl-C stops it
        run_json = json.loads((Path(entry["run_dir"]) / "run.json").read_text())
        assert run_json["status"] == "failed" and run_json["stop_reason"] == "failed:interrupted"

    done = _batch(["--resume", str(batch_dir)], proxy, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    _check_batch(batch_dir, briefs)


# ------------------------------------------------------------------------------------------ bad input


def _closed_search_backend(monkeypatch) -> None:
    """A search backend the guard lets through (a named loopback host) that nothing ever asks."""
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_HOSTS", "127.0.0.1:9")


def test_every_bad_input_is_one_line_before_any_run(cli, tmp_path, monkeypatch):
    _closed_search_backend(monkeypatch)
    good = _briefs(tmp_path / "briefs", OBJECTIVES[:2])
    out = tmp_path / "out"

    code, _, err, _ = cli("batch", str(tmp_path / "missing.yaml"), "--output-path", str(out))
    assert code == ExitCode.BAD_INPUT and "missing.yaml" in err and len(err.strip().splitlines()) == 1

    bad = tmp_path / "briefs" / "bad.yaml"
    bad.write_text("objective: x\n", encoding="utf-8")
    code, _, _, env = cli("batch", *map(str, good), str(bad), "--output-path", str(out), "--json")
    assert code == ExitCode.BAD_INPUT and env["errors"][0]["file"].endswith("bad.yaml")
    assert not out.exists() or not any(out.iterdir())  # nothing started

    code, _, _, env = cli("batch", *map(str, good), "--workers", "0", "--output-path", str(out), "--json")
    assert code == ExitCode.BAD_INPUT and env["errors"][0]["code"] == "bad-workers"

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, _, _, env = cli("batch", *map(str, good), "--output-path", str(blocker / "runs"), "--json")
    assert code == ExitCode.BAD_INPUT and env["errors"][0]["code"] == "output-path-unwritable"

    code, _, _, env = cli("batch", "--resume", str(tmp_path), "--json")
    assert code == ExitCode.BAD_INPUT and env["errors"][0]["code"] == "unknown-batch"

    monkeypatch.delenv("RESEARCH_ENGINE_ALLOW_HOSTS")  # a loopback backend nobody allowed dooms every run
    code, _, _, env = cli("batch", *map(str, good), "--output-path", str(out), "--json")
    assert code == ExitCode.REFUSED and "--allow-host" in env["errors"][0]["message"]
    assert not out.exists() or not any(out.iterdir())


def test_ray_without_ray_installed_exits_5_naming_the_install(cli, tmp_path, monkeypatch):
    _closed_search_backend(monkeypatch)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    good = _briefs(tmp_path / "briefs", OBJECTIVES[:1])
    code, _, _, env = cli(
        "batch", *map(str, good), "--ray", "local", "--output-path", str(tmp_path / "o"), "--json"
    )
    assert code == ExitCode.NOT_CONFIGURED and "research-engine[ray]" in env["errors"][0]["message"]


# ------------------------------------------------------------------------------------------------ Ray


def _ray_available() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI installs the ray extra (README's test command): the Ray cases must run")
        pytest.skip("ray is not installed (pip install 'research-engine[ray]')")


@pytest.mark.slow
def test_an_unreachable_ray_cluster_is_one_line_exit_6(cli, tmp_path, monkeypatch):
    _ray_available()
    _closed_search_backend(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # Ray keeps a token under HOME
    good = _briefs(tmp_path / "briefs", OBJECTIVES[:1])
    code, _, _, env = cli(
        "batch", *map(str, good), "--ray", "ray://127.0.0.1:1", "--output-path", str(tmp_path / "o"), "--json"
    )
    assert code == ExitCode.UPSTREAM_FAILED and env["errors"][0]["code"] == "ray-unreachable"
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.slow
def test_twelve_briefs_on_a_local_ray_instance(proxy, tmp_path):
    _ray_available()
    briefs = _briefs(tmp_path / "briefs")
    done = _batch(
        [*map(str, briefs), "--ray", "local", "--workers", "2", "--output-path", str(tmp_path / "out")],
        proxy,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = _check_batch(Path(json.loads(done.stdout)["data"]["batch_dir"]), briefs)
    assert record["executor"] == "ray" and record["totals"]["with_deliverable"] == 12
    assert proxy.most_in_flight() <= 2, proxy.most_in_flight()
