"""Faithfulness benchmark (issue 23): does `report check` refuse prose its cited claims do not hold, and pass
prose they do?

    .venv/bin/python bench/faithfulness.py [--devset FILE] [--json OUT] [--label NAME] [--cache-dir DIR]
                                           [--only CASE ...] [--scale-words N] [--scale-claims N]

The dev set (`bench/faithfulness_devset.yaml`) holds cases over real Debian documentation: an objective,
its sub-questions, real verified claims (text, verbatim quote, page) and sentences written over them, each
either a faithful restatement or an unfaithful one of a named kind. For each case the benchmark builds a real
run as the toolkit would: it locks a brief, adds the sub-questions, fetches each claim's page from
`research-engine`'s corpus server on 127.0.0.1 (the Debian package fetched with `apt-get download` and
unpacked with `dpkg-deb -x` into the cache bench/quality.py uses, reused when present), records the claims
through the grounding gate and verifies them with the verifier's own re-fetch. Then each sentence is checked
alone, as the deliverable `# <objective>\\n\\n<sentence>` through `report.check_text`, the check behind
`report check`, `report finish`, the skills and the headless engine. A sentence is refused when the check
reports any problem.

It reports, per half of the dev set (`tune`: the documentation thresholds were chosen on; `check`: the
documentation they were not) and per kind: unfaithful sentences refused, faithful ones passed; the
`beyond_lexical` sentences apart; the seconds per check (median and 95th percentile); and the seconds to
check one long deliverable (--scale-words words citing --scale-claims claims, default 5,000 and 100, built
from verbatim sentences of the pages the claims of the set's first corpus are on; --scale-words 0 skips it).
Writes a JSON result (default `bench/results/faithfulness-<UTC stamp>[-label].json`). Nothing but apt-get
touches the network.

The Python 3.11 documentation (python3.11-doc), git-doc and bash-doc are reserved for independent
evaluation: never add them here.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import quality  # noqa: E402 - the corpus cache and apt download are quality.py's

DEFAULT_DEVSET = ROOT / "bench" / "faithfulness_devset.yaml"
RESULTS_DIR = ROOT / "bench" / "results"
RESERVED_PACKAGES = {"python3.11-doc", "git-doc", "bash-doc"}
KINDS = ("unsupported", "contradiction", "overclaim", "misattributed", "number", "name")
CLAIM_ID_RE = re.compile(r"\bCLM-[0-9]{2,}\b")
MIN_SCALE_CLAIMS = 10  # fewer and the long deliverable is one claim's sentences over and over
FAST = {"per_host_interval": 0.0, "max_retries": 0, "timeout": 10.0, "deadline": 20.0}


class BenchError(Exception):
    """A setup problem explained in one line."""


@dataclass
class Sentence:
    text: str
    faithful: bool
    kind: str  # the unfaithful kind, or the faithful liberty ("how")
    limit: bool = False  # beyond a lexical check


@dataclass
class Case:
    id: str
    corpus: str
    half: str
    objective: str
    sub_questions: list[str]
    claims: list[dict[str, Any]]
    sentences: list[Sentence] = field(default_factory=list)


def load_devset(path: Path) -> tuple[dict[str, quality.Corpus], list[Case]]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BenchError(f"cannot read dev set {path}: {exc}") from None
    corpora = {}
    for name, spec in (data.get("corpora") or {}).items():
        if spec["package"] in RESERVED_PACKAGES:
            raise BenchError(f"{spec['package']} is reserved for independent evaluation")
        corpora[name] = quality.Corpus(name, spec["package"], spec["root"].strip("/"), 0)
    half_of = {corpus: half for half, names in (data.get("halves") or {}).items() for corpus in names}
    cases = []
    for raw in data["cases"]:
        if raw["corpus"] not in corpora:
            raise BenchError(f"case {raw['id']} names unknown corpus {raw['corpus']!r}")
        case = Case(
            raw["id"],
            raw["corpus"],
            half_of.get(raw["corpus"], "tune"),
            raw["objective"],
            list(raw.get("sub_questions") or [raw["objective"]]),
            list(raw["claims"]),
        )
        for s in raw.get("sentences") or []:
            faithful = bool(s.get("faithful"))
            kind = s.get("how") if faithful else s.get("kind")
            if not faithful and kind not in KINDS:
                raise BenchError(f"case {case.id}: unknown kind {kind!r} for {s['text']!r}")
            case.sentences.append(Sentence(s["text"], faithful, str(kind)))
        for s in raw.get("beyond_lexical") or []:
            case.sentences.append(Sentence(s["text"], False, str(s["kind"]), limit=True))
        cases.append(case)
    return corpora, cases


# ---------------------------------------------------------------------------- runs


def _fetch(run: Any, sq: str, url: str) -> str:
    from research_engine import retrieve
    from research_engine.documents import Document
    from research_engine.extract import extract_document
    from research_engine.net import HttpClient

    with HttpClient(allow_private=True, use_cache=False, **FAST) as client:
        got = client.get(url)
    if not got.ok:
        raise BenchError(f"{url}: {got.error} {got.error_detail}")
    extracted = extract_document(got.body, content_type=got.content_type, url=got.final_url, text=got.text)
    doc = Document(
        kind="web",
        requested_url=url,
        final_url=got.final_url,
        status=got.status,
        retrieved_at=got.retrieved_at,
        body=got.body,
        passages=extracted.passages,
        content_type=got.content_type,
        title=extracted.title,
        extraction=extracted.extraction_figures(),
        access_tier="open",
    )
    return retrieve.record(run, sq, doc, query="faithfulness bench")


def _new_run(workdir: Path, objective: str) -> Any:
    import yaml

    from research_engine import brief, trace

    path = workdir / f"brief-{len(list(workdir.glob('brief-*')))}.yaml"
    fields = {
        "objective": objective,
        "deliverable": "a short cited answer",
        "output_path": str(workdir / "runs"),
        "depth": "quick",
    }
    path.write_text(yaml.safe_dump(fields), encoding="utf-8")
    return trace.open_run(brief.lock(path, allow_private=True).run_root)


def build_case_run(case: Case, base_url: str, workdir: Path) -> tuple[Any, dict[str, str]]:
    """A run holding the case's claims, verified; returns (run, dev set claim id -> run claim id)."""
    from research_engine import claims, decompose, verify

    run = _new_run(workdir, case.objective)
    sqs = [decompose.add(run, text, "factual") for text in case.sub_questions]
    fetched: dict[str, str] = {}
    ids: dict[str, str] = {}
    for claim in case.claims:
        page = claim["page"]
        if page not in fetched:
            fetched[page] = _fetch(run, sqs[0], f"{base_url}/{page}")
        quote = claim.get("quote") or claim["text"]
        ids[claim["id"]] = claims.add_claim(run, sqs[0], claim["text"], [fetched[page]], [quote])
    out = verify.prepare(run)
    for row in out["claims"]:
        if row["floor"] != "refuse":
            verify.record(run, row["claim"], "supported", "faithfulness bench: a real verified claim")
    verify.close(run)
    return run, ids


