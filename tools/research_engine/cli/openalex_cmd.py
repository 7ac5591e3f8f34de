"""`research-engine openalex search|work`: scholarly works from OpenAlex."""

from __future__ import annotations

from typing import Annotated

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
from research_engine.cli.search_cmd import RecordRunOpt, RecordSqOpt

openalex_app = typer.Typer(
    help="Search OpenAlex works and fetch one work by id or DOI.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(openalex_app, name="openalex")


@openalex_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Full-text search terms (the `search=` parameter).")],
    filter_: Annotated[
        str | None, typer.Option("--filter", help="An OpenAlex filter, e.g. type:article,is_oa:true.")
    ] = None,
    year_from: Annotated[
        int | None, typer.Option("--year-from", help="Only works published from this year.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many works (cursor-paged).")] = 25,
    run: RecordRunOpt = None,
    sq: RecordSqOpt = None,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Search OpenAlex works; with --run/--sq the works are kept as candidates for selection.

    Sends mailto when RESEARCH_ENGINE_MAILTO is set and api_key when OPENALEX_API_KEY is set
    (the key never reaches the trace).
    """

    def body() -> Result:
        from research_engine.selection import candidates as candidates_log
        from research_engine.sources import openalex

        config = settings()
        target = record_target(run, sq)
        with fetch_policy_for(config, target, allow_host, "openalex search").client() as client:
            found = openalex.search_works(
                query, filter_=filter_, year_from=year_from, limit=limit, client=client, settings=config
            )
            data = found.to_dict()
            data["candidates"] = [c.to_dict() for c in found.candidates()]
            if target is not None:
                entry = candidates_log.record_works_search(target, sq or "", found, query=query)
                data["recorded"] = candidates_log.recorded_query(target, sq or "", client, entry)
            candidates_log.bound_listing(data, bulky=("works",))
        lines = [
            f"OpenAlex {query!r}: {len(found.works)} of {found.total_count} work(s)"
            + (" (more available)" if found.truncated else "")
        ]
        for i, w in enumerate(found.works, 1):
            lines.append(f"{i:>3}. {w.title} ({w.year}) cited by {w.cited_by_count}")
            lines.append(
                f"     {w.short_id}"
                + (f"  doi:{w.doi}" if w.doi else "")
                + (f"  {w.venue}" if w.venue else "")
            )
        if data.get("recorded"):
            lines.append(f"recorded as {data['recorded']['query_id']} in {data['recorded']['file']}")
        return Result(data=data, text="\n".join(lines))

    run_command("openalex search", json_, body)


@openalex_app.command("work")
def work(
    id_or_doi: Annotated[
        str, typer.Argument(help="An OpenAlex id (W2741809807) or a DOI (10.7717/peerj.4375).")
    ],
    run: RecordRunOpt = None,
    sq: RecordSqOpt = None,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Fetch one work with its reconstructed abstract; with --run/--sq record it as a source."""

    def body() -> Result:
        from research_engine.retrieve import api as api_sources
        from research_engine.runrecord import note_overrides
        from research_engine.sources import openalex

        config = settings()
        target = record_target(run, sq)
        with fetch_policy_for(config, target, allow_host, "openalex work").client() as client:
            fetched = openalex.get_work(id_or_doi, client=client, settings=config)
            data = fetched.to_dict()
            if target is not None:
                ref = api_sources.record_work(
                    target, sq or "", fetched, access_tier=openalex.access_tier(config), query=id_or_doi
                )
                note_overrides(target, client, config.secrets)
                data["recorded"] = [ref]
        w = fetched.work
        lines = [f"{w.title} ({w.year})", f"  id: {w.short_id}  doi: {w.doi}  cited by: {w.cited_by_count}"]
        if w.venue:
            lines.append(f"  venue: {w.venue}")
        if w.oa_url:
            lines.append(f"  open access: {w.oa_url}")
        lines.append("")
        lines.append(w.abstract or "(OpenAlex holds no abstract for this work)")
        if data.get("recorded"):
            lines.append(f"recorded as {data['recorded'][0]}")
        return Result(data=data, text="\n".join(lines))

    run_command("openalex work", json_, body)
