"""`research-engine worldbank series|indicators`: World Bank Indicators API v2."""

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

worldbank_app = typer.Typer(help="World Bank indicator series and indicator discovery.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(worldbank_app, name="worldbank")


@worldbank_app.command("series")
def series(
    countries: Annotated[
        str, typer.Argument(help="Country codes joined by ; or , (JPN;USA), ISO3 or ISO2, or all.")
    ],
    indicator: Annotated[str, typer.Argument(help="An indicator code, e.g. NY.GDP.MKTP.CD.")],
    date: Annotated[str | None, typer.Option("--date", help="A year or range, e.g. 2010:2020.")] = None,
    mrv: Annotated[int | None, typer.Option("--mrv", help="Only the N most recent periods.")] = None,
    run: RecordRunOpt = None,
    sq: RecordSqOpt = None,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Fetch an indicator's series per country: every point (nulls kept) and the latest non-null value.

    With --run/--sq each response is recorded as a source whose URL is the exact API request.
    """

    def body() -> Result:
        from research_engine.retrieve import api as api_sources
        from research_engine.runrecord import note_overrides
        from research_engine.sources import worldbank

        config = settings()
        target = record_target(run, sq)
        with fetch_policy_for(config, target, allow_host, "worldbank series").client() as client:
            fetched = worldbank.fetch_series(
                countries, indicator, date=date, mrv=mrv, client=client, settings=config
            )
            data = fetched.to_dict()
            if target is not None:
                data["recorded"] = api_sources.record_series(
                    target, sq or "", fetched, query=f"{countries} {indicator}"
                )
                note_overrides(target, client, config.secrets)
        lines = [f"World Bank {fetched.indicator} for {';'.join(fetched.countries)} ({fetched.span})"]
        if not fetched.series:
            lines.append("  no data for this request")
        for s in fetched.series:
            name = f"{s.country_name} ({s.country})" if s.country_name else s.country
            if s.latest is not None:
                lines.append(f"  {name}: latest {s.latest.year} = {s.latest.value} ({len(s.points)} points)")
            else:
                lines.append(f"  {name}: {s.note}")
        for ref in data.get("recorded", []):
            lines.append(f"recorded as {ref}")
        return Result(data=data, text="\n".join(lines))

    run_command("worldbank series", json_, body)


@worldbank_app.command("indicators")
def indicators(
    keywords: Annotated[
        str, typer.Argument(help="Words that must all appear in the indicator's name, code or note.")
    ],
    limit: Annotated[int, typer.Option("--limit", help="At most this many indicators.")] = 20,
    refresh: Annotated[bool, typer.Option("--refresh", help="Refetch the cached indicator list.")] = False,
    run: RecordRunOpt = None,
    sq: RecordSqOpt = None,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Find indicators by keyword in the locally cached indicator list (the API has no text search)."""

    def body() -> Result:
        from research_engine.selection import candidates as candidates_log
        from research_engine.sources import worldbank

        config = settings()
        target = record_target(run, sq)
        with fetch_policy_for(config, target, allow_host, "worldbank indicators").client() as client:
            found = worldbank.search_indicators(
                keywords, limit=limit, refresh=refresh, client=client, settings=config
            )
            data = found.to_dict()
            candidates = found.candidates()
            data["candidates"] = [c.to_dict() for c in candidates]
            if target is not None:
                entry = candidates_log.record_candidates(
                    target,
                    sq or "",
                    command="worldbank indicators",
                    query=keywords,
                    candidates=candidates,
                    responses=[],
                    backend="worldbank",
                    info={"catalogue_size": found.catalogue_size, "catalogue_fetched_at": found.fetched_at},
                )
                data["recorded"] = candidates_log.recorded_query(target, sq or "", client, entry)
            candidates_log.bound_listing(data, bulky=("indicators",))
        lines = [
            f"{len(found.matches)} indicator(s) matching {keywords!r} in {found.catalogue_size}"
            + (" (cached list)" if found.from_cache else "")
        ]
        for ind in found.matches:
            lines.append(f"  {ind.id}: {ind.name}" + (f" [{ind.source}]" if ind.source else ""))
        return Result(data=data, text="\n".join(lines))

    run_command("worldbank indicators", json_, body)
