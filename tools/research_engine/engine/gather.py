"""Gather, per sub-question: web search with the planned queries (and the run's corpus folders), OpenAlex
works, World Bank series, and the keyless sources the sub-question is routed to (arXiv, Crossref, Europe
PMC, Wikipedia).

Every modality the run gathers from, in turn (`--sources`); what each found lands in
`select/SQ-NN.candidates.json` through `selection.candidates`, to be scored together by
`select log`. One API failing is an event, never the run's end (rules in `engine.apigather`).
"""

from __future__ import annotations

from typing import Any

from research_engine import decompose
from research_engine.engine import apigather
from research_engine.engine.state import EngineState
from research_engine.errors import BadInput, BudgetSpent, ResearchEngineError, UpstreamFailed
from research_engine.selection.candidates import record_candidates, record_search, record_works_search
from research_engine.sources import openalex, search
from research_engine.vocabulary import KEYLESS_KINDS, GatherCommand


class GatherStages(EngineState):
    def _gather(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> dict[str, Any]:
        """Every configured modality, in turn: web search, OpenAlex works, World Bank series."""
        out: dict[str, Any] = {}
        if "web" in self.sources:
            out.update(self._gather_web(cycle, sq, queries))
        if "openalex" in self.sources:
            out["openalex"] = self._gather_openalex(cycle, sq, queries)
        if "worldbank" in self.sources:
            out["worldbank"] = self._gather_worldbank(cycle, sq)
        for modality in KEYLESS_KINDS:
            if modality in self.sources:
                out[modality] = self._gather_keyless(cycle, sq, queries, modality)
        return out

    def _gather_web(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> dict[str, Any]:
        """Each planned query, to the configured web backends (first that answers) and to every corpus
        folder of the run (`run --corpus`); with folders and no backend configured, the folders alone."""
        searched, failed = 0, 0
        if search.configured_backends(self.settings):
            searched, failed = self._search_web(cycle, sq, queries)
        for endpoint in self.corpora.search_urls:
            done, lost = self._search_corpus(cycle, sq, queries, endpoint)
            searched, failed = searched + done, failed + lost
        return {"searched": searched, "failed": failed}

    def _search_web(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> tuple[int, int]:
        done = self._searched(sq)
        searched, failed = 0, 0
        for item in queries:
            query = item["query"]
            if query in done:
                continue
            self.budget.check()
            try:
                outcome = search.search(
                    query, limit=self.options.search_limit, client=self.client, settings=self.settings
                )
            except UpstreamFailed as exc:
                failed += 1
                self.progress.note("search-failed", sq=sq, query=query, detail=exc.message)
                self._event("search-failed", sq=sq, query=query, chain=(exc.data or {}).get("chain"))
                continue
            record_search(self.run, sq, outcome, query=query, info={"engine": self._engine_info(cycle, item)})
            failures = [a for a in outcome.chain if a.outcome == "failed"]
            if failures:
                self.progress.note(
                    "backend-failed",
                    sq=sq,
                    query=query,
                    backends=",".join(a.backend for a in failures),
                    used=outcome.backend,
                )
            searched += 1
            done.add(query)
        return searched, failed

    @staticmethod
    def _engine_info(cycle: int, item: dict[str, str]) -> dict[str, Any]:
        info: dict[str, Any] = {"cycle": cycle, "angle": item.get("angle")}
        if item.get("why"):
            info["why"] = item["why"]  # a re-research query says why it differs
        return info

    def _search_corpus(
        self, cycle: int, sq: str, queries: list[dict[str, str]], endpoint: str
    ) -> tuple[int, int]:
        """The planned queries to one corpus folder's search, each recorded as a `corpus search`."""
        done = {
            e["query"]
            for e in self._api_entries(sq, GatherCommand.CORPUS_SEARCH)
            if (e.get("info") or {}).get("endpoint") == endpoint
        }
        searched, failed = 0, 0
        for item in queries:
            query = item["query"]
            if query in done:
                continue
            self.budget.check()
            try:
                outcome = search.search_corpus(
                    query,
                    endpoint,
                    limit=self.options.search_limit,
                    client=self.client,
                    settings=self.settings,
                )
            except UpstreamFailed as exc:
                failed += 1
                self.progress.note("search-failed", sq=sq, query=query, detail=exc.message)
                self._event("search-failed", sq=sq, query=query, chain=(exc.data or {}).get("chain"))
                continue
            record_candidates(
                self.run,
                sq,
                command=GatherCommand.CORPUS_SEARCH,
                query=query,
                candidates=outcome.candidates,
                responses=outcome.responses,
                backend=outcome.backend,
                chain=[a.to_dict() for a in outcome.chain],
                info={"endpoint": endpoint, "engine": self._engine_info(cycle, item)},
            )
            searched += 1
            done.add(query)
        return searched, failed

    def _api_failed(self, modality: str, sq: str, what: str, exc: ResearchEngineError) -> None:
        """One API failing is an event, never the run's end. Anything but a rejected request (a rate limit,
        an exhausted allowance, a host that cannot be reached) also stops that API for the rest of the run."""
        down = not isinstance(exc, BadInput)
        self.progress.note("source-failed", source=modality, sq=sq, code=exc.code, detail=exc.message)
        self._event(
            "source-failed",
            source=modality,
            sq=sq,
            request=what,
            code=exc.code,
            detail=exc.message,
            status=(exc.data or {}).get("status"),
            skipped_for_rest_of_run=down,
        )
        if down:
            self.journal.data.setdefault("sources_down", {})[modality] = exc.code
            self.journal.save()
            self._note_gather()

    def _gather_openalex(self, cycle: int, sq: str, queries: list[dict[str, str]]) -> dict[str, Any]:
        """One works search per sub-question and cycle, when OpenAlex fits the claim type.

        Cycle 1 searches the sub-question's content words; later cycles the first planned
        query OpenAlex has not been asked yet (a refused claim's or a gap's query)."""

        question = decompose.get(self.run, sq)
        if not apigather.fits("openalex", question["claim_type"]):
            return {"skipped": f"claim type {question['claim_type']}"}
        if self._source_down("openalex"):
            return {"skipped": f"down: {self._source_down('openalex')}"}
        asked = {e["query"] for e in self._api_entries(sq, "openalex search")}
        if any(
            (e.get("info") or {}).get("engine", {}).get("cycle") == cycle
            for e in self._api_entries(sq, "openalex search")
        ):
            return {"searched": 0}  # this cycle's search was recorded before a kill
        options = [apigather.openalex_query(question["text"])] if cycle == 1 else []
        options += [q["query"] for q in queries]
        query = next((q for q in options if q and q not in asked), None)
        if query is None:
            return {"searched": 0}
        self.budget.check()
        try:
            found = openalex.search_works(
                query, limit=self.options.search_limit, client=self.client, settings=self.settings
            )
        except BudgetSpent:
            raise
        except ResearchEngineError as exc:
            self._api_failed("openalex", sq, f"works search {query!r}", exc)
            return {"searched": 0, "failed": exc.code}
        engine_info = {"cycle": cycle, "angle": None}
        record_works_search(self.run, sq, found, query=query, info={"engine": engine_info})
        return {"searched": 1, "works": len(found.works)}

    def _gather_keyless(
        self, cycle: int, sq: str, queries: list[dict[str, str]], modality: str
    ) -> dict[str, Any]:
        """One search of a keyless source (arXiv, Crossref, Europe PMC, Wikipedia) per sub-question and
        cycle, when `apigather.route` sends the sub-question there; the route's reason is kept with the
        query and with each candidate, and the selection log shows it."""
        question = decompose.get(self.run, sq)
        routed, why = apigather.route(modality, question)
        if not routed:
            return {"skipped": why}
        if self._source_down(modality):
            return {"skipped": f"down: {self._source_down(modality)}"}
        command = f"{modality} search"
        entries = self._api_entries(sq, command)
        if any((e.get("info") or {}).get("engine", {}).get("cycle") == cycle for e in entries):
            return {"searched": 0}  # this cycle's search was recorded before a kill
        asked = {e["query"] for e in entries}
        options = [apigather.keyless_query(modality, question["text"])] if cycle == 1 else []
        options += [q["query"] for q in queries]
        query = next((q for q in options if q and q not in asked), None)
        if query is None:
            return {"searched": 0}
        self.budget.check()
        try:
            found = apigather.KEYLESS_SEARCH[modality](
                query, limit=self.options.search_limit, client=self.client, settings=self.settings
            )
        except BudgetSpent:
            raise
        except ResearchEngineError as exc:
            self._api_failed(modality, sq, f"{modality} search {query!r}", exc)
            return {"searched": 0, "failed": exc.code}
        for candidate in found.candidates:
            candidate.extra["route"] = why
        record_candidates(
            self.run,
            sq,
            command=command,
            query=query,
            candidates=found.candidates,
            responses=found.responses,
            backend=modality,
            info={
                **found.info,
                "total": found.total,
                "route": why,
                "engine": {"cycle": cycle, "angle": None},
            },
        )
        return {"searched": 1, "candidates": len(found.candidates)}

    def _wb_reference(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The country list and the indicator catalogue, once per session (see apigather)."""

        use_cache = self.cassette is None  # a cassette must hold them, so it is not bypassed by a cache
        if self._countries is None:
            self._countries = apigather.load_countries(
                self.client, use_cache=use_cache, settings=self.settings
            )
        if self._catalogue is None:
            self._catalogue = apigather.load_indicators(
                self.client, use_cache=use_cache, settings=self.settings
            )
        return self._countries, self._catalogue

    def _gather_worldbank(self, cycle: int, sq: str) -> dict[str, Any]:
        """Series candidates for a quantitative sub-question that names countries and a quantity."""

        question = decompose.get(self.run, sq)
        if not apigather.fits("worldbank", question["claim_type"]):
            return {"skipped": f"claim type {question['claim_type']}"}
        if self._source_down("worldbank"):
            return {"skipped": f"down: {self._source_down('worldbank')}"}
        if self._api_entries(sq, "worldbank indicators"):
            return {"searched": 0}  # the same question names the same countries and quantity every cycle
        self.budget.check()
        try:
            countries, catalogue = self._wb_reference()
        except BudgetSpent:
            raise
        except ResearchEngineError as exc:
            self._api_failed("worldbank", sq, "the country list and indicator catalogue", exc)
            return {"searched": 0, "failed": exc.code}
        named = apigather.match_countries(question["text"], countries)
        if not named:
            return {"skipped": "no country or region named"}
        words = apigather.indicator_words(question["text"], [c["said"] for c in named])
        named = named[: apigather.MAX_COUNTRIES]
        indicators = apigather.rank_indicators(catalogue.get("indicators") or [], words)
        if not indicators:
            return {"skipped": "no indicator matches the sub-question's words"}
        base = self.settings.base_url("worldbank")
        candidates = [apigather.series_candidate(ind, named, i, base) for i, ind in enumerate(indicators, 1)]
        record_candidates(
            self.run,
            sq,
            command="worldbank indicators",
            query=" ".join(words),
            candidates=candidates,
            responses=[],  # the catalogue is a reference list, not evidence; its size and date are kept
            backend="worldbank",
            info={
                "countries": [c["id"] for c in named],
                "indicators": [ind["id"] for ind in indicators],
                "catalogue_size": len(catalogue.get("indicators") or []),
                "catalogue_fetched_at": catalogue.get("fetched_at"),
                "engine": {"cycle": cycle, "angle": None},
            },
        )
        return {"searched": 1, "candidates": len(candidates)}
