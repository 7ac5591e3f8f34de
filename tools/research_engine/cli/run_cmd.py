"""`research-engine run BRIEF` (the headless engine) and `research-engine replay RUN`."""

from __future__ import annotations

import re
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from research_engine.cli._common import (
    AllowHostOpt,
    JsonOpt,
    Result,
    run_command,
    settings,
    setup_logging,
    verbosity,
)
from research_engine.errors import BadInput, ExitCode
from research_engine.runrecord import describe_spend
from research_engine.vocabulary import Depth, StopReason

DEPTHS: tuple[str, ...] = tuple(Depth)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("replay")(replay)


def _summary(outcome: dict) -> str:
    figures = outcome["figures"]
    lines = [str(outcome["run_root"])]
    reason = outcome.get("stop_reason")
    if reason == StopReason.GOVERNOR and not outcome.get("partial"):
        # no budget was spent: the loop reached its cycle ceiling with the criterion still unmet
        reason = f"{reason}: the cycle ceiling came before the criterion was met"
    state = outcome["status"] + (f" ({reason})" if reason else "")
    if outcome.get("partial"):
        state += ", PARTIAL result"
    if outcome.get("no_finding"):
        state += ", NO FINDING could be supported"
    lines.append(f"  status: {state}; cycles: {outcome['cycles']}")
    lines.append(
        f"  sub-questions {figures['sub_questions']}, sources {figures['sources']}, claims "
        f"{figures['claims']} ({figures['supported']} supported, {figures['refused']} refused), "
        f"failed fetches {figures['failed_fetches']}, "
        f"drafts rejected by the gate {figures['rejected_drafts']}"
    )
    spent = figures["budgets"]["spent"]
    limits = figures["budgets"]["set"]
    lines.append("  spent: " + ", ".join(describe_spend(k, spent[k], limits.get(k, "-")) for k in spent))
    if outcome.get("result"):
        lines.append(f"  result: {Path(outcome['run_root']) / outcome['result']}")
    for sq, plan in (outcome.get("planned") or {}).items():
        lines.append(f"  {sq}: {plan['text']}")
        for q in plan["queries"]:
            lines.append(f"    query: {q}")
        for url in plan["selected"]:
            lines.append(f"    selected: {url}")
    if figures.get("replay_misses"):
        lines.append(f"  replay: {len(figures['replay_misses'])} request(s) not in the cassette")
    return "\n".join(lines)


