"""`research-engine fetch URL`: fetch one page through the guarded client and read it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from research_engine.cli._common import (
    AllowHostOpt,
    JsonOpt,
    Result,
    fetch_policy_for,
    record_target,
    run_command,
    settings,
)
from research_engine.errors import ExitCode, Problem


def register(app: typer.Typer) -> None:
    app.command("fetch")(fetch)


_EXIT_FOR_ERROR = {
    "refused-ssrf": ExitCode.REFUSED,
    "refused-scheme": ExitCode.REFUSED,
    "refused-robots": ExitCode.REFUSED,
    "unresolved": ExitCode.UNRESOLVED,
}


def fetch(
    url: Annotated[str, typer.Argument(help="The page to fetch (http or https).")],
    run: Annotated[str | None, typer.Option("--run", help="Record the page into this run directory.")] = None,
    sq: Annotated[
        str | None, typer.Option("--sq", help="The sub-question (SQ-NN) the source belongs to.")
    ] = None,
    query: Annotated[str | None, typer.Option("--query", help="The query that led to this page.")] = None,
    allow_private: Annotated[
        bool,
        typer.Option("--allow-private", help="Allow loopback/private addresses (recorded in the trace)."),
    ] = False,
    ignore_robots: Annotated[
        bool, typer.Option("--ignore-robots", help="Do not consult robots.txt (recorded in the trace).")
    ] = False,
    pdf: Annotated[bool, typer.Option("--pdf", help="Accept and read PDF (off by default).")] = False,
    full: Annotated[
        bool,
        typer.Option("--full", help="Print every passage in --json (unbounded; for scripts, not models)."),
    ] = False,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Fetch URL and extract it: print the document, or with --run and --sq record it as the next SRC-NN.

    With --json the envelope is bounded (docs/conventions.md): the passages most relevant to the
    sub-question, each with its sentence ids (`p05.s2`), and where the rest is (`source show`)."""

    def body() -> Result:
        from research_engine.retrieve.pages import THIN, PageRequest, fetch_document, retrieve_pages
        from research_engine.runrecord import note_overrides

        target_run = record_target(run, sq)
        config = settings()
        policy = fetch_policy_for(
            config,
            target_run,
            allow_host,
            "fetch",
            allow_private=allow_private,
            ignore_robots=ignore_robots,
            allow_pdf=pdf,
        )
        retrieved = None
        with policy.client() as client:
            if target_run is None:
                doc, result = fetch_document(client, url, allow_pdf=pdf)
            else:
                request = PageRequest(url=url, query=query)
                retrieved = retrieve_pages(target_run, sq or "", [request], client, allow_pdf=pdf)[0]
                doc, result = retrieved.document, retrieved.result
                note_overrides(target_run, client, config.secrets, command="fetch", sq=sq)
            overrides = list(client.overrides)

        fetched = result.to_dict()
        if doc is None:
            problem = Problem(
                result.error or "fetch-failed", f"{url}: {result.error_detail or result.error}", field="url"
            )
            code = _EXIT_FOR_ERROR.get(result.error or "", ExitCode.UPSTREAM_FAILED)
            # One message per failure: the error line on stderr says it (no "not fetched:" echo on stdout).
            return Result(data={"fetch": fetched}, exit_code=code, errors=[problem])

        page = {
            "title": doc.title,
            "canonical_url": doc.canonical_url,
            "canonical_key": doc.canonical_key,
            "language": doc.language,
            "published": doc.published,
            "modified": doc.modified,
            "robots_meta": doc.robots_meta,
            "extraction": doc.extraction,
            "passages": [p.to_dict() for p in doc.passages],
        }
        data = {"fetch": fetched, "document": page, "overrides": overrides}
        recorded = retrieved.ref if retrieved is not None else None
        if not full:
            bound(data, doc.passages, target_run, sq, recorded, query)
        heading = f"# {doc.title or doc.final_url}\n{doc.final_url} (HTTP {doc.status}, {doc.content_type})"
        text = heading + "\n\n" + "\n\n".join(f"[{p.id}] {p.text}" for p in doc.passages)
        if retrieved is None or target_run is None:
            thin = bool(doc.extraction.get("thin"))
            warnings = [Problem("thin-page", "the page has too little text to be a source")] if thin else []
            return Result(data=data, text=text, warnings=warnings)

        if retrieved.duplicate_of is not None:
            problem = Problem("duplicate-source", f"not recorded: {url}: {retrieved.detail}", field="url")
            data["source"] = retrieved.duplicate_of
            return Result(data=data, exit_code=ExitCode.CHECK_FAILED, errors=[problem])
        if retrieved.error == THIN:
            problem = Problem(
                "thin-page", f"{url} has too little text to be a source; not recorded", field="url"
            )
            return Result(data=data, exit_code=ExitCode.CHECK_FAILED, errors=[problem])
        from research_engine.retrieve import source_path

        ref = retrieved.ref or ""
        data["source"] = ref
        data["path"] = str(source_path(target_run, ref))
        text = f"{ref} {doc.final_url} ({len(doc.passages)} passages)"
        if retrieved.reused_from:  # the page was read before in this run: nothing was requested
            data["reused_from"] = retrieved.reused_from
            text += f", the page {retrieved.reused_from} already read (no second request)"
        return Result(data=data, text=text)

    run_command("fetch", json_, body)


def bound(
    data: dict[str, Any], passages: list[Any], run: Any, sq: str | None, ref: str | None, query: str | None
) -> None:
    """Keep the envelope within its bound: the passages most relevant to the sub-question (page 1 without
    one), their sentences by id, and where the rest is."""
    from research_engine import excerpts
    from research_engine.retrieve import excerpt

    data["document"]["passages"] = []
    question = excerpt.question_for(run, sq, query) if run is not None and sq else query
    room = excerpts.ENVELOPE_CHARS - excerpts.size(data) - 1600  # the source id, path, where the rest is
    shown = excerpt.choose(passages, room, question=question, page=None)
    data["document"]["passages"] = shown.views
    data["rest"] = excerpt.rest(run if ref else None, ref, shown)
    if not ref:
        data["rest"]["more"] = "every passage: the same command with --full"
