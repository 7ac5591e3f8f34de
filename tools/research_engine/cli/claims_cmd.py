"""`research-engine claims add|retire|list|migrate` and `claims tension add|resolve`: the claims ledger."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

claims_app = typer.Typer(help="The claims ledger and its grounding gate (consolidate).", no_args_is_help=True)
tension_app = typer.Typer(help="Tensions between claims.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    claims_app.add_typer(tension_app, name="tension")
    app.add_typer(claims_app, name="claims")


@claims_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="The atomic claim.")],
    run: RunOpt,
    sq: Annotated[str, typer.Option("--sq", help="The sub-question the claim answers (SQ-NN).")],
    source: Annotated[
        list[str] | None, typer.Option("--source", help="A cited source, SQ-NN/SRC-NN (repeatable).")
    ] = None,
    quote: Annotated[
        list[str] | None,
        typer.Option(
            "--quote",
            help="The verbatim quote from the source, one per --source in the same order (repeatable).",
        ),
    ] = None,
    span: Annotated[
        list[str] | None,
        typer.Option(
            "--span",
            help="Evidence by reference, the tool copying the words: SQ-NN/SRC-NN#p05.s2 (a sentence), "
            "#p05.s2-s3 (a run of sentences) or #p05 (a whole passage, e.g. a heading); repeatable.",
        ),
    ] = None,
    confidence: Annotated[str, typer.Option("--confidence", help="high | medium | low.")] = "medium",
    json_: JsonOpt = False,
) -> None:
    """Add a claim through the grounding gate; prints its id (CLM-NN).

    Evidence is named by reference (--span; sentence ids as `source show` and `fetch --run` print them)
    or quoted (--source with --quote). Exit 1 when a cited source is not in the run or has no stored
    text, when a quote is not found in its source (the closest passage is shown), or when a number in the
    claim is not in its quotes; exit 2 for a span naming no passage or sentence (the known ids are named).
    """

    def body() -> Result:
        from research_engine import claims, trace

        claim = claims.record_claim(
            trace.open_run(run), sq, text, list(source or []), list(quote or []), confidence, list(span or [])
        )
        return Result(data={"id": claim["id"], "claim": claim}, text=claim["id"])

    run_command("claims add", json_, body)


@claims_app.command("retire")
def retire(
    clm: Annotated[str, typer.Argument(help="The claim to retire (CLM-NN).")],
    run: RunOpt,
    why: Annotated[str, typer.Option("--why", help="Why it is retired.")],
    json_: JsonOpt = False,
) -> None:
    """Retire a claim: it stays in the ledger, marked retired, with the reason."""

    def body() -> Result:
        from research_engine import claims, trace

        claim = claims.retire(trace.open_run(run), clm, why)
        return Result(data={"id": clm, "claim": claim}, text=f"{clm} retired")

    run_command("claims retire", json_, body)


@claims_app.command("list")
def list_(
    run: RunOpt,
    status: Annotated[str, typer.Option("--status", help="active | retired | all.")] = "all",
    page: Annotated[
        int, typer.Option("--page", min=1, help="Page N of the claims (--json is bounded; 1 by default).")
    ] = 1,
    json_: JsonOpt = False,
) -> None:
    """List claims (active and retired) and tensions.

    Renders consolidate/synthesis.draft.md again first when it shows fewer records than the ledger
    (consolidate/claims.jsonl) holds. With --json the envelope is bounded (docs/conventions.md): one page
    of claims, the counts, and where the rest is.
    """

    def body() -> Result:
        from research_engine import claims, trace
        from research_engine.errors import BadInput

        if status not in ("active", "retired", "all"):
            raise BadInput(f"unknown status {status!r}; expected active, retired or all", field="status")
        the_run = trace.open_run(run)
        claims.refresh(the_run)
        ledger = claims.load(the_run)
        shown = [c for c in ledger["claims"] if status == "all" or c["status"] == status]
        lines = []
        for c in shown:
            mark = " (retired)" if c["status"] == "retired" else ""
            refs = ", ".join(e["source"] for e in c["evidence"])
            lines.append(f"{c['id']}  {c['sub_question']}  [{c['confidence']}]{mark}  {c['text']}  <- {refs}")
        for t in ledger["tensions"]:
            lines.append(f"{t['id']}  {t['status']}  {', '.join(t['claims'])}: {t['about']}")
        active = sum(1 for c in ledger["claims"] if c["status"] == "active")
        data = {
            "claims": shown,
            "tensions": ledger["tensions"],
            "counts": {
                "active": active,
                "retired": len(ledger["claims"]) - active,
                "open_tensions": sum(1 for t in ledger["tensions"] if t["status"] == "open"),
            },
        }
        claims.bound_listing(data, the_run, page=page, status=status)
        return Result(data=data, text="\n".join(lines) or "(no claims yet)")

    run_command("claims list", json_, body)


@claims_app.command("migrate")
def migrate(run: RunOpt, json_: JsonOpt = False) -> None:
    """Move the claims of a run made before consolidate/claims.jsonl (kept in the draft's front matter)
    into the ledger's log, once; ids, texts, evidence and times are kept, and the draft is rendered anew."""

    def body() -> Result:
        from research_engine import claims, trace

        count = claims.migrate(trace.open_run(run))
        return Result(data={"records": count}, text=f"{count} records written to consolidate/claims.jsonl")

    run_command("claims migrate", json_, body)


@tension_app.command("add")
def tension_add(
    run: RunOpt,
    claims_: Annotated[
        str, typer.Option("--claims", help="Two or more claims, comma separated: CLM-a,CLM-b.")
    ],
    about: Annotated[str, typer.Option("--about", help="What the claims disagree about.")],
    json_: JsonOpt = False,
) -> None:
    """Record a tension between claims; prints its id (T-NN)."""

    def body() -> Result:
        from research_engine import claims, trace

        tid = claims.add_tension(trace.open_run(run), claims_.split(","), about)
        return Result(data={"id": tid}, text=tid)

    run_command("claims tension add", json_, body)


@tension_app.command("resolve")
def tension_resolve(
    tension: Annotated[str, typer.Argument(help="The tension (T-NN).")],
    run: RunOpt,
    resolution: Annotated[str, typer.Option("--resolution", help="How it was resolved.")],
    json_: JsonOpt = False,
) -> None:
    """Resolve an open tension with the resolution."""

    def body() -> Result:
        from research_engine import claims, trace

        item = claims.resolve_tension(trace.open_run(run), tension, resolution)
        return Result(data={"id": tension, "tension": item}, text=f"{tension} resolved")

    run_command("claims tension resolve", json_, body)
