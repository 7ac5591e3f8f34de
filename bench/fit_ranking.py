"""Fit the extractive model's sentence ranking on the quality dev set, and validate it leave-one-set-out.

    .venv/bin/python bench/fit_ranking.py RUNS_DIR [RUNS_DIR ...] [--devset FILE ...] [--l2 L ...]
        [--write] [--loso DIR] [--card-result QUALITY_JSON]

RUNS_DIR holds runs kept by `bench/quality.py --runs-dir` (one directory per objective). For every
sub-question of every run, the sub-question's fetched sources are read again exactly as the engine reads them
(`engine.extractive.picking.read_candidates`: the same candidates and `features.FEATURES`), and each candidate
is labelled from the dev set alone: positive when it carries a must-find fact of its objective (or, for a
how-to, the answering option as a whole token) and comes from one of the objective's answer pages. A fact
carried by n candidates gives each 1/n, so a fact in one sentence counts as much as a fact in twenty.

The model is a conditional logit per sub-question (softmax over its choosable candidates, the labelled ones
as targets, plus a share for the candidates of answer pages, L2 penalty), fitted by Newton's method:
deterministic, small, a weight per feature. The L2 penalty and the answer-page share are chosen by
leave-one-set-out recall plus on-page share; the keep margin (how far below the best chosen claim a claim
may score) on the training sets, by the same sum.

Validation replays the choice offline: `picking.rank` and `picking.choose` with the fitted weights over the
same candidates, the deliverable's own filter (`answering.relevance`), then fact recall, on-answer-page share
and how-to named per set, each set scored with weights fitted on the other sets only (leave-one-set-out).
The end-to-end check is `bench/quality.py --ranking-dir DIR` over the weights `--loso DIR` writes.

--write puts the weights fitted on every set into the package (engine/extractive/sentence_ranker.json) and
writes its card (sentence_ranker.md) with the figures above; --card-result adds an end-to-end quality
result (a leave-one-set-out run) to the card.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from quality_score import Objective, names, norm, url_page  # noqa: E402

from research_engine import answering, decompose, retrieve  # noqa: E402
from research_engine import brief as brief_mod  # noqa: E402
from research_engine.engine.extractive.features import FEATURE_NAMES, FEATURES  # noqa: E402
from research_engine.engine.extractive.model import MAX_CLAIMS, PER_SOURCE_CAP  # noqa: E402
from research_engine.engine.extractive.picking import Pick, choosable, choose, rank, read_candidates  # noqa: E402
from research_engine.engine.extractive.ranker import WEIGHTS_FILE, Ranker  # noqa: E402
from research_engine.engine.extractive.text import near_key  # noqa: E402
from research_engine.engine.models import SourceText  # noqa: E402
from research_engine.trace import open_run  # noqa: E402

CARD_FILE = WEIGHTS_FILE.with_suffix(".md")
MARGINS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, float("inf"))
L2_GRID = (1.0, 3.0)
ON_PAGE_GRID = (0.0, 0.5, 1.0)  # the on-answer-page label's weight beside the facts' (one per group)
NEWTON_STEPS = 60


@dataclass
class Group:
    """One sub-question of one run: its candidates read, their features, their labels."""

    sq: str
    text: str
    view: Any
    picks: list[Pick]
    pages: list[str | None]  # each candidate's page on the corpus server
    x: Any  # features, candidates x FEATURE_NAMES
    label: Any  # label weight per candidate: its share of the must-find facts it carries
    can: Any  # whether each candidate can be a claim at all (`picking.choosable`): the fit's pool
    on_page: Any = None  # whether each candidate comes from one of the objective's answer pages


@dataclass
class Case:
    objective: Objective
    questions: list[str]
    groups: list[Group] = field(default_factory=list)


def load_case(objective: Objective, out: Path) -> Case | None:
    """The run kept for `objective` under `out`, read back into labelled groups; None without a run."""
    facts_file = out / "bench-run.json"
    if not facts_file.is_file():
        return None
    facts = json.loads(facts_file.read_text(encoding="utf-8"))
    run_dir = next((p for p in out.iterdir() if (p / "run.json").is_file()), None)
    if run_dir is None:
        return None
    run = open_run(run_dir)
    brief = brief_mod.load_locked(run.root)
    sqs = decompose.load(run)
    case = Case(objective, [str(sq.get("text") or "") for sq in sqs])
    refs = retrieve.list_sources(run)
    answer = set(objective.answer_pages)
    wanted = [norm(f) for f in objective.facts]
    carriers: dict[int, int] = {}  # fact index -> how many candidates carry it on an answer page
    marks: list[tuple[Group, list[list[int]]]] = []
    for sq in sqs:
        sources, page_of = [], {}
        for ref in refs:
            if not ref.startswith(f"{sq['id']}/"):
                continue
            meta, passages = retrieve.load_source(run, ref)
            url = meta.get("final_url") or meta.get("requested_url") or ""
            sources.append(SourceText(ref=ref, title=meta.get("title"), url=url, passages=passages))
            page_of[ref] = url_page(meta.get("requested_url"), facts["base_url"]) or url_page(
                url, facts["base_url"]
            )
        view, picks = read_candidates(brief, sq, sources)
        if view is None:
            continue
        pages = [page_of.get(p.cand.ref) for p in picks]
        carried: list[list[int]] = []
        for pick, page in zip(picks, pages, strict=True):
            if page not in answer:
                carried.append([])
                continue
            text = norm(pick.cand.text)
            found = [k for k, f in enumerate(wanted) if f in text]
            if objective.answer and any(names(pick.cand.text, a) for a in objective.answer):
                found.append(len(wanted))  # the how-to's answering option: one more fact to find
            carried.append(found)
            for k in found:
                carriers[k] = carriers.get(k, 0) + 1
        x = np.array([p.scored.values for p in picks], dtype=float)
        group = Group(sq["id"], str(sq.get("text") or ""), view, picks, pages, x, None, None)
        group.can = np.array([choosable(p, view) for p in picks], dtype=bool)
        group.on_page = np.array([page in answer for page in pages], dtype=bool)
        marks.append((group, carried))
    for group, carried in marks:
        group.label = np.array([sum(1 / carriers[k] for k in ks) for ks in carried], dtype=float)
        case.groups.append(group)
    return case


def targets(g: Group, on_page: float) -> Any:
    """The labels of a group's choosable candidates: their fact shares, plus `on_page` spread over those from
    an answer page (a sentence of the page that answers is a better claim than one elsewhere, fact or not)."""
    label = g.label[g.can]
    page = g.on_page[g.can]
    return label + (on_page * page / page.sum() if on_page and page.any() else 0.0)


def fit(cases: list[Case], l2: float, on_page: float = 0.0) -> np.ndarray:
    """Conditional-logit weights (one per feature) by Newton's method with an L2 penalty."""
    d = len(FEATURE_NAMES)
    groups = [(g.x[g.can], targets(g, on_page)) for c in cases for g in c.groups]
    groups = [(x, label) for x, label in groups if label.sum() > 0]

    def loss(w: np.ndarray) -> float:
        out = 0.5 * l2 * float(w @ w)
        for x, label in groups:
            s = x @ w
            top = s.max()
            out += float(label.sum() * (top + np.log(np.exp(s - top).sum())) - label @ s)
        return out

    w = np.zeros(d)
    current = loss(w)
    for _ in range(NEWTON_STEPS):
        grad, hess = l2 * w, l2 * np.eye(d)
        for x, label in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            total = label.sum()
            mean = p @ x
            grad += total * mean - label @ x
            hess += total * ((x * p[:, None]).T @ x - np.outer(mean, mean))
        step = np.linalg.solve(hess, grad)
        # A full Newton step can overshoot far from the optimum (a weight of -84 on 2026-11-27's runs):
        # halve it until the penalised loss goes down.
        for _ in range(30):
            trial = loss(w - step)
            if trial <= current:
                break
            step = step / 2
        w, current = w - step, trial
        if np.abs(step).max() < 1e-7:
            break
    return w


