"""Markdown artifacts with YAML front matter: the front matter is the machine truth.

Tools write every structured artifact through `write_markdown`, which validates
the front matter against its JSON Schema before the atomic write, so a tool can
never leave an invalid artifact behind. The body is rendered from the front
matter for people.
"""

from __future__ import annotations

import functools
from enum import StrEnum
from pathlib import Path
from typing import Any

from research_engine.errors import BadInput, CheckFailed
from research_engine.trace import atomic_write_text


@functools.cache
def _dumper() -> Any:
    """yaml's SafeDumper, also writing the vocabulary's StrEnum members as the plain words they are."""
    import yaml

    class ArtifactDumper(yaml.SafeDumper):
        pass

    ArtifactDumper.add_multi_representer(StrEnum, lambda dumper, value: dumper.represent_str(str(value)))
    return ArtifactDumper


def render_markdown(meta: dict[str, Any], body: str) -> str:
    import yaml

    front = yaml.dump(meta, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front.rstrip()}\n---\n\n{body.rstrip()}\n"


def write_markdown(path: Path, meta: dict[str, Any], body: str, *, schema: str | None = None) -> Path:
    if schema:
        from research_engine.schemas import validate

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
    """(front matter, body) of an artifact; BadInput if it is missing or unreadable."""
    import frontmatter

    try:
        post = frontmatter.load(str(path))
    except FileNotFoundError as exc:
        raise BadInput(f"missing artifact {path}", code="missing-artifact") from exc
    except Exception as exc:  # YAML errors: the file was edited by hand or truncated
        raise BadInput(
            f"artifact {path} has unreadable front matter: {exc}", code="malformed-artifact"
        ) from exc
    return dict(post.metadata), post.content