def run(
    brief: Annotated[
        Path | None,
        typer.Argument(
            help="The brief (YAML, Markdown with front matter, or a request); "
            "a locked brief.md re-runs its fields."
        ),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="Who supplies judgement: extractive (default, no LLM), "
            "openai (RESEARCH_ENGINE_MODEL_BASE_URL...), or openai:<model>.",
        ),
    ] = "extractive",
    depth: Annotated[
        str | None, typer.Option("--depth", help="Override the brief's depth: quick, standard, deep.")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Plan by rule, search and select; print the planned "
            "queries and selected URLs; stop before any model call.",
        ),
    ] = False,
    record: Annotated[
        bool, typer.Option("--record", help="Keep every HTTP exchange in <run>/cassette/.")
    ] = False,
    replay_from: Annotated[
        Path | None,
        typer.Option(
            "--replay", help="Serve every HTTP exchange from this cassette directory: offline, no keys."
        ),
    ] = None,
    resume_run: Annotated[
        Path | None, typer.Option("--resume", help="Continue this run from its trace tree.")
    ] = None,
    output_path: Annotated[
        str | None, typer.Option("--output-path", help="Directory for the run (overrides the brief's).")
    ] = None,
    allow_private: Annotated[
        bool,
        typer.Option(
            "--allow-private", help="Allow loopback/private addresses (a local corpus); recorded in run.json."
        ),
    ] = False,
    allow_host: AllowHostOpt = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-model-tokens", help="Override the model_tokens budget.")
    ] = None,
    sources: Annotated[
        str | None,
        typer.Option(
            "--sources",
            help="Where to gather: a comma-separated subset of "
            "web,openalex,worldbank,arxiv,crossref,europepmc,wikipedia (default: all; with --corpus, web "
            "alone; a replay uses the recorded list).",
        ),
    ] = None,
    corpus: Annotated[
        list[Path] | None,
        typer.Option(
            "--corpus",
            help="Research this folder of documents (HTML, Markdown, text, PDF, Word), served in-process "
            "as the run's search backend; repeatable. Without --sources, gathers from the folders alone.",
        ),
    ] = None,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="Show every stage and event on stderr (as `research-engine -v run`), and keep the model's "
            "exchanges under <run>/model/.",
        ),
    ] = 0,
    json_: JsonOpt = False,
) -> None:
    """Run the whole research loop headless: decompose, gather, select, retrieve, consolidate, verify,
    control, loop, synthesize; the same trace tree the skill bundle writes.

    `--corpus DIR` researches a folder of your own documents: it is indexed (cached by content under the
    cache directory), served on a loopback port for this run only and searched like a web backend (beside
    a configured one, if any); run.json records the folder's path and the digest of its file list.

    Gathers from the web (a search backend), OpenAlex (for factual, technical and quantitative sub-questions),
    the World Bank (for quantitative sub-questions naming a country and a quantity), arXiv, Crossref and
    Europe PMC (scholarly claim types) and Wikipedia (definitions and background); an API that fails or
    rate-limits is an event in run.json and the run goes on without it.

    Quiet by default: a progress bar on a terminal, then a closing summary. Every stage and event is written
    to the run's event log (.state/events.log) and the significant ones to run.json; with -v they are
    shown on stderr too, and every model exchange (request, parameters, reply, usage, timing) is
    kept under <run>/model/, with known secrets scrubbed.

    Exit 0 when the run completes (result.md passes `report check`), 7 when a budget stopped it (a partial,
    labelled result is written when there was anything to say), 8 when it completed without one supported
    claim (result.md says no finding could be supported, what was searched and refused, and the open
    questions), 5 when web is among --sources and no search backend is configured, 75 when another process
    is driving the run (--resume).
    """

    def body() -> Result:
        from research_engine.engine.config import EngineOptions, preflight
        from research_engine.engine.factory import model_kind
        from research_engine.engine.progress import Progress

        loud = verbosity() >= 1 or verbose >= 1
        if verbose > verbosity():
            setup_logging(verbose, False)  # `run -v` logs like `research-engine -v run`
        progress = Progress.auto(json_mode=json_, verbose=loud)
        # SIGTERM (a job scheduler, `timeout`, `kill`) ends the run like Ctrl-C: run.json says failed, the
        # spend is kept, and `run --resume` picks it up.
        if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
            signal.signal(signal.SIGTERM, _terminated)
        try:
            if resume_run is not None:
                if brief is not None:
                    raise BadInput("give a BRIEF or --resume RUN, not both", code="bad-options")
                from research_engine.engine import loop

                outcome = loop.resume(resume_run, settings=settings(), progress=progress, keep_exchanges=loud)
            else:
                if brief is None:
                    raise BadInput("missing BRIEF (or --resume RUN)", code="missing-argument", field="brief")
                model_kind(model)  # BadInput for a name the registry does not know
                if max_tokens is not None and max_tokens < 1:
                    raise BadInput(
                        "--max-model-tokens must be at least 1", code="bad-budget", field="max_model_tokens"
                    )
                if depth is not None and depth not in DEPTHS:
                    raise BadInput(
                        f"depth must be one of {', '.join(DEPTHS)}", code="bad-depth", field="depth"
                    )
                options = EngineOptions(
                    model=model,
                    depth=depth,
                    dry_run=dry_run,
                    record=record,
                    replay=str(replay_from) if replay_from else None,
                    output_path=output_path,
                    allow_private=allow_private,
                    allow_hosts=list(allow_host or []),
                    budget_overrides={"model_tokens": max_tokens} if max_tokens else {},
                    # Checked (and put in order) when the run starts: the gather module loads with the engine.
                    sources=[s for s in re.split(r"[,\s]+", sources) if s] if sources is not None else None,
                    keep_exchanges=loud,
                    corpus=[str(folder) for folder in corpus or []],
                )
                config = settings()
                if replay_from is None and model.split(":", 1)[0] != "openai":  # `start` checks that model
                    # Before the engine is loaded: a run doomed from the start stops within a second.
                    preflight(brief, options, config, corpora=len(options.corpus))
                from research_engine.engine import loop

                outcome = loop.run(brief, options, settings=config, progress=progress)
        finally:
            progress.close()
        data = outcome.to_dict()
        return Result(data=data, text=_summary(data), exit_code=outcome.exit_code)

    run_command("run", json_, body)


def replay(
    run_dir: Annotated[
        Path, typer.Argument(help="A run recorded with `run --record` (e.g. one under examples/).")
    ],
    keep: Annotated[
        Path | None, typer.Option("--keep", help="Keep the replayed run under this directory.")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Re-execute a recorded run offline from its cassette and report any difference from its trace
    (beyond the documented volatile fields: timestamps, the run id's stamp, the brief digest, elapsed times).

    Exit 0 when the replay reproduces the trace, 1 when anything differs.
    """

    def body() -> Result:
        from research_engine.engine.replay import replay_run

        report = replay_run(run_dir, keep=keep)
        lines = [
            f"replay of {report.recorded}: "
            + ("no difference" if report.identical else f"{len(report.differences)} difference(s)")
            + f" ({report.compared} files compared)"
        ]
        for diff in report.differences[:50]:
            where = f" line {diff['line']}" if "line" in diff else ""
            lines.append(f"  {diff['kind']}: {diff['path']}{where}")
            if "recorded" in diff:
                lines.append(f"    recorded: {diff['recorded']}")
                lines.append(f"    replayed: {diff['replayed']}")
        for miss in report.misses[:20]:
            lines.append(f"  not in the cassette: {miss}")
        return Result(
            data=report.to_dict(),
            text="\n".join(lines),
            exit_code=ExitCode.OK if report.identical else ExitCode.CHECK_FAILED,
        )

    run_command("replay", json_, body)


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
