"""selection: the pure scoring and choosing functions (property-tested)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from research_engine.selection import scoring
from research_engine.selection.scoring import (
    DOMAIN_CAP,
    FIT,
    WEIGHTS,
    Context,
    Facts,
    decide,
    parse_published,
    score,
)

AS_OF = date(2025, 6, 1)
facts_st = st.builds(
    Facts,
    kind=st.sampled_from(["web", "openalex", "worldbank"]),
    source_type=st.sampled_from([None, "peer", "primary", "press", "practitioner", "data"]),
    has_doi=st.booleans(),
    scheme=st.sampled_from(["https", "http"]),
    access_tier=st.sampled_from([None, "open", "free-key", "paid", "gated"]),
    published=st.one_of(st.none(), st.dates(min_value=date(1990, 1, 1), max_value=date(2026, 1, 1))),
    domain_uses=st.integers(0, 5),
)
ctx_st = st.builds(
    Context,
    claim_type=st.sampled_from(sorted(FIT)),
    recency=st.sampled_from(["any", "30d", "18m", "5y"]),
    as_of=st.just(AS_OF),
    reproducibility=st.sampled_from(["reproducible", "checkable"]),
)


def test_weights_sum_to_one():
    assert abs(sum(WEIGHTS.values()) - 1.0) < 1e-9


@given(facts_st, ctx_st)
def test_total_is_the_weighted_sum_of_facets_in_range(facts, ctx):
    s = score(facts, ctx)
    assert 0.0 <= s.total <= 1.0
    assert abs(s.total - sum(WEIGHTS[k] * getattr(s, k) for k in WEIGHTS)) < 1e-3
    assert set(s.basis) == set(WEIGHTS)


@given(facts_st, ctx_st)
def test_scoring_is_deterministic(facts, ctx):
    assert score(facts, ctx) == score(facts, ctx)


@given(facts_st, ctx_st)
def test_open_access_never_scores_below_paid_or_gated(facts, ctx):
    open_total = score(replace(facts, access_tier="open"), ctx).total
    for tier in ("free-key", "paid", "gated", None):
        assert open_total >= score(replace(facts, access_tier=tier), ctx).total


@given(facts_st, ctx_st)
def test_a_domain_already_used_never_scores_higher(facts, ctx):
    assert score(replace(facts, domain_uses=0), ctx).total >= score(replace(facts, domain_uses=1), ctx).total
    assert score(replace(facts, domain_uses=1), ctx).total >= score(replace(facts, domain_uses=3), ctx).total


@given(facts_st, ctx_st)
def test_a_doi_never_lowers_the_score(facts, ctx):
    assert score(replace(facts, has_doi=True), ctx).total >= score(replace(facts, has_doi=False), ctx).total


@given(facts_st, ctx_st, st.integers(0, 4000), st.integers(0, 4000))
def test_fresher_never_scores_lower(facts, ctx, age_a, age_b):
    newer, older = sorted((age_a, age_b))
    a = score(replace(facts, published=AS_OF - timedelta(days=newer)), ctx)
    b = score(replace(facts, published=AS_OF - timedelta(days=older)), ctx)
    assert a.freshness >= b.freshness


def test_modality_fit_follows_the_claim_type():
    web = Facts("web", "press", False, "https", "open", None, 0)
    bank = Facts("worldbank", None, False, "https", "open", None, 0)
    quant = Context("quantitative", "any", AS_OF)
    assert score(bank, quant).fit == 1.0 and score(bank, quant).total > score(web, quant).total
    tech = Context("technical", "any", AS_OF)
    docs = Facts("web", "primary", False, "https", "open", None, 0)
    assert score(docs, tech).total > score(bank, tech).total


item_st = st.fixed_dictionaries(
    {
        "key": st.sampled_from([f"url:k{i}" for i in range(6)]),
        "domain": st.sampled_from(["a.org", "b.org", "c.org"]),
        "rank": st.one_of(st.none(), st.integers(1, 20)),
        "verdict_hint": st.sampled_from([None, None, "choose", "reject"]),
        "reason": st.one_of(st.none(), st.just("relevant")),
    }
)


@given(st.lists(st.tuples(item_st, facts_st), min_size=1, max_size=12), ctx_st, st.integers(1, 6))
def test_decide_respects_budget_dedup_domain_cap_and_explains_every_verdict(pairs, ctx, budget):
    items = [p[0] for p in pairs]
    scores = [score(p[1], ctx) for p in pairs]
    decisions = decide(items, scores, budget=budget)
    assert len(decisions) == len(items)
    chosen = [d for d in decisions if d.verdict == "chosen"]
    assert len(chosen) <= budget
    assert len({items[d.index]["key"] for d in chosen}) == len(chosen)
    for domain in {"a.org", "b.org", "c.org"}:
        mine = [d for d in chosen if items[d.index]["domain"] == domain]
        if len(mine) > DOMAIN_CAP:  # the cap gives way only when no other domain could fill the budget
            assert sum("cap of" in d.why and "lifted" in d.why for d in mine) == len(mine) - DOMAIN_CAP
            others = [d for d in decisions if items[d.index]["domain"] != domain and d.verdict == "rejected"]
            assert not any("budget" in d.why or "domain cap" in d.why for d in others)
    assert all(d.why for d in decisions)
    assert not any(items[d.index]["verdict_hint"] == "reject" for d in chosen)
    assert decide(items, scores, budget=budget) == decisions


@given(st.lists(st.tuples(item_st, facts_st), min_size=2, max_size=12), ctx_st)
def test_every_chosen_candidate_scores_at_least_any_rejected_for_budget(pairs, ctx):
    items = [p[0] for p in pairs]
    scores = [score(p[1], ctx) for p in pairs]
    decisions = decide(items, scores, budget=2)
    chosen_totals = [d.scores.total for d in decisions if d.verdict == "chosen"]
    over_budget = [d.scores.total for d in decisions if "budget" in d.why]
    if chosen_totals and over_budget:
        assert min(chosen_totals) >= max(over_budget)


def test_parse_published_accepts_dates_datetimes_and_years():
    assert parse_published("2024-03-05T10:00:00Z") == date(2024, 3, 5)
    assert parse_published(None, 2019) == date(2019, 7, 1)
    assert parse_published("2021-11") == date(2021, 11, 1)
    assert parse_published("not a date") is None


def test_the_sites_own_name_in_every_title_is_no_match():
    """On a one-site search every title ends "— Django 3.2.25 documentation": a release-notes page must not
    look relevant to a Django question for carrying the word Django."""
    titles = [
        f"{name} — Django 3.2.25 documentation"
        for name in ("Django 1.8.2 release notes", "How to use sessions", "Settings", "Models", "Migrations")
    ]
    site = scoring.title_boilerplate(titles)
    assert {"django", "documentation"} <= site and "session" not in site
    question = "How long does a Django session cookie last by default?"
    page = dict(kind="web", source_type=None, has_doi=False, scheme="http", access_tier=None, published=None)
    notes = scoring.Facts(
        **page, domain_uses=0, title=titles[0], url="http://127.0.0.1/releases/1.8.2.html", rank=1
    )
    sessions = scoring.Facts(
        **page, domain_uses=0, title=titles[1], url="http://127.0.0.1/topics/http/sessions.html", rank=5
    )
    assert scoring.relevance(question, notes, site)[0] < scoring.relevance(question, sessions, site)[0]
    assert scoring.title_boilerplate(titles[:4]) == frozenset()  # too few titles to tell


def test_a_question_the_snippet_asks_in_the_sub_questions_words_counts_as_its_title():
    """SQLAlchemy's FAQ titles each entry with its question; the search snippet carries it, the page title
    ("ORM Configuration") does not. Snippets as the corpus search returned them (sa-no-primary-key)."""
    question = "Can the SQLAlchemy ORM map a table that has no primary key?"
    page = dict(kind="web", source_type=None, has_doi=False, scheme="http", access_tier=None, published=None)
    faq = scoring.Facts(
        **page,
        domain_uses=0,
        title="ORM Configuration — SQLAlchemy 1.4 Documentation",
        url="http://127.0.0.1/faq/ormconfiguration.html",
        rank=5,
        snippet="Why is ORDER BY recommended with LIMIT (especially with subqueryload())? How do I map a "
        "table that has no primary key? The SQLAlchemy ORM, in order to map to a particular table, needs",
    )
    columns = replace(  # the page titled for the topic, first in the search
        faq,
        title="Mapping Table Columns — SQLAlchemy 1.4 Documentation",
        url="http://127.0.0.1/orm/mapping_columns.html",
        rank=1,
        snippet="This is so that when an ORM object is loaded or persisted, it can be placed in the identity "
        "map with an appropriate identity key.",
    )
    site = frozenset({"sqlalchemi", "1.4", "documentation"})  # every title of the site carries them
    # As relevant as the page titled for the topic (0.63 against 0.91 when the question was read as any text).
    assert scoring.relevance(question, faq, site)[0] >= scoring.relevance(question, columns, site)[0]
    # A question in other words is no title: "Why is ORDER BY recommended" covers none of the terms.
    other = replace(faq, snippet="Why is ORDER BY recommended with LIMIT (especially with subqueryload())?")
    assert scoring.relevance(question, other, site)[0] < scoring.relevance(question, faq, site)[0]
