"""`research-engine ids next`."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

ids_app = typer.Typer(help="Allocate identifiers (never reused).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(ids_app, name="ids")


@ids_app.command("next")
def next_(
    kind: Annotated[str, typer.Argument(help="sq | src | clm | chl | tension")],
    run: RunOpt,
    sq: Annotated[str | None, typer.Option("--sq", help="The sub-question a SRC id belongs to.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Allocate and print the next identifier of KIND in the run."""

    def body() -> Result:
        from research_engine import decompose, ids, trace

        the_run = trace.open_run(run)
        if kind.lower() == "src" and sq is not None and ids.ID_RE.match(sq):
            decompose.get(the_run, sq)  # a SRC id belongs to a sub-question of the run
        new = ids.next_id(the_run, kind.lower(), sq=sq)
        return Result(data={"id": new, "kind": kind.lower(), "sq": sq}, text=new)

    run_command("ids next", json_, body)