def _map_ids(text: str, ids: dict[str, str]) -> str:
    return CLAIM_ID_RE.sub(lambda m: ids.get(m.group(0), m.group(0)), text)


def check_case(case: Case, run: Any, ids: dict[str, str]) -> list[dict[str, Any]]:
    from research_engine import report

    rows = []
    for sentence in case.sentences:
        deliverable = f"# {case.objective}\n\n{_map_ids(sentence.text, ids)}\n"
        start = time.perf_counter()
        checked = report.check_text(run, deliverable)
        seconds = time.perf_counter() - start
        rows.append(
            {
                "case": case.id,
                "half": case.half,
                "text": sentence.text,
                "faithful": sentence.faithful,
                "kind": sentence.kind,
                "beyond_lexical": sentence.limit,
                "refused": not checked.ok,
                "problems": [p.message for p in checked.problems],
                "seconds": seconds,
            }
        )
    return rows


# ---------------------------------------------------------------------------- scale


def scale_pages(cases: list[Case]) -> tuple[str, str, list[str]] | None:
    """The long deliverable's material: the set's first corpus, the objective of its first case, and the
    pages its claims are on (in the order the set names them)."""
    if not cases:
        return None
    corpus = cases[0].corpus
    mine = [c for c in cases if c.corpus == corpus]
    pages = [str(claim["page"]) for case in mine for claim in case.claims]
    return corpus, mine[0].objective, list(dict.fromkeys(pages))


