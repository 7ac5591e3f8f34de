"""The `research-engine` command line: a thin typer skin over the library.

Commands parse arguments, call one library function and render its result;
nothing here decides anything. Each command group lives in its own module with a
`register(app)` function; `_GROUPS` lists them. Domain modules are imported
inside the command functions, so `research-engine --version` or `--help` starts
fast (Claude Code calls this tool dozens of times a run).
"""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from research_engine import __version__
from research_engine.cli._common import EnvelopeGroup, setup_logging

app = typer.Typer(
    name="research-engine",
    cls=EnvelopeGroup,
    help="A research engine that contests its own findings. Every command takes --json.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# (module, ...) in the order they appear in --help.
_GROUPS = (
    # the pipeline, in stage order
    "brief_cmd",
    "sq_cmd",
    "search_cmd",
    "openalex_cmd",
    "worldbank_cmd",
    "select_cmd",
    "fetch_cmd",
    "claims_cmd",
    "verify_cmd",
    "critic_cmd",
    "control_cmd",
    "report_cmd",
    # whole runs
    "run_cmd",
    "validate_cmd",
    "view_cmd",
    # utilities
    "ids_cmd",
    "extract_cmd",
    "url_cmd",
    "robots_cmd",
    "corpus_cmd",
    "bundle_cmd",
)


def _version(value: bool) -> None:
    if value:
        print(f"research-engine {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More logging on stderr.")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only errors on stderr.")] = False,
) -> None:
    """research-engine: decompose, select, retrieve, consolidate, verify, control, synthesize."""
    setup_logging(verbose, quiet)


for _name in _GROUPS:
    importlib.import_module(f"research_engine.cli.{_name}").register(app)


def main() -> None:
    app()
