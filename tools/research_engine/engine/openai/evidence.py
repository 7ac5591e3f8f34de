"""Evidence for a model's prompt: fenced as data, chosen and cut to fit, and checked when it comes back.

`evidence_batches` ranks a sub-question's passages by BM25 against its text (and what a full answer
contains) and packs the best into at most `calls` prompts of `budget` characters, each listing its
sources with their passages in reading order. `grounded_claims` keeps a drafted claim only when every
quote is found in the source it cites (`grounding.find_quote`) and its text is real, and says why for
each one it drops. `fence` wraps untrusted text so a closing tag inside it cannot end the fence. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from research_engine import grounding
from research_engine.engine.extractive.text import tokens
from research_engine.engine.models import ClaimDraft, SourceText
from research_engine.engine.ranking import bm25_scores
from research_engine.vocabulary import Confidence, ModelRejection

PASSAGE_CHARS = 1500  # a longer passage is cut before it is packed
PASSAGE_KINDS = ("paragraph", "list-item", "table-row", "data")


def fence(source_id: str, text: str) -> str:
    """Wrap untrusted text as data; a closing tag inside the text cannot end the fence early."""
    safe_id = re.sub(r"[^A-Za-z0-9/_.:-]", "_", source_id)
    body = re.sub(r"(?i)<(/?)untrusted-source", r"&lt;\1untrusted-source", text)
    return f'<untrusted-source id="{safe_id}">\n{body}\n</untrusted-source>'


@dataclass
class Prompt:
    """A stage's user message: fixed instructions, the data (objective, fenced evidence), the example."""

    instructions: str
    data: str
    example: str

    def text(self) -> str:
        return f"{self.instructions}\n{self.data}\n{self.example}"


@dataclass
class Refusal:
    """Why a parsed reply is not used; `counted` when the check already counted it (per draft)."""

    kind: str
    detail: str
    counted: bool = False


def one_line(value: Any, limit: int) -> str:
    return " ".join(str(value).split())[:limit]


def fit(text: str, chars: int) -> str:
    """`text` cut to `chars` at a line or sentence end where one is near."""
    if len(text) <= chars:
        return text
    cut = text[: max(0, chars)]
    end = max(cut.rfind("\n"), cut.rfind(". "))
    return cut[: end + 1] if end > chars * 0.6 else cut


def evidence_batches(
    sq: dict[str, Any], sources: list[SourceText], budget: int, calls: int
) -> list[list[SourceText]]:
    """The sub-question's passages, best first by BM25, packed into at most `calls` batches of `budget`
    characters; each batch lists its sources with their passages in reading order."""
    query = tokens(f"{sq.get('text')} {sq.get('answers') or ''}")
    pool = [(i, p) for i, s in enumerate(sources) for p in s.passages if p.kind in PASSAGE_KINDS]
    scores = bm25_scores(query, [tokens(p.text) for _, p in pool])
    ranked = sorted(zip(pool, scores, strict=True), key=lambda item: (-item[1], item[0][0]))
    batches: list[dict[int, list[Any]]] = []
    used = 0
    for (s_index, passage), _ in ranked:
        size = min(len(passage.text), PASSAGE_CHARS) + 8
        if size > budget:
            continue
        if not batches or used + size > budget:
            if len(batches) == calls:
                break
            batches.append({})
            used = 0
        batches[-1].setdefault(s_index, []).append(passage)
        used += size
    order = {id(p): n for n, p in enumerate(p for s in sources for p in s.passages)}
    return [
        [
            SourceText(
                ref=sources[i].ref,
                title=sources[i].title,
                url=sources[i].url,
                passages=sorted(passages, key=lambda p: order[id(p)]),
            )
            for i, passages in sorted(batch.items())
        ]
        for batch in batches
        if batch
    ]


def grounded_claims(
    items: list[Any],
    sources: list[SourceText],
    prompt: Prompt,
    free_text: Callable[[Any, Prompt], str | None],
) -> tuple[list[ClaimDraft], list[tuple[str, str]]]:
    """The drafts whose every quote is found in its cited source, and (rejection, detail) for the rest."""
    texts = {s.ref: "\n\n".join(p.text for p in s.passages) for s in sources}
    kept: list[ClaimDraft] = []
    dropped: list[tuple[str, str]] = []
    for item in items:
        text = item.get("text")
        why = free_text(text, prompt)
        if why is not None:
            dropped.append((why, f"claim text {one_line(text, 80)!r}"))
            continue
        evidence, missing = [], []
        for entry in item.get("evidence") or []:
            ref, quote = str(entry.get("source") or ""), str(entry.get("quote") or "").strip()
            if (
                free_text(quote, prompt) is None
                and ref in texts
                and grounding.find_quote(quote, texts[ref]).found
            ):
                evidence.append((ref, quote))
            else:
                missing.append(f"{ref or '(no source)'}: {one_line(quote, 80)!r}")
        if missing or not evidence:
            echoed = any(free_text((e or {}).get("quote"), prompt) for e in item.get("evidence") or [])
            kind = ModelRejection.PLACEHOLDER if echoed else ModelRejection.QUOTE_NOT_IN_SOURCE
            dropped.append(
                (kind, f"claim {one_line(text, 80)!r}: quote not in its source: {'; '.join(missing)}")
            )
            continue
        confidence = item.get("confidence") if item.get("confidence") in tuple(Confidence) else "medium"
        kept.append(ClaimDraft(text=one_line(text, 2000), evidence=evidence, confidence=confidence))
    return kept, dropped
