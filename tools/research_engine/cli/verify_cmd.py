"""`research-engine verify prepare|record|close|prose`: independent re-fetch, the floor, verdicts, prose."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import (
    AllowHostOpt,
    JsonOpt,
    Result,
    RunOpt,
    fetch_policy_for,
    run_command,
    settings,
)

verify_app = typer.Typer(help="Verify claims against the verifier's own fresh copies.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(verify_app, name="verify")


@verify_app.command("prepare")
def prepare(
    run: RunOpt,
    claims: Annotated[
        list[str] | None,
        typer.Option("--claims", help="Claim ids (comma-separated or repeated); default: all active."),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Who runs the verification (the Claude Code agent, research-verifier); recorded as the "
            "worksheet's prepared_by, and `validate` flags any other name.",
        ),
    ] = None,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Re-fetch every cited source independently into verify/evidence/, run the mechanical checks
    per claim (cited, reachable, changed, quote found, numbers) and write verify/worksheet.md with
    each claim's floor. The --json envelope is bounded: per claim its floor; the worksheet has the rest."""

    def body() -> Result:
        from research_engine import trace, verify

        the_run = trace.open_run(run)
        config = settings()
        fetch_policy_for(config, the_run, allow_host, "verify prepare")  # records --allow-host in run.json
        out = verify.prepare(the_run, claims, settings=config, agent=agent)
        lines = [
            f"cycle {out['cycle']}: {len(out['claims'])} claim(s) checked, "
            f"{out['sources_fetched']} source(s) re-fetched; worksheet {out['worksheet']}"
        ]
        for row in out["claims"]:
            reasons = f" ({'; '.join(row['floor_reasons'])})" if row["floor_reasons"] else ""
            lines.append(f"  {row['claim']}: floor {row['floor']}{reasons}")
        if out["skipped_already_judged"]:
            lines.append(f"  already judged this cycle: {', '.join(out['skipped_already_judged'])}")
        from research_engine.verify.summary import bounded

        return Result(data=bounded(out, the_run), text="\n".join(lines))

    run_command("verify prepare", json_, body)


@verify_app.command("record")
def record(
    claim: Annotated[str, typer.Argument(help="The claim id, CLM-NN.")],
    run: RunOpt,
    verdict: Annotated[str, typer.Option("--verdict", help="supported | partial | refuse")],
    reason: Annotated[str, typer.Option("--reason", help="Why, in a sentence.")],
    corroboration_query: Annotated[
        str | None,
        typer.Option("--corroboration-query", help="The one search run to corroborate (max one per claim)."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Record a verdict as CHL-NN. A verdict looser than the mechanical floor is not accepted: the floor is
    recorded instead and the command exits 1."""

    def body() -> Result:
        from research_engine import trace, verify

        chl = verify.record(
            trace.open_run(run), claim, verdict, reason, corroboration_query=corroboration_query
        )
        return Result(data={"challenge": chl}, text=f"{chl['id']}: {claim} {chl['verdict']}")

    run_command("verify record", json_, body)


@verify_app.command("close")
def close(run: RunOpt, json_: JsonOpt = False) -> None:
    """Close the cycle's verification: archive the previous cycle's contestation, write verify/contestation.md
    with the verdicts and the grounding score, update run.json."""

    def body() -> Result:
        from research_engine import trace, verify

        out = verify.close(trace.open_run(run))
        s = out["summary"]
        score = "n/a" if s["grounding_score"] is None else f"{s['grounding_score']:.2f}"
        text = (
            f"cycle {out['cycle']}: checked {s['checked']}, supported {s['supported']}, "
            f"partial {s['partial']}, refused {s['refused']}; grounding score {score}"
        )
        if out["archived"]:
            text += f"\n  previous cycle archived to {out['archived']}"
        return Result(data=out, text=text)

    run_command("verify close", json_, body)


@verify_app.command("prose")
def prose(
    run: RunOpt,
    sentence: Annotated[
        str | None,
        typer.Argument(
            help="The sentence id, S-NN, from verify/prose.md; leave out to see what awaits a verdict."
        ),
    ] = None,
    verdict: Annotated[str | None, typer.Option("--verdict", help="supported | partial | refuse")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why, in a sentence.")] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Who judges (the Claude Code agent, research-verifier); recorded with the verdict, and "
            "`report finish` and `validate` refuse prose judged by any other name.",
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Judge the deliverable's prose: record a verdict for one sentence of verify/prose.md (written by
    `report check --prose-worksheet`) against the quotes of the claims it cites: supported, partial (it holds
    in a narrower form) or refuse. A verdict looser than the mechanical check's floor is not accepted: the
    floor is recorded and the command exits 1. Without a sentence id: the sentences awaiting a verdict."""

    def body() -> Result:
        from research_engine import prose_review, trace
        from research_engine.errors import BadInput

        the_run = trace.open_run(run)
        if sentence is None:
            out = prose_review.status(the_run)
            waiting = ", ".join(out["unjudged"]) or "none"
            text = f"{out['sentences']} sentence(s); awaiting a verdict: {waiting}; refused: " + (
                ", ".join(out["refused"]) or "none"
            )
            return Result(data=out, text=text)
        if verdict is None or reason is None or agent is None:
            raise BadInput("a prose verdict needs --verdict, --reason and --agent", code="missing-option")
        row = prose_review.record(the_run, sentence, verdict, reason, agent)
        return Result(data={"sentence": row}, text=f"{sentence}: {row['verdict']}")

    run_command("verify prose", json_, body)
