"""Evidence for a model's prompt: fenced as data, numbered for picking, and the picks turned into claims.

The model picks, the tool copies. `numbered_candidates` takes the sentences the extractive ranking proposes
for a sub-question (each a run of a source's stored text) and numbers them; the model answers with numbers
and what each says; `claims_from_picks` copies each picked quote verbatim from the candidate (so a picked
claim's quote is always in its source) and holds the model's text to it (`held_to_quote`): a text stating a
number, a name or a code token its quote lacks, or words mostly not in it, is replaced by the quote itself.
`fence` wraps untrusted text so a closing tag inside it cannot end the fence. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from research_engine import support
from research_engine.engine.models import ClaimDraft, SourceText
from research_engine.terms import STOP_WORDS, fold, words
from research_engine.vocabulary import Confidence

CANDIDATE_CHARS = 700  # a longer candidate (an entry with its term and lines) is cut in the prompt only
CONTENT_SHARE = 0.5  # at least this share of a claim text's content words must be its quote's


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


@dataclass
class Candidate:
    """One numbered sentence (or run of sentences) the model may pick, as the tool will copy it.

    `evidence` is (source ref, quote) per source holding it, the quote verbatim from the stored text;
    `passages` the ids of the passages the first quote runs over; `spans` one per evidence entry: the sentence
    reference (`SQ-01/SRC-02#p05.s2`) once sources carry sentence ids, None until then.
    """

    number: int
    evidence: list[tuple[str, str]]
    passages: list[str]
    spans: list[str | None] = field(default_factory=list)

    @property
    def quote(self) -> str:
        return self.evidence[0][1]


def _passages_of(quote: str, source: SourceText | None) -> list[str]:
    if source is None:
        return []
    inside = [p.id for p in source.passages if quote in p.text]
    return inside[:1] or [p.id for p in source.passages if p.text and p.text in quote]


def numbered_candidates(ranked: list[ClaimDraft], sources: list[SourceText], most: int) -> list[Candidate]:
    """The ranking's drafts (best first; each quote a run of its source's text) as numbered candidates."""
    by_ref = {s.ref: s for s in sources}
    out: list[Candidate] = []
    for draft in ranked:
        if not draft.evidence or len(out) >= most:
            continue
        ref, quote = draft.evidence[0]
        out.append(
            Candidate(
                number=len(out) + 1,
                evidence=list(draft.evidence),
                passages=_passages_of(quote, by_ref.get(ref)),
                spans=[None] * len(draft.evidence),
            )
        )
    return out


def candidate_block(candidates: list[Candidate], chars: int) -> str:
    """The numbered candidates as one fenced block of at most about `chars` characters (best first)."""
    lines: list[str] = []
    used = 0
    for cand in candidates:
        line = f"[{cand.number}] {fit(one_line(cand.quote, 4000), CANDIDATE_CHARS)}"
        if lines and used + len(line) > chars:
            break
        lines.append(line)
        used += len(line) + 1
    return fence("sentences", "\n".join(lines))


def _content(text: str) -> set[str]:
    return {fold(w) for w in words(text) if w not in STOP_WORDS and len(w) > 1}


def held_to_quote(text: str, quote: str, question: str = "") -> str | None:
    """Why `text` says more than `quote`, or None: the deliverable's own sentence-support check (`support`:
    content, polarity, strength, numbers, names and code), the quote standing as the one claim it cites,
    the question allowed as restated context."""
    judge = support.Judge({"CLM-01": {"text": quote, "evidence": [{"quote": quote}]}}, question)
    held = judge.held(["CLM-01"])
    faults = judge.faults(text, held) if held is not None else []
    if faults:
        return "; ".join(f"{f.kind}: {', '.join(f.words) or 'more than its quote'}" for f in faults)
    said = _content(text)
    if said and len(said & (_content(quote) | _content(question))) < CONTENT_SHARE * len(said):
        return "its words are mostly not its quote's"
    return None


@dataclass
class Picked:
    """The claims made from one reply's picks, and the texts replaced by their quotes (with why)."""

    drafts: list[ClaimDraft]
    replaced: list[str]
    unknown: int  # picks naming no candidate


def claims_from_picks(
    picks: list[Any], candidates: list[Candidate], question: str, *, usable_text: Any
) -> Picked:
    """Claims from the reply's picks: quotes copied from the candidates, texts held to them.

    `usable_text(text)` is None for real text, else why it is not (an echo of the template, empty)."""
    by_number = {c.number: c for c in candidates}
    drafts: list[ClaimDraft] = []
    replaced: list[str] = []
    seen: set[int] = set()
    unknown = 0
    for pick in picks:
        number = pick.get("sentence") if isinstance(pick, dict) else pick
        if not isinstance(number, int) or number not in by_number:
            unknown += 1
            continue
        if number in seen:
            continue
        seen.add(number)
        cand = by_number[number]
        text = one_line(pick.get("text") if isinstance(pick, dict) else "", 2000)
        why = usable_text(text) or held_to_quote(text, cand.quote, question)
        if why is not None:
            replaced.append(f"[{number}] {one_line(text, 80)!r}: {why}")
            text = one_line(cand.quote, 4000)
        drafts.append(
            ClaimDraft(
                text=text,
                evidence=list(cand.evidence),
                confidence=Confidence.HIGH if len(cand.evidence) > 1 else Confidence.MEDIUM,
                origin="model",
                spans=list(cand.spans),
            )
        )
    return Picked(drafts, replaced, unknown)
