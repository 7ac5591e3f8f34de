"""`research-engine batch BRIEF... | --briefs DIR | --resume BATCH_DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import AllowHostOpt, JsonOpt, Result, run_command, settings
from research_engine.errors import BadInput


def register(app: typer.Typer) -> None:
    app.command("batch")(batch)


def batch(
    briefs: Annotated[
        list[Path] | None,
        typer.Argument(help="Brief files (YAML, Markdown with front matter, or a request)."),
    ] = None,
    briefs_dir: Annotated[
        Path | None,
        typer.Option(
            "--briefs", help="Also every brief file directly in this folder (.yaml, .yml, .md, ...)."
        ),
    ] = None,
    output_path: Annotated[
        str, typer.Option("--output-path", help="Where every run and the batch directory go.")
    ] = "runs",
    workers: Annotated[
        int | None, typer.Option("--workers", help="Runs at a time (default: the number of cores).")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Continue this batch directory: ended runs kept, cut-short runs resumed, the rest started.",
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="local|auto|ray://HOST:PORT",
            help="Run each brief as a Ray task: on a local Ray instance (local), the cluster this machine "
            "belongs to (auto) or one at an address; needs the ray extra.",
        ),
    ] = None,
    model: Annotated[
        str,
        typer.Option("--model", help="Who supplies judgement: extractive (default), openai, openai:<model>."),
    ] = "extractive",
    depth: Annotated[
        str | None, typer.Option("--depth", help="Override every brief's depth: quick, standard, deep.")
    ] = None,
    sources: Annotated[
        str | None,
        typer.Option(
            "--sources",
            help="Where to gather, as for run: a comma-separated subset of web,openalex,worldbank.",
        ),
    ] = None,
    allow_private: Annotated[
        bool, typer.Option("--allow-private", help="Allow loopback/private addresses in every run.")
    ] = False,
    allow_host: AllowHostOpt = None,
    corpus: Annotated[
        list[Path] | None,
        typer.Option(
            "--corpus",
            help="Research this folder of documents (HTML, Markdown, text, PDF, Word) in every run, as "
            "`run --corpus` does; repeatable.",
        ),
    ] = None,
    record: Annotated[
        bool, typer.Option("--record", help="Keep every run's HTTP exchanges in its cassette.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Run many briefs, each a normal headless run in the output path, and keep one record of them
    (batch-<stamp>/batch.json and batch.md).

    Every brief is checked before any run starts. Runs share per-host politeness and the HTTP cache; one
    that fails, hangs past its wall-clock budget or is killed stops no other, and `--resume` picks it up.

    Exit 0 when every brief ended with a deliverable (its run exited 0, 7 or 8), 1 when any did not, 2 for
    bad input before anything starts, 5 for --ray without Ray installed (or no search backend), 6 when a
    Ray cluster cannot be reached or cannot write the output path, 130 on Ctrl-C (`--resume` continues).
    """

    def body() -> Result:
        from research_engine import batch as batches
        from research_engine.engine.apigather import parse_sources
        from research_engine.vocabulary import Depth

        reporter = batches.Reporter(0, enabled=not json_)
        if resume is not None:
            if briefs or briefs_dir is not None:
                raise BadInput("give briefs or --resume BATCH_DIR, not both", code="bad-options")
            done = batches.resume_batch(
                resume, settings=settings(), workers=workers, ray=ray, reporter=reporter
            )
        else:
            if depth is not None and depth not in tuple(Depth):
                raise BadInput(f"depth must be one of {', '.join(Depth)}", code="bad-depth", field="depth")
            if model.split(":", 1)[0] not in ("extractive", "openai", "scripted"):
                raise BadInput(f"unknown model {model!r}", code="bad-model", field="model")
            options = batches.BatchOptions(
                output_path=output_path,
                workers=workers,
                ray=ray,
                model=model,
                depth=depth,
                sources=parse_sources(sources) if sources is not None else None,
                allow_hosts=list(allow_host or []),
                allow_private=allow_private,
                record=record,
                corpus=[str(folder) for folder in corpus or []],
            )
            done = batches.run_batch(
                batches.find_briefs(briefs or [], briefs_dir), options, settings=settings(), reporter=reporter
            )
        data = done.to_dict()
        totals = data["totals"]
        text = (
            f"{done.root}\n  {totals['briefs']} brief(s): {totals['with_deliverable']} with a deliverable, "
            f"{totals['failed']} failed, {totals['pending']} not finished\n  record: {done.root / 'batch.md'}"
        )
        return Result(
            data={"batch_dir": str(done.root), **data}, text=text, exit_code=batches.batch_exit_code(done)
        )

    run_command("batch", json_, body)
