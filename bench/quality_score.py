"""The quality benchmark's ruler: the dev set's shapes, a run's trace read back, the figures scored from it.

Split from `quality.py` (which downloads, serves and runs): what is counted lives here, so the scorer can be
read and tested on its own (tools/tests/test_bench_quality.py) and reused by `fit_ranking.py`.

- fact recall, on-answer-page share, the funnel: see `quality.py`'s docstring;
- how-to named (issue 32): an objective with `answer` strings (the option, command, setting or function that
  answers a "how do I") counts when a cited supported claim carries one of them as a whole token, case as
  written (`-y` in "-y (global) Overwrite output files ...", never inside `-year`);
- per set: the same figures for each corpus (each corpus is one set of leave-one-set-out) and each genre.
"""

from __future__ import annotations

import json
import re
import statistics
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


def norm(text: str) -> str:
    """Text as facts are compared: NFKC, curly quotes straightened, whitespace collapsed, case folded."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate({0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"', 0x00A0: " "})
    return " ".join(text.split()).casefold()


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
    genre: str = ""  # reference | release-notes | tutorial | faq | how-to
    answer: list[str] = field(default_factory=list)  # how-to: the option/command/setting that answers


def plain(text: str) -> str:
    """`norm` without the case fold: an option's or a setting's spelling is part of its name."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate({0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"', 0x00A0: " "})
    return " ".join(text.split())


def names(text: str, term: str) -> bool:
    """Does `text` carry `term` as a whole token (no word character or hyphen right before or after)?"""
    return re.search(rf"(?<![\w-]){re.escape(plain(term))}(?![\w-])", plain(text)) is not None


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

    def claim_raw(claim: dict[str, Any]) -> str:
        quotes = [str(e.get("quote") or "") for e in claim.get("evidence") or []]
        return " \n ".join([str(claim.get("text") or ""), *quotes])

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
    cited_text = [claim_raw(c) for c in supported_cited]
    named = any(names(t, a) for t in cited_text for a in obj.answer) if obj.answer else None
    return {
        "genre": obj.genre,
        "how_to": bool(obj.answer),
        "answer_named": named,
        "answer_in_any_claim": (
            any(names(claim_raw(c), a) for c in claims.values() for a in obj.answer) if obj.answer else None
        ),
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
        **how_to_figures(rows),
    }
    return summary


def how_to_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many how-to objectives name their answer in a cited supported claim (and in any claim)."""
    how = [r for r in rows if r.get("how_to")]
    return {
        "how_to_objectives": len(how),
        "how_to_named": sum(bool(r["answer_named"]) for r in how),
        "how_to_named_rate": (sum(bool(r["answer_named"]) for r in how) / len(how)) if how else None,
        "how_to_in_any_claim": sum(bool(r["answer_in_any_claim"]) for r in how),
    }


def by_group(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """`summarize` per value of `key` ("corpus": the sets; "genre")."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row.get(key) or "-"), []).append(row)
    return {name: summarize(group) for name, group in sorted(groups.items())}


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
    if s.get("how_to_objectives"):
        print(
            f"how-to objectives naming their answer in a cited supported claim: {s['how_to_named']}/"
            f"{s['how_to_objectives']} ({pct(s['how_to_named_rate'])}; "
            f"in any claim: {s['how_to_in_any_claim']})"
        )
    fun = s["fact_funnel"]
    print(
        f"answer page among the candidates in {pct(s['answer_page_in_candidates_rate'])} of runs, "
        f"retrieved in {pct(s['answer_page_retrieved_rate'])}; of {fun['total']} facts: "
        f"{fun['in_retrieved_text']} in the retrieved text, "
        f"{fun['in_one_passage']} inside one prose passage, "
        f"{fun['in_any_claim']} in a claim, {fun['found']} in a cited supported claim"
    )


def print_groups(rows: list[dict[str, Any]]) -> None:
    """One line per set (corpus) and per genre: recall, on-page share, how-to named, seconds."""
    for key, title in (("corpus", "set"), ("genre", "genre")):
        print(f"\n{title:14} {'objs':>4} {'recall':>14} {'on-page':>14} {'how-to named':>14} {'s/run':>6}")
        for name, s in by_group(rows, key).items():
            how = f"{s['how_to_named']}/{s['how_to_objectives']}" if s["how_to_objectives"] else "-"
            print(
                f"{name:14} {s['objectives']:>4} {pct(s['fact_recall']):>5} "
                f"({s['facts_found']:>3}/{s['facts_total']:<3}) {pct(s['on_answer_page_share']):>5} "
                f"({s['cited_on_answer_page']:>3}/{s['cited_claims']:<3}) {how:>14} {s['seconds_mean']:6.1f}"
            )
