"""The selection-and-trust log: `select/SQ-NN.selection.md` (schema `selection`), I/O at the edges.

`log_selection` reads the brief, the run's sources and earlier rounds, scores every
candidate with the pure functions of `selection.scoring`, and appends one round to
the log: every candidate considered, its scores, the judge's stated reason kept
beside them, the verdict (chosen or rejected) and why. Nothing is ever dropped.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from research_engine import brief, decompose, escaping, runrecord
from research_engine.artifacts import load_checked, read_markdown, write_markdown
from research_engine.errors import BadInput
from research_engine.runstate import current_cycle
from research_engine.selection.candidates import read_candidates_file, resolve_references
from research_engine.selection.scoring import (
    DEFAULT_BUDGET,
    DOMAIN_CAP,
    MIN_RELEVANCE,
    MIN_TOTAL,
    SCHEMA,
    SCHEMA_VERSION,
    WEIGHTS,
    Context,
    Facts,
    Scores,
    canonical_key,
    decide,
    domain_of,
    parse_published,
    recency_days,
    score,
    title_boilerplate,
)
from research_engine.trace import Run, iso


def load(run: Run, sq: str) -> dict[str, Any] | None:
    path = run.path("selection", sq=sq)
    if not path.is_file():
        return None
    meta, _ = read_markdown(path)
    return meta


def chosen(run: Run, sq: str) -> list[dict[str, Any]]:
    """The candidates chosen in the latest round for `sq`."""
    meta = load(run, sq)
    if not meta or not meta.get("rounds"):
        return []
    return [c for c in meta["rounds"][-1]["candidates"] if c["verdict"] == "chosen"]


def to_fetch(run: Run, sq: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """What retrieve fetches for `sq`: the candidates chosen in every round (not only the last) that are
    not yet a source of `sq`, each once, with its round; and the chosen ones already retrieved (key ->
    SQ-NN/SRC-NN)."""
    meta = load(run, sq) or {}
    _, retrieved = _run_usage(run, sq)
    pending: dict[str, dict[str, Any]] = {}
    done: dict[str, str] = {}
    for rnd in meta.get("rounds", []):
        for cand in rnd["candidates"]:
            if cand["verdict"] != "chosen":
                continue
            key = cand["canonical_key"]
            if key in retrieved:
                done[key] = retrieved[key]
            else:
                pending.setdefault(key, {**cand, "round": rnd["round"]})
    return list(pending.values()), done


def _run_usage(run: Run, sq: str) -> tuple[dict[str, dict[str, set[str]]], dict[str, str]]:
    """(domain -> {work: its keys} the run already uses, key -> SRC ref retrieved for this sq).

    A work is a retrieved source or a candidate chosen in any earlier round.
    """

    uses: dict[str, dict[str, set[str]]] = {}
    retrieved: dict[str, str] = {}
    for src in runrecord.read(run).get("sources", []):
        url = src.get("url") or ""
        if not url:
            continue
        keys = {canonical_key(url, None), src.get("canonical_key") or canonical_key(url, None)}
        uses.setdefault(domain_of(url), {})[str(src.get("id") or url)] = keys
        if str(src.get("id", "")).startswith(f"{sq}/"):
            retrieved.update({key: src["id"] for key in keys})
    for path in sorted(run.root.joinpath("select").glob("SQ-*.selection.md")):
        meta = load(run, path.name.split(".")[0]) or {}
        for rnd in meta.get("rounds", []):
            for cand in rnd.get("candidates", []):
                if cand.get("verdict") == "chosen":
                    works = uses.setdefault(cand["domain"], {})
                    if not any(cand["canonical_key"] in keys for keys in works.values()):
                        works[cand["canonical_key"]] = {cand["canonical_key"]}  # chosen, not yet retrieved
    return uses, retrieved


def _avoided(domain: str, url: str, avoid: list[str]) -> str | None:
    for entry in avoid or []:
        entry_l = str(entry).strip().lower()
        if not entry_l:
            continue
        bare = re.sub(r"^https?://", "", entry_l).removeprefix("www.").rstrip("/")
        if domain == bare or domain.endswith("." + bare) or url.lower().startswith(entry_l):
            return str(entry)
    return None


def log_selection(run: Run, sq: str, candidates: list[dict[str, Any]], *, as_of: date | None = None) -> dict:
    """Score, dedup and choose among `candidates` for `sq`; append the round to the log and return it."""

    question = decompose.get(run, sq)
    candidates = resolve_references(run, sq, candidates)
    fields = brief.load_locked(run.root)
    recency = str(fields.get("recency") or "5y")
    recency_days(recency)
    budget = int(brief.budget_of(fields).get("sources_per_sub_question") or DEFAULT_BUDGET)
    ctx = Context(
        claim_type=question["claim_type"],
        recency=recency,
        as_of=as_of or date.today(),
        reproducibility=str(fields.get("reproducibility") or "reproducible"),
        question=str(question.get("text") or ""),
        site_terms=title_boilerplate([str(c.get("title") or "") for c in candidates]),
    )
    if not candidates:
        raise BadInput("the candidates file lists no candidates", code="no-candidates", field="candidates")

    with run.lock():
        uses, retrieved = _run_usage(run, sq)
        items: list[dict[str, Any]] = []
        scores: list[Scores] = []
        for cand in candidates:
            url = str(cand["url"])
            key = canonical_key(url, cand.get("doi"))
            domain = domain_of(url)
            published = parse_published(cand.get("published"), cand.get("year"))
            scheme = url.split(":", 1)[0].lower() if ":" in url else "other"
            used = sum(1 for keys in uses.get(domain, {}).values() if key not in keys)
            facts = Facts(
                kind=cand.get("kind") or "web",
                source_type=cand.get("source_type"),
                has_doi=bool(cand.get("doi")) or key.startswith("doi:"),
                scheme=scheme,
                access_tier=cand.get("access_tier"),
                published=published,
                domain_uses=used,
                title=str(cand.get("title") or ""),
                snippet=str(cand.get("snippet") or ""),
                url=url,
                rank=cand.get("rank") if isinstance(cand.get("rank"), int) else None,
            )
            items.append(
                {
                    "key": key,
                    "domain": domain,
                    "rank": cand.get("rank"),
                    "verdict_hint": cand.get("verdict_hint"),
                    "reason": cand.get("reason"),
                    "avoided": _avoided(domain, url, fields.get("avoid_sources") or []),
                    "retrieved_as": retrieved.get(key),
                }
            )
            scores.append(score(facts, ctx))
        decisions = decide(items, scores, budget=budget)

        records = []
        for n, (cand, item, dec) in enumerate(zip(candidates, items, decisions, strict=True), 1):
            published = parse_published(cand.get("published"), cand.get("year"))
            records.append(
                {
                    "n": n,
                    "title": cand.get("title") or None,
                    "url": cand["url"],
                    "canonical_key": item["key"],
                    "domain": item["domain"],
                    "kind": cand.get("kind") or "web",
                    "backend": cand.get("backend"),
                    "rank": cand.get("rank"),
                    "source_type": cand.get("source_type"),
                    "access_tier": cand.get("access_tier"),
                    "doi": cand.get("doi"),
                    "published": published.isoformat() if published else None,
                    "snippet": cand.get("snippet") or None,
                    "reason": cand.get("reason"),
                    "verdict_hint": cand.get("verdict_hint"),
                    **({"ref": cand["ref"]} if cand.get("ref") else {}),
                    "scores": dec.scores.to_dict(),
                    "basis": dict(dec.scores.basis),
                    "verdict": dec.verdict,
                    "decided_by": dec.decided_by,
                    "why": dec.why,
                }
            )
        meta = load(run, sq) or {"schema_version": SCHEMA_VERSION, "sub_question": sq, "rounds": []}
        meta["claim_type"] = question["claim_type"]
        round_ = {
            "round": len(meta["rounds"]) + 1,
            "cycle": current_cycle(run),
            "logged_at": iso(),
            "as_of": ctx.as_of.isoformat(),
            "recency": recency,
            "reproducibility": ctx.reproducibility,
            "budget": budget,
            "domain_cap": DOMAIN_CAP,
            "min_total": MIN_TOTAL,
            "min_relevance": MIN_RELEVANCE,
            "weights": dict(WEIGHTS),
            "candidates": records,
            "chosen": [r["n"] for r in records if r["verdict"] == "chosen"],
        }
        meta["rounds"].append(round_)
        write_markdown(run.path("selection", sq=sq), meta, render(meta, question), schema=SCHEMA)
    return round_


def kind_of(candidate: dict[str, Any]) -> str | None:
    """A candidate's kind of source: its API (openalex, worldbank), else the page's source type (peer,
    primary, press, ...); None for a web page nobody typed (no kind of its own)."""
    kind = str(candidate.get("kind") or "web")
    return kind if kind != "web" else candidate.get("source_type")


def kinds_of(run: Run, sq: str, round_: dict[str, Any]) -> dict[str, Any]:
    """The kinds of source a round chose and the kinds `sq`'s searches offered (this round's candidates
    and every result recorded for it), and whether another search should look for a kind the choice
    lacks: only when everything chosen is of one kind while others were offered. A corpus of one kind (a
    local documentation set) needs no second search for the sake of variety."""
    recorded = (read_candidates_file(run, sq) or {}).get("candidates", [])
    chosen = sorted({k for c in round_["candidates"] if c["verdict"] == "chosen" and (k := kind_of(c))})
    offered = sorted({k for c in [*round_["candidates"], *recorded] if (k := kind_of(c))})
    return {"chosen": chosen, "offered": offered, "search_other_kinds": len(chosen) == 1 < len(offered)}


def render(meta: dict[str, Any], question: dict[str, Any]) -> str:
    lines = [
        f"# Selection for {meta['sub_question']} ({meta['claim_type']})",
        "",
        escaping.text(question["text"]),
        "",
    ]
    for rnd in meta["rounds"]:
        lines += [
            f"## Round {rnd['round']} (cycle {rnd['cycle']}, {rnd['logged_at']})",
            "",
            f"Budget {rnd['budget']}, domain cap {rnd['domain_cap']}, recency {rnd['recency']}, "
            f"{rnd['reproducibility']}. Chosen: {len(rnd['chosen'])} of {len(rnd['candidates'])}.",
            "",
            "| # | verdict | total | relev. | fit | verif. | access | fresh | primary | divers. | source |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in rnd["candidates"]:
            s = c["scores"]
            label = (c["title"] or c["url"]).replace("|", "/")[:70]
            shown = escaping.link(c["url"], label).replace("|", "%7C")  # a pipe would end the table cell
            relevant = f"{s['relevance']:.2f}" if "relevance" in s else "-"  # logs written before relevance
            lines.append(
                f"| {c['n']} | {c['verdict']} | {s['total']:.2f} | {relevant} | {s['fit']:.2f} | "
                f"{s['verifiability']:.2f} | {s['access']:.2f} | {s['freshness']:.2f} | "
                f"{s['primary']:.2f} | {s['diversity']:.2f} | {shown} |"
            )
        lines += ["", "Why:", ""]
        for c in rnd["candidates"]:
            # One full stop each: a why or a reason that ends a sentence already keeps its own.
            why = escaping.text(c["why"]).rstrip(".")
            agent = f" Agent: {escaping.text(c['reason']).rstrip('.')}." if c.get("reason") else ""
            lines.append(f"- {c['n']}. **{c['verdict']}**: {why}.{agent}")
        lines.append("")
    lines.append("Written by `research-engine select log`; do not edit by hand.")
    return "\n".join(lines)


def check_selections(run: Run, report: Any) -> None:
    """validate: each selection log conforms, names its own sub-question, and that sub-question exists."""

    known = None
    for path in sorted(run.root.joinpath("select").glob("*.selection.md")):
        meta = load_checked(run, report, path, SCHEMA)
        if meta is None:
            continue
        sq = meta["sub_question"]
        if path.name != f"{sq}.selection.md":
            report.add(path, f"the log names {sq} but the file is {path.name}", "cross-reference")
        if known is None:
            try:
                known = {q["id"] for q in decompose.load(run)}
            except BadInput:
                known = set()
        if sq not in known:
            report.add(
                path, f"selection for {sq}, which is not a sub-question of this run", "cross-reference"
            )
        for rnd in meta["rounds"]:
            marked = [c["n"] for c in rnd["candidates"] if c["verdict"] == "chosen"]
            if sorted(rnd["chosen"]) != sorted(marked):
                report.add(
                    path,
                    f"round {rnd['round']}: chosen list {rnd['chosen']} disagrees with the verdicts {marked}",
                    "cross-reference",
                )
            if len(marked) > rnd["budget"]:
                report.add(
                    path,
                    f"round {rnd['round']}: {len(marked)} chosen over a budget of {rnd['budget']}",
                    "over-budget",
                )
