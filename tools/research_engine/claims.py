"""The claims ledger: `consolidate/synthesis.draft.md` (schema `claims`) and its grounding gate.

Owns adding claims CLM-NN (each with its sources and the verbatim quotes that
carry it), retiring them, recording tensions T-NN between claims and resolving
them, and rendering the draft for people. Every write is a read-modify-write of
the draft under the run lock, so concurrent callers never lose a claim.

The grounding gate runs at entry, before anything is written: a cited source
must exist in the run and have stored text; each quote must be found in its
source's stored text (exactly, or after `grounding.normalize`); every number in
the claim must appear in its quotes. A failure raises `CheckFailed` (exit 1)
naming every offending id, with the closest passage when a quote is not found.

This module never judges whether a claim is true (that is the verifier's job,
against its own fresh copy) and never deletes a claim: retired claims stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from research_engine.errors import BadInput, CheckFailed, Problem
from research_engine.runstate import current_cycle
from research_engine.trace import Run, iso

SCHEMA = "claims"
SCHEMA_VERSION = 1
CONFIDENCE = ("high", "medium", "low")
MIN_QUOTE_CHARS = 4  # after normalization; shorter strings are found anywhere and carry nothing


def _empty() -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "claims": [], "tensions": []}


def load(run: Run) -> dict[str, Any]:
    """The draft's front matter; an empty ledger if the draft does not exist yet."""
    from research_engine.artifacts import read_markdown

    path = run.path("draft")
    if not path.is_file():
        return _empty()
    meta, _ = read_markdown(path)
    meta.setdefault("schema_version", SCHEMA_VERSION)
    meta.setdefault("claims", [])
    meta.setdefault("tensions", [])
    return meta


def active_claims(run: Run) -> list[dict[str, Any]]:
    return [c for c in load(run)["claims"] if c.get("status") == "active"]


def get_claim(ledger: dict[str, Any], clm: str) -> dict[str, Any]:
    for claim in ledger["claims"]:
        if claim["id"] == clm:
            return claim
    raise CheckFailed(f"claim {clm} does not exist in this run", code="unknown-claim", field="claim")


# ---------------------------------------------------------------------------- the gate


@dataclass
class _Text:
    text: str
    starts: list[tuple[int, str]]  # (offset in text, passage id)

    def passage_at(self, offset: int | None) -> str | None:
        if offset is None:
            return None
        found = None
        for start, pid in self.starts:
            if start > offset:
                break
            found = pid
        return found


def _source_text(run: Run, ref: str) -> _Text:
    from research_engine import retrieve

    _, passages = retrieve.load_source(run, ref)
    starts, offset = [], 0
    for p in passages:
        starts.append((offset, p.id))
        offset += len(p.text) + 2  # joined by a blank line, as retrieve.stored_text does
    return _Text("\n\n".join(p.text for p in passages), starts)


def check_claim(run: Run, text: str, sources: list[str], quotes: list[str]) -> list[dict[str, Any]]:
    """Run the grounding gate; return the evidence entries, or raise CheckFailed naming every problem."""
    from research_engine import grounding, ids

    text = " ".join((text or "").split())
    if not text:
        raise BadInput("a claim needs its text", code="empty-claim", field="text")
    if not sources:
        raise CheckFailed(
            "a claim must cite at least one source (--source SQ-NN/SRC-NN): un-cited claims are refused",
            code="uncited-claim",
            field="source",
        )
    if not quotes:
        raise CheckFailed(
            "a claim must carry the verbatim quote that supports it (--quote)",
            code="missing-quote",
            field="quote",
        )
    for ref in sources:
        ids.parse_source_ref(ref)  # malformed references are bad input (exit 2)
    if len(set(sources)) != len(sources):
        raise BadInput(
            "the same source is cited twice; cite each source once", code="duplicate-source", field="source"
        )
    if len(quotes) == len(sources):
        pairs = list(zip(sources, quotes, strict=True))
    elif len(quotes) == 1:
        pairs = [(ref, quotes[0]) for ref in sources]  # one quote must then be found in every source
    else:
        raise BadInput(
            f"{len(sources)} sources and {len(quotes)} quotes: give one --quote per --source, "
            "in the same order, or one quote found in every source",
            code="quote-source-mismatch",
            field="quote",
        )
    for quote in quotes:
        if len(grounding.normalize(quote)) < MIN_QUOTE_CHARS:
            raise BadInput(
                f"quote {quote!r} is too short to carry a claim", code="short-quote", field="quote"
            )

    problems: list[Problem] = []
    texts: dict[str, _Text] = {}
    missing = [ref for ref in sources if not run.path("source", **_keys(ref)).is_file()]
    if missing:
        problems.append(
            Problem(
                "unknown-source", f"cited source(s) not in this run: {', '.join(missing)}", field="source"
            )
        )
    for ref in sources:
        if ref in missing:
            continue
        loaded = _source_text(run, ref)
        if not loaded.text.strip():
            problems.append(
                Problem(
                    "no-stored-text", f"source {ref} has no stored text to ground a claim in", field="source"
                )
            )
        else:
            texts[ref] = loaded
    if problems:
        raise CheckFailed(
            "grounding gate: " + "; ".join(p.message for p in problems),
            code="grounding-gate",
            problems=problems,
            data={"offending_sources": missing + [r for r in sources if r not in missing and r not in texts]},
        )

    evidence: list[dict[str, Any]] = []
    not_found: list[dict[str, Any]] = []
    for ref, quote in pairs:
        match = grounding.find_quote(quote, texts[ref].text)
        if not match.found:
            passage = texts[ref].passage_at(match.start)
            not_found.append(
                {
                    "source": ref,
                    "quote": quote,
                    "closest": match.closest,
                    "passage": passage,
                    "score": match.score,
                }
            )
            shown = (
                f" closest passage [{passage}] (similarity {match.score:.2f}): {match.closest!r}"
                if match.closest
                else " (nothing similar)"
            )
            problems.append(Problem("quote-not-found", f"quote not found in {ref}:{shown}", field="quote"))
            continue
        evidence.append(
            {
                "source": ref,
                "quote": quote,
                "match": match.match,
                "score": float(match.score),
                "passage": texts[ref].passage_at(match.start),
            }
        )
    ok, missing_numbers = grounding.numbers_supported(text, "\n".join(dict.fromkeys(quotes)))
    if not ok:
        problems.append(
            Problem(
                "number-not-in-quote",
                f"number(s) in the claim not found in its quote(s): {', '.join(missing_numbers)}",
                field="text",
            )
        )
    if problems:
        raise CheckFailed(
            "grounding gate: " + "; ".join(p.message for p in problems),
            code="grounding-gate",
            problems=problems,
            data={"not_found": not_found, "missing_numbers": missing_numbers},
        )
    return evidence


