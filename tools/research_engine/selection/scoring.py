"""Source selection, the pure part: scoring candidates, dedup, diversity, the decision.

The decision is pure: `score` and `decide` take facts (claim type, modality,
DOI, URL scheme, access tier, dates, domain use counts, the brief's recency and
budget) and return numbers and verdicts; the weights and tables are data at the
top of this module. I/O (reading the brief, the run's sources, earlier rounds;
writing the log) is at the edges, in `selection.log.log_selection`.

It never fetches anything. Relevance is measured, not judged: how many of the
sub-question's key terms the candidate's title, snippet and URL carry, and its
search rank (`relevance`); whether a page truly answers is still the agent's
call too (its `reason`, and `verdict_hint: reject`, which is honoured).
The module is called `selection` so it cannot shadow the standard library's
`select`; the CLI command is `select log`.
The log itself is `selection.log`; the candidates files are `selection.candidates`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from research_engine.answering import key_terms
from research_engine.errors import BadInput
from research_engine.schemas import validate
from research_engine.terms import fold, words
from research_engine.urls import canonical_key as url_key
from research_engine.urls import extract_doi, registrable_domain
from research_engine.vocabulary import API_KINDS

SCHEMA = "selection"
SCHEMA_VERSION = 1

# ---------------------------------------------------------------------------- the tables (data, not logic)

# Weight of each facet in the total; they sum to 1. Relevance to the sub-question weighs most: a
# primary, fresh, open page about something else is not worth a fetch.
WEIGHTS: dict[str, float] = {
    "relevance": 0.35,
    "fit": 0.20,
    "verifiability": 0.10,
    "access": 0.10,
    "freshness": 0.10,
    "primary": 0.10,
    "diversity": 0.05,
}

# Fit of a modality to a sub-question's claim type (mirrors docs/source-catalog.md).
# Modalities: the API kinds (worldbank, openalex, arxiv, crossref, europepmc, wikipedia) and, for web pages,
# the source-type hint.
FIT: dict[str, dict[str, float]] = {
    "quantitative": {
        "arxiv": 0.5,
        "crossref": 0.5,
        "europepmc": 0.6,
        "wikipedia": 0.3,
        "worldbank": 1.0,
        "openalex": 0.6,
        "data": 0.9,
        "primary": 0.8,
        "peer": 0.6,
        "practitioner": 0.4,
        "press": 0.3,
        "unknown": 0.3,
    },
    "factual": {
        "arxiv": 0.6,
        "crossref": 0.6,
        "europepmc": 0.7,
        "wikipedia": 0.5,
        "worldbank": 0.5,
        "openalex": 0.7,
        "data": 0.6,
        "primary": 0.9,
        "peer": 0.8,
        "practitioner": 0.6,
        "press": 0.6,
        "unknown": 0.4,
    },
    "regulatory": {
        "arxiv": 0.2,
        "crossref": 0.4,
        "europepmc": 0.3,
        "wikipedia": 0.3,
        "worldbank": 0.2,
        "openalex": 0.4,
        "data": 0.3,
        "primary": 1.0,
        "peer": 0.5,
        "practitioner": 0.7,
        "press": 0.4,
        "unknown": 0.3,
    },
    "competitive": {
        "arxiv": 0.3,
        "crossref": 0.3,
        "europepmc": 0.2,
        "wikipedia": 0.4,
        "worldbank": 0.2,
        "openalex": 0.4,
        "data": 0.5,
        "primary": 0.9,
        "peer": 0.4,
        "practitioner": 0.6,
        "press": 0.7,
        "unknown": 0.4,
    },
    "technical": {
        "arxiv": 0.8,
        "crossref": 0.6,
        "europepmc": 0.5,
        "wikipedia": 0.5,
        "worldbank": 0.1,
        "openalex": 0.7,
        "data": 0.3,
        "primary": 1.0,
        "peer": 0.8,
        "practitioner": 0.7,
        "press": 0.3,
        "unknown": 0.4,
    },
}

# How re-checkable a candidate is by anyone later.
VERIFIABILITY: dict[str, float] = {"api": 1.0, "doi": 0.9, "https": 0.7, "http": 0.5}

# Access tier, by the brief's reproducibility requirement.
ACCESS: dict[str, dict[str, float]] = {
    "reproducible": {"open": 1.0, "free-key": 0.8, "paid": 0.1, "gated": 0.1, "unknown": 0.6},
    "checkable": {"open": 1.0, "free-key": 0.8, "paid": 0.4, "gated": 0.3, "unknown": 0.6},
}

# Primary evidence vs derivative reporting.
PRIMARY: dict[str, float] = {
    "arxiv": 0.9,  # the authors' own report (a preprint)
    "crossref": 0.8,
    "europepmc": 0.8,
    "wikipedia": 0.3,  # a tertiary reference
    "worldbank": 1.0,
    "data": 1.0,
    "primary": 1.0,
    "openalex": 0.8,
    "peer": 0.8,
    "practitioner": 0.5,
    "press": 0.3,
    "unknown": 0.4,
}

# Freshness against the brief's recency window.
FRESHNESS = {"any": 1.0, "unknown_date": 0.5, "in_window_min": 0.7, "near_window": 0.2, "stale": 0.05}

# Diversity: how many distinct works of this domain the run already uses -> score.
DIVERSITY: dict[int, float] = {0: 1.0, 1: 0.6}
DIVERSITY_MANY = 0.3

# At most this many chosen candidates from one domain per round while candidates from other domains are
# left; when only one domain's remain (a site-scoped brief, a local corpus) the budget fills from it.
DOMAIN_CAP = 2
MIN_TOTAL = 0.4  # below this, a candidate is not worth fetching whatever the budget
MIN_RELEVANCE = 0.2  # below this, a candidate is not about the sub-question (no key term, poor rank)
# A candidate far less relevant than the best one chosen in its round is not fetched to fill the budget.
RELEVANCE_SHARE = 0.6
DEFAULT_BUDGET = 4

RECENCY_RE = re.compile(r"^(any|([1-9][0-9]*)([dmy]))$")
_UNIT_DAYS = {"d": 1, "m": 30, "y": 365}


# ---------------------------------------------------------------------------- pure scoring


@dataclass(frozen=True)
class Facts:
    """What the scorer knows about one candidate, all derived from the candidate and the run."""

    kind: str  # web | openalex | worldbank
    source_type: str | None  # peer | primary | press | practitioner | data
    has_doi: bool
    scheme: str  # https | http | other
    access_tier: str | None
    published: date | None
    domain_uses: int  # distinct works from this domain the run already uses
    title: str = ""
    snippet: str = ""
    url: str = ""
    rank: int | None = None  # the search backend's rank, 1 first


@dataclass(frozen=True)
class Context:
    claim_type: str
    recency: str  # any | Nd | Nm | Ny
    as_of: date
    reproducibility: str = "reproducible"
    question: str = ""  # the sub-question's text: its key terms measure relevance
    site_terms: frozenset[str] = frozenset()  # terms in nearly every candidate's title (`title_boilerplate`)


@dataclass(frozen=True)
class Scores:
    relevance: float
    fit: float
    verifiability: float
    access: float
    freshness: float
    primary: float
    diversity: float
    total: float
    basis: dict[str, str] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in (*WEIGHTS, "total")}


def modality(kind: str, source_type: str | None) -> str:
    if kind in API_KINDS:
        return kind
    return source_type if source_type in FIT["factual"] else "unknown"


def recency_days(recency: str) -> int | None:
    """Days in a recency window (`any` -> None); BadInput on a malformed value."""
    match = RECENCY_RE.match(recency or "")
    if not match:
        raise BadInput(
            f"bad recency {recency!r}; expected any or N followed by d, m or y", code="bad-recency"
        )
    if match.group(1) == "any":
        return None
    return int(match.group(2)) * _UNIT_DAYS[match.group(3)]


def freshness(published: date | None, recency: str, as_of: date) -> tuple[float, str]:
    window = recency_days(recency)
    if window is None:
        return FRESHNESS["any"], "recency any"
    if published is None:
        return FRESHNESS["unknown_date"], "no date"
    age = (as_of - published).days
    if age <= 0:
        return 1.0, f"dated {published.isoformat()}"
    if age <= window:
        floor = FRESHNESS["in_window_min"]
        return round(1.0 - (1.0 - floor) * age / window, 4), f"{age} days old, within {recency}"
    if age <= 2 * window:
        return FRESHNESS["near_window"], f"{age} days old, outside {recency}"
    return FRESHNESS["stale"], f"{age} days old, far outside {recency}"


def question_terms(question: str) -> set[str]:
    """The folded key terms of a sub-question (stop words and one-letter words left out)."""
    return set(key_terms(question))


def title_boilerplate(titles: list[str]) -> frozenset[str]:
    """Terms in at least 80% of the titles (five or more): the site's name ("— Django 3.2.25 documentation"),
    which every page of a one-site search carries and so says nothing about which page answers."""
    if len(titles) < 5:
        return frozenset()
    counts: dict[str, int] = {}
    for title in titles:
        for term in {fold(w) for w in words(title)}:
            counts[term] = counts.get(term, 0) + 1
    return frozenset(t for t, c in counts.items() if c >= 0.8 * len(titles))


ASKED_IN_SNIPPET_RE = re.compile(r"[^.?!]{10,200}\?")
ASKED_COVERS = 0.75  # of the sub-question's key terms, for a question in a snippet to count as its title


def relevance(question: str, facts: Facts, site_terms: frozenset[str] = frozenset()) -> tuple[float, str]:
    """How well a candidate matches its sub-question, from what a searcher sees before fetching.

    Three quarters term match (the share of the question's key terms in the title, snippet and URL, with
    the title and URL counting as much as everything together, since a page named for the topic is the
    likeliest to hold it; a question the snippet asks in those words counts as a title), one quarter search
    rank (1 -> 1.0, 5 -> 0.63, 10 -> 0.43). The site's own name
    (`site_terms`, in nearly every candidate's title) is no match: every page of the site carries it.
    """
    wanted = (question_terms(question) - site_terms) or question_terms(question)
    # The URL path's words count (a page named for its topic), not a DOI suffix: an identifier, not a name.
    path = re.sub(r"10\.\d{4,9}/\S+", " ", re.sub(r"^[a-z]+://[^/]*", "", facts.url.lower()))
    headline = {fold(w) for w in words(f"{facts.title} {re.sub(r'[/._-]+', ' ', path)}")}
    # A question the snippet asks in the sub-question's words ("How do I map a table that has no primary
    # key?") is an FAQ entry's title: it names the page's topic as its title would.
    for asked in ASKED_IN_SNIPPET_RE.findall(facts.snippet):
        terms = {fold(w) for w in words(asked)}
        if wanted and len(wanted & terms) >= ASKED_COVERS * len(wanted):
            headline |= terms
    everything = headline | {fold(w) for w in words(facts.snippet)}
    rank = facts.rank if isinstance(facts.rank, int) and facts.rank > 0 else None
    rank_score = 1 / (1 + 0.15 * (rank - 1)) if rank else 0.5
    if not wanted:
        return round(0.5 + 0.25 * rank_score, 4), "no key terms in the sub-question"
    found = wanted & everything
    match = 0.5 * len(found) / len(wanted) + 0.5 * len(wanted & headline) / len(wanted)
    basis = f"{len(found)}/{len(wanted)} key terms in title, snippet or URL" + (
        f" ({', '.join(sorted(found)[:6])})" if found else ""
    )
    return round(0.75 * match + 0.25 * rank_score, 4), basis + (f"; rank {rank}" if rank else "; no rank")


def score(facts: Facts, ctx: Context) -> Scores:
    """The scores of one candidate: a pure function of its facts and the sub-question's context."""
    mod = modality(facts.kind, facts.source_type)
    fit = FIT[ctx.claim_type][mod]
    if facts.kind in API_KINDS:
        verif_key = "api"
    elif facts.has_doi:
        verif_key = "doi"
    else:
        verif_key = "https" if facts.scheme == "https" else "http"
    verifiability = VERIFIABILITY[verif_key]
    tier = facts.access_tier if facts.access_tier in ACCESS["reproducible"] else "unknown"
    access = ACCESS.get(ctx.reproducibility, ACCESS["reproducible"])[tier]
    fresh, fresh_basis = freshness(facts.published, ctx.recency, ctx.as_of)
    primary = PRIMARY[mod]
    diversity = DIVERSITY.get(facts.domain_uses, DIVERSITY_MANY)
    relevant, relevance_basis = relevance(ctx.question, facts, ctx.site_terms)
    parts = {
        "relevance": relevant,
        "fit": fit,
        "verifiability": verifiability,
        "access": access,
        "freshness": fresh,
        "primary": primary,
        "diversity": diversity,
    }
    total = round(sum(WEIGHTS[name] * value for name, value in parts.items()), 4)
    basis = {
        "relevance": relevance_basis,
        "fit": f"{ctx.claim_type} x {mod}",
        "verifiability": {
            "api": "re-issuable API request",
            "doi": "DOI",
            "https": "stable https URL",
            "http": "plain http URL",
        }[verif_key],
        "access": f"{tier} ({ctx.reproducibility})",
        "freshness": fresh_basis,
        "primary": mod,
        "diversity": f"{facts.domain_uses} work(s) from this domain already used",
    }
    return Scores(**{k: round(v, 4) for k, v in parts.items()}, total=total, basis=basis)


@dataclass
class Decision:
    index: int
    scores: Scores
    verdict: str  # chosen | rejected
    why: str
    decided_by: str = "scores"  # agent: its verdict_hint decided (within the floors); scores: the rules did


def decide(
    items: list[dict[str, Any]],
    scores: list[Scores],
    *,
    budget: int,
    domain_cap: int = DOMAIN_CAP,
    min_total: float = MIN_TOTAL,
    min_relevance: float = MIN_RELEVANCE,
) -> list[Decision]:
    """Choose at most `budget` candidates: a pure function of their facts and scores.

    `items[i]` carries `key` (canonical key), `domain`, `rank`, `verdict_hint`,
    `reason`, and optional `avoided` / `retrieved_as` (set by the caller from the
    brief and the run). Order of consideration: total score, then the agent's
    `choose` hint, then the backend rank, then input order. Duplicates by key
    keep the best-scored copy and name it in the others' why. The domain cap is a
    preference: a capped candidate is chosen after all when no candidate from
    another domain is left to fill the budget, and its why says so.

    The agent's judgement wins within stated floors: `reject` is always honoured;
    `choose` lifts both relevance rules (the floor `min_relevance`, and the share of
    the best chosen candidate's relevance), since relevance is the tool's count of
    key terms in a title and snippet and the agent has read more than that; it never
    lifts the score floor `min_total`, the budget, the brief's avoid list or a
    duplicate. `Decision.decided_by` says which decided: `agent` when a hint did,
    `scores` otherwise.
    """
    decisions: dict[int, Decision] = {}
    order = sorted(
        range(len(items)),
        key=lambda i: (
            -scores[i].total,
            items[i].get("verdict_hint") != "choose",
            items[i].get("rank") if isinstance(items[i].get("rank"), int) else 10**9,
            i,
        ),
    )
    first_by_key: dict[str, int] = {}
    chosen_by_domain: dict[str, int] = {}
    capped: list[tuple[int, int]] = []  # (position, index) held back by the domain cap
    chosen: list[int] = []

    overruled: dict[int, str] = {}  # the relevance rule the agent's `choose` lifted, by candidate

    def choose(i: int, position: int, note: str = "") -> None:
        s = scores[i]
        chosen.append(i)
        domain = items[i].get("domain") or ""
        chosen_by_domain[domain] = chosen_by_domain.get(domain, 0) + 1
        strong = sorted(WEIGHTS, key=lambda name: -getattr(s, name) * WEIGHTS[name])[:2]
        why = f"ranked {position} by score {s.total:.2f}; strongest: " + ", ".join(
            f"{n} {getattr(s, n):.2f} ({s.basis[n]})" for n in strong
        )
        if i in overruled:
            decisions[i] = Decision(
                i, s, "chosen", f"chosen on the agent's judgement over {overruled[i]}; {why}{note}", "agent"
            )
            return
        decisions[i] = Decision(i, s, "chosen", why + note)

    def too_weak(i: int) -> str | None:
        best = max((scores[c].relevance for c in chosen), default=0.0)
        if chosen and scores[i].relevance < RELEVANCE_SHARE * best:
            why = (
                f"relevance {scores[i].relevance:.2f} is far below the best chosen ({best:.2f}): "
                "not fetched to fill the budget"
            )
            if items[i].get("verdict_hint") == "choose":  # the agent's judgement wins over relevance
                share = f"the relevance share (relevance {scores[i].relevance:.2f}, best {best:.2f})"
                overruled[i] = f"{overruled[i]} and {share}" if i in overruled else share
                return None
            return why
        return None

    for position, i in enumerate(order, 1):
        item, s = items[i], scores[i]

        def reject(why: str, i: int = i, s: Scores = s) -> None:
            decisions[i] = Decision(i, s, "rejected", why)

        key = item.get("key")
        if key in first_by_key:
            keeper = first_by_key[key]
            reject(f"duplicate of candidate {keeper + 1} ({key})")
            continue
        if key:
            first_by_key[key] = i
        if item.get("verdict_hint") == "reject":
            decisions[i] = Decision(i, s, "rejected", "rejected on the agent's judgement", "agent")
            continue
        if item.get("avoided"):
            reject(f"the brief says to avoid {item['avoided']}")
            continue
        if item.get("retrieved_as"):
            reject(f"already retrieved for this sub-question as {item['retrieved_as']}")
            continue
        if s.relevance < min_relevance:
            floor = f"relevance {s.relevance:.2f} is below the floor {min_relevance:.2f}"
            if item.get("verdict_hint") != "choose":
                reject(f"{floor} ({s.basis.get('relevance')})")
                continue
            overruled[i] = f"the relevance floor ({floor})"
        if s.total < min_total:
            reject(f"score {s.total:.2f} is below the floor {min_total:.2f}")
            continue
        if len(chosen) >= budget:
            reject(f"ranked {position} by score {s.total:.2f}; the budget of {budget} source(s) is full")
            continue
        weak = too_weak(i)
        if weak:
            reject(weak)
            continue
        domain = item.get("domain") or ""
        if chosen_by_domain.get(domain, 0) >= domain_cap:
            capped.append((position, i))
            continue
        choose(i, position)
    for position, i in capped:  # the cap gives way when no other domain is left to fill the budget
        domain = items[i].get("domain") or ""
        if len(chosen) >= budget:
            why = f"domain cap reached: {domain_cap} already chosen from {domain}"
            if not any(items[c].get("domain") != domain for c in chosen) and len(chosen) >= budget:
                why += f"; the budget of {budget} source(s) is full"
            decisions[i] = Decision(i, scores[i], "rejected", why)
            continue
        weak = too_weak(i)
        if weak:
            decisions[i] = Decision(i, scores[i], "rejected", weak)
            continue
        choose(i, position, f"; domain cap of {domain_cap} lifted: no candidate from another domain is left")
    return [decisions[i] for i in range(len(items))]


# ---------------------------------------------------------------------------- facts from the world


def parse_published(published: Any, year: Any = None) -> date | None:
    """A date from an ISO date/datetime or a year (a year alone counts as its 1 July)."""
    for value in (published, year):
        if value is None or value == "":
            continue
        text = str(value).strip()
        try:
            return date.fromisoformat(text[:10])
        except ValueError:
            pass
        match = re.match(r"^(\d{4})(?:-(\d{2}))?", text)
        if match and 1000 <= int(match.group(1)) <= 9999:
            month = int(match.group(2)) if match.group(2) and 1 <= int(match.group(2)) <= 12 else 7
            return date(int(match.group(1)), month, 1)
    return None


def canonical_key(url: str, doi: str | None) -> str:
    if doi:
        found = extract_doi(doi)
        if found:
            return f"doi:{found.lower()}"
    return url_key(url)


def domain_of(url: str) -> str:
    return registrable_domain(url)


def load_candidates(payload: Any) -> list[dict[str, Any]]:
    """Candidates from FILE.json: a list, {"candidates": [...]}, or a `--json` envelope holding one."""

    if (
        isinstance(payload, dict)
        and isinstance(payload.get("data"), dict)
        and "candidates" in payload["data"]
    ):
        payload = payload["data"]["candidates"]
    elif isinstance(payload, dict) and "candidates" in payload:
        payload = payload["candidates"]
    problems = validate(payload, "candidates")
    if problems:  # a malformed input file is bad input (2), as a malformed brief is
        raise BadInput(
            f"the candidates file does not match candidates.schema.json ({len(problems)} problem(s))",
            code="bad-candidates",
            problems=problems,
        )
    return [dict(c) for c in payload]
