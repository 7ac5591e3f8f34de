"""Quality benchmark (issue 12): does a run find what a careful reader with the same search box finds?

    .venv/bin/python bench/quality.py [--devset FILE] [--only ID ...] [--runs-dir DIR] [--model M]
                                      [--json OUT] [--timeout S] [--port CORPUS=PORT] [-- RUN ARGS...]
    .venv/bin/python bench/quality.py --check-devset [--devset FILE]

For each objective of the dev set (`bench/quality_devset.yaml`: questions a user would ask, each with 2-4
must-find facts and the pages that hold the answer) it writes a brief and runs the headless engine exactly
as a user would, as a subprocess:

    SEARXNG_URL=http://127.0.0.1:PORT research-engine run BRIEF --output-path DIR --allow-private --json
        --sources web [--model M] [RUN ARGS...]

against real documentation served on loopback by `research-engine corpus serve`: Debian's python-django-doc
and postgresql-doc-15, fetched with `apt-get download` and unpacked with `dpkg-deb -x` into a cache outside
git (`~/.cache/research-engine/bench-corpora/`, or --cache-dir / $RESEARCH_ENGINE_BENCH_CACHE), reused when
present. Then it scores each run from its trace tree alone:

- fact recall: a fact counts when it is a case-insensitive substring of the text or of a quote of a claim
  that `synthesis/result.md` cites and whose latest verdict (across `verify/contestation*.md`) is supported
  (whitespace collapsed, NFKC, curly quotes straightened, on both sides);
- on-answer-page share: of the claims the deliverable cites, the share with a source (`retrieve/SQ-NN/
  SRC-NN.md`, requested or final URL) that is one of the objective's answer pages;
- whether the run ended with a deliverable (`synthesis/result.md` exists), its exit code and its seconds;
- a funnel for diagnosis: answer page among the search candidates, answer page retrieved, fact in the
  retrieved text, fact in any claim, fact in a cited supported claim.

Prints a table and writes a JSON result (default `bench/results/quality-<UTC stamp>.json`). Runs are
sequential. Traces go to a temporary directory unless --runs-dir keeps them. The network is touched only by
`apt-get download` (when the cache is empty); runs talk to 127.0.0.1 only (`--sources web`, search order
pinned to SearXNG, other backends' keys removed from the environment).

The Python 3.11 documentation (python3.11-doc) is reserved for independent evaluation: do not add it here.
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
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DEVSET = ROOT / "bench" / "quality_devset.yaml"
RESULTS_DIR = ROOT / "bench" / "results"
DEFAULT_CACHE = Path("~/.cache/research-engine/bench-corpora")
RESERVED_PACKAGES = {"python3.11-doc"}  # held out for independent evaluation
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


def norm(text: str) -> str:
    """Text as facts are compared: NFKC, curly quotes straightened, whitespace collapsed, case folded."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate({0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"', 0x00A0: " "})
    return " ".join(text.split()).casefold()


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


@dataclass
class Corpus:
    name: str
    package: str
    root: str  # the HTML root inside the unpacked package
    port: int


