"""Replay the extractive model's sentence choice over runs the quality benchmark kept, and score it.

    .venv/bin/python bench/quality_replay.py RUNS_DIR [--devset FILE] [--set CORPUS ...] [--json OUT]
                                              [--code DIR]

For each objective whose run `bench/quality.py --runs-dir RUNS_DIR` kept, every sub-question's sources are
read back from the trace (`retrieve/SQ-NN/SRC-NN.md`, as the engine reads them) and handed to the current
code's `ExtractiveModel.consolidate`; the claims the deliverable would state (answers and related
statements alike, each sentence once: `rendering.render_report`) are scored as `quality_score` scores a run:
fact recall, on-answer-page share, how-to named.
Retrieval is the kept run's, so the figures isolate sentence choice (minutes instead of an hour of runs); on
the baseline's own runs the replay of the baseline's code gives its end-to-end figures exactly (89/148,
217/325, 18/37 on `quality-20261126-rank-base.json`). Verification is assumed to pass (claims are verbatim),
and a re-research cycle the new choice would have asked for is not replayed: the end-to-end run decides.
A replay keeps the run's recorded sub-questions: after a change to the plan (`plan_of`), the objectives whose
sub-questions it changes are measured end to end, not here.

`--code DIR` imports `research_engine` from DIR (another worktree's `tools/`) instead of this checkout's, to
replay two codes over the same runs; PYTHONPATH does not choose it, this checkout's `tools/` comes first.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# --code is read before the imports below, which take research_engine from it.
_code = argparse.ArgumentParser(add_help=False)
_code.add_argument("--code", type=Path)
sys.path.insert(0, str((_code.parse_known_args()[0].code or ROOT / "tools").resolve()))
sys.path.insert(0, str(ROOT / "bench"))

from quality import load_devset  # noqa: E402
from quality_score import Objective, names, norm, url_page  # noqa: E402

from research_engine import brief as brief_mod  # noqa: E402
from research_engine import decompose, retrieve  # noqa: E402
from research_engine.engine.extractive import ExtractiveModel, near_key  # noqa: E402
from research_engine.engine.models import SourceText  # noqa: E402
from research_engine.trace import open_run  # noqa: E402


def replay(obj: Objective, out: Path, model: ExtractiveModel) -> dict[str, Any] | None:
    """One kept run's choice replayed: facts found, cited and on-page claims, how-to named (None: no run)."""
    facts_file = out / "bench-run.json"
    run_dir = next((p for p in out.iterdir() if (p / "run.json").is_file()), None) if out.is_dir() else None
    if not facts_file.is_file() or run_dir is None:
        return None
    base = json.loads(facts_file.read_text(encoding="utf-8"))["base_url"]
    run = open_run(run_dir)
    brief = brief_mod.load_locked(run.root)
    sqs = decompose.load(run)
    refs = retrieve.list_sources(run)
    said: set[str] = set()
    texts: list[str] = []
    stated: list[str] = []  # every claim of the run so far, as the engine passes them (stated-before)
    cited = on_page = 0
    for sq in sqs:
        sources, page = [], {}
        for ref in refs:
            if ref.startswith(f"{sq['id']}/"):
                meta, passages = retrieve.load_source(run, ref)
                url = meta.get("final_url") or meta.get("requested_url") or ""
                sources.append(SourceText(ref=ref, title=meta.get("title"), url=url, passages=passages))
                page[ref] = url_page(meta.get("requested_url"), base) or url_page(url, base)
        drafts = model.consolidate(brief, sq, sources, stated) if sources else []
        stated += [" ".join(d.text.split()) for d in drafts]
        for draft in drafts:
            key = near_key(draft.text)
            if key in said:
                continue
            said.add(key)
            texts.append(draft.text)
            cited += 1
            on_page += any(page.get(ref) in set(obj.answer_pages) for ref, _ in draft.evidence)
    found = [f for f in obj.facts if any(norm(f) in norm(t) for t in texts)]
    named = any(names(t, a) for t in texts for a in obj.answer) if obj.answer else None
    return {"id": obj.id, "set": obj.corpus, "found": len(found), "facts": len(obj.facts), "cited": cited,
            "on_page": on_page, "how_to": bool(obj.answer), "named": named}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", type=Path, help="runs kept by bench/quality.py --runs-dir")
    parser.add_argument("--devset", type=Path, default=ROOT / "bench" / "quality_devset.yaml")
    parser.add_argument("--set", action="append", default=[], dest="sets", metavar="CORPUS")
    parser.add_argument("--json", type=Path, dest="json_out", help="write the rows here")
    parser.add_argument("--code", type=Path, help="import research_engine from this folder (default: tools/)")
    args = parser.parse_args(argv)
    _, objectives, _ = load_devset(args.devset)
    model = ExtractiveModel()
    rows = [
        row
        for obj in objectives
        if not args.sets or obj.corpus in args.sets
        if (row := replay(obj, args.runs / obj.id, model)) is not None
    ]
    if not rows:
        print(f"quality_replay: no kept run of a dev-set objective under {args.runs}", file=sys.stderr)
        return 2
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["set"], []).append(row)
    for name, group in [*sorted(groups.items()), ("all", rows)]:
        found, facts = sum(r["found"] for r in group), sum(r["facts"] for r in group)
        on_page, cited = sum(r["on_page"] for r in group), sum(r["cited"] for r in group)
        how = [r for r in group if r["how_to"]]
        print(
            f"{name:12} recall {100 * found / facts:3.0f}% ({found}/{facts})  "
            f"on-page {100 * on_page / max(1, cited):3.0f}% ({on_page}/{cited})  "
            f"how-to named {sum(bool(r['named']) for r in how)}/{len(how)}"
        )
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
