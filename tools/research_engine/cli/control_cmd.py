"""`research-engine control`: one controller step (signals, governor, ladder, loop log)."""

from __future__ import annotations

import typer

from research_engine.cli._common import JsonOpt, Result, RunOpt, run_command


def register(app: typer.Typer) -> None:
    app.command("control")(control)


def control(run: RunOpt, json_: JsonOpt = False) -> None:
    """Compute the four signals, decide (criterion, then governor, then the ladder), append the cycle to
    controller/loop-log.md and print the decision: action, targets, stop_reason, cycle.

    Exit 0 for every decision (stop included); 1 when the run already stopped or has no sub-questions.
    """

    def body() -> Result:
        from research_engine import controller, trace

        decision = controller.control(trace.open_run(run))
        s = decision["signals"]
        lines = [
            f"cycle {decision['cycle']}: {decision['action']}"
            + (f" ({decision['stop_reason']})" if decision["stop_reason"] else "")
            + (f" -> {', '.join(decision['targets'])}" if decision["targets"] else ""),
            f"  coverage {s['coverage']:.2f}, confidence {s['confidence']:.2f}, gap {s['gap']}, "
            f"contradiction {s['contradiction']}",
            f"  why: {decision['why']}",
        ]
        return Result(data=decision, text="\n".join(lines))

    run_command("control", json_, body)
