"""The JSON Schemas in `schema/` and validation against them.

Schemas live at the repository root in `schema/` (they are part of the contract
people read); an installed wheel carries a copy as `research_engine/_schema`.
Validation returns a list of `Problem`s instead of raising, so callers can report
every problem at once.

A document is first checked by the schema's compiled validator (`research_engine._validators`, generated
by tools/compile_schemas.py): when it passes, jsonschema is never imported, which keeps write commands
such as `control` fast. When it fails, jsonschema, the authority, lists the problems.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from research_engine import libraries
from research_engine.errors import BadInput, Problem


def schema_dir() -> Path:
    packaged = Path(__file__).parent / "_schema"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "schema"


@cache
def _schema_bytes(name: str) -> bytes:
    path = schema_dir() / f"{name}.schema.json"
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise BadInput(f"no schema named {name!r} in {schema_dir()}", code="unknown-schema") from exc


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(_schema_bytes(name).decode("utf-8"))


@cache
def compiled_validator(name: str) -> Callable[[Any], Any] | None:
    """The generated validator for schema `name`, or None when there is none or it was compiled from
    other bytes than the schema on disk (an edited schema never meets a stale validator)."""
    raw = _schema_bytes(name)
    try:
        # Which schema a command needs is known only now; importing all of them would cost every command.
        module = importlib.import_module(f"research_engine._validators.{name.replace('-', '_')}")
    except ImportError:
        return None
    if getattr(module, "SCHEMA_SHA256", None) != hashlib.sha256(raw).hexdigest():
        return None
    return module.validate


def _pointer(path: Any) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "(root)"


def validate(instance: Any, name: str, *, file: str | None = None) -> list[Problem]:
    """Validate `instance` against schema `name`; one Problem per violation."""
    fast = compiled_validator(name)
    if fast is not None:
        try:
            fast(instance)
            return []
        except Exception:  # noqa: BLE001 - any failure of the fast path is settled by jsonschema below
            pass
    validator = libraries.jsonschema().Draft202012Validator(load_schema(name))
    problems: list[Problem] = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: (list(map(str, e.path)), e.message)):
        field = _pointer(err.path)
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else None
            if missing:
                field = missing if field == "(root)" else f"{field}.{missing}"
            problems.append(Problem("missing-field", f"{field} is required", field=field, file=file))
            continue
        problems.append(Problem("schema-violation", f"{field}: {err.message}", field=field, file=file))
    return problems
