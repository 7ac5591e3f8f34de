"""`research-engine select log`: the selection-and-trust log of a sub-question."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

select_app = typer.Typer(help="Score and choose sources (select).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(select_app, name="select")


@select_app.command("log")
def log(
    run: RunOpt,
    sq: Annotated[str, typer.Option("--sq", help="The sub-question (SQ-NN).")],
    candidates: Annotated[
        Path,
        typer.Option(
            "--candidates",
            help="FILE.json (or - for stdin): the candidates considered, each "
            "with the agent's reason (schema/candidates.schema.json).",
        ),
    ],
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Judge freshness as of this date (YYYY-MM-DD; default today), e.g. to replay a run.",
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Score every candidate, dedup, choose within the budget; log all of it with the reasons.

    Writes select/SQ-NN.selection.md (one round per call) and prints the chosen
    sources, which are what to fetch next.
    """

    def body() -> Result:
        from research_engine import bounded, selection, trace
        from research_engine.errors import BadInput

        the_run = trace.open_run(run)
        when = None
        if as_of:
            from datetime import date

            try:
                when = date.fromisoformat(as_of)
            except ValueError as exc:
                raise BadInput(f"--as-of {as_of!r} is not a date (YYYY-MM-DD)", field="as_of") from exc
        try:
            payload = bounded.load_json(bounded.read_input(candidates, "candidates"), "the candidates file")
        except BadInput as exc:
            code = exc.code if exc.code in ("input-too-large", "path-too-long") else "unreadable-candidates"
            raise BadInput(
                f"candidates file {candidates}: {exc.message}", code=code, field="candidates"
            ) from exc
        rnd = selection.log_selection(the_run, sq, selection.load_candidates(payload), as_of=when)
        chosen = [c for c in rnd["candidates"] if c["verdict"] == "chosen"]
        rejected = [c for c in rnd["candidates"] if c["verdict"] == "rejected"]
        lines = [
            f"{sq} round {rnd['round']}: {len(chosen)} chosen of {len(rnd['candidates'])} "
            f"(budget {rnd['budget']})"
        ]
        lines += [f"  chosen   {c['n']:>2}  {c['scores']['total']:.2f}  {c['url']}" for c in chosen]
        lines += [
            f"  rejected {c['n']:>2}  {c['scores']['total']:.2f}  {c['url']}  ({c['why']})" for c in rejected
        ]
        return Result(
            data={
                "sub_question": sq,
                "round": rnd["round"],
                "budget": rnd["budget"],
                "chosen": [
                    {k: c[k] for k in ("n", "url", "title", "kind", "canonical_key", "scores")}
                    for c in chosen
                ],
                "rejected": [{"n": c["n"], "url": c["url"], "why": c["why"]} for c in rejected],
                "file": the_run.relative(the_run.path("selection", sq=sq)),
            },
            text="\n".join(lines),
        )

    run_command("select log", json_, body)