def scale_timing(
    base_url: str, objective: str, pages: list[str], workdir: Path, words: int, n_claims: int
) -> dict[str, Any]:
    """Seconds to check one deliverable of about `words` words citing `n_claims` claims, each a sentence of
    the pages, every other one with a word of the writer's (the worst case for the check is many sentences,
    each against its claims, and for half of them a search for another claim that holds them)."""
    from research_engine import claims, decompose, report, retrieve
    from research_engine.engine.extractive import is_claim_sentence, sentences

    run = _new_run(workdir, objective)
    sq = decompose.add(run, objective, "factual")
    chosen: list[tuple[str, str]] = []
    for page in pages:
        ref = _fetch(run, sq, f"{base_url}/{page}")
        _, passages = retrieve.load_source(run, ref)
        for passage in passages:
            for start, end in sentences(passage.text):
                text = passage.text[start:end]
                if is_claim_sentence(text) and 8 <= len(text.split()) <= 40 and "`" not in text:
                    chosen.append((ref, text))
        if len(chosen) >= n_claims * 2:
            break
    ids = []
    for ref, text in chosen:
        if len(ids) >= n_claims:
            break
        try:
            ids.append((claims.add_claim(run, sq, text, [ref], [text]), text))
        except Exception:  # noqa: BLE001 - a sentence the gate refuses (a duplicate) is skipped
            continue
    lines, count, i = [], 0, 0
    while count < words and ids:
        clm, text = ids[i % len(ids)]
        # Every other sentence in a writer's words (one word its claim lacks): the check then also looks
        # for another claim that would hold it, its slowest path.
        lines.append(f"{'Notably, ' if i % 2 else ''}{text} [{clm}]")
        count += len(text.split())
        i += 1
    if len(ids) < MIN_SCALE_CLAIMS:
        raise BenchError(
            f"the long-deliverable timing found {len(ids)} quotable sentences on the pages of the first "
            f"corpus's claims ({', '.join(pages)}); it needs {MIN_SCALE_CLAIMS}: pass --scale-words 0 to "
            "skip it"
        )
    paragraphs = [f"# {objective}", ""]
    for n in range(0, len(lines), 4):
        paragraphs += [" ".join(lines[n : n + 4]), ""]
    deliverable = "\n".join(paragraphs)
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        checked = report.check_text(run, deliverable)
        timings.append(time.perf_counter() - start)
    return {
        "words": len(deliverable.split()),
        "claims": len(ids),
        "sentences": len(lines),
        "seconds_median": statistics.median(timings),
        "seconds_all": timings,
        "passes": checked.ok,
        "problems": [p.message for p in checked.problems][:10],
    }


