"""`research-engine bundle plugin --root DIR`: generate the Claude Code plugin copy of the skill bundle."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, run_command
from research_engine.errors import ExitCode

bundle_app = typer.Typer(help="The Claude Code skill bundle (in a checkout).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(bundle_app, name="bundle")


@bundle_app.command("plugin")
def plugin(
    root: Annotated[
        Path,
        typer.Option(
            "--root", help="The repository checkout (holds .claude/ and .claude-plugin/), e.g. `.`."
        ),
    ],
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 listing the files that are out of date.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Generate plugin/ from .claude/: skills and agents with every bundle name namespaced
    (research-engine:research-verifier), and plugin/hooks/hooks.json from .claude/settings.json's hooks."""

    def body() -> Result:
        from research_engine import bundle
        from research_engine.errors import Problem

        if check:
            stale = bundle.stale_files(root)
            problems = [Problem("stale-plugin", f"{rel} is out of date", file=rel) for rel in stale]
            text = (
                "plugin/ is up to date"
                if not stale
                else "out of date (run `research-engine bundle plugin --root .`):\n"
            )
            text += "\n".join(f"  {rel}" for rel in stale)
            return Result(
                data={"stale": stale},
                text=text,
                exit_code=ExitCode.CHECK_FAILED if stale else ExitCode.OK,
                errors=problems,
            )
        changed = bundle.write_plugin(root)
        text = "\n".join(f"wrote {rel}" for rel in changed) or "plugin/ is up to date"
        return Result(data={"written": changed}, text=text)

    run_command("bundle plugin", json_, body)
