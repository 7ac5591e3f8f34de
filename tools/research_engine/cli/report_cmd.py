"""`research-engine report check|finish`: the deliverable's checks and its placement."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command
from research_engine.errors import ExitCode

report_app = typer.Typer(help="Check and finish the deliverable (synthesis/result.md).", no_args_is_help=True)
FileArg = Annotated[
    Path, typer.Argument(help="The deliverable, a Markdown file citing claims as CLM-NN (- reads stdin).")
]


def register(app: typer.Typer) -> None:
    app.add_typer(report_app, name="report")


@report_app.command("check")
def check(
    file: FileArg,
    run: RunOpt,
    prose_worksheet: Annotated[
        bool,
        typer.Option(
            "--prose-worksheet",
            help="Also keep the draft (synthesis/draft.md) and write verify/prose.md: each sentence with "
            "the quotes of the claims it cites, for the research-verifier agent to judge (`verify prose`). "
            "Once it exists, `report finish` takes only a deliverable the verifier passed sentence by "
            "sentence.",
        ),
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Check a deliverable: cited claims exist and are not retired, no refused claim is stated as established
    (only inside a gap/caveat heading or a '> Caveat:' blockquote), every fact cites a claim, every sentence
    holds only what its cited claims hold (the sentence-support check: each finding names the sentence, its
    kind and the words at fault), references are complete. Exit 0, or 1 listing every problem."""

    def body() -> Result:
        from research_engine import claims, prose_review, report, trace

        the_run = trace.open_run(run)
        text = report.read_deliverable(file)
        checked = report.check_text(the_run, text, file=report.label(file))
        data = checked.to_dict()
        lines = [
            f"{file}: {'passes' if checked.ok else 'does NOT pass'} ({len(checked.cited)} claim(s) cited)"
        ]
        lines += [f"  problem: {p.message}" for p in checked.problems]
        lines += [f"  warning: {w.message}" for w in checked.warnings]
        if prose_worksheet:
            ledger = {c["id"]: c for c in claims.load(the_run)["claims"]}
            data["prose_worksheet"] = prose_review.prepare(the_run, text, checked.sentences, ledger)
            sheet = data["prose_worksheet"]
            lines.append(
                f"  prose worksheet {sheet['worksheet']}: {sheet['sentences']} sentence(s), "
                f"{len(sheet['unjudged'])} awaiting the verifier"
            )
        return Result(
            data=data,
            text="\n".join(lines),
            exit_code=ExitCode.OK if checked.ok else ExitCode.CHECK_FAILED,
            errors=checked.problems if json_ else [],
            warnings=checked.warnings if json_ else [],
        )

    run_command("report check", json_, body)


@report_app.command("finish")
def finish(file: FileArg, run: RunOpt, json_: JsonOpt = False) -> None:
    """Check the deliverable, then place it at synthesis/result.md with references, an evidence map and a
    reproducibility footer, and mark the run complete in run.json. Exit 1 if a check fails or the controller
    has not stopped the run; exit 8 when the run has no supported claim and the deliverable (citing none)
    was written as a no-finding result, with what was searched and refused and the open questions."""

    def body() -> Result:
        from research_engine import report, trace
        from research_engine.errors import ExitCode

        out = report.finish(trace.open_run(run), file)
        text = (
            f"{out['result']}: {len(out['cited_claims'])} claim(s) cited, {out['reproducibility']['label']}, "
            f"stopped {out['stop_reason']} after {out['cycles']} cycle(s)"
        )
        if out["no_finding"]:
            text += "; NO FINDING could be supported (the result says what was searched and refused)"
            return Result(data=out, text=text, exit_code=ExitCode.NO_FINDING)
        return Result(data=out, text=text)

    run_command("report finish", json_, body)
