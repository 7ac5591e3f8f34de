"""`research-engine source show`: a recorded source, bounded, its sentences by id."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

source_app = typer.Typer(help="Read recorded sources, their sentences by id.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(source_app, name="source")


@source_app.command("show")
def show(
    ref: Annotated[str, typer.Argument(help="The source, SQ-NN/SRC-NN.")],
    run: RunOpt,
    page: Annotated[
        int | None, typer.Option("--page", min=1, help="Page N of the passages, in document order.")
    ] = None,
    for_: Annotated[
        str | None,
        typer.Option("--for", help="Show the passages most relevant to this question instead of a page."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Show a recorded source's passages with their sentence ids (`p05.s2`), at most one bounded page
    (docs/conventions.md): page 1 by default, `--page N` for the next, `--for` for the passages that best
    match a question. Name evidence by these ids: `claims add --span SQ-NN/SRC-NN#p05.s2`."""

    def body() -> Result:
        from research_engine import ids, trace
        from research_engine.retrieve.excerpt import show_source

        ids.parse_source_ref(ref)
        data = show_source(trace.open_run(run), ref, page=page, question=for_)
        lines = [f"{ref}: {data['title'] or data['url']}"]
        for view in data["passages"]:
            for sid, text in view["sentences"].items():
                lines.append(f"[{view['id']}.{sid}] {text}")
        shown = data["rest"]
        following = shown.get("next") or "the last page"
        lines.append(f"({shown['shown']} of {shown['of']} passages; {following})")
        return Result(data=data, text="\n".join(lines))

    run_command("source show", json_, body)
