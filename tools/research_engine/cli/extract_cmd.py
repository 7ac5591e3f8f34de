"""`research-engine extract FILE`: the page reader on a local file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, run_command


def register(app: typer.Typer) -> None:
    app.command("extract")(extract)


def extract(
    file: Annotated[
        Path, typer.Argument(help="An HTML, Markdown, plain-text or (with --pdf) PDF or Word (.docx) file.")
    ],
    url: Annotated[
        str | None, typer.Option("--url", help="The page's URL: resolves a relative canonical link.")
    ] = None,
    pdf: Annotated[
        bool, typer.Option("--pdf", help="Allow PDF and Word (.docx) text extraction (off by default).")
    ] = False,
    content_type: Annotated[
        str | None,
        typer.Option("--content-type", help="Override the type guessed from the file name and bytes."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Extract the main text of a page: the text by default, the document with passages in --json."""

    def body() -> Result:
        from research_engine import bounded
        from research_engine.errors import BadInput
        from research_engine.extract import extract_document

        data = bounded.read_bytes(file, "page")
        if not data.strip():
            raise BadInput(f"{file} is empty: there is nothing to extract", code="empty-file")
        why = _binary(data) if content_type is None else None  # a file name is only a hint; the bytes decide
        if why is not None:
            raise BadInput(f"{file} holds binary data, not HTML, text or PDF: {why}", code="unsupported-type")
        page = extract_document(
            data, content_type=content_type or _type_from_name(file), url=url, allow_pdf=pdf
        )
        return Result(data={"file": str(file), "url": url, **page.to_dict()}, text=page.text or "(no text)")

    run_command("extract", json_, body)


def _type_from_name(path: Path) -> str | None:
    suffix = path.suffix.lower()
    return {
        ".html": "text/html",
        ".htm": "text/html",
        ".xhtml": "application/xhtml+xml",
        ".txt": "text/plain",
        ".md": "text/markdown",
        ".markdown": "text/markdown",
        ".pdf": "application/pdf",
        ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    }.get(suffix)


def _binary(data: bytes) -> str | None:
    """Why the file is binary data (the fetcher's rule, `net.content.binary_reason`); a PDF or a Word file
    is not."""
    from research_engine.extract.formats import kind_of
    from research_engine.net.content import binary_reason

    if data.lstrip()[:5].lower() == b"%pdf-" or kind_of(data, None) == "docx":
        return None
    return binary_reason(data)
