"""The deliverable: checks on result.md, its references, evidence map and reproducibility footer.

`check` reads a Markdown deliverable written by the agent or the model and
reports every problem (exit 1 at the CLI):

- every `CLM-NN` it cites exists in the claims ledger;
- outside a caveat area, no cited claim is retired and no cited claim stands
  refused (its latest verdict is `refuse`): a refused claim is never stated as
  established;
- every block that states a fact cites at least one claim (see below);
- references are complete: every `SQ-NN/SRC-NN` it names exists in the run, and
  if the author wrote a References (or Sources) section, it names (by id or URL)
  every source that carries a cited claim. Without one, `finish` generates it.

Caveat areas (where refused or retired claims may be named, and where facts
need no citation because a gap is reported as a gap) are marked in one of two ways:

1. a heading whose text contains one of CAVEAT_WORDS (gap, caveat, limitation,
   open question, refused, not established, unresolved, uncertain, caution); the
   area runs to the next heading of the same or a higher level;
2. a blockquote whose first word is Caveat, Gap, Refused, Caution or Warning
   (also GitHub's `> [!CAUTION]` / `> [!WARNING]`), e.g. `> **Caveat:** ...`.

A block "states a fact" when it is prose (a paragraph, a list item or a table
body row) outside a caveat area and outside the framing sections (headings that
START with one of EXEMPT_WORDS: method, scope, about, reference, sources,
evidence map, reproducibility), and it
has at least FACT_MIN_WORDS words or contains a number. Headings, code and
table header rows never state facts.

A run that ended without one citable claim (every active claim refused by the
verifier, or none at all) has no finding to state: a deliverable that states
none (it cites no claim, or cites refused ones only in caveat areas) is a
no-finding deliverable, not a failed one (`no_finding`, with a warning). Every
other check still applies, so it may only name what is missing as gaps and caveats.

`finish` checks, then writes synthesis/result.md: a short front matter (run id, when it
finished, stop reason, reproducibility label; the cited claims are in run.json), the document, a generated
reference list (unless the author wrote one), the evidence map (well supported /
needs caution / refused during the run), and a reproducibility footer (sources
and digests, the verifier's copies, model, cache use), and completes run.json.
A no-finding deliverable gets `no_finding: true` in its front matter and, instead
of references and an evidence map, what was searched, retrieved and refused and
the open questions (`finish` returns `no_finding`; the CLI and `run` exit 8).
This module never writes the deliverable's prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research_engine import (
    bounded,
    brief,
    decompose,
    escaping,
    nofinding,
    prose_review,
    retrieve,
    runrecord,
    support,
    support_record,
)
from research_engine import claims as ledger
from research_engine.artifacts import read_counted, read_markdown, write_markdown
from research_engine.errors import BadInput, CheckFailed, Problem, ResearchEngineError
from research_engine.grounding import numbers_in
from research_engine.ids import parse_source_ref, sort_key
from research_engine.markdown_blocks import (
    GENERATED_MARK,
    Block,
    parse_blocks,
)
from research_engine.runstate import all_contestations, latest_verdicts, load_loop_log
from research_engine.schemas import validate
from research_engine.trace import Run, iso
from research_engine.vocabulary import NO_SOURCES_LABEL

CLAIM_RE = re.compile(r"\bCLM-[0-9]{2,}\b")
SOURCE_RE = re.compile(r"\bSQ-[0-9]{2,}/SRC-[0-9]{2,}\b")
FACT_MIN_WORDS = 6


@dataclass
class CheckReport:
    file: str
    cited: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    has_references: bool = False
    no_finding: bool = False  # cites nothing, in a run with nothing citable: says no finding was supported
    sentences: list[support.Sentence] = field(default_factory=list)  # every judged sentence (`support`)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "ok": self.ok,
            "cited_claims": self.cited,
            "has_references": self.has_references,
            "no_finding": self.no_finding,
            "problems": [p.to_dict() for p in self.problems],
            "warnings": [w.to_dict() for w in self.warnings],
            "sentences": {"judged": len(self.sentences), "failed": sum(not s.ok for s in self.sentences)},
            "findings": [s.to_dict() for s in self.sentences if not s.ok],
        }


def _states_fact(block: Block) -> bool:
    if block.caveat or block.exempt or block.references:
        return False
    bare = SOURCE_RE.sub(" ", CLAIM_RE.sub(" ", block.text))
    words = re.findall(r"[^\W\d_]{2,}", bare)
    return len(words) >= FACT_MIN_WORDS or bool(numbers_in(bare))


def claim_state(run: Run) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(claims by id, latest verdict by claim id)."""
    return {c["id"]: c for c in ledger.load(run)["claims"]}, latest_verdicts(run)


