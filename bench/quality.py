"""Quality benchmark (issues 12, 24, 32): does a run find what a careful reader with the same search finds?

    .venv/bin/python bench/quality.py [--devset FILE] [--only ID ...] [--set CORPUS ...] [--runs-dir DIR]
                                      [--model M] [--json OUT] [--timeout S] [--port CORPUS=PORT]
                                      [--ranking-dir DIR] [-- RUN ARGS...]
    .venv/bin/python bench/quality.py --check-devset [--devset FILE]

For each objective of the dev set (`bench/quality_devset.yaml`: questions a user would ask over seven Debian
documentation packages, each with 1-4 must-find facts, the pages that hold the answer, its genre, and for a
how-to the option or command that answers it) it writes a brief and runs the headless engine exactly as a
user would, as a subprocess:

    SEARXNG_URL=http://127.0.0.1:PORT research-engine run BRIEF --output-path DIR --allow-private --json
        --sources web [--model M] [RUN ARGS...]

against real documentation served on loopback by `research-engine corpus serve` (one server per set), fetched
with `apt-get download` and unpacked with `dpkg-deb -x` into a cache outside git
(`~/.cache/research-engine/bench-corpora/`, or --cache-dir / $RESEARCH_ENGINE_BENCH_CACHE), reused when
present. Then it scores each run from its trace tree alone (`quality_score.py`):

- fact recall: a fact counts when it is a case-insensitive substring of the text or of a quote of a claim
  that `synthesis/result.md` cites and whose latest verdict (across `verify/contestation*.md`) is supported
  (whitespace collapsed, NFKC, curly quotes straightened, on both sides);
- on-answer-page share: of the claims the deliverable cites, the share with a source (`retrieve/SQ-NN/
  SRC-NN.md`, requested or final URL) that is one of the objective's answer pages;
- how-to named: a how-to objective's answering option or command in a cited supported claim, whole token;
- whether the run ended with a deliverable (`synthesis/result.md` exists), its exit code and its seconds;
- a funnel for diagnosis: answer page among the search candidates, answer page retrieved, fact in the
  retrieved text, fact in any claim, fact in a cited supported claim.

Prints a table, the same figures per set and per genre, and writes a JSON result (default
`bench/results/quality-<UTC stamp>.json`). Runs are sequential. Traces go to a temporary directory unless
--runs-dir keeps them (`bench/fit_ranking.py` reads kept runs). With --ranking-dir, each objective runs with
the sentence ranking fitted without its own set (leave-one-set-out). The network is touched only by
`apt-get download` (when the cache is empty); runs talk to 127.0.0.1 only (`--sources web`, search order
pinned to SearXNG, other backends' keys removed from the environment).

python3.11-doc, git-doc and bash-doc are reserved for independent evaluation: never add them here.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality_score import (  # noqa: E402  (the ruler, beside this script)
    Corpus,
    Objective,
    _empty_trace,
    by_group,
    names,
    norm,
    pct,
    print_groups,
    print_table,
    read_trace,
    score,
    score_dir,
    summarize,
)

__all__ = ["Corpus", "Objective", "_empty_trace", "names", "norm", "read_trace", "score"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DEVSET = ROOT / "bench" / "quality_devset.yaml"
RESULTS_DIR = ROOT / "bench" / "results"
DEFAULT_CACHE = Path("~/.cache/research-engine/bench-corpora")
RESERVED_PACKAGES = {"python3.11-doc", "git-doc", "bash-doc"}  # held out for independent evaluation
SERVER_START_SECONDS = 180  # indexing ~1,200 pages takes a while on a shared machine
# Environment a run must not inherit: other search backends and their keys, DuckDuckGo, a proxy.
SCRUBBED_ENV = (
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "RESEARCH_ENGINE_ALLOW_DDG",
    "RESEARCH_ENGINE_SEARCH_ORDER",
    "RESEARCH_ENGINE_BRAVE_URL",
    "RESEARCH_ENGINE_TAVILY_URL",
    "RESEARCH_ENGINE_DUCKDUCKGO_URL",
)
BLOCK_TAGS = frozenset(
    re.findall(
        r"\w+",
        "address article aside blockquote body br caption dd div dl dt figcaption figure footer form h1 "
        "h2 h3 h4 h5 h6 header hr li main nav ol p pre section table tbody td tfoot th thead title tr ul",
    )
)


class BenchError(Exception):
    """A setup problem explained in one line (apt missing, port busy, bad dev set...)."""


# ---------------------------------------------------------------------------- text


def visible_text(html: bytes) -> str:
    """What a reader sees on a page: the body's text, blocks separated, scripts and styles dropped."""
    import lxml.html

    try:
        root = lxml.html.document_fromstring(html)
    except Exception:  # an empty or unparsable page shows nothing
        return ""
    for bad in root.xpath("//script|//style|//noscript|//head"):
        bad.drop_tree()
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in BLOCK_TAGS:
            el.tail = " " + (el.tail or "")
            el.text = " " + (el.text or "")
    return " ".join(root.text_content().split())


