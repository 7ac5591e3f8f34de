"""Markdown artifacts with YAML front matter: the front matter is the machine truth.

Tools write every structured artifact through `write_markdown`, which validates
the front matter against its JSON Schema before the atomic write, so a tool can
never leave an invalid artifact behind. The body is rendered from the front
matter for people.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from research_engine import bounded, libraries
from research_engine.errors import BadInput, CheckFailed, Problem
from research_engine.schemas import validate
from research_engine.trace import Run, atomic_write_text


@functools.cache
def _dumper() -> Any:
    """yaml's SafeDumper, also writing the vocabulary's StrEnum members as the plain words they are."""
    safe_dumper: Any = libraries.yaml().SafeDumper

    class ArtifactDumper(safe_dumper):
        pass

    ArtifactDumper.add_multi_representer(StrEnum, lambda dumper, value: dumper.represent_str(str(value)))
    # Never an anchor and alias: a value used twice is written twice (readers refuse alias bombs).
    ArtifactDumper.ignore_aliases = lambda self, data: True
    return ArtifactDumper


def dump_yaml(data: Any) -> str:
    """YAML as the tools write it: block style, keys in order, Unicode kept, no aliases."""
    return str(libraries.yaml().dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100))


def render_markdown(meta: dict[str, Any], body: str) -> str:
    front = dump_yaml(meta)
    return f"---\n{front.rstrip()}\n---\n\n{body.rstrip()}\n"


def write_markdown(path: Path, meta: dict[str, Any], body: str, *, schema: str | None = None) -> Path:
    if schema:
        problems = validate(meta, schema, file=str(path))
        if problems:
            raise CheckFailed(
                f"refusing to write {path.name}: its front matter breaks {schema}.schema.json",
                code="artifact-invalid",
                problems=problems,
            )
    atomic_write_text(path, render_markdown(meta, body))
    return path


def read_markdown(path: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of an artifact; BadInput if it is missing, too large or unreadable."""
    if not os.path.lexists(path):
        raise BadInput(f"missing artifact {path}", code="missing-artifact")
    try:
        return bounded.front_matter(bounded.read_text(path, "artifact"))
    except BadInput as exc:
        if exc.code in ("input-too-large", "path-too-long"):
            raise
        raise BadInput(f"artifact {path} is unreadable: {exc.message}", code="malformed-artifact") from exc
    except Exception as exc:  # YAML errors: the file was edited by hand or truncated
        raise BadInput(
            f"artifact {path} has unreadable front matter: {exc}", code="malformed-artifact"
        ) from exc


# ---------------------------------------------------------------- checking a run's artifacts (validate)


@dataclass
class ValidationReport:
    root: Path
    checked_files: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)  # worth a look, never invalid (a stray snapshot)

    @property
    def ok(self) -> bool:
        return not self.problems

    def warn(self, file: Path | str, message: str, code: str) -> None:
        rel = Path(file).relative_to(self.root).as_posix() if Path(file).is_absolute() else str(file)
        self.warnings.append(Problem(code, message, file=rel))

    def add(
        self, file: Path | str, message: str, code: str = "invalid-artifact", field: str | None = None
    ) -> None:
        rel = Path(file).relative_to(self.root).as_posix() if Path(file).is_absolute() else str(file)
        self.problems.append(Problem(code, message, field=field, file=rel))

    def extend(self, problems: list[Problem], file: Path) -> None:
        for p in problems:
            self.add(file, p.message, p.code, p.field)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_root": str(self.root),
            "valid": self.ok,
            "checked_files": self.checked_files,
            "problems": [p.to_dict() for p in self.problems],
            "warnings": [p.to_dict() for p in self.warnings],
        }


def load_checked(run: Run, report: ValidationReport, path: Path, schema: str) -> dict[str, Any] | None:
    """The front matter of the artifact at `path` when it is present, readable and valid against `schema`.

    Counts the file, records every problem in `report`, and returns None when there is nothing further to
    check (absent, unreadable or schema-invalid), so checkers only add their cross-references.
    """
    read = read_counted(report, path)
    if read is None:
        return None
    problems = validate(read[0], schema)
    report.extend(problems, path)
    return None if problems else read[0]


def read_counted(report: ValidationReport, path: Path) -> tuple[dict[str, Any], str] | None:
    """(front matter, body) of the artifact at `path` when it is present and readable, counting the file;
    None (with the problem recorded) when it is unreadable. For checkers that also read the body."""
    if not path.is_file():
        return None
    report.checked_files += 1
    try:
        return read_markdown(path)
    except BadInput as exc:
        report.add(path, exc.message, "malformed-artifact")
        return None
