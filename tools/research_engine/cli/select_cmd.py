"""`research-engine select log`: the selection-and-trust log of a sub-question."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command

select_app = typer.Typer(help="Score and choose sources (select).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(select_app, name="select")


@select_app.command("log")
def log(
    run: RunOpt,
    sq: Annotated[str, typer.Option("--sq", help="The sub-question (SQ-NN).")],
    candidates: Annotated[
        Path,
        typer.Option(
            "--candidates",
            help="FILE (or - for stdin): the candidates considered, each with the agent's reason "
            "(schema/candidates.schema.json), as JSON or as a YAML list (what an agent passes in a heredoc: "
            "Claude Code refuses a shell command holding JSON's braces and quotes).",
        ),
    ],
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Judge freshness as of this date (YYYY-MM-DD; default today), e.g. to replay a run.",
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Score every candidate, dedup, choose within the budget; log all of it with the reasons.

    A candidate is a search result named by its recorded id (`ref: Q-02#3`, as `search --run` printed
    it) or given in full (url, title, snippet...), each with the agent's `reason` and optional
    `verdict_hint`. Writes select/SQ-NN.selection.md (one round per call) and prints the chosen sources,
    which are what to fetch next, and the kinds of source chosen and offered.
    """

    def body() -> Result:
        from research_engine import bounded, selection, trace
        from research_engine.errors import BadInput

        the_run = trace.open_run(run)
        when = None
        if as_of:
            from datetime import date

            try:
                when = date.fromisoformat(as_of)
            except ValueError as exc:
                raise BadInput(f"--as-of {as_of!r} is not a date (YYYY-MM-DD)", field="as_of") from exc
        try:
            raw = bounded.read_input(candidates, "candidates")
            payload = _parse_candidates(raw)
        except BadInput as exc:
            code = exc.code if exc.code in ("input-too-large", "path-too-long") else "unreadable-candidates"
            raise BadInput(
                f"candidates file {candidates}: {exc.message}", code=code, field="candidates"
            ) from exc
        rnd = selection.log_selection(the_run, sq, selection.load_candidates(payload), as_of=when)
        chosen = [c for c in rnd["candidates"] if c["verdict"] == "chosen"]
        rejected = [c for c in rnd["candidates"] if c["verdict"] == "rejected"]
        lines = [
            f"{sq} round {rnd['round']}: {len(chosen)} chosen of {len(rnd['candidates'])} "
            f"(budget {rnd['budget']})"
        ]
        lines += [f"  chosen   {c['n']:>2}  {c['scores']['total']:.2f}  {c['url']}" for c in chosen]
        lines += [
            f"  rejected {c['n']:>2}  {c['scores']['total']:.2f}  {c['url']}  ({c['why']})" for c in rejected
        ]
        fields = ("n", "ref", "url", "title", "kind", "canonical_key", "scores", "decided_by")
        return Result(
            data={
                "sub_question": sq,
                "round": rnd["round"],
                "budget": rnd["budget"],
                "chosen": [{k: c[k] for k in fields if k in c} for c in chosen],
                "rejected": [
                    {k: c[k] for k in ("n", "ref", "url", "why", "decided_by") if k in c} for c in rejected
                ],
                "kinds": selection.kinds_of(the_run, sq, rnd),
                "file": the_run.relative(the_run.path("selection", sq=sq)),
            },
            text="\n".join(lines),
        )

    run_command("select log", json_, body)


@select_app.command("chosen")
def chosen(
    run: RunOpt,
    sq: Annotated[str, typer.Option("--sq", help="The sub-question (SQ-NN).")],
    json_: JsonOpt = False,
) -> None:
    """What to fetch for a sub-question: the candidates chosen in every round of its selection log that
    are not yet its sources (each once), and the chosen ones already retrieved."""

    def body() -> Result:
        from research_engine import decompose, selection, trace

        the_run = trace.open_run(run)
        decompose.get(the_run, sq)
        pending, done = selection.to_fetch(the_run, sq)
        fields = ("round", "n", "ref", "url", "title", "kind", "doi", "canonical_key")
        data = {
            "sub_question": sq,
            "to_fetch": [{k: c[k] for k in fields if c.get(k) is not None} for c in pending],
            "retrieved": [{"canonical_key": key, "source": ref} for key, ref in done.items()],
        }
        lines = [f"{sq}: {len(pending)} chosen source(s) to fetch, {len(done)} already retrieved"]
        lines += [f"  round {c['round']} #{c['n']}  {c['url']}" for c in pending]
        return Result(data=data, text="\n".join(lines))

    run_command("select chosen", json_, body)


def _parse_candidates(raw: bytes) -> object:
    """JSON when the text starts like JSON (`[` or `{`), else YAML (a list in block style)."""
    from research_engine import bounded, libraries
    from research_engine.errors import BadInput

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput("the candidates are not UTF-8 text", code="unreadable-candidates") from exc
    if not text.strip():
        raise BadInput("the candidates are empty", code="unreadable-candidates")
    if text.lstrip()[:1] in ("[", "{"):
        return bounded.load_json(text, "the candidates file")
    yaml = libraries.yaml()
    try:
        value = _plain(bounded.load_yaml(text))
    except bounded.YamlRefused as exc:
        raise BadInput(f"the candidates are refused: {exc}", code="refused-yaml") from exc
    except yaml.YAMLError as exc:
        raise BadInput(f"the candidates are neither JSON nor YAML: {exc}", code="malformed-yaml") from exc
    if not isinstance(value, list | dict):
        raise BadInput("the candidates are not a list (JSON, or YAML in block style)", code="malformed-yaml")
    return value


def _plain(value: object) -> object:
    """YAML's dates and timestamps as the ISO strings JSON would have carried."""
    import datetime

    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value
