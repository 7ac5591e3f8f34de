"""The `research-engine` command line: a thin typer skin over the library.

Commands parse arguments, call one library function and render its result;
nothing here decides anything. Each command module (`cli/*_cmd.py`) has a
`register(app)` function that adds its commands to a typer app.

Start-up is a feature (Claude Code calls this tool dozens of times a run), so the
root group loads command modules lazily: `COMMANDS` names every top-level command,
the module that registers it and its one-line help. `--help` and `--version` are
answered from the table alone; `research-engine COMMAND ...` imports, registers
and converts only COMMAND's module. Domain modules are imported inside the command
functions, so a command loads only what it runs. Reading `commands` on the root
group (click's attribute, used to walk the whole tree) loads every module.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer

from research_engine import __version__
from research_engine.cli._common import EnvelopeGroup, setup_logging

# (command, module in research_engine.cli, one-line help): the order is --help's. The help is the command's
# own first sentence (`get_short_help_str`); tools/tests/test_cli_lazy.py holds the table to the modules.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    # the pipeline, in stage order
    ("brief", "brief_cmd", "Check and lock research briefs."),
    ("sq", "sq_cmd", "Record and list sub-questions (decompose)."),
    (
        "search",
        "search_cmd",
        "Search the web with the first configured backend that answers; exit 5 when none is configured.",
    ),
    ("openalex", "openalex_cmd", "Search OpenAlex works and fetch one work by id or DOI."),
    ("worldbank", "worldbank_cmd", "World Bank indicator series and indicator discovery."),
    ("select", "select_cmd", "Score and choose sources (select)."),
    (
        "fetch",
        "fetch_cmd",
        "Fetch URL and extract it: print the document, or with --run and --sq record it as the next SRC-NN.",
    ),
    ("source", "source_cmd", "Read recorded sources, their sentences by id."),
    ("claims", "claims_cmd", "The claims ledger and its grounding gate (consolidate)."),
    ("verify", "verify_cmd", "Verify claims against the verifier's own fresh copies."),
    ("critic", "critic_cmd", "Record what the completeness critic found missing."),
    (
        "control",
        "control_cmd",
        "Compute the four signals, decide (criterion, then governor, then the ladder), append the cycle "
        "to controller/loop-log.md and print the decision: action, targets, stop_reason, cycle.",
    ),
    ("report", "report_cmd", "Check and finish the deliverable (synthesis/result.md)."),
    # whole runs
    (
        "run",
        "run_cmd",
        "Run the whole research loop headless: decompose, gather, select, retrieve, consolidate, verify, "
        "control, loop, synthesize; the same trace tree the skill bundle writes.",
    ),
    (
        "batch",
        "batch_cmd",
        "Run many briefs, each a normal headless run in the output path, and keep one record of them "
        "(batch-<stamp>/batch.json and batch.md).",
    ),
    (
        "replay",
        "run_cmd",
        "Re-execute a recorded run offline from its cassette and report any difference from its trace "
        "(beyond the documented volatile fields: timestamps, the run id's stamp, the brief digest, "
        "elapsed times).",
    ),
    (
        "validate",
        "validate_cmd",
        "Check every artifact of a run against its schema and every cross-reference: exit 0 or 1.",
    ),
    (
        "view",
        "view_cmd",
        "Write the run as one static HTML page (or a PDF with --pdf): the deliverable first, each claim "
        "and source it cites linked to its card.",
    ),
    # utilities
    ("ids", "ids_cmd", "Allocate identifiers (never reused)."),
    (
        "extract",
        "extract_cmd",
        "Extract the main text of a page: the text by default, the document with passages in --json.",
    ),
    ("url", "url_cmd", "Check URLs against the SSRF guard; print canonical keys."),
    ("robots", "robots_cmd", "robots.txt (RFC 9309) checks."),
    ("corpus", "corpus_cmd", "Serve a local document collection with a SearXNG-compatible search."),
    ("bundle", "bundle_cmd", "The Claude Code skill bundle (in a checkout)."),
)

# The root app's settings; a command module is converted under the same ones (typer hands them down).
APP_SETTINGS: dict[str, Any] = {
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}


def module_commands(module: str) -> dict[str, Any]:
    """The click commands a command module registers, by name (importing the module)."""
    sub = typer.Typer(**APP_SETTINGS)
    sub.callback()(_no_options)  # a callback makes typer build a group even for a single command
    importlib.import_module(f"research_engine.cli.{module}").register(sub)
    return dict(typer.main.get_command(sub).commands)  # type: ignore[attr-defined]


def _no_options() -> None:
    """The command module's own (throwaway) group."""


class LazyGroup(EnvelopeGroup):
    """The root group, loading a command's module only when that command is looked up."""

    @property  # type: ignore[override]
    def commands(self) -> dict[str, Any]:
        """Every command, in table order: loads every module (for walking the tree; invocation does not)."""
        return {name: self.get_command(None, name) for name in self.list_commands(None)}

    @commands.setter
    def commands(self, value: Any) -> None:
        # click and typer set this in __init__; the root app registers nothing, the table is the tree.
        self._loaded: dict[str, Any] = dict(value or {})

    def list_commands(self, ctx: Any) -> list[str]:
        return [name for name, _, _ in COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self._loaded:
            module = next((m for name, m, _ in COMMANDS if name == cmd_name), None)
            if module is None:
                return None
            self._loaded.update(module_commands(module))
        return self._loaded.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The Commands section from the table, truncated exactly as click truncates a command's help."""
        from typer.core import TyperCommand

        limit = formatter.width - 6 - max(len(name) for name, _, _ in COMMANDS)
        rows = [(name, TyperCommand(name, help=text).get_short_help_str(limit)) for name, _, text in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="research-engine",
    cls=LazyGroup,
    help="A research engine that contests its own findings. Every command takes --json.",
    no_args_is_help=True,
    **APP_SETTINGS,
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


def main() -> None:
    app()