# ---------------------------------------------------------------------------- dev set


def load_devset(path: Path) -> tuple[dict[str, Corpus], list[Objective], dict[str, Any]]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchError(f"cannot read dev set {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise BenchError(f"dev set {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("objectives"), list):
        raise BenchError(f"dev set {path}: expected a mapping with `corpora` and `objectives`")
    corpora = {}
    for name, spec in (data.get("corpora") or {}).items():
        try:
            corpora[name] = Corpus(
                name, str(spec["package"]), str(spec["root"]).strip("/"), int(spec["port"])
            )
        except (KeyError, TypeError, ValueError):
            raise BenchError(f"dev set {path}: corpus {name!r} needs package, root and port") from None
        if corpora[name].package in RESERVED_PACKAGES:
            raise BenchError(
                f"{corpora[name].package} is reserved for independent evaluation, not the dev set"
            )
    defaults = data.get("brief") or {}
    objectives, seen = [], set()
    for i, raw in enumerate(data["objectives"], 1):
        try:
            obj = Objective(
                id=str(raw["id"]),
                corpus=str(raw["corpus"]),
                objective=str(raw["objective"]).strip(),
                facts=[str(f) for f in raw["facts"]],
                answer_pages=[str(p).lstrip("/") for p in raw["answer_pages"]],
                brief={**defaults, **(raw.get("brief") or {})},
                genre=str(raw.get("genre") or ""),
                answer=[str(a) for a in raw.get("answer") or []],
            )
        except (KeyError, TypeError):
            raise BenchError(
                f"dev set {path}: objective {i} needs id, corpus, objective, facts, answer_pages"
            ) from None
        if obj.id in seen:
            raise BenchError(f"dev set {path}: duplicate objective id {obj.id}")
        if obj.corpus not in corpora:
            raise BenchError(f"dev set {path}: objective {obj.id} names unknown corpus {obj.corpus!r}")
        if not obj.facts or not obj.answer_pages:
            raise BenchError(f"dev set {path}: objective {obj.id} has no facts or no answer pages")
        seen.add(obj.id)
        objectives.append(obj)
    return corpora, objectives, data


# ---------------------------------------------------------------------------- corpora (apt download)


def _run_tool(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    except FileNotFoundError:
        raise BenchError(
            f"{cmd[0]} is not installed; this benchmark needs Debian's apt-get and dpkg-deb"
        ) from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"{' '.join(cmd)} did not finish in 600 s") from None


def ensure_corpus(corpus: Corpus, cache: Path) -> tuple[Path, str]:
    """The HTML root of the corpus's package, downloaded and unpacked on first use; (root, version)."""
    unpacked = cache / corpus.package
    marker = unpacked / ".unpacked.json"
    if marker.is_file():
        version = json.loads(marker.read_text(encoding="utf-8")).get("version", "?")
    else:
        for tool in ("apt-get", "dpkg-deb"):
            if shutil.which(tool) is None:
                raise BenchError(
                    f"{tool} not found: the benchmark fetches {corpus.package} with apt-get download and "
                    f"dpkg-deb -x (a Debian or Ubuntu machine), or unpack it yourself into {unpacked}/ "
                    f"and write {marker.name} there"
                )
        debs = cache / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        for old in debs.glob(f"{corpus.package}_*.deb"):
            old.unlink()
        got = _run_tool(["apt-get", "download", corpus.package], cwd=debs)
        found = sorted(debs.glob(f"{corpus.package}_*.deb"))
        if got.returncode != 0 or not found:
            detail = (got.stderr or got.stdout).strip().splitlines()
            hint = (
                " (run `apt-get update` first)"
                if any("Unable to locate" in line or "no installation candidate" in line for line in detail)
                else ""
            )
            raise BenchError(
                f"apt-get download {corpus.package} failed{hint}: {detail[-1] if detail else 'no .deb'}"
            )
        deb = found[-1]
        version = _run_tool(["dpkg-deb", "-f", str(deb), "Version"]).stdout.strip() or "?"
        staging = cache / f".{corpus.package}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        got = _run_tool(["dpkg-deb", "-x", str(deb), str(staging)])
        if got.returncode != 0:
            raise BenchError(f"dpkg-deb -x {deb.name} failed: {got.stderr.strip()}")
        (staging / marker.name).write_text(
            json.dumps({"package": corpus.package, "version": version, "deb": deb.name}) + "\n",
            encoding="utf-8",
        )
        shutil.rmtree(unpacked, ignore_errors=True)
        staging.rename(unpacked)
    root = unpacked / corpus.root
    if not root.is_dir():
        raise BenchError(f"{corpus.package} {version} has no {corpus.root}/ (unpacked in {unpacked})")
    return root, version


# ---------------------------------------------------------------------------- dev set check


def check_devset(corpora: dict[str, Corpus], objectives: list[Objective], cache: Path) -> int:
    roots = {name: ensure_corpus(corpora[name], cache)[0] for name in {o.corpus for o in objectives}}
    texts: dict[Path, str] = {}
    raw: dict[Path, str] = {}  # as written: an answer's spelling counts
    problems = 0
    for obj in objectives:
        pages = {}
        for page in obj.answer_pages:
            path = roots[obj.corpus] / page
            if not path.is_file():
                print(f"{obj.id}: answer page {page} does not exist")
                problems += 1
                continue
            if path not in texts:
                raw[path] = visible_text(path.read_bytes())
                texts[path] = norm(raw[path])
            pages[page] = texts[path]
        for fact in obj.facts:
            where = [page for page, text in pages.items() if norm(fact) in text]
            if not where:
                print(f"{obj.id}: fact {fact!r} is in none of {', '.join(obj.answer_pages)}")
                problems += 1
            else:
                print(f"{obj.id}: {fact!r} in {', '.join(where)}")
        for answer in obj.answer:
            where = [
                p
                for p in obj.answer_pages
                if (roots[obj.corpus] / p) in raw and names(raw[roots[obj.corpus] / p], answer)
            ]
            if not where:
                print(f"{obj.id}: answer {answer!r} is a whole token on none of its answer pages")
                problems += 1
    counts = {name: sum(o.corpus == name for o in objectives) for name in roots}
    print(
        f"\n{len(objectives)} objectives ({', '.join(f'{n} {c}' for c, n in sorted(counts.items()))}), "
        f"{sum(len(o.facts) for o in objectives)} facts: "
        + ("every fact and answer is on an answer page" if not problems else f"{problems} problem(s)")
    )
    return 1 if problems else 0


# ---------------------------------------------------------------------------- corpus servers


def engine_cmd() -> list[str]:
    exe = shutil.which("research-engine", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "research_engine"]


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As the server binds (http.server sets SO_REUSEADDR): a TIME-WAIT left by a finished run is no owner.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class CorpusServer:
    """`research-engine corpus serve ROOT --port PORT` as a subprocess, stopped on exit."""

    def __init__(self, name: str, root: Path, port: int, log_dir: Path) -> None:
        self.name, self.root, self.port = name, root, port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log_dir / f"corpus-{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.pages: int | None = None

    def start(self) -> CorpusServer:
        if not port_free(self.port):
            raise BenchError(
                f"port {self.port} on 127.0.0.1 is busy (for the {self.name} corpus); "
                f"stop what holds it or pass --port {self.name}=OTHER"
            )
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [*engine_cmd(), "corpus", "serve", str(self.root), "--port", str(self.port), "--json"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + SERVER_START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(
                    f"corpus serve for {self.name} exited with {self.proc.returncode}: "
                    f"{self.log.read_text(encoding='utf-8', errors='replace').strip()[-400:]}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/robots.txt", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            self.stop()
            raise BenchError(f"corpus serve for {self.name} did not answer within {SERVER_START_SECONDS} s")
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    self.pages = json.loads(line).get("data", {}).get("pages")
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------------- one run


def write_brief(obj: Objective, path: Path, output: Path) -> None:
    import yaml

    brief = {"objective": obj.objective, "output_path": str(output), **obj.brief}
    brief.setdefault("deliverable", "a short cited answer")
    path.write_text(yaml.safe_dump(brief, sort_keys=False, allow_unicode=True), encoding="utf-8")


def run_one(
    obj: Objective, server: CorpusServer, work: Path, run_args: list[str], env: dict[str, str], timeout: float
) -> dict[str, Any]:
    out = work / obj.id
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    brief = out / "brief.yaml"
    write_brief(obj, brief, out)
    cmd = [
        *engine_cmd(),
        "run",
        str(brief),
        "--output-path",
        str(out),
        "--allow-private",
        "--json",
        *run_args,
    ]
    started = time.perf_counter()
    cpu_before = _children_cpu()
    try:
        proc = subprocess.run(
            cmd,
            env={**env, "SEARXNG_URL": server.url},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        exit_code: int | None = proc.returncode
        stdout, stderr = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        exit_code, stdout = (
            None,
            (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or "",
        )
        stderr = f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    (out / "run.stdout").write_text(stdout or "", encoding="utf-8")
    (out / "run.stderr").write_text(stderr or "", encoding="utf-8")
    envelope: dict[str, Any] = {}
    for line in (stdout or "").splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                envelope = json.loads(line)
    errors = [str(e.get("message")) for e in envelope.get("errors") or []][:5]
    if exit_code != 0 and not errors:
        errors = [(stderr or "").strip()[-300:]]
    facts = {
        "exit_code": exit_code,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "run_root": (envelope.get("data") or {}).get("run_root"),
        "base_url": server.url,
        "errors": errors,
    }
    (out / "bench-run.json").write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    return score_dir(obj, out)


def _children_cpu() -> float:
    """User + system CPU seconds of finished child processes (unlike wall time, not inflated by load)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def git_state() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False, timeout=30
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "dirty": bool(git("status", "--porcelain", "--", "tools")),
    }


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False, default=sorted) + "\n", encoding="utf-8")
    tmp.replace(path)


# ---------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    run_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, run_args = argv[:i], argv[i + 1 :]
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--devset", type=Path, default=DEFAULT_DEVSET, help="the dev set (YAML)")
    parser.add_argument(
        "--only", action="append", default=[], metavar="ID", help="run only this objective (repeat)"
    )
    parser.add_argument(
        "--set", action="append", default=[], dest="sets", metavar="CORPUS", help="run only this set (repeat)"
    )
    parser.add_argument(
        "--ranking-dir",
        type=Path,
        metavar="DIR",
        help="leave-one-set-out: run each objective with DIR/<its set>.json, the sentence ranking fitted "
        "without its set (bench/fit_ranking.py --loso DIR writes them)",
    )
    parser.add_argument(
        "--runs-dir", type=Path, help="keep every run's trace here (default: a temporary dir)"
    )
    parser.add_argument("--model", help="passed to `run --model` (default: the engine's, extractive)")
    parser.add_argument("--json", type=Path, dest="json_out", help="result file (default bench/results/...)")
    parser.add_argument("--no-json", action="store_true", help="write no result file")
    parser.add_argument("--timeout", type=float, default=2100, help="seconds before a run is killed")
    parser.add_argument("--cache-dir", type=Path, help="where the Debian packages are unpacked")
    parser.add_argument("--port", action="append", default=[], metavar="CORPUS=PORT", help="override a port")
    parser.add_argument(
        "--brief",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="set a brief field for every objective (VALUE is YAML), e.g. --brief recency=any",
    )
    parser.add_argument("--check-devset", action="store_true", help="verify every fact is on an answer page")
    parser.add_argument(
        "--rescore", type=Path, metavar="RUNS_DIR", help="score the runs kept in RUNS_DIR again; run nothing"
    )
    args = parser.parse_args(argv)
    return args, run_args


def main(argv: list[str] | None = None) -> int:
    args, run_args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args, run_args)
    except BenchError as exc:
        print(f"quality bench: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace, run_args: list[str]) -> int:
    corpora, objectives, devset = load_devset(args.devset)
    if args.only:
        unknown = set(args.only) - {o.id for o in objectives}
        if unknown:
            raise BenchError(f"no objective {', '.join(sorted(unknown))} in {args.devset}")
        objectives = [o for o in objectives if o.id in set(args.only)]
    if args.sets:
        unknown = set(args.sets) - set(corpora)
        if unknown:
            raise BenchError(f"no set {', '.join(sorted(unknown))} in {args.devset}")
        objectives = [o for o in objectives if o.corpus in set(args.sets)]
    for spec in args.port:
        name, _, port = spec.partition("=")
        if name not in corpora or not port.isdigit():
            raise BenchError(
                f"--port wants CORPUS=PORT with CORPUS one of {', '.join(corpora)}; got {spec!r}"
            )
        corpora[name].port = int(port)
    overrides: dict[str, Any] = {}
    for spec in args.brief:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip():
            raise BenchError(f"--brief wants FIELD=VALUE; got {spec!r}")
        overrides[name.strip()] = _yaml_value(value)
    for obj in objectives:
        obj.brief = {**obj.brief, **overrides}
    cache = (
        args.cache_dir or Path(os.environ.get("RESEARCH_ENGINE_BENCH_CACHE") or DEFAULT_CACHE)
    ).expanduser()
    if args.check_devset:
        return check_devset(corpora, objectives, cache)

    if "--sources" not in run_args:
        run_args = ["--sources", "web", *run_args]
    if args.model:
        run_args = ["--model", args.model, *run_args]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out_json = None if args.no_json else (args.json_out or RESULTS_DIR / f"quality-{stamp}.json")
    version = subprocess.run([*engine_cmd(), "--version"], capture_output=True, text=True, check=False).stdout
    payload: dict[str, Any] = {
        "schema_version": 1,
        "benchmark": "quality",
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "engine": version.strip(),
        "git": git_state(),
        "devset": {
            "path": os.path.relpath(args.devset.resolve(), ROOT),
            "sha256": hashlib.sha256(args.devset.read_bytes()).hexdigest(),
        },
        "packages": {},
        "run_args": run_args,
        "brief": devset.get("brief") or {},
        "brief_overrides": overrides,
        "only": args.only,
        "sets": args.sets,
        "ranking_dir": os.path.relpath(args.ranking_dir.resolve(), ROOT) if args.ranking_dir else None,
        "runs_dir": None,
        "python": sys.version.split()[0],
        "summary": {},
        "objectives": [],
    }
    if args.rescore:
        work = args.rescore.resolve()
        rows = [score_dir(o, work / o.id) for o in objectives if (work / o.id / "bench-run.json").is_file()]
        if not rows:
            raise BenchError(f"no kept run of these objectives under {work}")
        payload.update({"rescored": str(work), "run_args": None, "git": None, "engine": None})
        return report(rows, payload, work, out_json)

    needed = sorted({o.corpus for o in objectives}, key=list(corpora).index)
    roots = {}
    for name in needed:
        roots[name], payload["packages"][corpora[name].package] = ensure_corpus(corpora[name], cache)
    scratch = tempfile.TemporaryDirectory(prefix="quality-bench-")
    work = (args.runs_dir or Path(scratch.name) / "runs").resolve()
    work.mkdir(parents=True, exist_ok=True)
    payload["runs_dir"] = str(work) if args.runs_dir else None
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    env.update(
        {
            "RESEARCH_ENGINE_SEARCH_ORDER": "searxng",
            "RESEARCH_ENGINE_CACHE_DIR": str(Path(scratch.name) / "http-cache"),
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    servers: dict[str, CorpusServer] = {}
    rows: list[dict[str, Any]] = []
    try:
        for name in needed:
            servers[name] = CorpusServer(name, roots[name], corpora[name].port, work).start()
            package = corpora[name].package
            print(
                f"serving {package} {payload['packages'][package]}: "
                f"{servers[name].pages} pages at {servers[name].url}",
                file=sys.stderr,
            )
        for i, obj in enumerate(objectives, 1):
            print(f"[{i}/{len(objectives)}] {obj.id} ...", file=sys.stderr, flush=True)
            run_env = env
            if args.ranking_dir:
                weights = (args.ranking_dir / f"{obj.corpus}.json").resolve()
                if not weights.is_file():
                    raise BenchError(f"no ranking fitted without {obj.corpus}: {weights} is missing")
                run_env = {**env, "RESEARCH_ENGINE_RANKING": str(weights)}
            row = run_one(obj, servers[obj.corpus], work, run_args, run_env, args.timeout)
            rows.append(row)
            print(
                f"    {row['facts_found']}/{row['facts_total']} facts, "
                f"on-page {pct(row['on_answer_page_share'])}, "
                f"deliverable {'yes' if row['deliverable'] else 'NO'}, "
                f"exit {row['exit_code']}, {row['seconds']:.0f} s",
                file=sys.stderr,
            )
            for error in row["errors"] if row["exit_code"] != 0 else []:
                print(f"    error: {error}", file=sys.stderr)
            if out_json:
                write_json(
                    out_json, {**payload, "summary": summarize(rows), "objectives": _relative(rows, work)}
                )
    except KeyboardInterrupt:
        print("interrupted: reporting the runs that finished", file=sys.stderr)
    finally:
        for server in servers.values():
            server.stop()
        if not args.runs_dir:
            scratch.cleanup()
    if not rows:
        return 1
    return report(rows, payload, work, out_json)


def _yaml_value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        raise BenchError(f"--brief value {text!r} is not valid YAML") from None


def _relative(rows: list[dict[str, Any]], work: Path) -> list[dict[str, Any]]:
    """Rows with run_dir relative to the runs directory (a temporary one means nothing later)."""
    out = []
    for row in rows:
        run_dir = row.get("run_dir")
        out.append({**row, "run_dir": os.path.relpath(run_dir, work) if run_dir else None})
    return out


def report(rows: list[dict[str, Any]], payload: dict[str, Any], work: Path, out_json: Path | None) -> int:
    payload["finished_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    payload["summary"] = summarize(rows)
    payload["by_set"] = by_group(rows, "corpus")
    payload["by_genre"] = by_group(rows, "genre")
    payload["objectives"] = _relative(rows, work)
    print_table(rows, payload["summary"])
    print_groups(rows)
    if out_json:
        write_json(out_json, payload)
        print(f"\nresults: {os.path.relpath(out_json, Path.cwd())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
