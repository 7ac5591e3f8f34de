"""Stage by stage: a real model's consolidation and selection beside the extractive rule's, same inputs.

    python bench/model_stages.py [--only ID ...] [--limit N] [--threads N] [--label WORD]

A whole run with a CPU model takes many minutes, and what one stage does is lost among the others (a model's
sub-questions change what is searched, fetched and consolidated). This replays the two stages that decide
what a deliverable can cite on fixed inputs: the extractive model runs the chosen objectives of
bench/quality_devset.yaml (seconds each, through bench/quality.py, over the same Debian corpora on loopback),
then for every sub-question of those runs the real model (llama-cpp-python's server, as tools/tests/realmodel
serves it) and the extractive rule each:

- consolidate the sub-question's fetched sources: claims, whose they are (the model's, or the rule's after a
  fallback), the dev set's facts found in them (a fact counts when its words are in a claim's text or quote),
  quote-not-in-source rejections, tokens, seconds;
- judge the first round's candidates (at most six distinct pages): whether an answer page is among those
  chosen (the model's picks, or the rule's "choose" hints), tokens, seconds.

Run it with the code to compare first on PYTHONPATH (a checkout of the earlier commit's tools/) to measure the
earlier model code on the same inputs. Results go to bench/results/model-stages-<stamp>[-label].json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "tests"))

from realmodel import quality as bench_quality  # noqa: E402  (bench/quality.py, loaded by path)
from realmodel import server as realserver  # noqa: E402
from realmodel.pins import DEFAULT_MODEL, MODELS  # noqa: E402

SELECT_CANDIDATES = 6


def _openai_model(base_url: str, model: str) -> Any:
    """The model asked for every stage (the measured choice would leave some to the rule)."""
    try:
        from research_engine.engine.openai import OpenAIModel
    except ImportError:  # the code before engine/openai/ (engine/openai_model.py)
        from research_engine.engine.openai_model import OpenAIModel  # type: ignore[no-redef]

        return OpenAIModel(base_url=base_url, model=model, timeout=1800)
    return OpenAIModel(base_url=base_url, model=model, timeout=1800, rule_stages_setting="none")


def _sources(run: Any, sq: str) -> list[Any]:
    from research_engine import retrieve
    from research_engine.engine.models import SourceText

    out = []
    for ref in retrieve.list_sources(run):
        if ref.startswith(sq + "/"):
            meta, passages = retrieve.load_source(run, ref)
            url = meta.get("final_url") or meta.get("requested_url") or ""
            out.append(SourceText(ref=ref, title=meta.get("title"), url=url, passages=passages))
    return out


def _facts_in(drafts: list[Any], facts: list[str], norm: Any) -> set[str]:
    texts = [norm(" \n ".join([d.text, *(q for _, q in d.evidence)])) for d in drafts]
    return {f for f in facts if any(norm(f) in t for t in texts)}


def _spent(model: Any, stage: str) -> tuple[int, int, int, dict[str, int]]:
    use = model.usage.stage(stage)
    return use.prompt_tokens + use.completion_tokens, use.calls, use.fallbacks, dict(use.rejections)


def _answer_chosen(judgements: list[Any], pages: list[Any], base: str, obj: Any, quality: Any) -> bool:
    return any(
        j.verdict_hint == "choose" and quality.url_page(c.get("url"), base) in obj.answer_pages
        for j, c in zip(judgements, pages, strict=True)
    )


def replay(work: Path, quality: Any, objectives: list[Any], model: Any) -> list[dict[str, Any]]:
    from research_engine import decompose, trace
    from research_engine.artifacts import read_markdown
    from research_engine.engine.extractive import ExtractiveModel

    rule = ExtractiveModel()
    rows: list[dict[str, Any]] = []
    for obj in objectives:
        runs = [p.parent for p in sorted((work / obj.id).glob("*/run.json"))]
        if not runs:
            continue
        run = trace.open_run(runs[-1])
        brief, _ = read_markdown(run.path("brief"))
        facts_out = json.loads((work / obj.id / "bench-run.json").read_text(encoding="utf-8"))
        base = facts_out["base_url"]
        for sq in decompose.load(run):
            row: dict[str, Any] = {"objective": obj.id, "sq": sq["id"]}
            sources = _sources(run, sq["id"])
            if sources:
                before = _spent(model, "consolidate")
                started = time.monotonic()
                drafts = model.consolidate(brief, sq, sources)
                seconds = time.monotonic() - started
                after = _spent(model, "consolidate")
                fell_back = after[2] > before[2]
                row["consolidate"] = {
                    "seconds": round(seconds, 1),
                    "tokens": after[0] - before[0],
                    "calls": after[1] - before[1],
                    "fell_back": fell_back,
                    "quote_not_in_source": after[3].get("quote-not-in-source", 0)
                    - before[3].get("quote-not-in-source", 0),
                    "claims": len(drafts),
                    "facts_model": sorted(_facts_in(drafts, obj.facts, quality.norm)),
                    "facts_rule": sorted(
                        _facts_in(rule.consolidate(brief, sq, sources), obj.facts, quality.norm)
                    ),
                }
            candidates_path = run.root / "select" / f"{sq['id']}.candidates.json"
            if candidates_path.is_file():
                seen: dict[str, dict[str, Any]] = {}
                for cand in json.loads(candidates_path.read_text(encoding="utf-8")).get("candidates") or []:
                    cand = {k: v for k, v in cand.items() if k != "extra"}
                    key = cand.get("canonical_key") or cand["url"]
                    if key not in seen and len(seen) < SELECT_CANDIDATES:
                        seen[key] = cand
                pages = list(seen.values())
                before = _spent(model, "select")
                started = time.monotonic()
                judged = model.select_judgements(brief, sq, pages)
                seconds = time.monotonic() - started
                after = _spent(model, "select")
                ruled = [rule.select_judgement(brief, sq, c) for c in pages]

                row["select"] = {
                    "seconds": round(seconds, 1),
                    "tokens": after[0] - before[0],
                    "calls": after[1] - before[1],
                    "fallbacks": after[2] - before[2],
                    "candidates": len(pages),
                    "answer_page_offered": any(
                        quality.url_page(c.get("url"), base) in obj.answer_pages for c in pages
                    ),
                    "answer_page_chosen_model": _answer_chosen(judged, pages, base, obj, quality),
                    "answer_page_chosen_rule": _answer_chosen(ruled, pages, base, obj, quality),
                    "chosen_model": sum(j.verdict_hint == "choose" for j in judged),
                    "chosen_rule": sum(j.verdict_hint == "choose" for j in ruled),
                }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    cons = [r["consolidate"] for r in rows if "consolidate" in r]
    sel = [r["select"] for r in rows if "select" in r]
    return {
        "consolidate": {
            "sub_questions": len(cons),
            "model_claims_used": sum(not c["fell_back"] for c in cons),
            "fallbacks": sum(c["fell_back"] for c in cons),
            "quote_not_in_source": sum(c["quote_not_in_source"] for c in cons),
            "facts_model": sum(len(c["facts_model"]) for c in cons),
            "facts_rule": sum(len(c["facts_rule"]) for c in cons),
            "tokens": sum(c["tokens"] for c in cons),
            "calls": sum(c["calls"] for c in cons),
            "seconds": round(sum(c["seconds"] for c in cons), 1),
        },
        "select": {
            "rounds": len(sel),
            "answer_page_offered": sum(s["answer_page_offered"] for s in sel),
            "answer_page_chosen_model": sum(s["answer_page_chosen_model"] for s in sel),
            "answer_page_chosen_rule": sum(s["answer_page_chosen_rule"] for s in sel),
            "chosen_model": sum(s["chosen_model"] for s in sel),
            "chosen_rule": sum(s["chosen_rule"] for s in sel),
            "fallbacks": sum(s["fallbacks"] for s in sel),
            "tokens": sum(s["tokens"] for s in sel),
            "calls": sum(s["calls"] for s in sel),
            "seconds": round(sum(s["seconds"] for s in sel), 1),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"one of {', '.join(MODELS)}")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="objective id (repeat)")
    parser.add_argument("--limit", type=int, default=6, help="the first N objectives (default 6)")
    parser.add_argument("--n-ctx", type=int, default=4096, help="the server's context window")
    parser.add_argument("--threads", type=int, help="the server's threads (default: the cores)")
    parser.add_argument("--runs-dir", type=Path, help="the extractive runs: reused when present")
    parser.add_argument("--port", action="append", default=[], metavar="CORPUS=PORT", help="as quality.py's")
    parser.add_argument("--label", default="", help="a word for the result file's name")
    args = parser.parse_args(argv)

    quality = bench_quality.load()
    _, objectives, _ = quality.load_devset(quality.DEFAULT_DEVSET)
    chosen = [o for o in objectives if o.id in set(args.only)] if args.only else objectives[: args.limit]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    work = (args.runs_dir or Path(f"/tmp/model-stages-{stamp}")).resolve()
    if not all(list((work / o.id).glob("*/run.json")) for o in chosen):
        quality.main(
            [a for o in chosen for a in ("--only", o.id)]
            + [a for p in args.port for a in ("--port", p)]
            + ["--runs-dir", str(work), "--no-json"]
        )
    python = realserver.ensure_llama_cpp()
    gguf = realserver.ensure_model(python, args.model)
    with realserver.start_server(python, gguf, n_ctx=args.n_ctx, n_threads=args.threads) as served:
        model = _openai_model(served.base_url, served.model)
        rows = replay(work, quality, chosen, model)
    spec = MODELS[args.model]
    payload = {
        "schema_version": 1,
        "benchmark": "model-stages",
        "started_at": stamp,
        "model": {"key": spec.key, "n_ctx": args.n_ctx, "threads": args.threads},
        "code": os.environ.get("PYTHONPATH") or "this checkout",
        "objectives": [o.id for o in chosen],
        "summary": summarize(rows),
        "rows": rows,
    }
    out = ROOT / "bench" / "results" / f"model-stages-{stamp}{'-' + args.label if args.label else ''}.json"
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(payload["summary"], indent=1))
    print(f"written {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