def _keys(ref: str) -> dict[str, str]:
    sq, src = ref.split("/")
    return {"sq": sq, "src": src}


# ---------------------------------------------------------------------------- writes


def add_claim(
    run: Run, sq: str, text: str, sources: list[str], quotes: list[str], confidence: str = "medium"
) -> str:
    """Pass the grounding gate and record the claim; returns its id (CLM-NN)."""
    from research_engine import decompose, ids

    if confidence not in CONFIDENCE:
        raise BadInput(
            f"unknown confidence {confidence!r}; expected one of {', '.join(CONFIDENCE)}",
            code="bad-confidence",
            field="confidence",
        )
    decompose.get(run, sq)
    evidence = check_claim(run, text, list(sources), list(quotes))
    cycle = current_cycle(run)
    with run.lock():
        ledger = load(run)
        clm = ids.next_id(run, "clm")
        ledger["claims"].append(
            {
                "id": clm,
                "sub_question": sq,
                "text": " ".join(text.split()),
                "evidence": evidence,
                "confidence": confidence,
                "status": "active",
                "retired_why": None,
                "cycle": cycle,
                "added_at": iso(),
            }
        )
        _write(run, ledger)
    return clm


def retire(run: Run, clm: str, why: str) -> dict[str, Any]:
    """Retire a claim (it stays in the ledger, marked retired, with the reason)."""
    why = " ".join((why or "").split())
    if not why:
        raise BadInput("say why the claim is retired (--why)", code="missing-why", field="why")
    with run.lock():
        ledger = load(run)
        claim = get_claim(ledger, clm)
        if claim["status"] == "retired":
            raise CheckFailed(
                f"claim {clm} is already retired ({claim.get('retired_why')})",
                code="already-retired",
                field="claim",
            )
        claim.update(status="retired", retired_why=why, retired_at=iso())
        _write(run, ledger)
    return claim


def add_tension(run: Run, claims: list[str], about: str) -> str:
    """Record a tension between two or more active claims; returns its id (T-NN)."""
    from research_engine import ids

    about = " ".join((about or "").split())
    if not about:
        raise BadInput("say what the tension is about (--about)", code="missing-about", field="about")
    wanted = list(dict.fromkeys(c.strip() for c in claims if c.strip()))
    if len(wanted) < 2:
        raise BadInput(
            "a tension needs at least two different claims (--claims CLM-a,CLM-b)",
            code="tension-needs-two",
            field="claims",
        )
    with run.lock():
        ledger = load(run)
        known = {c["id"]: c for c in ledger["claims"]}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise CheckFailed(
                f"tension cites claim(s) not in this run: {', '.join(unknown)}",
                code="unknown-claim",
                field="claims",
                data={"unknown": unknown},
            )
        retired = [c for c in wanted if known[c]["status"] == "retired"]
        if retired:
            raise CheckFailed(
                f"tension cites retired claim(s): {', '.join(retired)}", code="retired-claim", field="claims"
            )
        tid = ids.next_id(run, "tension")
        ledger["tensions"].append(
            {
                "id": tid,
                "claims": wanted,
                "about": about,
                "status": "open",
                "resolution": None,
                "added_at": iso(),
            }
        )
        _write(run, ledger)
    return tid


