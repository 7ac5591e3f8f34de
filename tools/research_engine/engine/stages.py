"""The research stages of a cycle: plan, queries, select, retrieve, consolidate.

Each goes through the functions the CLI commands call (`decompose.add`, `selection.log_selection`,
`retrieve.retrieve_pages`, `claims.add_claim`...), so a headless run writes the trace an agent
would; the model only supplies judgement, and the tools check it.
"""

from __future__ import annotations

from typing import Any

from research_engine import claims, decompose, retrieve, selection
from research_engine.artifacts import read_markdown
from research_engine.engine.apigather import best_full_text, parse_series_url, with_extra
from research_engine.engine.helpers import already_claimed, query_of, safe_key
from research_engine.engine.models import SELECTION_HINTS, SourceText
from research_engine.engine.state import EngineState
from research_engine.errors import BadInput, BudgetSpent, CheckFailed, ResearchEngineError
from research_engine.ids import parse_source_ref
from research_engine.retrieve import api as source_record
from research_engine.retrieve.pages import PageRequest, retrieve_pages
from research_engine.retrieve.works import record_keyless
from research_engine.selection.candidates import load_candidates
from research_engine.sources import openalex, worldbank
from research_engine.urls import canonical_key
from research_engine.vocabulary import KEYLESS_KINDS, Angle, ClaimType, Confidence


