"""`research-engine sq add|list`: the run's sub-questions."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

sq_app = typer.Typer(help="Record and list sub-questions (decompose).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(sq_app, name="sq")


@sq_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="The sub-question.")],
    run: RunOpt,
    type_: Annotated[
        str,
        typer.Option(
            "--type",
            help="Claim type: factual|quantitative|regulatory|competitive|"
            "technical (drives source fit in `select log`).",
        ),
    ],
    angle: Annotated[
        str | None, typer.Option("--angle", help="Search angle: entity|time|source-type|counter.")
    ] = None,
    answers: Annotated[str | None, typer.Option("--answers", help="What a full answer contains.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Add a sub-question; prints its id (SQ-NN). Writes decompose/sub-questions.md."""

    def body() -> Result:
        from research_engine import decompose, trace

        the_run = trace.open_run(run)
        sq = decompose.add(the_run, text, type_, angle, answers)
        item = decompose.get(the_run, sq)
        return Result(
            data={"id": sq, "sub_question": item, "file": the_run.relative(the_run.path("sub_questions"))},
            text=sq,
        )

    run_command("sq add", json_, body)


@sq_app.command("list")
def list_(run: RunOpt, json_: JsonOpt = False) -> None:
    """List the run's sub-questions with their claim type and angle."""

    def body() -> Result:
        from research_engine import decompose, trace

        items = decompose.load(trace.open_run(run))
        lines = [
            f"{i['id']}  [{i['claim_type']}{'/' + i['angle'] if i.get('angle') else ''}]  {i['text']}"
            for i in items
        ] or ["(no sub-questions yet)"]
        return Result(data={"sub_questions": items}, text="\n".join(lines))

    run_command("sq list", json_, body)