# ---------------------------------------------------------------------------- scoring


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for half in ("tune", "check", "all"):
        mine = [r for r in rows if (half == "all" or r["half"] == half) and not r["beyond_lexical"]]
        per_kind: dict[str, dict[str, int]] = defaultdict(lambda: {"refused": 0, "of": 0})
        for r in mine:
            if not r["faithful"]:
                per_kind[r["kind"]]["of"] += 1
                per_kind[r["kind"]]["refused"] += r["refused"]
        faithful_by_how: dict[str, dict[str, int]] = defaultdict(lambda: {"passed": 0, "of": 0})
        for r in mine:
            if r["faithful"]:
                faithful_by_how[r["kind"]]["of"] += 1
                faithful_by_how[r["kind"]]["passed"] += not r["refused"]
        unfaithful = [r for r in mine if not r["faithful"]]
        faithful = [r for r in mine if r["faithful"]]
        out[half] = {
            "unfaithful_refused": sum(r["refused"] for r in unfaithful),
            "unfaithful": len(unfaithful),
            "faithful_passed": sum(not r["refused"] for r in faithful),
            "faithful": len(faithful),
            "unfaithful_by_kind": {k: dict(per_kind[k]) for k in KINDS if k in per_kind},
            "faithful_by_how": {k: dict(v) for k, v in sorted(faithful_by_how.items())},
        }
    limits = [r for r in rows if r["beyond_lexical"]]
    out["beyond_lexical"] = {"refused": sum(r["refused"] for r in limits), "of": len(limits)}
    seconds = sorted(r["seconds"] for r in rows)
    out["seconds_per_check"] = {
        "median": statistics.median(seconds) if seconds else None,
        "p95": seconds[int(0.95 * (len(seconds) - 1))] if seconds else None,
    }
    return out


# The measured thresholds of the check, by the module that reads them: what --sweep may vary.
SWEEPABLE = {
    "MISSING_SHARE": "support",
    "MIN_MISSING_ALLOWED": "support",
    "RULE_B_MIN_WORDS": "support_negation",
    "SCOPE_WORDS": "support_words",
}


def parse_sweep(spec: str) -> tuple[str, list[float]]:
    """`NAME=v1,v2,...` (a bare list of values is MISSING_SHARE, as it always was)."""
    name, _, values = spec.rpartition("=")
    name = name or "MISSING_SHARE"
    if name not in SWEEPABLE:
        raise BenchError(f"--sweep: {name} is not a threshold of the check (one of {', '.join(SWEEPABLE)})")
    try:
        return name, [float(v) for v in values.split(",")]
    except ValueError:
        raise BenchError(f"--sweep: {values!r} is not a comma-separated list of numbers") from None


def sweep(built: list[tuple[Case, Any, dict[str, str]]], name: str, values: list[float]) -> dict[str, Any]:
    """The set scored at each value of one threshold of the check, tune and check halves side by side."""
    import importlib

    module = importlib.import_module(f"research_engine.{SWEEPABLE[name]}")
    chosen = getattr(module, name)
    out: dict[str, Any] = {"threshold": name, "chosen": chosen, "values": {}}
    try:
        for value in values:
            setattr(module, name, type(chosen)(value))
            rows = [row for case, run, ids in built for row in check_case(case, run, ids)]
            summary = summarize(rows)
            out["values"][str(value)] = {half: summary[half] for half in ("tune", "check", "all")}
            line = ", ".join(
                f"{half}: unfaithful {_pct(s['unfaithful_refused'], s['unfaithful'])} refused, "
                f"faithful {_pct(s['faithful_passed'], s['faithful'])} passed"
                for half, s in out["values"][str(value)].items()
                if s["unfaithful"] or s["faithful"]
            )
            print(f"{name} {value:g}: {line}")
    finally:
        setattr(module, name, chosen)
    return out


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def print_table(summary: dict[str, Any], scale: dict[str, Any] | None) -> None:
    for half in ("tune", "check", "all"):
        s = summary[half]
        print(
            f"\n[{half}] unfaithful refused {_pct(s['unfaithful_refused'], s['unfaithful'])}, "
            f"faithful passed {_pct(s['faithful_passed'], s['faithful'])}"
        )
        for kind, v in s["unfaithful_by_kind"].items():
            print(f"  {kind:14} refused {_pct(v['refused'], v['of'])}")
        for how, v in s["faithful_by_how"].items():
            print(f"  faithful/{how:14} passed {_pct(v['passed'], v['of'])}")
    b = summary["beyond_lexical"]
    print(f"\nbeyond a lexical check: refused {_pct(b['refused'], b['of'])}")
    t = summary["seconds_per_check"]
    if t["median"] is not None:
        print(f"seconds per check: median {t['median']:.4f}, p95 {t['p95']:.4f}")
    if scale:
        print(
            f"long deliverable: {scale['words']} words, {scale['claims']} claims, "
            f"{scale['sentences']} sentences: {scale['seconds_median']:.3f} s (passes: {scale['passes']})"
        )