def simulate(cases: list[Case], weights: np.ndarray, margin: float) -> dict[str, Any]:
    """The figures the quality bench would score, with the choice replayed offline under `weights`."""
    ranker = Ranker(tuple(float(v) for v in weights), margin)
    facts = found = cited = on_page = how = named = 0
    per_case = {}
    for case in cases:
        obj = case.objective
        said: set[str] = set()
        texts: list[str] = []
        stated: list[str] = []  # every claim of the run so far, as the engine passes them (stated-before)
        for g in case.groups:
            page_of = {p.cand.ref: page for p, page in zip(g.picks, g.pages, strict=True)}
            drafts = choose(
                g.view,
                rank(list(g.picks), ranker),
                max_claims=MAX_CLAIMS,
                per_source_cap=PER_SOURCE_CAP,
                keep_margin=margin,
                stated=stated,
            )
            stated += [" ".join(d.text.split()) for d in drafts]
            for d in drafts:
                if not answering.relevance(g.text, case.questions, d.text).answers:
                    continue
                key = near_key(d.text)
                if key in said:
                    continue
                said.add(key)
                texts.append(d.text)
                cited += 1
                on_page += any(page_of.get(ref) in set(obj.answer_pages) for ref, _ in d.evidence)
        got = sum(any(norm(f) in norm(t) for t in texts) for f in obj.facts)
        facts += len(obj.facts)
        found += got
        if obj.answer:
            how += 1
            named += any(names(t, a) for t in texts for a in obj.answer)
        per_case[obj.id] = got
    return {
        "facts": facts,
        "found": found,
        "recall": found / facts if facts else 0.0,
        "cited": cited,
        "on_page": on_page,
        "on_page_share": on_page / cited if cited else 0.0,
        "how_to": how,
        "named": named,
        "per_objective": per_case,
    }


