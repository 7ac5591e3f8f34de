"""What each sub-question is about, and the rules that read it: queries, candidate hints, sentence ownership.

Owns `Target` (a sub-question of the plan as the later stages see it: its terms, its
focus, i.e. the subject terms it is about, and its angle's cue words), `target_for`
and `plan_targets`, and the rules built on a target: `search_queries` (the words of a
message the objective quotes, then the focus terms, up to eight words, plus the angle's
words) and `judge_candidate` (which
subject words a candidate's title and snippet carry: none -> "reject", all ->
"choose", some -> no hint). Pure: no memory of earlier calls, so resumed and
replayed runs decide the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from research_engine.engine.extractive.facets import question_terms
from research_engine.engine.extractive.plan import common_terms, plan_of
from research_engine.engine.extractive.text import key_terms, tokens
from research_engine.engine.models import SelectionJudgement
from research_engine.terms import fold
from research_engine.vocabulary import Angle, SelectionHint

QUERY_TERMS = 8  # enough for a question's names, versions and key nouns (five cut the answer's own words)
ANGLE_TERMS: dict[str, str] = {
    Angle.ENTITY: "",
    Angle.TIME: "changed version",
    Angle.SOURCE_TYPE: "official documentation",
    Angle.COUNTER: "limitations",
}
# Cue words a sentence must carry to answer the time or counter angle (matched on whole words).
TIME_CUE_RE = re.compile(
    r"\b(changed|added|new in|deprecated|removed|introduced|since|no longer|now|version \d|"
    r"(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
COUNTER_CUE_RE = re.compile(
    r"\b(not|cannot|can't|no|only|however|but|although|though|unless|limit\w*|drawback\w*|overhead|"
    r"slow\w*|block\w*|avoid|warning|caution|unsafe|risk\w*|deadlock\w*|problem\w*|disadvantage\w*|"
    r"instead|restrict\w*|prevent\w*|expensive|costly|fail\w*)\b",
    re.IGNORECASE,
)
ANGLE_CUES: dict[str, re.Pattern[str]] = {Angle.TIME: TIME_CUE_RE, Angle.COUNTER: COUNTER_CUE_RE}


@dataclass
class Target:
    """One sub-question of the plan, as consolidation sees it."""

    text: str
    angle: str
    terms: set[str]
    focus: set[str]
    items: tuple[frozenset[str], ...] = ()  # the enumerated items it names (`PlannedQuestion.items`)

    def eligible(self, cand_terms: set[str], text: str) -> bool:
        cue = ANGLE_CUES.get(self.angle)
        whole = not self.items or any(item <= cand_terms for item in self.items)
        return bool(self.focus & cand_terms) and whole and (cue is None or bool(cue.search(text)))

    def focus_share(self, cand_terms: set[str]) -> float:
        """The share of this question's subject terms a sentence carries."""
        return len(self.focus & cand_terms) / max(1, len(self.focus))


def target_for(brief: dict[str, Any], sq: dict[str, Any]) -> Target:
    """`sq` as a consolidation target: the plan's own entry when it is one, else its uncommon terms."""
    text = " ".join(str(sq.get("text") or "").split())
    plan = plan_of(brief)
    for p in plan:
        if p.text == text:
            return Target(p.text, p.angle, set(tokens(p.text)), p.focus, p.items)
    terms = question_terms(text)
    common = common_terms([p.text for p in plan] + [text])
    return Target(text, str(sq.get("angle") or Angle.ENTITY), terms, (terms - common) or terms)


def plan_targets(brief: dict[str, Any], sq: dict[str, Any]) -> tuple[list[Target], int]:
    """The plan's sub-questions (plus `sq` when it is not one of them) and `sq`'s index among them."""
    targets = [Target(p.text, p.angle, set(tokens(p.text)), p.focus, p.items) for p in plan_of(brief)]
    key = " ".join(str(sq.get("text") or "").split())
    for i, t in enumerate(targets):
        if t.text == key:
            return targets, i
    targets.append(target_for(brief, sq))
    return targets, len(targets) - 1


