"""`research-engine search QUERY`: web search through the configured backends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

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

if TYPE_CHECKING:
    from research_engine.sources.search import SearchOutcome

RecordRunOpt = Annotated[
    str | None,
    typer.Option("--run", help="Record what was found into this run (with --sq)."),
]
RecordSqOpt = Annotated[str | None, typer.Option("--sq", help="The sub-question to record under (SQ-01).")]


def register(app: typer.Typer) -> None:
    app.command("search")(search)


def search(
    query: Annotated[str, typer.Argument(help="What to search for.")],
    backend: Annotated[
        str | None,
        typer.Option("--backend", help="Use only this backend: brave, tavily, searxng or duckduckgo."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many results (1-50).")] = 10,
    run: RecordRunOpt = None,
    sq: RecordSqOpt = None,
    allow_host: AllowHostOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Search the web with the first configured backend that answers; exit 5 when none is configured.

    Backends: SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY, RESEARCH_ENGINE_ALLOW_DDG=1 (DuckDuckGo HTML),
    tried in RESEARCH_ENGINE_SEARCH_ORDER (default brave,tavily,searxng,duckduckgo). A failing backend
    hands over to the next; the chain of attempts is printed and, with --run/--sq, recorded.
    """

    def body() -> Result:
        from research_engine.errors import UpstreamFailed
        from research_engine.runrecord import note_overrides
        from research_engine.selection import candidates as candidates_log
        from research_engine.sources import search as web

        config = settings()
        target = record_target(run, sq)
        with fetch_policy_for(config, target, allow_host, "search").client() as client:
            try:
                outcome = web.search(query, backend=backend, limit=limit, client=client, settings=config)
            except UpstreamFailed as failure:
                if target is not None:  # a failed search is part of the trust log too
                    candidates_log.record_candidates(
                        target,
                        sq or "",
                        command="search",
                        query=query,
                        candidates=[],
                        responses=[],
                        backend=None,
                        chain=failure.data.get("chain", []),
                    )
                    note_overrides(target, client, config.secrets)
                raise
            data = outcome.to_dict()
            if target is not None:
                entry = candidates_log.record_search(target, sq or "", outcome, query=query)
                data["recorded"] = candidates_log.recorded_query(target, sq or "", client, entry)
        candidates_log.bound_listing(data)
        return Result(data=data, text=render(outcome, data.get("recorded")))

    run_command("search", json_, body)


def render(outcome: SearchOutcome, recorded: Mapping[str, str] | None) -> str:
    chain = ", ".join(
        f"{a.backend} {a.outcome}" + (f" ({a.detail})" if a.detail else "") for a in outcome.chain
    )
    lines = [
        f"search {outcome.query!r}: {len(outcome.candidates)} result(s) from {outcome.backend} [{chain}]"
    ]
    query_id = (recorded or {}).get("query_id")
    for c in outcome.candidates:
        ref = f"{query_id}#{c.rank} " if query_id else ""
        lines.append(f"{c.rank:>3}. {ref}{c.title}")
        lines.append(f"     {c.url}")
        if c.snippet:
            lines.append(f"     {c.snippet[:200]}")
    if recorded:
        lines.append(f"recorded as {recorded['query_id']} in {recorded['file']}")
    return "\n".join(lines)
