"""The package keeps the shape docs/architecture.md draws: one settings reader, one place clients are built,
one redaction rule, no god modules, imports at the top. (The layers themselves: test_code_quality.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

import research_engine

PACKAGE = Path(research_engine.__file__).parent
MAX_LINES = 600
MAX_LAZY_IMPORTS = (
    28  # "a couple of dozen" heavy third-party libraries, each with its reason (Ray, WeasyPrint,
)
# python-docx and lxml.etree for the batch, PDF and document readers joined the first 24)


def _modules() -> list[tuple[str, ast.Module, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append((path.relative_to(PACKAGE).as_posix(), ast.parse(text), text))
    return out


def test_only_the_settings_module_reads_the_environment():
    readers = []
    for name, tree, _ in _modules():
        for node in ast.walk(tree):
            reads = isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb")
            if reads and isinstance(node.value, ast.Name) and node.value.id == "os" and name != "settings.py":
                readers.append(f"{name}:{node.lineno}")
    assert readers == []


def test_http_clients_are_built_only_by_the_fetch_policy():
    """Every client gets its options from `net.fetch_policy` (the model adapter, whose endpoint is the user's
    own configuration, builds its own when it is not handed the engine's)."""
    builders = set()
    for name, tree, _ in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == (
                "HttpClient"
            ):
                builders.add(name)
    assert builders <= {"net/policy.py", "engine/openai/exchange.py"}, builders


def test_secret_names_are_spelled_only_by_the_redaction_module():
    spelled = []
    for name, _, text in _modules():
        if name in ("redaction.py", "settings.py"):
            continue
        for marker in ("api_?key", "access_token|", "proxy-authorization", "set-cookie"):
            if marker in text:
                spelled.append(f"{name}: {marker}")
    assert spelled == []


def test_no_module_is_a_god_module():
    long = {name: text.count("\n") for name, _, text in _modules() if text.count("\n") > MAX_LINES}
    assert long == {}


def test_imports_are_at_the_top_but_for_a_few_heavy_libraries_outside_the_cli():
    lazy = []
    for name, tree, _ in _modules():
        if name.startswith("cli/"):
            continue
        type_checking = {
            id(sub)
            for node in tree.body
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for sub in ast.walk(node)
        }
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top | type_checking:
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                lazy.append(f"{name}:{node.lineno} {module}")
    assert not [entry for entry in lazy if "research_engine" in entry], lazy
    assert len(lazy) <= MAX_LAZY_IMPORTS, lazy
