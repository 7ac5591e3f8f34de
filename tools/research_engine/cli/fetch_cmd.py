"""`research-engine fetch URL`: fetch one page through the guarded client and read it."""

from __future__ import annotations

from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, run_command
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
    json_: JsonOpt = False,
) -> None:
    """Fetch URL and extract it: print the document, or with --run and --sq record it as the next SRC-NN."""

    def body() -> Result:
        from research_engine import web
        from research_engine.errors import BadInput
        from research_engine.net import HttpClient

        target_run = None
        target_sq = ""  # set with target_run: --run and --sq go together
        run_private = False
        if run is not None or sq is not None:
            if run is None or sq is None:
                raise BadInput(
                    "--run and --sq go together", code="bad-option", field="run" if run is None else "sq"
                )
            from research_engine import runrecord, trace

            target_run, target_sq = trace.open_run(run), sq
            run_private = bool(runrecord.read(target_run).get("allow_private"))

        with HttpClient(
            allow_private=True if (allow_private or run_private) else None, ignore_robots=ignore_robots
        ) as client:
            doc, result = web.fetch_document(client, url, allow_pdf=pdf)
            overrides = list(client.overrides)

        if target_run is not None and overrides:
            from research_engine import runrecord

            for override in overrides:
                details = {k: v for k, v in override.items() if k != "kind"}
                runrecord.add_event(target_run, override["kind"], command="fetch", sq=sq, **details)

        fetched = result.to_dict()
        if doc is None:
            problem = Problem(
                result.error or "fetch-failed", f"{url}: {result.error_detail or result.error}", field="url"
            )
            code = _EXIT_FOR_ERROR.get(result.error or "", ExitCode.UPSTREAM_FAILED)
            return Result(
                data={"fetch": fetched},
                text=f"not fetched: {problem.message}",
                exit_code=code,
                errors=[problem],
            )

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
        heading = f"# {doc.title or doc.final_url}\n{doc.final_url} (HTTP {doc.status}, {doc.content_type})"
        text = heading + "\n\n" + "\n\n".join(f"[{p.id}] {p.text}" for p in doc.passages)
        thin = bool(doc.extraction.get("thin"))
        if target_run is None:
            warnings = [Problem("thin-page", "the page has too little text to be a source")] if thin else []
            return Result(data=data, text=text, warnings=warnings)

        if thin:
            problem = Problem(
                "thin-page", f"{url} has too little text to be a source; not recorded", field="url"
            )
            return Result(
                data=data,
                text=f"not recorded: {problem.message}",
                exit_code=ExitCode.CHECK_FAILED,
                errors=[problem],
            )
        from research_engine import retrieve

        ref = retrieve.record(target_run, target_sq, doc, query=query)
        data["source"] = ref
        data["path"] = str(retrieve.source_path(target_run, ref))
        return Result(data=data, text=f"{ref} {doc.final_url} ({len(doc.passages)} passages)")

    run_command("fetch", json_, body)