def pick_margin(cases: list[Case], weights: np.ndarray) -> float:
    """The margin with the best fact recall plus on-answer-page share on `cases` (the two targets, weighed
    alike); ties go to the smaller margin."""
    best: tuple[tuple[float, float], float] | None = None
    for margin in MARGINS:
        s = simulate(cases, weights, margin)
        key = (round(s["recall"] + s["on_page_share"], 9), -margin)
        if best is None or key > best[0]:
            best = (key, margin)
    assert best is not None
    return best[1]


def leave_one_set_out(cases: list[Case], l2: float, on_page: float) -> dict[str, dict[str, Any]]:
    """Per set: weights and margin fitted on the other sets, figures on this one."""
    out = {}
    for held in sorted({c.objective.corpus for c in cases}):
        train = [c for c in cases if c.objective.corpus != held]
        test = [c for c in cases if c.objective.corpus == held]
        w = fit(train, l2, on_page)
        margin = pick_margin(train, w)
        out[held] = {**simulate(test, w, margin), "weights": w, "margin": margin}
    return out


def total(figures: list[dict[str, Any]]) -> dict[str, Any]:
    facts = sum(f["facts"] for f in figures)
    cited = sum(f["cited"] for f in figures)
    how = sum(f["how_to"] for f in figures)
    return {
        "facts": facts,
        "found": sum(f["found"] for f in figures),
        "recall": sum(f["found"] for f in figures) / facts if facts else 0.0,
        "cited": cited,
        "on_page": sum(f["on_page"] for f in figures),
        "on_page_share": sum(f["on_page"] for f in figures) / cited if cited else 0.0,
        "how_to": how,
        "named": sum(f["named"] for f in figures),
    }


def line(name: str, f: dict[str, Any]) -> str:
    how = f"{f['named']}/{f['how_to']}" if f["how_to"] else "-"
    return (
        f"| {name} | {100 * f['recall']:.0f}% ({f['found']}/{f['facts']}) | "
        f"{100 * f['on_page_share']:.0f}% ({f['on_page']}/{f['cited']}) | {how} |"
    )


def load_cases(runs_dirs: list[Path], devsets: list[Path]) -> list[Case]:
    from quality import load_devset

    objectives = [obj for devset in devsets for obj in load_devset(devset)[1]]
    cases = []
    for obj in objectives:
        for runs in runs_dirs:
            case = load_case(obj, runs / obj.id)
            if case is not None:
                cases.append(case)
                break
    return cases