@dataclass
class Objective:
    id: str
    corpus: str
    objective: str
    facts: list[str]
    answer_pages: list[str]
    brief: dict[str, Any] = field(default_factory=dict)


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
                texts[path] = norm(visible_text(path.read_bytes()))
            pages[page] = texts[path]
        for fact in obj.facts:
            where = [page for page, text in pages.items() if norm(fact) in text]
            if not where:
                print(f"{obj.id}: fact {fact!r} is in none of {', '.join(obj.answer_pages)}")
                problems += 1
            else:
                print(f"{obj.id}: {fact!r} in {', '.join(where)}")
    counts = {name: sum(o.corpus == name for o in objectives) for name in roots}
    print(
        f"\n{len(objectives)} objectives ({', '.join(f'{n} {c}' for c, n in sorted(counts.items()))}), "
        f"{sum(len(o.facts) for o in objectives)} facts: "
        + ("every fact is on an answer page" if not problems else f"{problems} problem(s)")
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


# ---------------------------------------------------------------------------- the trace


def front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """(YAML front matter, body) of a Markdown artifact; ({}, '') when the file is missing."""
    import yaml

    if not path.is_file():
        return {}, ""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    meta = yaml.safe_load(text[3:end]) or {}
    return (meta if isinstance(meta, dict) else {}), text[end + 4 :]


def _cycle_of(path: Path) -> int:
    m = re.search(r"contestation\.cycle-(\d+)\.md$", path.name)
    return int(m.group(1)) if m else 10**6  # contestation.md is the newest


def latest_verdicts(run: Path) -> dict[str, str]:
    """Each claim's latest verdict across verify/contestation.cycle-NN.md and verify/contestation.md."""
    verdicts: dict[str, tuple[tuple[int, int], str]] = {}
    for path in sorted((run / "verify").glob("contestation*.md"), key=_cycle_of):
        meta, _ = front_matter(path)
        for n, chl in enumerate(meta.get("challenges") or []):
            key = (int(chl.get("cycle") or meta.get("cycle") or _cycle_of(path)), n)
            claim = str(chl.get("claim"))
            if claim not in verdicts or key >= verdicts[claim][0]:
                verdicts[claim] = (key, str(chl.get("verdict")))
    return {claim: verdict for claim, (_, verdict) in verdicts.items()}


def url_page(url: str | None, base: str) -> str | None:
    """A URL on the corpus server as a page path relative to its root ('dir/' -> 'dir/index.html')."""
    if not url or not url.startswith(base):
        return None
    path = unquote(urlsplit(url).path).lstrip("/")
    return path + "index.html" if path.endswith("/") or not path else path


def read_claims(run: Path) -> list[dict[str, Any]]:
    """Every claim the run recorded: the `claim-added` events of the ledger (consolidate/claims.jsonl), or
    the draft's front matter for runs made before the ledger was a log."""
    ledger = run / "consolidate" / "claims.jsonl"
    if not ledger.is_file():
        draft, _ = front_matter(run / "consolidate" / "synthesis.draft.md")
        return list(draft.get("claims") or [])
    claims = []
    for line in ledger.read_text(encoding="utf-8").splitlines():
        event = json.loads(line) if line.strip() else {}
        if event.get("event") == "claim-added":
            claims.append(event)
    return claims


def read_trace(run: Path, base: str) -> dict[str, Any]:
    """What the scorer needs from a run's trace tree (never the engine's own figures)."""
    result_meta, _ = front_matter(run / "synthesis" / "result.md")
    if "cited_claims" not in result_meta:  # result.md's front matter is for readers; run.json holds the list
        run_json = json.loads((run / "run.json").read_text(encoding="utf-8"))
        result_meta = {
            **result_meta,
            "cited_claims": (run_json.get("result") or {}).get("cited_claims") or [],
        }
    sources: dict[str, dict[str, Any]] = {}
    for path in sorted((run / "retrieve").glob("SQ-*/SRC-*.md")):
        meta, body = front_matter(path)
        sid = str(meta.get("id") or f"{path.parent.name}/{path.stem}")
        pages = {
            p for p in (url_page(meta.get("requested_url"), base), url_page(meta.get("final_url"), base)) if p
        }
        passages = []  # (kind, text), as retrieve.render_passages writes them: "[pNN] {kind} text"
        for block in re.split(r"\n\s*\n", body.split("## Extracted material", 1)[-1]):
            m = re.match(r"\[p\d+\] (?:\{([\w-]+)\} )?(.*)", " ".join(block.split()))
            if m:
                passages.append((m.group(1) or "paragraph", m.group(2)))
        sources[sid] = {
            "pages": sorted(pages),
            "text": " \n ".join(t for _, t in passages),
            "prose": [norm(t) for kind, t in passages if kind != "code"],
            "file": path.relative_to(run).as_posix(),
        }
    candidates: set[str] = set()
    queries: list[dict[str, Any]] = []
    for path in sorted((run / "select").glob("SQ-*.candidates.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        for cand in data.get("candidates") or []:
            page = url_page(cand.get("url"), base)
            if page:
                candidates.add(page)
        for q in data.get("queries") or []:
            cycle = ((q.get("info") or {}).get("engine") or {}).get("cycle")
            queries.append({"sq": data.get("sub_question"), "cycle": cycle, "query": q.get("query")})
    return {
        "has_result": (run / "synthesis" / "result.md").is_file(),
        "result": result_meta,
        "claims": read_claims(run),
        "verdicts": latest_verdicts(run),
        "sources": sources,
        "candidate_pages": candidates,
        "queries": queries,
    }


def score(obj: Objective, trace: dict[str, Any]) -> dict[str, Any]:
    """One objective's figures from its trace (see the module docstring for the definitions)."""
    answer = set(obj.answer_pages)
    cited = [str(c) for c in trace["result"].get("cited_claims") or []]
    claims = {str(c.get("id")): c for c in trace["claims"]}
    verdicts = trace["verdicts"]
    sources = trace["sources"]

    def claim_text(claim: dict[str, Any]) -> str:
        quotes = [str(e.get("quote") or "") for e in claim.get("evidence") or []]
        return norm(" \n ".join([str(claim.get("text") or ""), *quotes]))

    def claim_pages(claim: dict[str, Any]) -> set[str]:
        out: set[str] = set()
        for ev in claim.get("evidence") or []:
            out.update(sources.get(str(ev.get("source")), {}).get("pages", []))
        return out

    supported_cited = [
        claims[c]
        for c in cited
        if c in claims and verdicts.get(c) == "supported" and claims[c].get("status") != "retired"
    ]
    cited_known = [claims[c] for c in cited if c in claims]
    on_page = [c for c in cited_known if claim_pages(c) & answer]
    scored_text = [claim_text(c) for c in supported_cited]
    any_claim_text = [claim_text(c) for c in claims.values()]
    retrieved_pages = {p for s in sources.values() for p in s["pages"]}
    retrieved_text = norm(" \n ".join(s["text"] for s in sources.values()))
    answer_text = norm(" \n ".join(s["text"] for s in sources.values() if set(s["pages"]) & answer))
    facts = []
    for fact in obj.facts:
        f = norm(fact)
        facts.append(
            {
                "fact": fact,
                "found": any(f in t for t in scored_text),
                "in_any_claim": any(f in t for t in any_claim_text),
                "in_retrieved_text": f in retrieved_text,
                "in_one_passage": any(f in t for s in sources.values() for t in s["prose"]),
                "in_answer_page_text": f in answer_text,
            }
        )
    found = sum(f["found"] for f in facts)
    return {
        "facts": facts,
        "facts_found": found,
        "facts_total": len(facts),
        "fact_recall": found / len(facts),
        "cited_claims": len(cited),
        "cited_supported": len(supported_cited),
        "cited_on_answer_page": len(on_page),
        "on_answer_page_share": (len(on_page) / len(cited_known)) if cited_known else None,
        "answer_page_in_candidates": bool(answer & trace["candidate_pages"]),
        "answer_page_retrieved": bool(answer & retrieved_pages),
        "answer_pages_retrieved": sorted(answer & retrieved_pages),
        "claims": len(claims),
        "sources": len(sources),
        "retrieved_pages": sorted(retrieved_pages),
        "queries": trace["queries"],
        "stop_reason": trace["result"].get("stop_reason"),
        "cycles": trace["result"].get("cycles"),
    }


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


def score_dir(obj: Objective, out: Path) -> dict[str, Any]:
    """Score the run kept in `out` (one objective's directory: bench-run.json beside the run)."""
    facts = json.loads((out / "bench-run.json").read_text(encoding="utf-8"))
    run_root = facts.get("run_root")
    run = Path(run_root) if run_root else next((p for p in out.iterdir() if (p / "run.json").is_file()), None)
    if run is not None and not run.is_dir():  # the runs directory was moved: the run sits in `out`
        run = out / run.name if (out / run.name).is_dir() else None
    row: dict[str, Any] = {
        "id": obj.id,
        "corpus": obj.corpus,
        "objective": obj.objective,
        "exit_code": facts.get("exit_code"),
        "seconds": facts.get("seconds"),
        "cpu_seconds": facts.get("cpu_seconds"),
        "run_dir": str(run) if run else None,
        "errors": facts.get("errors") or [],
    }
    trace = read_trace(run, facts["base_url"]) if run is not None else _empty_trace()
    row.update({"deliverable": trace["has_result"], **score(obj, trace)})
    return row


def _empty_trace() -> dict[str, Any]:
    return {
        "has_result": False,
        "result": {},
        "claims": [],
        "verdicts": {},
        "sources": {},
        "candidate_pages": set(),
        "queries": [],
    }


# ---------------------------------------------------------------------------- report


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {}
    facts = sum(r["facts_total"] for r in rows)
    found = sum(r["facts_found"] for r in rows)
    cited = sum(r["cited_claims"] for r in rows)
    on_page = sum(r["cited_on_answer_page"] for r in rows)
    shares = [r["on_answer_page_share"] for r in rows if r["on_answer_page_share"] is not None]
    secs = [r["seconds"] or 0.0 for r in rows]
    stages = ("in_retrieved_text", "in_answer_page_text", "in_one_passage", "in_any_claim", "found")
    funnel = {s: sum(f[s] for r in rows for f in r["facts"]) for s in stages}
    summary = {
        "objectives": len(rows),
        "fact_recall": found / facts if facts else None,
        "fact_recall_macro": statistics.mean(r["fact_recall"] for r in rows),
        "facts_found": found,
        "facts_total": facts,
        "on_answer_page_share": on_page / cited if cited else None,
        "on_answer_page_share_macro": statistics.mean(shares) if shares else None,
        "cited_claims": cited,
        "cited_on_answer_page": on_page,
        "deliverable_rate": sum(r["deliverable"] for r in rows) / len(rows),
        "exit_zero_rate": sum(r["exit_code"] == 0 for r in rows) / len(rows),
        "seconds_mean": statistics.mean(secs),
        "seconds_median": statistics.median(secs),
        "seconds_total": sum(secs),
        "cpu_seconds_mean": statistics.mean(r.get("cpu_seconds") or 0.0 for r in rows),
        "cpu_seconds_median": statistics.median(r.get("cpu_seconds") or 0.0 for r in rows),
        "answer_page_in_candidates_rate": sum(r["answer_page_in_candidates"] for r in rows) / len(rows),
        "answer_page_retrieved_rate": sum(r["answer_page_retrieved"] for r in rows) / len(rows),
        "fact_funnel": {"total": facts, **funnel},
    }
    return summary


def pct(value: float | None) -> str:
    return "  -" if value is None else f"{100 * value:3.0f}%"


def print_table(rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    print(
        f"\n{'objective':34} {'facts':>5} {'recall':>6} {'on-page':>7} {'cited':>5} {'deliv':>5} "
        f"{'exit':>4} {'secs':>6}  funnel: cand/retr | text/prose/claim"
    )
    for r in rows:
        stage = {
            k: sum(f[k] for f in r["facts"]) for k in ("in_retrieved_text", "in_one_passage", "in_any_claim")
        }
        print(
            f"{r['id']:34} {r['facts_found']:>2}/{r['facts_total']:<2} {pct(r['fact_recall']):>6} "
            f"{pct(r['on_answer_page_share']):>7} {r['cited_claims']:>5} "
            f"{'yes' if r['deliverable'] else 'NO':>5} "
            f"{'-' if r['exit_code'] is None else r['exit_code']:>4} {r['seconds'] or 0:6.1f}  "
            f"{'Y' if r['answer_page_in_candidates'] else 'n'}/"
            f"{'Y' if r['answer_page_retrieved'] else 'n'} | "
            f"{stage['in_retrieved_text']}/{stage['in_one_passage']}/{stage['in_any_claim']}"
        )
    s = summary
    print(
        f"\nfact recall {pct(s['fact_recall'])} ({s['facts_found']}/{s['facts_total']} facts; "
        f"macro {pct(s['fact_recall_macro'])})   on-answer-page share {pct(s['on_answer_page_share'])} "
        f"({s['cited_on_answer_page']}/{s['cited_claims']} cited claims; "
        f"macro {pct(s['on_answer_page_share_macro'])})"
    )
    print(
        f"deliverable {pct(s['deliverable_rate'])} of runs, exit 0 {pct(s['exit_zero_rate'])}; "
        f"seconds per run mean {s['seconds_mean']:.1f}, median {s['seconds_median']:.1f} "
        f"(total {s['seconds_total']:.0f}); CPU seconds mean {s['cpu_seconds_mean']:.1f}, "
        f"median {s['cpu_seconds_median']:.1f}"
    )
    fun = s["fact_funnel"]
    print(
        f"answer page among the candidates in {pct(s['answer_page_in_candidates_rate'])} of runs, "
        f"retrieved in {pct(s['answer_page_retrieved_rate'])}; of {fun['total']} facts: "
        f"{fun['in_retrieved_text']} in the retrieved text, "
        f"{fun['in_one_passage']} inside one prose passage, "
        f"{fun['in_any_claim']} in a claim, {fun['found']} in a cited supported claim"
    )


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
            row = run_one(obj, servers[obj.corpus], work, run_args, env, args.timeout)
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
    payload["objectives"] = _relative(rows, work)
    print_table(rows, payload["summary"])
    if out_json:
        write_json(out_json, payload)
        print(f"\nresults: {os.path.relpath(out_json, Path.cwd())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
