"""The JSON Schemas in `schema/` and validation against them.

Schemas live at the repository root in `schema/` (they are part of the contract
people read); an installed wheel carries a copy as `research_engine/_schema`.
Validation returns a list of `Problem`s instead of raising, so callers can report
every problem at once.
"""

from __future__ import annotations

import json
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
def load_schema(name: str) -> dict[str, Any]:
    path = schema_dir() / f"{name}.schema.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BadInput(f"no schema named {name!r} in {schema_dir()}", code="unknown-schema") from exc


def _pointer(path: Any) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "(root)"


def validate(instance: Any, name: str, *, file: str | None = None) -> list[Problem]:
    """Validate `instance` against schema `name`; one Problem per violation."""
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
