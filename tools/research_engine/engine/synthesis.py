"""The end of a run: the deliverable (model-written, checked, or the extractive fallback), the clean stop
when a budget is spent, and the dry run's plan.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from research_engine import claims, controller, critic, decompose, report, runrecord, runstate
from research_engine.engine.factory import is_rule_model, rule_model
from research_engine.engine.helpers import label_partial
from research_engine.engine.models import Section
from research_engine.engine.state import EngineState
from research_engine.errors import BudgetSpent, CheckFailed
from research_engine.markdown_blocks import GENERATED_MARK
from research_engine.trace import atomic_write_text, iso
from research_engine.vocabulary import ModelRejection, ModelStage

DROP_PASSES = 3  # a dropped citing sentence uncovers the ones before it: they go in the next pass


class SynthesisStages(EngineState):
    def _sections(self) -> list[Any]:
        latest = runstate.latest_verdicts(self.run)
        ledger = claims.load(self.run)["claims"]
        gaps = [g for g in critic.load(self.run)["gaps"] if g["status"] == "open"]
        sections = []
        for sq in decompose.load(self.run):
            mine = [c for c in ledger if c["sub_question"] == sq["id"]]
            stated, refused = [], []
            for claim in mine:
                verdict = latest.get(claim["id"]) or {}
                item = {
                    "id": claim["id"],
                    "text": claim["text"],
                    "verdict": verdict.get("verdict"),
                    "reason": verdict.get("reason"),
                    "evidence": claim.get("evidence") or [],
                    "confidence": claim.get("confidence"),
                }
                if verdict.get("verdict") == "refuse":
                    refused.append(item)
                elif claim["status"] == "active":
                    stated.append(item)
            sections.append(
                Section(
                    sq=sq,
                    claims=stated,
                    refused=refused,
                    gaps=[g for g in gaps if g.get("sub_question") == sq["id"]],
                )
            )
        return sections

    def _synthesize(
        self, *, partial: bool, why: str | None = None, spend_nothing: bool = False, finish: bool = True
    ) -> dict[str, Any]:
        self.progress.stage("synthesize")
        sections = self._sections()
        # After a budget stop nothing more is spent: the extractive writer needs no provider and no tokens.
        writer = rule_model() if (partial or spend_nothing) else self.model
        text = writer.write(self.brief, sections)
        if partial:
            text = label_partial(text, why or "a budget was spent")
        draft = self.run.path("result_draft")
        atomic_write_text(draft, text)
        checked = report.check(self.run, draft)
        fallback = False
        model_wrote = writer is self.model and not is_rule_model(self.raw_model)
        if not checked.ok and model_wrote:
            text, checked = self._drop_unsupported(text, checked)
            atomic_write_text(draft, text)
        elif not checked.ok:
            # The extractive writer's sentences are its claims, yet a quote with code in it can read to the
            # prose check as two sentences: that sentence goes (an event names it), never the run.
            text, checked = self._drop_unsupported(text, checked, model_wrote=False)
        if not checked.ok and model_wrote:
            # The model's deliverable failed `report check`: note why and write the extractive one.
            self._event("deliverable-rejected", problems=[p.message for p in checked.problems])
            self._event(
                "model-fallback", stage=ModelStage.WRITE, detail="the deliverable failed `report check`"
            )
            self.progress.note("deliverable-rejected", problems=len(checked.problems))
            usage = getattr(self.raw_model, "usage", None)
            if usage is not None and hasattr(usage, "fell_back"):
                usage.count(ModelStage.WRITE, ModelRejection.PROSE_CHECK, failure=False)
                usage.fell_back(ModelStage.WRITE)
            text = rule_model().write(self.brief, sections)
            atomic_write_text(draft, text)
            fallback = True
            checked = report.check(self.run, draft)
            if not checked.ok:  # never expected (its sentences are its claims); a sentence, not the run, goes
                text, checked = self._drop_unsupported(text, checked, model_wrote=False)
        if not finish:
            checked = report.check(self.run, draft)
            if not checked.ok:
                raise CheckFailed(
                    "the partial draft does not pass `report check`",
                    code="report-check-failed",
                    problems=checked.problems,
                )
            return {"result": None, "fallback_writer": fallback, "partial": partial}
        self._save_spend()  # run.json's model use, which the deliverable's footer states, is current
        finished = report.finish(self.run, draft)
        return {"result": finished["result"], "fallback_writer": fallback, "partial": partial}

    def _drop_unsupported(self, text: str, checked: Any, *, model_wrote: bool = True) -> tuple[str, Any]:
        """A deliverable whose only problems are sentences the sentence-support check fails: those sentences
        are dropped (an event names each with its kind; counted against the model when it wrote them, and by
        kind in run.json's `prose.dropped` and the footer), and the rest is checked again. A dropped sentence
        that carried the citation of the ones before it leaves them uncited: they go in the next pass."""
        prose_codes = {"unsupported-statement", "uncited-fact"}
        body, mark, generated = text.partition(GENERATED_MARK)
        dropped: list[str] = []
        kinds: dict[str, int] = {}
        for _ in range(DROP_PASSES):
            if checked.ok or any(p.code not in prose_codes for p in checked.problems):
                break
            failing = [s for s in checked.sentences if not s.ok and s.text in body]
            for sentence in failing:
                body = body.replace(sentence.text, "", 1)
                dropped.append(sentence.message())
                kinds[str(sentence.kind)] = kinds.get(str(sentence.kind), 0) + 1
            if not failing:
                break
            text = body + mark + generated
            draft = self.run.path("result_draft")
            atomic_write_text(draft, text)
            checked = report.check(self.run, draft)
        if not dropped:
            return text, checked
        self._event("deliverable-sentences-dropped", sentences=dropped, kinds=kinds)
        self.progress.note("deliverable-sentences-dropped", sentences=len(dropped))
        usage = getattr(self.raw_model, "usage", None)
        if model_wrote and usage is not None and hasattr(usage, "count"):
            for _ in dropped:
                usage.count(ModelStage.WRITE, ModelRejection.PROSE_CHECK, failure=False)

        def count(rec: dict[str, Any]) -> None:
            prose = rec.setdefault("prose", {})
            totals = prose.setdefault("dropped", {})
            for kind, n in kinds.items():
                totals[kind] = totals.get(kind, 0) + n

        runrecord.update(self.run, count)
        return text, checked

    def _stop_for_budget(self, spent: BudgetSpent) -> None:
        """A budget is gone: let the governor record the stop, then write what can honestly be said."""

        name = (spent.data or {}).get("budget") or spent.code.removeprefix("budget:")
        self.progress.note("budget-spent", budget=name, detail=spent.message)
        self._save_spend()
        log = runstate.load_loop_log(self.run)
        stopped = bool(log["cycles"]) and log["cycles"][-1]["decision"]["action"] == "stop"
        if not stopped and decompose.load(self.run):
            # The spend is in run.json, so the governor stops the run and says why in the loop log
            # (criterion first: a run whose criterion is met when the money runs out is complete).
            with suppress(CheckFailed):
                controller.control(self.run)
            log = runstate.load_loop_log(self.run)
            stopped = bool(log["cycles"]) and log["cycles"][-1]["decision"]["action"] == "stop"
        decided = log["cycles"][-1]["decision"]["stop_reason"] if stopped else None
        stop_reason = decided or f"budget:{name}"
        partial = not str(stop_reason).startswith("criterion")

        def change(rec: dict[str, Any]) -> None:
            rec["partial"] = partial
            rec["status"] = "stopped"
            rec["stop_reason"] = stop_reason
            rec.setdefault("events", []).append(
                {"at": iso(), "kind": "budget-spent", "budget": name, "detail": spent.message}
            )

        runrecord.update(self.run, change)
        self.journal.data["partial"] = {"budget": name, "detail": spent.message} if partial else None
        self.journal.save()
        if self.journal.done("synthesize"):
            return
        try:
            result = self._synthesize(partial=partial, why=spent.message, spend_nothing=True, finish=stopped)
            self.journal.mark("synthesize", result)
        except CheckFailed as exc:
            # Nothing verified to cite (the budget went early): the labelled draft is the partial result.
            self.progress.note("partial-result-unchecked", why=exc.message)
            problems = [p.message for p in exc.all_problems()]

            def note_draft(rec: dict[str, Any]) -> None:
                rec["result"] = {
                    "path": self.run.relative(self.run.path("result_draft")),
                    "partial": True,
                    "passes_report_check": False,
                    "problems": problems,
                }

            runrecord.update(self.run, note_draft)
            self.journal.mark("synthesize", {"result": None, "partial": True, "problems": problems})
        runrecord.update(
            self.run,
            lambda rec: rec.update(
                partial=partial, status="stopped" if partial else rec.get("status"), stop_reason=stop_reason
            ),
        )