def cached_cases(args: argparse.Namespace) -> list[Case]:
    """`load_cases`, through --cache when given: keyed by the reading code's bytes and the runs' names."""
    import pickle

    if args.cache is None:
        return load_cases(args.runs, args.devset)
    code = ROOT / "tools" / "research_engine" / "engine" / "extractive"
    key = hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted(code.glob("*.py")))
        + (ROOT / "tools" / "research_engine" / "answering.py").read_bytes()
        + Path(__file__).read_bytes()
        + "|".join(str(r.resolve()) for r in args.runs).encode()
        + b"".join(d.read_bytes() for d in args.devset)
    ).hexdigest()
    if args.cache.is_file():
        stored_key, cases = pickle.loads(args.cache.read_bytes())
        if stored_key == key:
            return cases  # type: ignore[no-any-return]
    cases = load_cases(args.runs, args.devset)
    args.cache.write_bytes(pickle.dumps((key, cases)))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="runs kept by bench/quality.py --runs-dir")
    parser.add_argument(
        "--devset", type=Path, action="append", help="a dev set (repeat; default bench/quality_devset.yaml)"
    )
    parser.add_argument("--l2", type=float, action="append", help=f"L2 penalties to try (default {L2_GRID})")
    parser.add_argument(
        "--on-page",
        type=float,
        action="append",
        help=f"on-page label weights to try (default {ON_PAGE_GRID})",
    )
    parser.add_argument("--write", action="store_true", help="write the package's weights and card")
    parser.add_argument("--loso", type=Path, help="write each set's leave-one-set-out weights here")
    parser.add_argument("--card-result", type=Path, help="an end-to-end leave-one-set-out quality result")
    parser.add_argument(
        "--cache",
        type=Path,
        help="keep the read runs in this pickle (reused while the features do not change)",
    )
    args = parser.parse_args(argv)
    args.devset = args.devset or [ROOT / "bench" / "quality_devset.yaml"]
    cases = cached_cases(args)
    if not cases:
        print("fit_ranking: no kept runs of dev-set objectives in " + ", ".join(map(str, args.runs)))
        return 2
    print(
        f"{len(cases)} runs, {sum(len(c.groups) for c in cases)} sub-questions, "
        f"{sum(len(g.picks) for c in cases for g in c.groups)} candidates"
    )
    trials = {}
    for l2 in args.l2 or L2_GRID:
        for on_page in args.on_page or ON_PAGE_GRID:
            loso = leave_one_set_out(cases, l2, on_page)
            trials[l2, on_page] = (total(list(loso.values())), loso)
            t = trials[l2, on_page][0]
            print(
                f"L2 {l2}, on-page label {on_page}: leave-one-set-out recall {100 * t['recall']:.1f}% "
                f"({t['found']}/{t['facts']}), on-page {100 * t['on_page_share']:.1f}%, "
                f"how-to named {t['named']}/{t['how_to']}",
                flush=True,
            )
    chosen = max(trials, key=lambda k: (trials[k][0]["recall"] + trials[k][0]["on_page_share"], -k[0], -k[1]))
    l2, on_page = chosen
    summary, loso = trials[chosen]
    weights = fit(cases, l2, on_page)
    margin = pick_margin(cases, weights)
    in_sample = simulate(cases, weights, margin)
    rows = [line(name, f) for name, f in loso.items()] + [line("**all sets**", summary)]
    print(
        f"\nchosen L2 {l2}, keep margin {margin}; in-sample recall {100 * in_sample['recall']:.1f}%, "
        f"on-page {100 * in_sample['on_page_share']:.1f}%, how-to {in_sample['named']}/{in_sample['how_to']}"
    )
    print("\n| set left out | recall | on-answer-page | how-to named |\n|---|---|---|---|")
    print("\n".join(rows))
    print("\n| feature | weight | why it may matter |\n|---|---|---|")
    for name, value in zip(FEATURE_NAMES, weights, strict=True):
        print(f"| {name} | {value:+.3f} | {FEATURES[name][1]} |")
    if args.loso:
        args.loso.mkdir(parents=True, exist_ok=True)
        for held, f in loso.items():
            ranker = Ranker(tuple(float(v) for v in f["weights"]), f["margin"])
            (args.loso / f"{held}.json").write_text(
                json.dumps(
                    {**ranker.to_dict(), "fitted": {"without": held, "l2": l2, "on_page_label": on_page}},
                    indent=1,
                )
                + "\n"
            )
    if args.write:
        ranker = Ranker(tuple(float(v) for v in weights), margin)
        meta = {**fitted_on(cases, args, l2), "on_page_label": on_page}
        WEIGHTS_FILE.write_text(json.dumps({**ranker.to_dict(), "fitted": meta}, indent=1) + "\n")
        CARD_FILE.write_text(card(meta, weights, margin, rows, in_sample, args.card_result))
        print(f"\nwrote {WEIGHTS_FILE.relative_to(ROOT)} and {CARD_FILE.relative_to(ROOT)}")
    return 0