def check_text(run: Run, markdown: str, *, file: str = "result.md") -> CheckReport:
    """Every check on a deliverable's text; problems are collected, never raised."""

    claims, verdicts = claim_state(run)
    report = CheckReport(file=file)
    blocks = parse_blocks(_strip_front_matter(markdown).split(GENERATED_MARK)[0])
    cited: list[str] = []
    stated = False  # a claim cited outside every caveat area: the deliverable states a finding
    for block in blocks:
        for clm in dict.fromkeys(CLAIM_RE.findall(block.text)):
            if clm not in cited:
                cited.append(clm)
            stated = stated or not block.caveat
            where = f"line {block.line}"
            if clm not in claims:
                report.problems.append(
                    Problem(
                        "unknown-claim",
                        f"{where}: cites {clm}, which is not a claim in this run",
                        field=clm,
                        file=file,
                    )
                )
                continue
            if block.caveat:
                continue
            if claims[clm].get("status") == "retired":
                report.problems.append(
                    Problem(
                        "retired-claim",
                        f"{where}: cites {clm}, which is retired "
                        f"({claims[clm].get('retired_why')}); name it only in a gap or "
                        "caveat",
                        field=clm,
                        file=file,
                    )
                )
            verdict = (verdicts.get(clm) or {}).get("verdict")
            if verdict == "refuse":
                report.problems.append(
                    Problem(
                        "refused-claim-stated",
                        f"{where}: states {clm} as established, "
                        "but the verifier refused it; a refused claim may appear only in a "
                        "gap or caveat section or a '> Caveat:' blockquote",
                        field=clm,
                        file=file,
                    )
                )
            elif verdict is None and claims[clm].get("status") == "active":
                report.warnings.append(
                    Problem(
                        "unverified-claim",
                        f"{where}: cites {clm}, which has no verdict",
                        field=clm,
                        file=file,
                    )
                )
        if _states_fact(block) and not CLAIM_RE.search(block.text):
            shown = block.text if len(block.text) <= 80 else block.text[:77] + "..."
            report.problems.append(
                Problem(
                    "uncited-fact",
                    f"line {block.line}: states a fact without citing a claim (CLM-NN): {shown!r}",
                    file=file,
                )
            )
    report.cited = sorted(cited, key=sort_key)
    report.sentences = judged_sentences(run, blocks, claims)
    for sentence in report.sentences:
        if not sentence.ok:
            code = "uncited-fact" if sentence.kind == support.UNCITED else "unsupported-statement"
            report.problems.append(
                Problem(code, sentence.message(), field=",".join(sentence.cited) or None, file=file)
            )

    known_sources = set(retrieve.list_sources(run))
    for block in blocks:
        for ref in SOURCE_RE.findall(block.text):
            if ref not in known_sources:
                report.problems.append(
                    Problem(
                        "unknown-source",
                        f"line {block.line}: names {ref}, which is not a source in this run",
                        field=ref,
                        file=file,
                    )
                )
    ref_blocks = [b for b in blocks if b.references]
    report.has_references = bool(ref_blocks)
    if ref_blocks:
        listed = " ".join(b.text for b in ref_blocks)
        for ref in _carrying_sources(claims, [c for c in cited if c in claims]):
            url = _source_url(run, ref)
            if ref not in listed and not (url and url in listed):
                report.problems.append(
                    Problem(
                        "incomplete-references",
                        f"the references do not list {ref}"
                        + (f" ({url})" if url else "")
                        + ", which carries a cited claim",
                        field=ref,
                        file=file,
                    )
                )
    if not blocks:
        report.problems.append(Problem("empty-deliverable", "the deliverable has no text", file=file))
    elif not stated and not nofinding.citable_claims(run):
        # Nothing could be supported: saying so, with the gaps and the refusals, is the honest deliverable.
        report.no_finding = True
        report.warnings.append(
            Problem(
                "no-finding",
                "the run has no supported claim, and the deliverable states none: it is a no-finding "
                "deliverable",
                file=file,
            )
        )
    elif not cited:
        report.problems.append(Problem("no-citations", "the deliverable cites no claim (CLM-NN)", file=file))
    return report


