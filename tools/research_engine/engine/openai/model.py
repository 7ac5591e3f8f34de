"""The `openai` model: any OpenAI-compatible chat-completions endpoint (llama.cpp, vLLM, Ollama, hosted).

Configuration (`Settings`): RESEARCH_ENGINE_MODEL_BASE_URL (e.g. http://127.0.0.1:8080/v1),
RESEARCH_ENGINE_MODEL, RESEARCH_ENGINE_MODEL_API_KEY (optional; sent only as the Authorization header),
RESEARCH_ENGINE_MODEL_TIMEOUT (seconds per call, default 600) and RESEARCH_ENGINE_MODEL_CONTEXT (the
context window in tokens; default: what the server reports, else 4,096). The exchange itself (its own
client and timeout, the context window, structured output, the server's errors) is `openai.exchange`;
what a reply must be is `openai.replies`. This module writes each stage's prompt and decides what
happens when the answer is no good:

- The model picks, the tool copies. Consolidation shows the extractive ranking's best sentences for the
  sub-question (`PICK_CANDIDATES`, fenced, numbered) and asks which answer it and what each states; each
  pick's quote is copied from the stored text, and a text saying more than its quote is replaced by the quote
  (the pick stands; counted as `replaced`). Selection asks for the numbers of the candidates to fetch, a
  short reason optional: each pick is a "choose" hint, the rest keep the extractive rule's judgement.
- Every prompt fits the context: the stage's answer room (`ANSWER_TOKENS`, at most half the window) is set
  aside and the data is cut to fit what is left (the best candidates first). A context-length error from
  the server (our estimate was short) rebuilds the prompt at 60% of the room and asks once more.
- A reply is used only when it is complete JSON of the stage's shape with real text in it (not cut off, not
  a template echo); otherwise the stage asks once more, saying what was wrong, and then the extractive rule
  answers. A sub-question where the model picks no sentence is consolidated by the extractive rule.
- A model failure never ends a run: any `ModelCallFailed` is recorded and the extractive rule answers.
- Every failure, rejection and fallback is counted per stage in `usage` (run.json `model.use`) and reported
  through `on_event` (run.json events), so the deliverable's footer can say which stages the model did.
- Fetched content is fenced as untrusted data (`fence`); the system prompt says it is data, never
  instructions. Verdicts are never looser than the mechanical floor. A token budget (`token_budget`)
  raises BudgetSpent before a call once spent.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection
from typing import Any

from research_engine.engine.extractive import ExtractiveModel
from research_engine.engine.models import (
    ClaimDraft,
    GapDraft,
    Section,
    SelectionJudgement,
    SourceText,
    SubQuestionPlan,
    Usage,
    VerdictDraft,
)
from research_engine.engine.openai.choice import rule_stages, stage_choice
from research_engine.engine.openai.evidence import (
    Picked,
    Prompt,
    Refusal,
    candidate_block,
    claims_from_picks,
    fence,
    fit,
    numbered_candidates,
    one_line,
)
from research_engine.engine.openai.exchange import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD,
    MODEL_RETRY,
    Endpoint,
    ModelCallFailed,
    configured_endpoint,
    estimate_tokens,
)
from research_engine.engine.openai.prompts import (
    ANSWER_TOKENS,
    CONSOLIDATE_TASK,
    CRITIC_TASK,
    DECOMPOSE_TASK,
    REASK,
    SELECT_TASK,
    SYSTEM_PROMPT,
    VERIFY_TASK,
    WRITE_TASK,
)
from research_engine.engine.openai.replies import (
    QUERIES_SCHEMA,
    VERIFY_SCHEMA,
    WRITE_SCHEMA,
    consolidate_schema,
    critic_schema,
    decompose_schema,
    parse_json_reply,
    placeholder,
    read_reply,
    select_schema,
    template_strings,
)
from research_engine.errors import BudgetSpent
from research_engine.net import RetryPolicy
from research_engine.settings import Settings
from research_engine.vocabulary import Angle, ClaimType, ModelFailure, ModelRejection, ModelStage

__all__ = ["MODEL_RETRY", "OpenAIModel", "configured_endpoint", "fence", "parse_json_reply"]

log = logging.getLogger("research_engine.engine.openai")

TEMPERATURE = 0.1
CLAIM_TYPES: tuple[str, ...] = tuple(ClaimType)
ANGLES: tuple[str, ...] = tuple(Angle)
_RANK = {"refuse": 0, "partial": 1, "supported": 2}
PICK_CANDIDATES = 8  # numbered sentences shown per sub-question: the extractive ranking's best
PICK_PER_SOURCE = 4
PICK_FEWEST = 3  # picks asked for at least (or all the candidates, when fewer)
MAX_CLAIMS = 5
CONTEXT_RETRY_SHARE = 0.6


class OpenAIModel:
    """Judgement from an OpenAI-compatible endpoint, checked; the extractive rule as a visible fallback."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        client: Any = None,
        temperature: float = TEMPERATURE,
        retry: RetryPolicy = MODEL_RETRY,
        timeout: float | None = None,
        context_tokens: int | None = None,
        token_budget: int | None = None,
        record_dir: Any = None,
        secrets: tuple[str, ...] = (),
        client_options: dict[str, Any] | None = None,
        on_event: Callable[..., None] | None = None,
        rule_stages_setting: str | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        # Stages measured worse than the rule with this model (or named by the setting): the rule does them.
        self.rule_stages = rule_stages(model, rule_stages_setting)
        self.stages = stage_choice(model, rule_stages_setting)
        self.model = model
        self.usage = Usage()
        self.token_budget = token_budget
        self.fallback = ExtractiveModel()
        # What a consolidation prompt numbers: the extractive ranking's best, a few more than the rule keeps.
        self.ranking = ExtractiveModel(max_claims=PICK_CANDIDATES, per_source_cap=PICK_PER_SOURCE)
        self.on_event = on_event
        self.endpoint = Endpoint(
            base_url=base_url,
            model=model,
            usage=self.usage,
            api_key=api_key,
            client=client,
            timeout=timeout,
            context_tokens=context_tokens,
            retry=retry,
            temperature=temperature,
            secrets=secrets,
            record_dir=record_dir,
            client_options=client_options,
        )
        self.base_url = self.endpoint.base_url

    @classmethod
    def from_settings(cls, settings: Settings, **kw: Any) -> OpenAIModel:
        base_url, model = configured_endpoint(settings, kw.pop("base_url", None), kw.pop("model", None))
        kw.setdefault("api_key", settings.model_api_key)
        kw.setdefault("timeout", settings.model_timeout)
        kw.setdefault("context_tokens", settings.model_context)
        kw.setdefault("secrets", settings.secrets)
        kw.setdefault("rule_stages_setting", settings.model_rule_stages)
        return cls(base_url=base_url, model=model, **kw)

    def close(self) -> None:
        self.endpoint.close()

    def describe(self) -> dict[str, Any]:
        """What run.json records of the model: the context window (once known) and where it came from, the
        structured-output mode in use, the timeout per call, which stages the model does (and why the
        rule does the others)."""
        window, source = self.endpoint.known_context
        described: dict[str, Any] = {
            "output_mode": self.endpoint.output_mode,
            "timeout_seconds": self.endpoint.timeout,
            "stages": dict(self.stages),
        }
        if self.rule_stages:
            described["rule_stages"] = dict(self.rule_stages)
        if window is not None:
            described.update(context_window=window, context_source=source)
        return described

    # ------------------------------------------------------------------ asking, checking, falling back

    def _event(self, kind: str, **details: Any) -> None:
        if self.on_event is not None:
            self.on_event(kind, **details)

    def _check_budget(self) -> None:
        if self.token_budget is not None and self.usage.model_tokens >= self.token_budget:
            raise BudgetSpent(
                f"model token budget spent ({self.usage.model_tokens} of {self.token_budget})",
                code="model-tokens",
                data={"usage": self.usage.to_dict()},
            )

    def _rejected(self, stage: str, kind: str, detail: str, *, count: bool = True) -> None:
        if count:
            self.usage.count(stage, kind, failure=False)
        log.info("model reply for %s rejected (%s): %s", stage, kind, detail)
        self._event("model-reply-rejected", stage=stage, rejection=kind, detail=one_line(detail, 300))

    def _ask(
        self,
        stage: str,
        build: Callable[[int], Prompt],
        schema: dict[str, Any],
        accept: Callable[[Any, Prompt], Any],
        optional: frozenset[str] = frozenset(),
        *,
        answer_tokens: int | None = None,
    ) -> Any | None:
        """Ask for one stage's answer; None when it cannot be had (the caller falls back).

        `build(room)` writes the prompt for a room of `room` estimated tokens; `accept(value, prompt)` turns
        a parsed reply into the stage's answer or a `Refusal`. One re-ask on a rejected reply or a
        context-length error; no re-ask after any other failure (the exchange has retried what it may)."""
        max_tokens = self.endpoint.answer_room(answer_tokens or ANSWER_TOKENS[ModelStage(stage)])
        room = self.endpoint.room(max_tokens) - estimate_tokens(SYSTEM_PROMPT) - 2 * MESSAGE_OVERHEAD - 60
        prompt = build(room)
        note = ""
        for attempt in range(2):
            self._check_budget()
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": prompt.text() + note},
            ]
            try:
                reply = self.endpoint.complete(stage, messages, schema=schema, max_tokens=max_tokens)
            except ModelCallFailed as failed:
                log.warning("model call for %s failed: %s", stage, failed.message)
                self._event(
                    "model-call-failed", stage=stage, failure=failed.kind, detail=failed.message[:300]
                )
                if failed.kind == ModelFailure.CONTEXT_LENGTH and attempt == 0:
                    room = min(int(room * CONTEXT_RETRY_SHARE), self.endpoint.room(max_tokens))
                    prompt = build(room)
                    self.usage.stage(stage).reasks += 1
                    continue
                return None
            value, kind, detail = read_reply(reply.text, reply.truncated, schema, optional)
            answer = Refusal(kind, detail) if kind is not None else accept(value, prompt)
            if not isinstance(answer, Refusal):
                return answer
            self._rejected(stage, answer.kind, answer.detail, count=not answer.counted)
            if attempt == 0:
                reask = REASK.get(ModelRejection(answer.kind), "Reply again.")
                note = f"\n{reask}" + (f": {answer.detail}" if answer.kind == ModelRejection.SCHEMA else "")
                self.usage.stage(stage).reasks += 1
        return None

    def _fallback(self, stage: str, method: str, *args: Any, why: str) -> Any:
        self.usage.fell_back(stage)
        log.warning(
            "the model's answer for %s could not be used (%s); the extractive rule answers", stage, why
        )
        self._event("model-fallback", stage=stage, detail=why)
        return getattr(self.fallback, method)(*args)

    def _ruled(self, stage: str) -> bool:
        """The stage is the rule's for this model (measured worse, or named by the setting): no call."""
        return stage in self.rule_stages

    def _free_text(self, value: Any, prompt: Prompt) -> str | None:
        return placeholder(value, template_strings(prompt.example), prompt.instructions)

    # ------------------------------------------------------------------ the judgement steps

    def decompose(self, brief: dict[str, Any]) -> list[SubQuestionPlan]:
        if self._ruled(ModelStage.DECOMPOSE):
            return self.fallback.decompose(brief)
        types = list(brief.get("claim_types") or ["factual"])
        data = (
            f"Objective: {brief.get('objective')}\nScope: {brief.get('scope') or 'not stated'}\n"
            f"Recency: {brief.get('recency') or 'any'}\nClaim types of interest: {', '.join(types)}"
        )

        def build(room: int) -> Prompt:
            return Prompt(
                DECOMPOSE_TASK,
                fit(data, int(room * CHARS_PER_TOKEN) - 700),
                'Reply as {"sub_questions": [{"text": "...", "claim_type": one of '
                f'{list(CLAIM_TYPES)}, "angle": one of {list(ANGLES)}, "answers": "..."}}]}}',
            )

        def accept(value: Any, prompt: Prompt) -> Any:
            plans = []
            for item in value["sub_questions"]:
                text, answers = item.get("text"), item.get("answers")
                why = self._free_text(text, prompt)
                if why is not None:
                    self._rejected(ModelStage.DECOMPOSE, why, f"sub-question {one_line(text, 80)!r}")
                    continue
                claim_type = item.get("claim_type") if item.get("claim_type") in CLAIM_TYPES else types[0]
                plans.append(
                    SubQuestionPlan(
                        text=one_line(text, 300),
                        claim_type=claim_type,
                        angle=item.get("angle") if item.get("angle") in ANGLES else None,
                        answers=one_line(answers, 300) if self._free_text(answers, prompt) is None else None,
                    )
                )
            return plans[:8] or Refusal(ModelRejection.PLACEHOLDER, "no sub-question with real text", True)

        schema = decompose_schema(types, 8)
        plans = self._ask(ModelStage.DECOMPOSE, build, schema, accept)
        return (
            plans if plans else self._fallback(ModelStage.DECOMPOSE, "decompose", brief, why="no usable plan")
        )

    def queries(self, brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]:
        if self._ruled(ModelStage.QUERIES):
            return self.fallback.queries(brief, sq, angle)

        def build(room: int) -> Prompt:
            return Prompt(
                f"Write up to 3 web search queries for this sub-question, from the {angle} angle. Keep its "
                "names, versions, numbers and technical terms.",
                fit(
                    f"Objective: {brief.get('objective')}\nSub-question {sq.get('id')}: {sq.get('text')}",
                    int(room * CHARS_PER_TOKEN) - 400,
                ),
                'Reply as {"queries": ["...", "..."]}',
            )

        def accept(value: Any, prompt: Prompt) -> Any:
            out = []
            for q in value["queries"]:
                q = one_line(q, 200)
                if self._free_text(q, prompt) is None and q not in out:
                    out.append(q)
            return out[:3] or Refusal(ModelRejection.PLACEHOLDER, f"queries {value['queries']!r}"[:200])

        found = self._ask(ModelStage.QUERIES, build, QUERIES_SCHEMA, accept)
        return (
            found
            if found
            else self._fallback(ModelStage.QUERIES, "queries", brief, sq, angle, why="no queries")
        )

    def select_judgement(
        self, brief: dict[str, Any], sq: dict[str, Any], candidate: dict[str, Any]
    ) -> SelectionJudgement:
        return self.select_judgements(brief, sq, [candidate])[0]

    def select_judgements(
        self, brief: dict[str, Any], sq: dict[str, Any], candidates: list[dict[str, Any]]
    ) -> list[SelectionJudgement]:
        """One call picks, by number, the round's candidates worth fetching (a short reason optional): each
        pick is a "choose" hint unless the rule rejects the candidate; the rest keep the rule's judgement. An
        unusable reply leaves every candidate to the rule, counted as fallbacks."""
        rule = [self.fallback.select_judgement(brief, sq, c) for c in candidates]
        if not candidates or self._ruled(ModelStage.SELECT):
            return rule

        def build(room: int) -> Prompt:
            each = (int(room * CHARS_PER_TOKEN) - 700) // len(candidates) - 60
            blocks = [
                fence(
                    f"candidate-{n}",
                    fit("\n".join(f"{k}: {c.get(k)}" for k in ("title", "url", "snippet")), each),
                )
                for n, c in enumerate(candidates, 1)
            ]
            return Prompt(
                SELECT_TASK.format(n=len(candidates), id=sq.get("id"), text=sq.get("text")),
                f"Objective: {brief.get('objective')}\n" + "\n".join(blocks),
                # (Measured: this example gave usable picks; "<its number>" here made a 0.5B model's replies
                # unusable in 3 of 5 rounds. bench/results/real-model-picks.md)
                'Reply as {"fetch": [{"candidate": 1, "reason": "..."}]}',
            )

        def accept(value: Any, prompt: Prompt) -> Any:
            chosen: dict[int, str | None] = {}
            for item in value["fetch"]:
                n = item.get("candidate") if isinstance(item, dict) else item
                if not isinstance(n, int) or not 1 <= n <= len(candidates) or n in chosen:
                    continue
                reason = item.get("reason") if isinstance(item, dict) else None
                chosen[n] = one_line(reason, 300) if self._free_text(reason, prompt) is None else None
            if chosen or not value["fetch"]:
                return chosen
            return Refusal(ModelRejection.UNKNOWN_PICK, f"picks {value['fetch']!r}"[:200])

        chosen = self._ask(
            ModelStage.SELECT,
            build,
            select_schema(len(candidates)),
            accept,
            frozenset({"reason"}),
            answer_tokens=min(600, 50 * len(candidates) + 60),  # a number and a few words each
        )
        if chosen is None:
            for _ in candidates:
                self.usage.fell_back(ModelStage.SELECT)
            why = f"no usable pick of {len(candidates)} candidate(s)"
            log.warning("selection: %s; the extractive rule judges them", why)
            self._event("model-fallback", stage=ModelStage.SELECT, detail=why)
            return rule
        out = []
        for n, judged in enumerate(rule, 1):
            # A pick stands where the candidate's own text supports it: one whose title and snippet carry none
            # of the sub-question's words (the rule's "reject") stays rejected, whatever its snippet asks.
            if n not in chosen or judged.verdict_hint == "reject":
                out.append(judged)
                continue
            self.usage.stage(ModelStage.SELECT).picked += 1
            reason = chosen[n] or judged.reason
            out.append(SelectionJudgement(f"the model picked it to fetch: {reason}"[:500], "choose"))
        return out

    def consolidate(
        self,
        brief: dict[str, Any],
        sq: dict[str, Any],
        sources: list[SourceText],
        stated: Collection[str] = (),
    ) -> list[ClaimDraft]:
        """The model picks, by number, which of the extractive ranking's best sentences answer the
        sub-question and says what each states; the tool copies the quotes. No pick: the rule answers."""
        if self._ruled(ModelStage.CONSOLIDATE):
            return self.fallback.consolidate(brief, sq, sources, stated)
        if not any(s.passages for s in sources):
            return []
        ranked = self.ranking.consolidate(brief, sq, sources, stated)
        candidates = numbered_candidates(ranked, sources, PICK_CANDIDATES)
        if not candidates:
            return []  # the ranking found no sentence for it: neither would the rule
        question = f"{brief.get('objective') or ''}\n{sq.get('text') or ''}"
        # The ranking proposed these for answering: a small model asked which answer picks one, and the facts
        # the others state are lost (bench/results/real-model-picks.md); it is asked for the best few.
        fewest = min(PICK_FEWEST, len(candidates))

        def build(room: int) -> Prompt:
            return Prompt(
                CONSOLIDATE_TASK.format(fewest=fewest, most=MAX_CLAIMS, id=sq.get("id"), text=sq.get("text")),
                candidate_block(candidates, int(room * CHARS_PER_TOKEN) - 700),
                # No number in the example: shown "sentence": 1, a 0.5B model picked 2, 3, 4 after it.
                'Reply as {"claims": [{"sentence": <its number>, "text": "<what it states>"}, ...]}',
            )

        def accept(value: Any, prompt: Prompt) -> Any:
            picked = claims_from_picks(
                value["claims"][:MAX_CLAIMS],
                candidates,
                question,
                usable_text=lambda text: self._free_text(text, prompt),
            )
            if picked.drafts or not value["claims"]:
                return picked
            return Refusal(ModelRejection.UNKNOWN_PICK, f"picks {value['claims']!r}"[:200])

        schema = consolidate_schema(len(candidates), fewest, MAX_CLAIMS)
        picked: Picked | None = self._ask(ModelStage.CONSOLIDATE, build, schema, accept, frozenset({"text"}))
        if picked is not None and picked.drafts:
            use = self.usage.stage(ModelStage.CONSOLIDATE)
            use.picked += len(picked.drafts)
            use.replaced += len(picked.replaced)
            for detail in picked.replaced:
                log.info("consolidate %s: claim text replaced by its quote: %s", sq.get("id"), detail)
            return picked.drafts
        why = "no sentence picked" if picked is not None else "no usable pick"
        return self._fallback(ModelStage.CONSOLIDATE, "consolidate", brief, sq, sources, why=why)

    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft:
        if self._ruled(ModelStage.VERIFY):
            return self.fallback.verify(claim, checks, evidence)
        floor = checks.get("floor") or "refuse"

        def build(room: int) -> Prompt:
            head = (
                f"Claim {claim.get('id')}: {claim.get('text')}\nMechanical checks (the loosest verdict "
                f"allowed is {floor}): {json.dumps(checks.get('floor_reasons') or [])}\n"
            )
            return Prompt(
                VERIFY_TASK,
                head + fence("evidence", fit(evidence, int(room * CHARS_PER_TOKEN) - len(head) - 700)),
                'Reply as {"verdict": "supported" | "partial" | "refuse", "reason": "...", '
                '"corroboration_query": "" or "a search query that could corroborate it"}',
            )

        def accept(value: Any, prompt: Prompt) -> Any:
            why = self._free_text(value["reason"], prompt)
            if why is not None:
                return Refusal(why, f"reason {value['reason']!r}"[:200])
            verdict, reason = value["verdict"], one_line(value["reason"], 1000)
            if floor in _RANK and _RANK[verdict] > _RANK[floor]:  # never looser than the floor
                reason, verdict = f"{reason} [held to the mechanical floor {floor}]", floor
            query = value.get("corroboration_query")
            usable = isinstance(query, str) and query.strip() and self._free_text(query, prompt) is None
            return VerdictDraft(
                verdict=verdict, reason=reason[:1000], corroboration_query=query[:200] if usable else None
            )

        judged = self._ask(ModelStage.VERIFY, build, VERIFY_SCHEMA, accept)
        if judged is None:
            return self._fallback(
                ModelStage.VERIFY, "verify", claim, checks, evidence, why="no usable verdict"
            )
        return judged

    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]:
        if self._ruled(ModelStage.CRITIC):
            return self.fallback.critic(brief, sub_questions, claims)
        listing = "\n".join(f"- {sq['id']}: {sq['text']}" for sq in sub_questions)
        claim_lines = "\n".join(
            f"- {c.get('id')} ({c.get('sub_question')}, {c.get('verdict')}): {c.get('text')}" for c in claims
        )

        def build(room: int) -> Prompt:
            head = f"Objective: {brief.get('objective')}\nSub-questions:\n{listing}\n"
            shown = fit(claim_lines or "(no claims yet)", int(room * CHARS_PER_TOKEN) - len(head) - 800)
            return Prompt(
                CRITIC_TASK,
                head + fence("claims", shown),
                'Reply as {"gaps": [{"about": "...", "query": "a search query", "sq": "SQ-NN" or "none", '
                '"material": true}]}',
            )

        known = [sq["id"] for sq in sub_questions]

        def accept(value: Any, prompt: Prompt) -> Any:
            gaps = []
            for item in value["gaps"]:
                if self._free_text(item.get("about"), prompt) or self._free_text(item.get("query"), prompt):
                    self._rejected(ModelStage.CRITIC, ModelRejection.PLACEHOLDER, f"gap {item!r}"[:200])
                    continue
                gaps.append(
                    GapDraft(
                        about=one_line(item["about"], 500),
                        query=one_line(item["query"], 200),
                        sq=item.get("sq") if item.get("sq") in known else None,
                        material=bool(item.get("material", True)),
                    )
                )
            return gaps

        gaps = self._ask(ModelStage.CRITIC, build, critic_schema(known), accept)
        if gaps is None:
            return self._fallback(
                ModelStage.CRITIC, "critic", brief, sub_questions, claims, why="no usable gap list"
            )
        return gaps

    def write(self, brief: dict[str, Any], sections: list[Section]) -> str:
        if self._ruled(ModelStage.WRITE):
            return self.fallback.write(brief, sections)
        material = []
        for section in sections:
            lines = [f"{section.sq['id']}: {section.sq['text']}"]
            lines += [f"  {c['id']} [{c.get('verdict')}]: {c['text']}" for c in section.claims]
            lines += [f"  gap: {g.get('about')}" for g in section.gaps]
            lines += [f"  REFUSED {c['id']}: {c['text']}" for c in section.refused]
            material.append("\n".join(lines))
        stated = {c["id"] for s in sections for c in s.claims}

        def build(room: int) -> Prompt:
            return Prompt(
                WRITE_TASK.format(
                    deliverable=brief.get("deliverable") or "a cited research memo",
                    objective=brief.get("objective"),
                ),
                fence("claims", fit("\n".join(material), int(room * CHARS_PER_TOKEN) - 1100)),
                'Reply as {"markdown": "..."}',
            )

        def accept(value: Any, prompt: Prompt) -> Any:
            text = str(value["markdown"])
            cited = set(re.findall(r"\[(CLM-\d{2,})\]", text))
            if not cited & stated:
                return Refusal(ModelRejection.UNCITED, "no statement cites a stated claim")
            return text.strip() + "\n"

        text = self._ask(ModelStage.WRITE, build, WRITE_SCHEMA, accept)
        return (
            text
            if text
            else self._fallback(ModelStage.WRITE, "write", brief, sections, why="no usable deliverable")
        )