def fitted_on(cases: list[Case], args: argparse.Namespace, l2: float) -> dict[str, Any]:
    sets: dict[str, int] = {}
    for c in cases:
        sets[c.objective.corpus] = sets.get(c.objective.corpus, 0) + 1

    def git(*cmd: str) -> str:
        return subprocess.run(
            ["git", *cmd], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    if git("status", "--porcelain", "--", "tools"):
        commit += " with uncommitted changes (the commit shipping these weights)"
    return {
        "on": f"{len(cases)} dev-set runs ({', '.join(f'{k} {v}' for k, v in sorted(sets.items()))})",
        "devset_sha256": hashlib.sha256(b"".join(d.read_bytes() for d in args.devset)).hexdigest()[:16],
        "at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "code": commit,
        "l2": l2,
        "sub_questions": sum(len(c.groups) for c in cases),
        "candidates": sum(len(g.picks) for c in cases for g in c.groups),
    }


def card(
    meta: dict[str, Any],
    weights: np.ndarray,
    margin: float,
    rows: list[str],
    in_sample: dict[str, Any],
    result: Path | None,
) -> str:
    lines = [
        "# Card: the extractive model's sentence ranking (`sentence_ranker.json`)",
        "",
        "A linear score over the features of `features.py`, one weight each, and a keep margin; written by",
        "`bench/fit_ranking.py --write` (the script that fits it; read its docstring for the protocol).",
        "",
        f"- Fitted on: {meta['on']}, kept by `bench/quality.py --runs-dir`;",
        f"  {meta['sub_questions']} sub-questions, {meta['candidates']} candidate sentences;",
        f"  dev set sha256 {meta['devset_sha256']}...; candidates read by the code of {meta['code'] or '?'}.",
        f"- When: {meta['at']}.",
        "- Labels: a candidate carrying a must-find fact of its objective (or a how-to's answering",
        "  option, whole token) on one of the objective's answer pages; a fact carried by n candidates",
        "  gives each 1/n.",
        f"- Model: conditional logit per sub-question, L2 {meta['l2']}, on-answer-page label "
        f"{meta['on_page_label']} (both by leave-one-set-out recall plus on-page share);",
        f"  keep margin {margin} (the best fact recall plus on-answer-page share on the training sets).",
        "",
        "## How it scored on material it was not fitted on",
        "",
        "Leave-one-set-out, replayed offline over the same runs' candidates (each set scored with",
        "weights and margin fitted on the other sets only):",
        "",
        "| set left out | recall | on-answer-page | how-to named |",
        "|---|---|---|---|",
        *rows,
        "",
        f"In-sample (all sets): recall {100 * in_sample['recall']:.0f}% "
        f"({in_sample['found']}/{in_sample['facts']}), "
        f"on-answer-page {100 * in_sample['on_page_share']:.0f}%, "
        f"how-to named {in_sample['named']}/{in_sample['how_to']}.",
        "",
    ]
    if result is not None:
        data = json.loads(result.read_text(encoding="utf-8"))
        lines += [
            f"End to end, `bench/quality.py --ranking-dir` ({result.name}): each objective run with",
            "the weights fitted without its set:",
            "",
            "| set left out | recall | on-answer-page | how-to named |",
            "|---|---|---|---|",
        ]
        for name, s in data.get("by_set", {}).items():
            how = f"{s['how_to_named']}/{s['how_to_objectives']}" if s.get("how_to_objectives") else "-"
            lines.append(
                f"| {name} | {100 * s['fact_recall']:.0f}% ({s['facts_found']}/{s['facts_total']}) | "
                f"{100 * (s['on_answer_page_share'] or 0):.0f}% "
                f"({s['cited_on_answer_page']}/{s['cited_claims']}) | {how} |"
            )
        lines.append("")
    lines += ["## Weights", "", "| feature | weight | why it may matter |", "|---|---|---|"]
    lines += [f"| `{n}` | {v:+.3f} | {FEATURES[n][1]} |" for n, v in zip(FEATURE_NAMES, weights, strict=True)]
    lines += [
        "",
        "## Limits",
        "",
        "- Fitted on runs of the code that kept them: a candidate pool depends on what the run fetched.",
        "- The dev set's facts are short strings; a fact in many sentences teaches little (spread 1/n).",
        "- python3.11-doc, git-doc and bash-doc were never read: they are for independent evaluation.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