def judged_sentences(
    run: Run, blocks: list[Block], claims: dict[str, dict[str, Any]] | None = None
) -> list[support.Sentence]:
    """Every sentence of the blocks that state facts, judged against the claims it cites (`support`); the
    objective and the sub-questions are the context a sentence may restate."""
    claims = claims if claims is not None else claim_state(run)[0]
    objective = str(brief.load_locked(run.root).get("objective") or "")
    questions = [objective] + [sq["text"] for sq in decompose.load(run)]
    judge = support.Judge(claims, " ".join(questions), questions)
    out: list[support.Sentence] = []
    for block in blocks:
        if not (block.caveat or block.exempt or block.references):
            out += judge.block(block.text, block.line)
    return out


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text


def _carrying_sources(claims: dict[str, dict[str, Any]], cited: list[str]) -> list[str]:
    refs = {ev["source"] for clm in cited for ev in claims[clm].get("evidence", [])}
    return sorted(refs, key=sort_key)


def _reference_lines(run: Run, carrying: list[str]) -> list[str]:
    """One line per page, naming every source id that cites it: a page fetched for several sub-questions
    is one reference (pages are one when their canonical keys are, else their URLs)."""
    pages: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for ref in carrying:
        meta, _ = retrieve.load_source(run, ref)
        url = meta.get("final_url") or meta.get("requested_url")
        pages.setdefault(str(meta.get("canonical_key") or url), []).append((ref, meta))
    lines = []
    for group in pages.values():
        meta = group[0][1]
        refs = ", ".join(f"**{ref}**" for ref, _ in group)
        title = escaping.text(meta.get("title") or "(untitled)")
        url = escaping.link(meta.get("final_url") or meta.get("requested_url"))
        lines.append(f"- {refs} {title}. {url} (retrieved {meta['retrieved_at']}, {meta['access_tier']})")
    return lines


def _source_url(run: Run, ref: str) -> str | None:
    try:
        meta, _ = retrieve.load_source(run, ref)
    except BadInput:
        return None
    return meta.get("final_url") or meta.get("requested_url")


def read_deliverable(path: str | Path) -> str:
    """The deliverable's text; `-` reads it from stdin (an agent passes it in a quoted heredoc)."""
    p = Path(path)
    if str(path) != bounded.STDIN and not p.exists():
        raise BadInput(f"no deliverable at {p}", code="missing-file", field="file")
    try:
        data = bounded.read_input(p, "deliverable")
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"cannot read {p}: it is not UTF-8 text", code="unreadable-file", field="file"
        ) from exc


def label(path: str | Path) -> str:
    return "(stdin)" if str(path) == bounded.STDIN else Path(path).name


def check(run: Run, path: str | Path) -> CheckReport:
    return check_text(run, read_deliverable(path), file=label(path))


# ---------------------------------------------------------------- finish


def reproducibility(run: Run, cited: list[str]) -> dict[str, Any]:
    """`reproducible` unless a paid or gated source carried a cited claim (then `checkable`, naming it), or
    `no-sources` when the run retrieved none: nothing could be re-checked, so nothing is reproducible."""

    if not retrieve.list_sources(run):
        return {"label": NO_SOURCES_LABEL, "reasons": ["no source was retrieved"]}
    claims, _ = claim_state(run)
    reasons = []
    for ref in _carrying_sources(claims, [c for c in cited if c in claims]):
        try:
            meta, _ = retrieve.load_source(run, ref)
        except BadInput:
            continue
        if meta.get("access_tier") in ("paid", "gated"):
            reasons.append(
                f"{ref} ({meta.get('final_url') or meta.get('requested_url')}) is "
                f"{meta['access_tier']} and carries a claim"
            )
    return {"label": "checkable" if reasons else "reproducible", "reasons": reasons}


