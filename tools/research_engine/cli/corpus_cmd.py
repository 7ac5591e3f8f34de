"""`research-engine corpus serve DIR`: a local document collection as a search backend."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result

corpus_app = typer.Typer(
    help="Serve a local document collection with a SearXNG-compatible search.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")


@corpus_app.command("serve")
def serve(
    directory: Annotated[
        Path,
        typer.Argument(help="A folder of HTML, Markdown, text, PDF and Word files (searched recursively)."),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to bind; loopback by default.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0 picks a free one).")] = 8377,
    json_: JsonOpt = False,
) -> None:
    """Serve DIR's documents on HOST:PORT plus `/search?q=...&format=json` (BM25, SearXNG's shape).

    Point the engine at it with SEARXNG_URL=http://HOST:PORT. Runs until interrupted;
    the first line printed (or the JSON envelope) gives the URL and the page count.
    """

    from research_engine.cli._common import emit, path_error
    from research_engine.errors import ResearchEngineError

    def start() -> Result:
        from research_engine.cli._common import settings
        from research_engine.corpus import Corpus, CorpusServer

        corpus = Corpus(directory, cache_root=settings().cache_root)
        server = CorpusServer(directory, host=host, port=port, corpus=corpus)
        holder.append(server)
        pages = len(server.corpus.index.pages)
        skipped = [s.to_dict() for s in server.corpus.skipped]
        return Result(
            data={
                "url": server.url,
                "pages": pages,
                "root": str(server.corpus.root),
                "digest": server.corpus.digest,
                "skipped": skipped,
            },
            text=f"serving {pages} documents from {server.corpus.root} at {server.url} "
            f"(search: {server.url}/search?q=...&format=json)"
            + (f"; {len(skipped)} file(s) skipped (reasons logged)" if skipped else ""),
        )

    holder: list = []
    try:
        try:
            started = start()
        except OSError as error:
            raise (path_error(error) or error) from error
    except ResearchEngineError as exc:
        failed = Result(data=exc.data, exit_code=exc.exit_code, errors=exc.all_problems())
        emit("corpus serve", json_, failed)
        raise typer.Exit(int(failed.exit_code)) from None
    # One envelope (or banner) when serving starts; the server then runs until interrupted.
    emit("corpus serve", json_, started)
    server = holder[0]
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