class ResearchStages(EngineState):
    def _plan(self) -> dict[str, Any]:
        self.progress.stage("decompose")
        plans = self._planner().decompose(self.brief)
        existing = {sq["text"] for sq in decompose.load(self.run)}
        types = [t for t in (self.brief.get("claim_types") or []) if t in tuple(ClaimType)] or ["factual"]
        added = []
        for plan in plans[: self.options.max_sub_questions]:
            text = " ".join(str(plan.text or "").split())
            if not text or text in existing:
                continue
            claim_type = plan.claim_type if plan.claim_type in tuple(ClaimType) else types[0]
            angle = plan.angle if plan.angle in tuple(Angle) else None
            added.append(decompose.add(self.run, text, claim_type, angle, plan.answers or None))
            existing.add(text)
        if not decompose.load(self.run):
            raise CheckFailed("the model proposed no usable sub-question", code="no-sub-questions")
        return {"added": added}

    def _initial_queries(self) -> dict[str, Any]:
        """Cycle 1's plan: every sub-question searched from the four angles, its own angle first."""

        self.progress.stage("queries", cycle=1)
        plan = {}
        for sq in decompose.load(self.run):
            own = sq.get("angle")
            angles = ([own] if own in tuple(Angle) else []) + [a for a in tuple(Angle) if a != own]
            plan[sq["id"]] = self._angle_queries(sq, angles, set())
        self.journal.data["plans"]["1"] = plan
        return {"sub_questions": len(plan), "queries": sum(len(v) for v in plan.values())}

    def _select(self, cycle: int, sq: str) -> dict[str, Any]:
        meta = selection.load(self.run, sq)
        if meta and meta.get("rounds") and meta["rounds"][-1].get("cycle") == cycle:
            last = meta["rounds"][-1]
            return {"round": last["round"], "chosen": len(last["chosen"])}  # written before a kill
        candidates = [c.to_dict() for c in load_candidates(self.run, sq)]
        if not candidates:
            self.progress.note("no-candidates", sq=sq, cycle=cycle)
            return {"round": None, "chosen": 0}
        question = decompose.get(self.run, sq)
        # The first `reasons_per_round` distinct pages are judged in one model call; the same page from
        # another query gets the same judgement.
        to_judge: dict[str, dict[str, Any]] = {}
        for cand in candidates:
            route = (cand.pop("extra", None) or {}).get("route")
            if route:
                cand["route"] = route  # why the gather asked this source: said beside the judge's reason
            key = cand.get("canonical_key") or cand["url"]
            if key not in to_judge and len(to_judge) < self.options.reasons_per_round:
                to_judge[key] = cand
        judgements = self.model.select_judgements(self.brief, question, list(to_judge.values()))
        judged: dict[str, tuple[str | None, str | None]] = {}  # canonical key -> (reason, hint)
        for key, judgement in zip(to_judge, judgements, strict=True):
            hint = judgement.verdict_hint if judgement.verdict_hint in SELECTION_HINTS else None
            judged[key] = (" ".join(str(judgement.reason or "").split()) or None, hint)
        for cand in candidates:
            key = cand.get("canonical_key") or cand["url"]
            if key in judged:
                cand["reason"], cand["verdict_hint"] = judged[key]
            else:
                cand["reason"] = cand.get("reason") or (
                    f"not reviewed by the model (beyond the first {self.options.reasons_per_round})"
                )
            route = cand.pop("route", None)
            if route:
                cand["reason"] = (
                    f"asked {cand.get('backend')} because {route}. {cand['reason'] or ''}".strip()
                )
        round_ = selection.log_selection(self.run, sq, candidates, as_of=self.as_of)
        return {"round": round_["round"], "chosen": len(round_["chosen"])}

    def _retrieved_keys(self, sq: str) -> set[str]:
        keys: set[str] = set()
        for ref in retrieve.list_sources(self.run):
            if not ref.startswith(sq + "/"):
                continue
            meta, _ = retrieve.load_source(self.run, ref)
            for url in (meta.get("requested_url"), meta.get("final_url")):
                if url:
                    keys.add(safe_key(canonical_key, url))
            if meta.get("canonical_key"):
                keys.add(meta["canonical_key"])
        return keys

    def _retrieve(self, cycle: int, sq: str) -> dict[str, Any]:
        have = self._retrieved_keys(sq)
        offered = [c.to_dict() for c in load_candidates(self.run, sq)]
        # One work found by several sources (one DOI) is one source: the one with the best open full text.
        todo = [
            best_full_text(with_extra(c, offered), offered)
            for c in selection.chosen(self.run, sq)
            if c["canonical_key"] not in have
        ]
        web = [c for c in todo if (c.get("kind") or "web") == "web"]
        recorded: list[str] = []
        failed: list[dict[str, Any]] = []
        # A corpus folder's PDFs and Word files are read without --pdf (the user put them there); the web's
        # are not.
        for documents, group in (
            (False, [c for c in web if not self.corpora.owns(c["url"])]),
            (True, [c for c in web if self.corpora.owns(c["url"])]),
        ):
            if not group:
                continue
            self.budget.check()
            pages = [
                PageRequest(
                    url=c["url"],
                    query=query_of(c),
                    access_tier=c.get("access_tier") or "open",
                    title=c.get("title"),
                )
                for c in group
            ]
            # A short file of the user's own folder is a source: the thin-page rule is for web boilerplate.
            retrieved = retrieve_pages(
                self.run,
                sq,
                pages,
                self.client,
                allow_pdf=documents,
                timed=self.clock.timed,
                keep_thin=documents,
            )
            for page in retrieved:
                if page.ref is not None:
                    recorded.append(page.ref)
                elif page.duplicate_of is not None:
                    self.progress.note(
                        "already-retrieved", sq=sq, url=page.request.url, source=page.duplicate_of
                    )
                else:
                    failed.append({"url": page.request.url, "error": page.why})
        for cand in todo:
            if (cand.get("kind") or "web") == "web":
                continue
            try:
                recorded.extend(self._api_document(sq, cand))
            except BudgetSpent:
                raise
            except ResearchEngineError as exc:
                failed.append({"url": cand["url"], "error": exc.code, "detail": exc.message})
        for item in failed:
            self.failed_fetches += 1
            self.progress.note("fetch-failed", sq=sq, url=item["url"], error=item["error"])
            self._event("fetch-failed", sq=sq, **item)
        return {"recorded": recorded, "failed": len(failed)}

    def _api_document(self, sq: str, cand: dict[str, Any]) -> list[str]:
        """A chosen API candidate retrieved the way `openalex work` / `worldbank series --run` record it."""

        kind = cand.get("kind")
        if kind in KEYLESS_KINDS:
            refs = record_keyless(self.run, sq, cand, self.client, self.settings, query_of(cand))
            pdf = (cand.get("extra") or {}).get("pdf_url") if kind == "arxiv" else None
            if pdf:  # the paper's full text beside its abstract record
                page = PageRequest(url=pdf, query=query_of(cand), title=cand.get("title"))
                fetched = retrieve_pages(
                    self.run, sq, [page], self.client, allow_pdf=True, timed=self.clock.timed
                )
                refs += [p.ref for p in fetched if p.ref is not None]
                for failed in [p for p in fetched if p.ref is None and p.duplicate_of is None]:
                    self._event("fetch-failed", sq=sq, url=pdf, error=failed.why)
            return refs
        if kind == "openalex":
            fetch = openalex.get_work(
                cand.get("doi") or cand["url"], client=self.client, settings=self.settings
            )
            tier = openalex.access_tier(self.settings)
            return [source_record.record_work(self.run, sq, fetch, access_tier=tier, query=query_of(cand))]
        if kind == "worldbank":
            countries, indicator, span, mrv = parse_series_url(cand["url"])
            series = worldbank.fetch_series(
                countries, indicator, date=span, mrv=mrv, client=self.client, settings=self.settings
            )
            return source_record.record_series(
                self.run, sq, series, query=query_of(cand) or f"{';'.join(countries)} {indicator}"
            )
        raise BadInput(
            f"{kind} candidates are not retrieved by the headless engine yet", code="unsupported-kind"
        )

    def _changed_since_retrieval(self, ref: str) -> bool:
        """The verifier's copy of `ref` differed from the retrieved one: it no longer grounds new claims."""

        sq, src = parse_source_ref(ref)
        path = self.run.path("evidence", sq=sq, src=src)
        if not path.is_file():
            return False
        meta, _ = read_markdown(path)
        return meta.get("changed") is True

    def _source_texts(self, sq: str) -> list[Any]:
        out = []
        for ref in retrieve.list_sources(self.run):
            if ref.startswith(sq + "/") and not self._changed_since_retrieval(ref):
                meta, passages = retrieve.load_source(self.run, ref)
                out.append(
                    SourceText(
                        ref=ref,
                        title=meta.get("title"),
                        url=meta.get("final_url") or meta.get("requested_url") or "",
                        passages=passages,
                    )
                )
        return out

    def _consolidate(self, cycle: int, sq: str) -> dict[str, Any]:
        sources = self._source_texts(sq)
        if not sources:
            self.progress.note("no-sources", sq=sq, cycle=cycle)
            return {"added": [], "rejected": 0}
        ledger = claims.load(self.run)["claims"]
        # What the run states already (under any sub-question) is not chosen again: a run states a finding
        # once, and a sub-question's claims go to what is new (`helpers.already_claimed` keeps the rule).
        # "Already" is the ledger as this step first found it (journalled): a step redone after a kill must
        # not count the claims its first try recorded, or it would choose others in their place.
        began = self.journal.data.setdefault("consolidate_began", {})
        step = f"c{cycle:02d}:{sq}"
        if step not in began:
            began[step] = [c["id"] for c in ledger if c["status"] == "active"]
            self.journal.save()
        before = set(began[step])
        stated = [
            " ".join(c["text"].split()) for c in ledger if c["id"] in before and c["status"] == "active"
        ]
        drafts = self.model.consolidate(self.brief, decompose.get(self.run, sq), sources, stated)
        added: list[str] = []
        rejected = 0
        for draft in drafts or []:
            text = " ".join(str(draft.text or "").split())
            refs = [str(ref) for ref, _ in draft.evidence]
            quotes = [str(quote) for _, quote in draft.evidence]
            if not text or already_claimed(ledger, sq, text, refs):
                continue
            confidence = draft.confidence if draft.confidence in tuple(Confidence) else "medium"
            try:
                claim = claims.record_claim(self.run, sq, text, refs, quotes, confidence)
            except (CheckFailed, BadInput) as exc:
                # The grounding gate said no: the draft is logged and dropped, never forced in.
                rejected += 1
                self.rejected_drafts += 1
                self.progress.note("draft-rejected", sq=sq, why=exc.message)
                self._event(
                    "draft-rejected",
                    sq=sq,
                    cycle=cycle,
                    text=text,
                    sources=refs,
                    why=exc.message,
                    problems=[p.message for p in exc.all_problems()],
                )
                continue
            added.append(claim["id"])
            ledger.append(claim)
            if draft.origin == "model":  # a model's pick, not the rule answering for it (run.json model)
                self.journal.data.setdefault("picked_claims", []).append(claim["id"])
        claims.refresh(self.run)  # the end of a batch of adds: the draft shows the whole ledger again
        return {"added": added, "rejected": rejected}
