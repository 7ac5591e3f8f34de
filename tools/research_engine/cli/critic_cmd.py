"""`research-engine critic gap add|close|list`: the completeness critic's named gaps."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

critic_app = typer.Typer(help="Record what the completeness critic found missing.", no_args_is_help=True)
gap_app = typer.Typer(help="Gaps G-NN: material ones feed the controller's gap signal.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    critic_app.add_typer(gap_app, name="gap")
    app.add_typer(critic_app, name="critic")


@gap_app.command("add")
def add(
    run: RunOpt,
    about: Annotated[str, typer.Option("--about", help="What is missing.")],
    query: Annotated[str, typer.Option("--query", help="The search that would look for it.")],
    material: Annotated[
        bool | None,
        typer.Option(
            "--material/--cosmetic", help="Material gaps route a supplement-gap cycle; cosmetic ones do not."
        ),
    ] = None,
    sq: Annotated[str | None, typer.Option("--sq", help="The sub-question the gap belongs to.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Record a gap named by the completeness critic; prints its id (G-NN).

    --material or --cosmetic is required."""

    def body() -> Result:
        from research_engine import critic, trace
        from research_engine.errors import BadInput

        if material is None:
            raise BadInput(
                "say whether the gap is --material or --cosmetic", code="missing-field", field="severity"
            )
        severity = "material" if material else "cosmetic"
        gap_id = critic.add(trace.open_run(run), about, query, severity=severity, sq=sq)
        return Result(data={"id": gap_id, "severity": severity, "sub_question": sq}, text=gap_id)

    run_command("critic gap add", json_, body)


@gap_app.command("close")
def close(
    gap: Annotated[str, typer.Argument(help="The gap id, G-NN.")],
    run: RunOpt,
    why: Annotated[str, typer.Option("--why", help="Why the gap is closed (found, out of scope, ...).")],
    json_: JsonOpt = False,
) -> None:
    """Close a gap with the reason; it stays in controller/gaps.md."""

    def body() -> Result:
        from research_engine import critic, trace

        closed = critic.close(trace.open_run(run), gap, why)
        return Result(data=closed, text=f"{gap} closed")

    run_command("critic gap close", json_, body)


@gap_app.command("list")
def list_(run: RunOpt, json_: JsonOpt = False) -> None:
    """List the gaps, open and closed."""

    def body() -> Result:
        from research_engine import critic, trace

        gaps = critic.load(trace.open_run(run))["gaps"]
        lines = [f"{g['id']} [{g['severity']}, {g['status']}] {g['about']}" for g in gaps] or ["(no gaps)"]
        return Result(data={"gaps": gaps}, text="\n".join(lines))

    run_command("critic gap list", json_, body)


@critic_app.command("answers")
def answers(
    sq: Annotated[str, typer.Argument(help="The sub-question judged (SQ-NN).")],
    run: RunOpt,
    why: Annotated[str, typer.Option("--why", help="Why these claims answer it (or why none does).")],
    claims: Annotated[
        str | None,
        typer.Option("--claims", help="The claims that, read together, answer it: CLM-a,CLM-b."),
    ] = None,
    none: Annotated[bool, typer.Option("--none", help="None of its claims answers it.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Record which claims answer a sub-question (the critic's judgement, in controller/answers.md).

    The controller counts coverage by it: a supported claim named here answers; one of the sub-question's
    claims left out does not; a claim added later is scored lexically until judged again."""

    def body() -> Result:
        from research_engine import critic, trace
        from research_engine.errors import BadInput

        if none == bool(claims):
            raise BadInput(
                "name the answering claims (--claims CLM-a,CLM-b) or say --none, not both",
                code="missing-field",
                field="claims",
            )
        named = [] if none else (claims or "").split(",")
        judgement = critic.record_answers(trace.open_run(run), sq, named, why)
        said = ", ".join(judgement["answering"]) or "no claim"
        considered = len(judgement["considered"])
        return Result(data=judgement, text=f"{sq}: {said} answers (of {considered} considered)")

    run_command("critic answers", json_, body)