def resolve_tension(run: Run, tension: str, resolution: str) -> dict[str, Any]:
    resolution = " ".join((resolution or "").split())
    if not resolution:
        raise BadInput(
            "say how the tension was resolved (--resolution)", code="missing-resolution", field="resolution"
        )
    with run.lock():
        ledger = load(run)
        for item in ledger["tensions"]:
            if item["id"] == tension:
                break
        else:
            raise CheckFailed(
                f"tension {tension} does not exist in this run", code="unknown-tension", field="tension"
            )
        if item["status"] == "resolved":
            raise CheckFailed(
                f"tension {tension} is already resolved", code="already-resolved", field="tension"
            )
        item.update(status="resolved", resolution=resolution, resolved_at=iso())
        _write(run, ledger)
    return item


def open_tensions(run: Run) -> list[dict[str, Any]]:
    return [t for t in load(run)["tensions"] if t["status"] == "open"]


def _write(run: Run, ledger: dict[str, Any]) -> None:
    from research_engine import decompose
    from research_engine.artifacts import write_markdown

    try:
        questions = {q["id"]: q["text"] for q in decompose.load(run)}
    except BadInput:
        questions = {}
    write_markdown(run.path("draft"), ledger, render(ledger, questions), schema=SCHEMA)


# ---------------------------------------------------------------------------- rendering


def render(ledger: dict[str, Any], questions: dict[str, str] | None = None) -> str:
    """The draft's body: active claims by sub-question with their evidence, retired claims, tensions."""
    from research_engine.ids import sort_key

    questions = questions or {}
    lines = ["# Synthesis draft", ""]
    active = [c for c in ledger["claims"] if c["status"] == "active"]
    retired = [c for c in ledger["claims"] if c["status"] == "retired"]
    by_sq: dict[str, list[dict[str, Any]]] = {}
    for claim in active:
        by_sq.setdefault(claim["sub_question"], []).append(claim)
    if not active:
        lines += ["(no active claims)", ""]
    for sq in sorted(by_sq, key=sort_key):
        title = f": {questions[sq]}" if sq in questions else ""
        lines += [f"## {sq}{title}", ""]
        for claim in sorted(by_sq[sq], key=lambda c: sort_key(c["id"])):
            lines += _claim_lines(claim)
    if retired:
        lines += ["## Retired claims", ""]
        for claim in sorted(retired, key=lambda c: sort_key(c["id"])):
            lines += _claim_lines(claim)
    lines += ["## Tensions", ""]
    if not ledger["tensions"]:
        lines += ["(none recorded)", ""]
    for t in ledger["tensions"]:
        state = f"resolved: {t['resolution']}" if t["status"] == "resolved" else "open"
        lines.append(f"- **{t['id']}** ({', '.join(t['claims'])}): {t['about']} *({state})*")
    lines += ["", "Written by `research-engine claims`; do not edit by hand."]
    return "\n".join(lines)


def _claim_lines(claim: dict[str, Any]) -> list[str]:
    status = f"; retired: {claim['retired_why']}" if claim["status"] == "retired" else ""
    head = f"{claim['confidence']} confidence, cycle {claim['cycle']}{status}"
    out = [f"- **{claim['id']}** ({head}) {claim['text']}"]
    for ev in claim["evidence"]:
        where = f" [{ev['passage']}]" if ev.get("passage") else ""
        out.append(f"  - {ev['source']}{where}: \u201c{ev['quote']}\u201d")
    out.append("")
    return out


def check_claims(run: Run, report: Any) -> None:
    """validate: the draft conforms; claims cite existing sub-questions and sources whose stored text
    still holds each quote; tensions cite existing claims; ids are unique."""
    from research_engine import decompose, grounding
    from research_engine.artifacts import load_checked

    path = run.path("draft")
    meta = load_checked(run, report, path, SCHEMA)
    if meta is None:
        return
    try:
        known_sq = {q["id"] for q in decompose.load(run)}
    except BadInput:
        known_sq = set()
    texts: dict[str, str | None] = {}
    seen: set[str] = set()
    for claim in meta["claims"]:
        clm = claim["id"]
        if clm in seen:
            report.add(path, f"claim id {clm} appears twice", "duplicate-id")
        seen.add(clm)
        if claim["sub_question"] not in known_sq:
            report.add(
                path,
                f"{clm} answers {claim['sub_question']}, which is not a sub-question of this run",
                "cross-reference",
            )
        for ev in claim["evidence"]:
            ref = ev["source"]
            if ref not in texts:
                texts[ref] = (
                    _source_text(run, ref).text if run.path("source", **_keys(ref)).is_file() else None
                )
            text = texts[ref]
            if text is None:
                report.add(path, f"{clm} cites {ref}, which is not in this run", "cross-reference")
            elif not grounding.find_quote(ev["quote"], text).found:
                report.add(
                    path, f"{clm}: its quote is no longer found in {ref}'s stored text", "cross-reference"
                )
    tension_ids: set[str] = set()
    for t in meta["tensions"]:
        if t["id"] in tension_ids:
            report.add(path, f"tension id {t['id']} appears twice", "duplicate-id")
        tension_ids.add(t["id"])
        unknown = [c for c in t["claims"] if c not in seen]
        if unknown:
            report.add(
                path, f"{t['id']} cites claim(s) not in the draft: {', '.join(unknown)}", "cross-reference"
            )
