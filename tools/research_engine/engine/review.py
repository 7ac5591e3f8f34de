"""The reviewing stages of a cycle: verify, the completeness critic, control, and remediation.

The verifier re-fetches every cited source itself (`verify.prepare`), the model judges each
claim against that fresh copy and `verify.record` holds the verdict to the mechanical floor;
the critic names gaps; the controller decides; `_remediate` turns its decision into the next
cycle's plan. Nothing here decides what the controller decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from research_engine import answering, claims, controller, critic, decompose, grounding, runstate, verify
from research_engine.artifacts import read_markdown
from research_engine.engine.extractive.text import key_terms
from research_engine.engine.state import EngineState
from research_engine.errors import CheckFailed
from research_engine.retrieve import parse_passages
from research_engine.terms import PHRASAL_VERBS, fold, other_words
from research_engine.vocabulary import Angle, ClaimType, Verdict


class ReviewStages(EngineState):
    def _evidence_text(self, row: dict[str, Any]) -> str:
        """The verifier's fresh copies around each quote: what model.verify reads (fenced by the model)."""

        parts = []
        for entry in row.get("evidence") or []:
            rel = entry.get("evidence_file")
            if not rel or not (self.run.root / rel).is_file():
                parts.append(
                    f"[{entry.get('source')}] (no fresh copy: {entry.get('fetch_error') or 'not fetched'})"
                )
                continue
            _, body = read_markdown(self.run.root / rel)
            passages = parse_passages(body)
            # Passages are whitespace-collapsed already; a cheap prefix test finds the quote's passage.
            quote = " ".join(str(entry.get("quote") or "").split())[:80]
            hits = [i for i, p in enumerate(passages) if quote and quote in p.text]
            if quote and not hits:
                needle = grounding.normalize(quote)
                hits = [i for i, p in enumerate(passages) if needle in grounding.normalize(p.text)]
            keep = sorted({j for i in hits for j in (i - 1, i, i + 1) if 0 <= j < len(passages)}) or list(
                range(min(3, len(passages)))
            )
            text = "\n".join(f"[{passages[j].id}] {passages[j].text}" for j in keep)
            parts.append(f"[{entry.get('source')}]\n{text[:4000]}")
        return "\n\n".join(parts)

    def _verify(self, cycle: int) -> dict[str, Any]:
        sheet = verify.load_worksheet(self.run)
        if sheet is not None and sheet["cycle"] == cycle and sheet.get("closed_at"):
            return {"closed": True, "summary": None}
        try:
            verify.prepare(self.run, client=self.fresh_client)
        except CheckFailed as exc:
            if exc.code != "nothing-to-verify":
                raise
            self.progress.note("nothing-to-verify", cycle=cycle)
            return {"closed": False, "summary": None}
        sheet = verify.load_worksheet(self.run) or {"claims": [], "challenges": []}
        judged = {c["claim"] for c in sheet["challenges"]}
        by_id = {c["id"]: c for c in claims.load(self.run)["claims"]}
        forced = 0
        for row in sheet["claims"]:
            if row["claim"] in judged:
                continue
            claim = by_id.get(row["claim"], {"id": row["claim"], "text": row.get("text", "")})
            draft = self.model.verify(claim, row, self._evidence_text(row))
            verdict = draft.verdict if draft.verdict in tuple(Verdict) else row["floor"]
            reason = " ".join(str(draft.reason or "").split()) or f"verdict {verdict} (no reason given)"
            try:
                verify.record(
                    self.run, row["claim"], verdict, reason, corroboration_query=draft.corroboration_query
                )
            except CheckFailed as exc:
                if (
                    exc.code in ("corroboration-limit", "second-corroboration")
                    or "corroboration" in exc.message
                ):
                    try:
                        verify.record(self.run, row["claim"], verdict, reason)
                    except CheckFailed:
                        forced += 1
                else:
                    forced += 1  # looser than the floor: the tool recorded the floor instead
                self.progress.note("verdict-floored", claim=row["claim"], why=exc.message)
        closed = verify.close(self.run)
        return {"closed": True, "summary": closed["summary"], "forced": forced}

    def _critic(self, cycle: int) -> dict[str, Any]:
        sqs = decompose.load(self.run)
        known = {sq["id"] for sq in sqs}
        latest = runstate.latest_verdicts(self.run)
        judged = [
            {**c, "verdict": (latest.get(c["id"]) or {}).get("verdict")}
            for c in claims.active_claims(self.run)
        ]
        gaps = self.model.critic(self.brief, sqs, judged) or []
        open_gaps = [g for g in critic.load(self.run)["gaps"] if g["status"] == "open"]
        open_abouts = {g["about"] for g in open_gaps}
        named = set()
        added = []
        for gap in gaps:
            about = " ".join(str(gap.about or "").split())
            query = " ".join(str(gap.query or "").split()) or about
            if not about:
                continue
            named.add(about)
            if about in open_abouts:
                continue
            severity = "material" if gap.material else "cosmetic"
            added.append(
                critic.add(self.run, about, query, severity=severity, sq=gap.sq if gap.sq in known else None)
            )
            open_abouts.add(about)
        closed = []
        for gap in open_gaps:
            if gap["about"] not in named:
                critic.close(
                    self.run, gap["id"], f"no longer named by the completeness critic in cycle {cycle}"
                )
                closed.append(gap["id"])
        return {"added": added, "closed": closed}

    def _control(self, cycle: int) -> dict[str, Any]:
        log = runstate.load_loop_log(self.run)
        if len(log["cycles"]) >= cycle:  # written before a kill: reuse it
            block = log["cycles"][cycle - 1]
            decision = {**block["decision"], "cycle": block["cycle"]}
        else:
            decision = controller.control(self.run)
        self.progress.note(
            "decision",
            cycle=cycle,
            action=decision["action"],
            targets=",".join(decision.get("targets") or []) or None,
            stop_reason=decision.get("stop_reason"),
        )
        return {
            "action": decision["action"],
            "targets": list(decision.get("targets") or []),
            "stop_reason": decision.get("stop_reason"),
            "cycle": cycle,
        }

    def _rethought_queries(
        self, sq: dict[str, Any], ledger: Iterable[dict[str, Any]], cycle: int
    ) -> list[dict[str, str]]:
        """A query cycle `cycle` did not send: the sub-question's key terms that no supported claim of it
        carries, first, then the rest, with why (recorded with the search in the candidates file)."""
        latest = runstate.latest_verdicts(self.run)
        carried: set[str] = set()
        for claim in ledger:
            verdict = (latest.get(claim["id"]) or {}).get("verdict")
            if (
                claim["sub_question"] == sq["id"]
                and claim["status"] == "active"
                and verdict == Verdict.SUPPORTED
            ):
                carried |= set(answering.key_terms(str(claim.get("text") or "")))
        return rethought_queries(sq, carried, cycle)

    def _remediate(self, cycle: int, decision: dict[str, Any]) -> dict[str, Any]:
        """Turn the controller's decision into cycle+1's plan: which sub-questions to search again, and
        how."""

        action, targets = decision["action"], decision["targets"]
        sqs = {sq["id"]: sq for sq in decompose.load(self.run)}
        ledger = {c["id"]: c for c in claims.load(self.run)["claims"]}
        searched: dict[str, set[str]] = {sq: self._searched(sq) for sq in sqs}
        plan: dict[str, list[dict[str, str]]] = {}
        retired: list[str] = []

        def add(sq: str, queries: list[dict[str, str]]) -> None:
            bucket = plan.setdefault(sq, [])
            for q in queries:
                if q["query"] not in {b["query"] for b in bucket}:
                    bucket.append(q)

        if action == "re-research":
            latest = runstate.latest_verdicts(self.run)
            tensions = {t["id"]: t for t in claims.load(self.run).get("tensions", [])}
            claim_ids: list[str] = []
            for target in targets:
                if target in tensions:
                    claim_ids.extend(tensions[target]["claims"])
                else:
                    claim_ids.append(target)
            for clm in dict.fromkeys(claim_ids):
                claim = ledger.get(clm)
                if claim is None:
                    continue
                verdict = latest.get(clm) or {}
                if claim["status"] == "active" and verdict.get("verdict") == "refuse":
                    claims.retire(
                        self.run,
                        clm,
                        f"refused by the verifier in cycle {verdict.get('cycle') or cycle}: "
                        f"{verdict.get('reason') or 'its evidence did not hold up'}; re-researched",
                    )
                    retired.append(clm)
                sq = claim["sub_question"]
                queries = []
                if verdict.get("corroboration_query"):
                    queries.append({"query": verdict["corroboration_query"], "angle": "counter"})
                target_sq = {**sqs[sq], "text": claim["text"]}
                queries += self._angle_queries(
                    target_sq, [sqs[sq].get("angle") or "entity", "source-type"], searched[sq]
                )
                add(sq, queries)
        elif action == "supplement-gap":
            gaps = {g["id"]: g for g in critic.load(self.run)["gaps"]}
            for target in targets:
                if target in sqs:
                    add(target, self._rethought_queries(sqs[target], ledger.values(), cycle))
                    add(target, self._angle_queries(sqs[target], list(Angle), searched[target]))
                elif target in gaps:
                    gap = gaps[target]
                    sq = gap.get("sub_question")
                    if sq not in sqs:
                        types = [
                            t for t in (self.brief.get("claim_types") or []) if t in tuple(ClaimType)
                        ] or ["factual"]
                        existing = {s["text"]: s["id"] for s in sqs.values()}
                        sq = existing.get(gap["about"]) or decompose.add(
                            self.run, gap["about"], types[0], None, None
                        )
                        sqs = {s["id"]: s for s in decompose.load(self.run)}
                        searched.setdefault(sq, set())
                    add(sq, [{"query": gap["query"], "angle": "gap"}])
        else:  # go-deeper, re-retrieve: more angles and a new selection round for the targets' sub-questions
            for target in targets:
                sq = target if target in sqs else (ledger.get(target) or {}).get("sub_question")
                if sq is not None and sq in sqs:
                    add(sq, self._rethought_queries(sqs[sq], ledger.values(), cycle))
                    add(sq, self._angle_queries(sqs[sq], list(reversed(Angle)), searched[sq]))
        for sq in plan:  # an empty query list still re-selects among candidates already found
            plan[sq] = [q for q in plan[sq] if q["query"] not in searched.get(sq, set())]
        self.journal.data["plans"][str(cycle + 1)] = plan
        self.progress.note(
            "remediate", cycle=cycle, action=action, sub_questions=",".join(sorted(plan)) or None
        )
        return {"action": action, "retired": retired, "plan": {k: len(v) for k, v in plan.items()}}


def rethought_queries(sq: dict[str, Any], carried: set[str], cycle: int) -> list[dict[str, str]]:
    """The queries a re-research of `sq` sends: its key terms that no supported claim carries (`carried`,
    folded) first, then the rest; and, when the documentation may say those otherwise ("restrict" -> "limit",
    "turn ... on" -> "enable"), the same in its words. Each says why; none when nothing is missing."""
    text = str(sq.get("text") or "")
    written = key_terms(text, limit=50)
    missing = [w for w in written if fold(w) not in carried]
    if not missing:
        return []
    rest = [w for w in written if w not in missing]
    why = (
        f"cycle {cycle} found no supported claim answering {sq['id']}; key terms none of its supported "
        f"claims carries: {', '.join(missing)}"
    )
    queries = [{"query": " ".join((missing + rest)[:8]), "angle": "gap", "why": why}]
    others = [w for w in other_words(missing, text) if w not in written]
    if others:
        queries.append(
            {
                "query": " ".join(
                    (others + [w for w in missing if not other_words([w]) and w not in PHRASAL_VERBS] + rest)[
                        :8
                    ]
                ),
                "angle": "gap",
                "why": f"{why}; in the documentation's other words for them: {', '.join(others)}",
            }
        )
    return queries