def _git_head() -> str:
    got = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return got.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devset", type=Path, default=DEFAULT_DEVSET)
    parser.add_argument("--json", type=Path, default=None, help="where to write the result")
    parser.add_argument("--label", default="", help="a suffix for the result's file name")
    parser.add_argument("--cache-dir", type=Path, default=quality.DEFAULT_CACHE)
    parser.add_argument("--only", nargs="*", default=None, help="case ids")
    parser.add_argument("--scale-words", type=int, default=5000)
    parser.add_argument("--scale-claims", type=int, default=100)
    parser.add_argument("--verbose", action="store_true", help="print every sentence's verdict")
    parser.add_argument(
        "--sweep",
        default="",
        help="NAME=v1,v2,...: one threshold of the check (MISSING_SHARE, RULE_B_MIN_WORDS, SCOPE_WORDS, "
        "MIN_MISSING_ALLOWED) scored at each value side by side (how it was chosen); a bare list is "
        "MISSING_SHARE",
    )
    args = parser.parse_args(argv)

    from research_engine.corpus import CorpusServer
    from research_engine.verify import refetch

    refetch.CLIENT_OPTIONS = dict(FAST)  # the verifier's client, without politeness pauses on loopback
    try:
        corpora, cases = load_devset(args.devset)
        swept_values = parse_sweep(args.sweep) if args.sweep else None
        if args.only:
            cases = [c for c in cases if c.id in set(args.only)]
        cache = args.cache_dir.expanduser()
        rows: list[dict[str, Any]] = []
        built: list[tuple[Case, Any, dict[str, str]]] = []
        scale = None
        swept: dict[str, Any] = {}
        with tempfile.TemporaryDirectory(prefix="faithfulness-") as tmp:
            workdir = Path(tmp)
            material = scale_pages(cases) if args.scale_words and not args.sweep else None
            for name in sorted({c.corpus for c in cases}):
                root, _version = quality.ensure_corpus(corpora[name], cache)
                mine = [c for c in cases if c.corpus == name]
                with CorpusServer(root) as served:
                    for case in mine:
                        run, ids = build_case_run(case, served.url, workdir)
                        built.append((case, run, ids))
                        rows += check_case(case, run, ids)
                    if material is not None and name == material[0]:
                        scale = scale_timing(
                            served.url, material[1], material[2], workdir, args.scale_words, args.scale_claims
                        )
            if swept_values is not None:
                swept = sweep(built, *swept_values)
    except (BenchError, quality.BenchError) as exc:
        print(f"faithfulness: {exc}", file=sys.stderr)
        return 2
    summary = summarize(rows)
    if args.verbose:
        for r in rows:
            mark = "ok " if r["refused"] != r["faithful"] else "BAD"
            verdict = "refused" if r["refused"] else "passed"
            print(
                f"{mark} [{r['half']}] {'faithful' if r['faithful'] else r['kind']:14} {verdict}: {r['text']}"
            )
            for p in r["problems"]:
                print(f"      {p}")
    print_table(summary, scale)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out = args.json or RESULTS_DIR / f"faithfulness-{stamp}{'-' + args.label if args.label else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "commit": _git_head(),
                "label": args.label,
                "summary": summary,
                "scale": scale,
                "sweep": swept,
                "sentences": rows,
            },
            indent=1,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
