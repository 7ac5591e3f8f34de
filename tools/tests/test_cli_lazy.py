"""Lazy command loading: the root group's table is the command tree, and a call loads only its command.

`research_engine.package.COMMANDS` names every top-level command, its module and its one-line help, so
`--help` and `--version` import no command module and `COMMAND ...` imports one. These tests hold the
table to what the modules register (names and help cannot drift) and the lazy tree to the eager one
typer would build from the same modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import research_engine.cli as package

CLI_DIR = Path(package.__file__).parent


def eager_app() -> typer.Typer:
    """The app typer would build by registering every command module up front (the old way)."""
    app = typer.Typer(
        name="research-engine", help=package.app.info.help, no_args_is_help=True, **package.APP_SETTINGS
    )
    app.callback()(package.root)
    for module in dict.fromkeys(module for _, module, _ in package.COMMANDS):
        __import__(f"research_engine.cli.{module}", fromlist=["register"]).register(app)
    return app


def help_text(app: typer.Typer, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="research-engine", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def commands_section(text: str) -> list[str]:
    return text.split("\nCommands:\n", 1)[1].rstrip("\n").splitlines()


def test_the_table_names_every_command_module():
    on_disk = {path.stem for path in CLI_DIR.glob("*_cmd.py")}
    assert {module for _, module, _ in package.COMMANDS} == on_disk


def test_the_table_has_each_command_once():
    names = [name for name, _, _ in package.COMMANDS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("module", sorted({module for _, module, _ in package.COMMANDS}))
def test_the_table_matches_what_each_module_registers(module):
    registered = package.module_commands(module)
    table = {name: text for name, mod, text in package.COMMANDS if mod == module}
    assert set(registered) == set(table), (
        f"{module} registers {sorted(registered)}, the table says {sorted(table)}"
    )
    for name, command in registered.items():
        assert command.get_short_help_str(limit=10**6) == table[name], f"{name}: the table's help has drifted"


def test_help_lists_every_command_in_table_order():
    rows = commands_section(help_text(package.app))
    assert [row.split()[0] for row in rows] == [name for name, _, _ in package.COMMANDS]


def test_help_shows_the_same_rows_the_eager_tree_would():
    lazy = commands_section(help_text(package.app))
    eager = commands_section(help_text(eager_app()))
    assert sorted(lazy) == sorted(eager)  # the eager tree lists plain commands before groups
    assert (
        help_text(package.app).split("\nCommands:\n")[0] == help_text(eager_app()).split("\nCommands:\n")[0]
    )


def every_command_path(command, path=()):
    yield path
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            yield from every_command_path(command.get_command(None, name), (*path, name))


@pytest.mark.parametrize("path", [p for p in every_command_path(typer.main.get_command(package.app)) if p])
def test_command_help_is_what_the_eager_tree_prints(path):
    assert help_text(package.app, *path) == help_text(eager_app(), *path)


def test_walking_the_tree_sees_every_command_of_the_eager_tree():
    lazy = sorted(every_command_path(typer.main.get_command(package.app)))
    eager = sorted(every_command_path(typer.main.get_command(eager_app())))
    assert lazy == eager


def loaded_modules(*args: str) -> tuple[int, set[str], str]:
    """Run the entry point in a fresh interpreter: exit code, modules imported, output."""
    script = (
        "import atexit, json, sys\n"
        "def report():\n"
        "    sys.__stderr__.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
        "atexit.register(report)\n"
        "sys.argv = ['research-engine', *sys.argv[1:]]\n"
        "from research_engine.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60, check=False
    )
    line = next(line for line in proc.stderr.splitlines() if line.startswith("MODULES "))
    return proc.returncode, set(json.loads(line.removeprefix("MODULES "))), proc.stdout + proc.stderr


def command_modules(modules: set[str]) -> set[str]:
    return {
        m.rsplit(".", 1)[1] for m in modules if m.startswith("research_engine.cli.") and m.endswith("_cmd")
    }


@pytest.mark.parametrize(("args", "exit_code"), [(["--version"], 0), (["--help"], 0), ([], 2)])
def test_version_and_help_import_no_command_module(args, exit_code):
    code, modules, out = loaded_modules(*args)
    assert code == exit_code and "research-engine" in out  # no arguments: the help, as a usage error
    assert command_modules(modules) == set()


def test_a_command_imports_only_its_own_module(tmp_path):
    code, modules, _ = loaded_modules("ids", "next", "clm", "--run", str(tmp_path / "nope"), "--json")
    assert code == 2  # an unknown run: the command ran and answered
    assert command_modules(modules) == {"ids_cmd"}
    _, modules, _ = loaded_modules("claims", "tension", "--help")
    assert command_modules(modules) == {"claims_cmd"}


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["nope", "--json"], ""),
        (["claims", "lst", "--json"], "claims"),
        (["ids", "next", "--json"], "ids next"),
        (["control", "--json"], "control"),
    ],
)
def test_usage_errors_under_json_print_one_envelope_and_exit_2(cli, args, command):
    code, out, _, env = cli(*args)
    assert code == 2 and len(out.strip().splitlines()) == 1
    assert env["ok"] is False and env["exit_code"] == 2 and env["command"] == command
    assert env["errors"][0]["code"] == "usage" and env["errors"][0]["message"]


def test_usage_errors_without_json_go_to_stderr(cli):
    code, out, err, _ = cli("claims", "lst")
    assert code == 2 and out == "" and "No such command" in err
