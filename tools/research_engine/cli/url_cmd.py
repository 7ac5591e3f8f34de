"""`research-engine url check|canonical`."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import AllowHostOpt, JsonOpt, Result, run_command
from research_engine.errors import ExitCode, Problem

url_app = typer.Typer(help="Check URLs against the SSRF guard; print canonical keys.", no_args_is_help=True)

UrlArg = Annotated[str, typer.Argument(help="The URL.")]


def register(app: typer.Typer) -> None:
    app.add_typer(url_app, name="url")


@url_app.command("check")
def check(
    url: UrlArg,
    no_resolve: Annotated[
        bool, typer.Option("--no-resolve", help="Static check only: do not resolve the host.")
    ] = False,
    allow_private: Annotated[
        bool, typer.Option("--allow-private", help="Allow loopback/private addresses (an explicit opt-in).")
    ] = False,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Check URL against the SSRF guard: exit 0 allowed, 3 refused (with the reason), 4 host not resolved."""

    def body() -> Result:
        from research_engine.net import check_url
        from research_engine.net.guard import parse_allow_host
        from research_engine.net.policy import allow_host_entries

        hosts = [parse_allow_host(h) for h in allow_host_entries(allow_host or [])]
        verdict = check_url(url, resolve=not no_resolve, allow_private=allow_private, allow_hosts=hosts)
        data = {**verdict.to_dict(), "url": url, "normalized_url": verdict.url}
        if verdict.allowed:
            shown = f" ({', '.join(verdict.addresses)})" if verdict.addresses else ""
            return Result(data=data, text=f"allowed: {verdict.url}{shown}")
        code = ExitCode.UNRESOLVED if verdict.code == "unresolved" else ExitCode.REFUSED
        problem = Problem(verdict.code or "refused-ssrf", f"refused: {verdict.reason or url}", field="url")
        return Result(data=data, exit_code=code, errors=[problem])  # said once, on stderr

    run_command("url check", json_, body)


@url_app.command("canonical")
def canonical(url: UrlArg, json_: JsonOpt = False) -> None:
    """Print the dedup key: doi:<lowercased DOI> when the URL carries one, else url:<normalized URL>."""

    def body() -> Result:
        from research_engine.urls import canonical_key

        key = canonical_key(url)
        return Result(data={"url": url, "canonical_key": key}, text=key)

    run_command("url canonical", json_, body)