def finish(run: Run, path: str | Path) -> dict[str, Any]:
    """Check the deliverable, place it at synthesis/result.md with generated sections, complete run.json."""

    text = read_deliverable(path)
    report = check_text(run, text, file=label(path))
    if not report.ok:
        raise CheckFailed(
            f"{label(path)} does not pass `report check` ({len(report.problems)} problem(s))",
            code="report-check-failed",
            problems=report.problems,
            data=report.to_dict(),
        )
    log = load_loop_log(run)
    last = log["cycles"][-1] if log["cycles"] else None
    if last is None or last["decision"]["action"] != "stop":
        raise CheckFailed(
            "the controller has not stopped the run yet: run `research-engine control` until it decides stop",
            code="run-not-stopped",
        )
    # The verifier's verdicts, when it read the prose (a prose worksheet exists): it must pass every sentence.
    judged_by, verdicts = prose_review.for_finish(run, report.sentences)
    record = runrecord.read(run)
    repro = reproducibility(run, report.cited)
    # Raw HTML and links that are not web links become text: a model or an agent may have copied a page's
    # title or a link into the deliverable, and Markdown viewers render both (docs/conventions.md).
    body = escaping.document(_strip_front_matter(text).split(GENERATED_MARK)[0].rstrip())
    placed = judged_sentences(run, parse_blocks(body))  # the sentences as result.md will show them
    if len(placed) == len(report.sentences):  # escaping changes no sentence's place: verdicts carry over
        verdicts = {
            prose_review.sentence_key(p.text, p.cited): verdicts[k]
            for p, s in zip(placed, report.sentences, strict=True)
            if (k := prose_review.sentence_key(s.text, s.cited)) in verdicts
        }
    support_rec = support_record.build(placed, judged_by, verdicts)
    generated = _generated_sections(run, report, record, repro, placed, support_rec)
    # The few facts a reader wants; the cited claims, the cycles and the label's reasons are in run.json.
    meta: dict[str, Any] = {
        "run_id": record["run_id"],
        "finished_at": iso(),
        "stop_reason": last["decision"]["stop_reason"],
        "reproducibility": repro["label"],
    }
    if report.no_finding:
        meta["no_finding"] = True
    target = run.path("result")
    support_record.write(run, support_rec)
    write_markdown(target, meta, body + "\n\n" + GENERATED_MARK + "\n\n" + generated, schema="result")
    refused_ever = _refused_ever(run)
    prose_facts = {
        "sentences": support_rec["summary"]["sentences"],
        "mode": support_rec["mode"],
        "judged_by": judged_by,
        "support": run.relative(run.path("support")),
    }

    def change(rec: dict[str, Any]) -> None:
        rec["status"] = "complete"
        rec["stop_reason"] = last["decision"]["stop_reason"]
        rec["cycles"] = len(log["cycles"])
        rec["reproducibility"] = repro
        rec["refused_claims"] = sorted(
            set(rec.get("refused_claims") or []) | set(refused_ever), key=lambda c: int(c.split("-")[1])
        )
        rec["refused_ever"] = bool(rec.get("refused_ever")) or bool(refused_ever)
        rec["prose"] = {**(rec.get("prose") or {}), **prose_facts}
        rec["result"] = {
            "path": run.relative(target),
            "finished_at": meta["finished_at"],
            "cited_claims": report.cited,
            **({"no_finding": True} if report.no_finding else {}),
        }

    updated = runrecord.update(run, change)
    ledger.refresh(run)  # the end of the run: the claims draft shows the whole ledger
    return {
        "result": run.relative(target),
        "cited_claims": report.cited,
        "reproducibility": repro,
        "stop_reason": updated["stop_reason"],
        "cycles": updated["cycles"],
        "refused_ever": updated["refused_ever"],
        "no_finding": report.no_finding,
        "warnings": [w.to_dict() for w in report.warnings],
    }


def _refused_ever(run: Run) -> list[str]:
    return sorted(
        {
            c["claim"]
            for m in all_contestations(run)
            for c in m.get("challenges", [])
            if c["verdict"] == "refuse"
        },
        key=lambda c: int(c.split("-")[1]),
    )


