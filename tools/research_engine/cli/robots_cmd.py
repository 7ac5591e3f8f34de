"""`research-engine robots check`: an offline check of one URL against a given robots.txt."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, run_command
from research_engine.errors import ExitCode, Problem

robots_app = typer.Typer(help="robots.txt (RFC 9309) checks.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(robots_app, name="robots")


@robots_app.command("check")
def check(
    url: Annotated[str, typer.Argument(help="The URL to check.")],
    robots_file: Annotated[
        Path, typer.Option("--robots-file", help="A robots.txt file (read as raw bytes).")
    ],
    user_agent: Annotated[
        str | None,
        typer.Option("--user-agent", help="The crawler's user agent (default: research-engine's)."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Is URL allowed by the robots.txt in --robots-file? Exit 0 allowed, 3 disallowed."""

    def body() -> Result:
        from research_engine import bounded
        from research_engine.net import USER_AGENT
        from research_engine.net.robots import is_allowed, product_token

        # RFC 9309 section 2.5: the first 500 KiB are parsed, whatever follows them.
        data = bounded.head_bytes(robots_file, "robots")
        agent = user_agent or USER_AGENT
        allowed = is_allowed(data, url, agent)
        out = {"url": url, "user_agent": agent, "product_token": product_token(agent), "allowed": allowed}
        if allowed:
            return Result(data=out, text="allowed")
        problem = Problem(
            "refused-robots", f"robots.txt disallows {url} for {product_token(agent)}", field="url"
        )
        return Result(data=out, exit_code=ExitCode.REFUSED, errors=[problem])  # said once, on stderr

    run_command("robots check", json_, body)
