"""The embedded extractive model: judgement by rule, claims by BM25, no LLM and no key.

- decompose: four sub-questions from the objective, one per search angle (entity,
  time, source-type, counter), claim types taken in turn from the brief;
- queries: the sub-question's content words plus an angle-specific term;
- select_reason: which of the sub-question's key terms a candidate's title and snippet carry;
- consolidate: sentences of the fetched passages ranked by BM25 against the
  sub-question (and the objective); each chosen sentence is cut verbatim from a
  passage, so the claim is its own quote and the claims gate finds it exactly;
- verify: the mechanical floor, with its reasons;
- critic: every sub-question without a supported claim is a material gap;
- write: an extractive report grouped by sub-question, each statement citing its
  CLM-NN; gaps and refused claims only inside the marked caveat section.

BM25 is a small own implementation (Okapi BM25, k1 1.5, b 0.75) rather than
rank-bm25: it is twenty lines, needs no dependency, and this way the tokenizer,
stop words and tie-breaking (deterministic, by source and position) are ours.
Nothing here does I/O or can invent text: every claim is a substring of a source.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from research_engine.engine.models import (
    ClaimDraft,
    GapDraft,
    Section,
    SourceText,
    SubQuestionPlan,
    Usage,
    VerdictDraft,
)

ANGLES = ("entity", "time", "source-type", "counter")
ANGLE_TERMS = {
    "entity": "",
    "time": "latest changes",
    "source-type": "official documentation",
    "counter": "limitations",
}
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "may",
        "might",
        "must",
        "shall",
        "us",
        "via",
        "per",
        "within",
        "without",
        "across",
        "among",
        "regarding",
        "whether",
        "evidence",
        "say",
        "says",
        "said",
        "state",
        "states",
        "stated",
        "source",
        "sources",
        "primary",
        "official",
        "documentation",
        "find",
        "out",
        "change",
        "changes",
        "changed",
        "recent",
        "recently",
        "current",
        "limitation",
        "limitations",
        "exception",
        "exceptions",
        "counter",
        "critique",
        "critiques",
        "apply",
        "applies",
        "answer",
    ]
)
SENTENCE_MIN_CHARS = 40
SENTENCE_MAX_CHARS = 500
SENTENCE_MIN_WORDS = 6
CLAIM_PASSAGE_KINDS = ("paragraph", "list-item", "table-row", "data")
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "no",
        "fig",
        "al",
        "approx",
        "cf",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
    ]
)
BM25_K1 = 1.5
BM25_B = 0.75

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_BOUNDARY_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")


def tokens(text: str) -> list[str]:
    """Lowercased content words with a light plural fold (tasks -> task); stop words dropped."""
    out = []
    for word in _WORD_RE.findall(text.lower()):
        if word in STOP_WORDS or len(word) < 2:
            continue
        if len(word) > 4 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
        out.append(word)
    return out


def key_terms(text: str, limit: int = 8) -> list[str]:
    """Content words of `text` in first-seen order, as written (lowercase), unique."""
    seen: list[str] = []
    folded: set[str] = set()
    for word in _WORD_RE.findall(text.lower()):
        fold = tokens(word)
        if not fold or fold[0] in folded:
            continue
        folded.add(fold[0])
        seen.append(word)
        if len(seen) >= limit:
            break
    return seen


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of `text`; every span is a verbatim slice."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY_RE.finditer(text):
        nxt = text[m.end() : m.end() + 1]
        word_before = re.search(r"(\w+)\.?[\"'\u201d\u2019)\]]*$", text[start : m.start() + 1])
        if word_before and word_before.group(1).lower() in ABBREVIATIONS:
            continue
        if text[m.start()] == "." and re.search(r"\b\w\.$", text[max(start, m.start() - 2) : m.start() + 1]):
            continue  # an initial ("J. Smith") or a one-letter abbreviation
        if nxt and not (nxt.isupper() or nxt.isdigit() or nxt in "\"'(\u201c\u2018["):
            continue
        end = m.start() + len(m.group().rstrip())
        spans.append((start, end))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def bm25_scores(query: list[str], documents: list[list[str]]) -> list[float]:
    """Okapi BM25 score of each tokenized document for the tokenized query."""
    n = len(documents)
    if not n or not query:
        return [0.0] * n
    avgdl = sum(len(d) for d in documents) / n or 1.0
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc))
    scores = []
    for doc in documents:
        tf = Counter(doc)
        score = 0.0
        for term in query:
            if term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            freq = tf[term]
            score += idf * freq * (BM25_K1 + 1) / (freq + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
        scores.append(score)
    return scores


@dataclass
class _Candidate:
    text: str
    ref: str
    source_index: int
    position: int  # passage order then sentence order inside the source
    terms: list[str]


def _topic(objective: str) -> str:
    return " ".join(objective.split()).rstrip(" ?.!")


def _window(recency: str | None) -> str:
    if not recency or recency == "any":
        return ""
    unit = {"d": "days", "m": "months", "y": "years"}[recency[-1]]
    return f" in the last {recency[:-1]} {unit}"


class ExtractiveModel:
    """The embedded default: deterministic, no network, no key (see the module docstring)."""

    def __init__(self, *, max_claims: int = 4, per_source_cap: int = 2, name: str = "extractive") -> None:
        self.name = name
        self.usage = Usage()
        self.max_claims = max_claims
        self.per_source_cap = per_source_cap

    # ------------------------------------------------------------------ decompose, queries, select

    def decompose(self, brief: dict[str, Any]) -> list[SubQuestionPlan]:
        topic = _topic(str(brief.get("objective") or "the objective"))
        types = list(brief.get("claim_types") or ["factual"])
        window = _window(brief.get("recency"))
        texts = {
            "entity": f"{topic}?",
            "time": f"What changed{window or ' recently'} regarding: {topic}?",
            "source-type": (
                f"What do primary sources (official documentation, standards, data) state about: {topic}?"
            ),
            "counter": f"What limitations, exceptions or counter-evidence apply to: {topic}?",
        }
        answers = {
            "entity": "direct statements from sources that answer the objective",
            "time": "dated statements of what changed, with the period they cover",
            "source-type": "what the primary or official sources themselves state",
            "counter": "limitations, exceptions and evidence that cuts the other way",
        }
        return [
            SubQuestionPlan(
                text=texts[angle], claim_type=types[i % len(types)], angle=angle, answers=answers[angle]
            )
            for i, angle in enumerate(ANGLES)
        ]

    def queries(self, brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]:
        terms = key_terms(str(sq.get("text") or ""), limit=6)
        if not terms:
            terms = key_terms(str(brief.get("objective") or ""), limit=6)
        base = " ".join(terms)
        extra = ANGLE_TERMS.get(angle or "entity", "")
        out = [f"{base} {extra}".strip()] if base else []
        objective_terms = " ".join(key_terms(str(brief.get("objective") or ""), limit=6))
        if objective_terms and objective_terms not in out:
            out.append(objective_terms)
        return out

    def select_reason(self, sq: dict[str, Any], candidate: dict[str, Any]) -> str:
        wanted = key_terms(str(sq.get("text") or ""), limit=10)
        have = set(tokens(f"{candidate.get('title') or ''} {candidate.get('snippet') or ''}"))
        shared = [w for w in wanted if tokens(w) and tokens(w)[0] in have]
        where = f"{candidate.get('backend') or 'search'} rank {candidate.get('rank', '?')}"
        if not shared:
            return f"title and snippet share none of {sq.get('id', 'the sub-question')}'s key terms ({where})"
        return (
            f"title and snippet carry {len(shared)} of {len(wanted)} key terms of "
            f"{sq.get('id', 'the sub-question')} ({', '.join(shared)}; {where})"
        )

    # ------------------------------------------------------------------ consolidate

    def consolidate(
        self, brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]
    ) -> list[ClaimDraft]:
        candidates = self._candidates(sources)
        if not candidates:
            return []
        query = tokens(str(sq.get("text") or "")) * 2 + tokens(str(brief.get("objective") or ""))
        query_terms = set(query)
        need = min(2, len(query_terms))
        scores = bm25_scores(query, [c.terms for c in candidates])
        ranked = sorted(
            range(len(candidates)),
            key=lambda i: (-scores[i], candidates[i].source_index, candidates[i].position),
        )
        chosen: list[ClaimDraft] = []
        by_text: dict[str, ClaimDraft] = {}
        per_source: Counter[str] = Counter()
        for i in ranked:
            cand = candidates[i]
            matched = query_terms & set(cand.terms)
            if scores[i] <= 0:
                break  # ranked by score: nothing relevant follows
            if len(matched) < need:
                continue
            key = " ".join(cand.text.split())
            if key in by_text:  # the same sentence in another source corroborates it
                draft = by_text[key]
                if all(ref != cand.ref for ref, _ in draft.evidence):
                    draft.evidence.append((cand.ref, cand.text))
                    draft.confidence = "high"
                continue
            if len(chosen) >= self.max_claims or per_source[cand.ref] >= self.per_source_cap:
                continue
            share = len(matched) / max(1, len(query_terms))
            draft = ClaimDraft(
                text=cand.text,
                evidence=[(cand.ref, cand.text)],
                confidence="medium" if share >= 0.5 else "low",
            )
            chosen.append(draft)
            by_text[key] = draft
            per_source[cand.ref] += 1
        return chosen

    def _candidates(self, sources: list[SourceText]) -> list[_Candidate]:
        out: list[_Candidate] = []
        for s_index, source in enumerate(sources):
            position = 0
            for passage in source.passages:
                if passage.kind not in CLAIM_PASSAGE_KINDS:
                    continue
                for start, end in sentences(passage.text):
                    position += 1
                    text = passage.text[start:end]
                    if not (SENTENCE_MIN_CHARS <= len(text) <= SENTENCE_MAX_CHARS):
                        continue
                    if len(text.split()) < SENTENCE_MIN_WORDS:
                        continue
                    out.append(_Candidate(text, source.ref, s_index, position, tokens(text)))
        return out

    # ------------------------------------------------------------------ verify, critic, write

    def verify(self, claim: dict[str, Any], checks: dict[str, Any], evidence: str) -> VerdictDraft:
        floor = checks.get("floor") or "refuse"
        reasons = [str(r) for r in checks.get("floor_reasons") or []]
        if floor == "supported":
            reason = "mechanical checks pass: the quote is in the verifier's fresh copy"
            reason += " and carries the claim's numbers"
        else:
            reason = "mechanical floor: " + ("; ".join(reasons) or floor)
        return VerdictDraft(verdict=floor, reason=reason)

    def critic(
        self, brief: dict[str, Any], sub_questions: list[dict[str, Any]], claims: list[dict[str, Any]]
    ) -> list[GapDraft]:
        supported = {c.get("sub_question") for c in claims if c.get("verdict") == "supported"}
        gaps = []
        for sq in sub_questions:
            if sq["id"] in supported:
                continue
            queries = self.queries(brief, sq, sq.get("angle") or "entity")
            gaps.append(
                GapDraft(
                    about=f"no supported claim answers {sq['id']}: {sq['text']}",
                    query=queries[0] if queries else sq["text"],
                    sq=sq["id"],
                    material=True,
                )
            )
        return gaps

    def write(self, brief: dict[str, Any], sections: list[Section]) -> str:
        return render_report(brief, sections)


# `report check` treats a heading containing "caveat" or "gap" as a caveat area (report.CAVEAT_WORDS), and
# a heading starting with "About" as framing (report.EXEMPT_WORDS): facts there need no citation.
CAVEAT_HEADING = "## Caveats and gaps"
ABOUT_HEADING = "## About this report"


def render_report(brief: dict[str, Any], sections: list[Section]) -> str:
    """The extractive deliverable: supported and partial claims by sub-question, then caveats and gaps."""
    objective = " ".join(str(brief.get("objective") or "Research report").split())
    lines = [f"# {objective}", ""]
    caveats: list[str] = []
    for section in sections:
        sq = section.sq
        lines += [f"## {sq['id']}: {sq['text']}", ""]
        stated = [c for c in section.claims if c.get("verdict") in ("supported", "partial")]
        for claim in stated:
            sources = ", ".join(
                e["source"] if isinstance(e, dict) else e[0] for e in claim.get("evidence") or []
            )
            caution = " (partly supported: read with caution)" if claim.get("verdict") == "partial" else ""
            lines += [f"- {claim['text']} [{claim['id']}]{caution} (source: {sources})", ""]
        if not stated:
            caveats.append(f"- Gap: no claim was supported for {sq['id']} ({sq['text']}).")
        for gap in section.gaps:
            caveats.append(f"- Gap ({sq['id']}): {gap.get('about')}")
        for claim in section.refused:
            caveats.append(
                f"- Refused, not established: {claim['id']} (\u201c{claim['text']}\u201d) was refused by the "
                f"verifier: {claim.get('reason') or 'its evidence did not hold up'}."
            )
    if caveats:
        lines += [CAVEAT_HEADING, ""] + caveats + [""]
    lines += [
        ABOUT_HEADING,
        "",
        "Written by the embedded extractive model: every statement above is a verbatim sentence of the "
        "cited source, chosen by BM25 relevance and checked by the independent verifier.",
        "",
    ]
    return "\n".join(lines)