def _generated_sections(
    run: Run,
    report: CheckReport,
    record: dict[str, Any],
    repro: dict[str, Any],
    placed: list[support.Sentence],
    support_rec: dict[str, Any],
) -> str:
    claims, verdicts = claim_state(run)
    cited = [c for c in report.cited if c in claims]
    carrying = _carrying_sources(claims, cited)
    lines: list[str] = []
    if report.no_finding:
        lines += [
            "No finding could be supported: no claim of this run was found supported by the verifier, so "
            "nothing above is stated as established.",
            "",
        ]
        lines += nofinding.account(run, claims, record)
    if not report.has_references and not report.no_finding:
        lines += ["## References", "", *_reference_lines(run, carrying), ""]

    well: list[str] = []
    caution: list[str] = []
    resting = support_record.resting_on(placed)
    for clm in cited:
        verdict = (verdicts.get(clm) or {}).get("verdict")
        entry = (
            f"- **{clm}** ({claims[clm]['sub_question']}): {escaping.text(claims[clm]['text'])} "
            f"[{verdict or 'not verified'}; "
            f"{', '.join(dict.fromkeys(ev['source'] for ev in claims[clm]['evidence']))}]"
            + support_record.evidence_note(resting.get(clm, []))
        )
        (well if verdict == "supported" else caution).append(entry)
    if not report.no_finding:
        lines += ["## Evidence map", "", "### Well supported", ""] + (well or ["(none)"]) + [""]
        lines += ["### Needs caution", ""] + (caution or ["(none)"]) + [""]
    refused = _refused_ever(run)
    if refused:
        lines += ["### Refused during the run (not established)", ""]
        for clm in refused:
            c = claims.get(clm, {})
            state = "retired" if c.get("status") == "retired" else "active"
            lines.append(f"- {clm} ({state}): {escaping.text(c.get('text', '(unknown)'))}")
        lines.append("")

    lines += ["## Reproducibility", ""]
    lines.append(
        f"Label: **{repro['label']}**"
        + (f" ({escaping.text('; '.join(repro['reasons']))})" if repro["reasons"] else "")
        + f". Run {record['run_id']}, tool {record.get('tool_version')}, stop reason "
        f"{record.get('stop_reason')}, {record.get('cycles')} cycle(s)."
    )
    model = record.get("model")
    lines.append(
        f"Model: {escaping.text(model.get('name') or model)}"
        if isinstance(model, dict)
        else "Model: none (claims and verdicts supplied by the agent through the toolkit)"
    )
    if isinstance(model, dict) and (model.get("use") or model.get("rule_stages")):
        described = runrecord.describe_model_use(model.get("use") or {}, model.get("rule_stages"))
        lines += ["", *(f"- {escaping.text(line)}" for line in described)]
    lines += ["", support_record.footer_line(support_rec, record.get("prose") or {})]
    sources = retrieve.list_sources(run)
    cached = 0
    lines += ["", "| source | sha256 at retrieval | verifier's copy | cache |", "|---|---|---|---|"]
    for ref in sources:
        meta, _ = retrieve.load_source(run, ref)
        cached += bool(meta.get("from_cache"))
        ev = _evidence_digest(run, ref)
        lines.append(
            f"| {ref} | `{meta['sha256'][:16]}` | {ev} | {'hit' if meta.get('from_cache') else 'miss'} |"
        )
    lines += [
        "",
        f"{len(sources)} source(s), {cached} served from the HTTP cache at retrieval; the verifier "
        "re-fetched with the cache off. Raw bytes of every response are in snapshots/<sha256>.",
    ]
    return "\n".join(lines)


def _evidence_digest(run: Run, ref: str) -> str:
    sq, src = parse_source_ref(ref)
    path = run.path("evidence", sq=sq, src=src)
    if not path.is_file():
        return "not re-fetched"
    meta, _ = read_markdown(path)
    if not meta.get("reachable"):
        return f"unreachable ({meta.get('error')})"
    return f"`{str(meta.get('sha256'))[:16]}`" + (" (changed)" if meta.get("changed") else "")


def check_result(run: Run, report: Any) -> None:
    """validate checker: synthesis/result.md front matter, and its text passes `report check`."""

    path = run.path("result")
    read = read_counted(report, path)
    if read is None:
        return
    meta, body = read
    # The text is checked even when the front matter is not valid.
    report.extend(validate(meta, "result"), path)
    try:
        checked = check_text(run, body, file="synthesis/result.md")
    except ResearchEngineError as exc:
        report.add(path, exc.message, "cross-reference")
        return
    for p in checked.problems:
        report.add(path, p.message, p.code, p.field)
    support_record.check_support(run, report, checked.sentences)
    # Where the cited claims are recorded: run.json (`result.cited_claims`), or an older deliverable's own
    # front matter.
    if "cited_claims" in meta:
        recorded, where = meta.get("cited_claims") or [], "the front matter"
    else:
        recorded = ((_record_or_none(run) or {}).get("result") or {}).get("cited_claims")
        where = "run.json's result"
    if recorded is not None and sorted(recorded) != sorted(checked.cited):
        report.add(path, f"cited_claims in {where} do not match the text", "cross-reference")


def _record_or_none(run: Run) -> dict[str, Any] | None:
    try:
        return runrecord.read(run)
    except BadInput:
        return None