def plan_claim_types(brief: dict[str, Any], sq: dict[str, Any], n: int, me: int) -> list[str]:
    """The claim type of each target of `plan_targets`: the plan's, and `sq`'s own for `sq`."""
    kinds = [p.claim_type for p in plan_of(brief)][:n]
    kinds += [""] * (n - len(kinds))
    kinds[me] = str(sq.get("claim_type") or kinds[me])
    return kinds


def search_queries(brief: dict[str, Any], sq: dict[str, Any], angle: str) -> list[str]:
    """The sub-question's key terms (focus terms first, a few words) plus the angle's words."""
    text = str(sq.get("text") or "") or str(brief.get("objective") or "")
    target = target_for(brief, sq)
    terms = key_terms(text, limit=12)
    focus = [t for t in terms if fold(t) in target.focus]
    rest = [t for t in terms if fold(t) not in target.focus]
    quoted = _quoted_terms(str(brief.get("objective") or ""), text)
    first: dict[str, str] = {}  # by fold, the first spelling: a quoted word goes first, once
    for term in quoted + focus + rest:
        first.setdefault(fold(term), term)
    base = " ".join(list(first.values())[:QUERY_TERMS])
    extra = ANGLE_TERMS.get(angle or Angle.ENTITY, "")
    out = [f"{base} {extra}".strip()] if base else []
    if rest and focus and len(focus) >= 2 and " ".join(focus) not in out:
        out.append(" ".join(focus[:QUERY_TERMS]))
    return out


# A message, a flag or a setting the asker quotes ("No matches for wildcard", "TCP ZeroWindow"): the words the
# documentation itself writes, so the search asks for them first. A quote inside a word (ge"andert) is none.
QUOTED_RE = re.compile(r'(?<![\w"])"([^"]{2,60})"(?![\w"])|\u201c([^\u201d]{2,60})\u201d')
QUOTED_MAX_WORDS = 6


def _quoted_terms(objective: str, text: str) -> list[str]:
    """The key terms of what the objective quotes and `text` (the sub-question) quotes too, in order."""
    out: list[str] = []
    for m in QUOTED_RE.finditer(objective):
        said = m.group(1) or m.group(2) or ""
        if len(said.split()) <= QUOTED_MAX_WORDS and said in text:
            out += key_terms(said, limit=QUERY_TERMS)
    return out


def judge_candidate(
    brief: dict[str, Any], sq: dict[str, Any], candidate: dict[str, Any]
) -> SelectionJudgement:
    """Which of the sub-question's subject words a candidate's title and snippet carry, as a hint."""
    subject = target_for(brief, sq).focus
    have = set(tokens(f"{candidate.get('title') or ''} {candidate.get('snippet') or ''}"))
    # The subject words as the sub-question writes them, in its order (folded ones it lacks last).
    in_text = key_terms(str(sq.get("text") or ""), limit=50)
    written: dict[str, str] = {}
    for word in in_text:
        written.setdefault(fold(word), word)
    order = {folded: i for i, folded in enumerate(written)}
    shown = sorted(subject, key=lambda t: (order.get(t, len(order)), t))
    matched = [written.get(t, t) for t in shown if t in have]
    missing = [written.get(t, t) for t in shown if t not in have]
    who = sq.get("id") or "the sub-question"
    where = f"{candidate.get('backend') or 'search'} rank {candidate.get('rank', '?')}"
    if not subject:
        return SelectionJudgement(f"{who} has no subject words to match ({where})", None)
    if not matched:
        return SelectionJudgement(
            f"off-topic: title and snippet carry none of {who}'s subject words "
            f"({', '.join(missing)}; {where})",
            SelectionHint.REJECT,
        )
    if not missing:
        return SelectionJudgement(
            f"on-topic: title and snippet carry all of {who}'s subject words ({', '.join(matched)}; {where})",
            SelectionHint.CHOOSE,
        )
    return SelectionJudgement(
        f"partly on-topic: title and snippet carry {', '.join(matched)} but not {', '.join(missing)} "
        f"of {who}'s subject words ({where})",
        None,
    )
