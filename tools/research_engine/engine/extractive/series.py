"""Numeric series as claims: World Bank data points stated verbatim, each by one sub-question.

Owns `SeriesPoint` and `series_points` (the non-null points of every data series in
the fetched passages, e.g. "Japan, GDP (current US$), 2019: 5081769542379.77"),
`data_owner` (which quantitative sub-question of the plan states a series' latest or
earliest point) and `data_claims`: for a quantitative sub-question, per series the
latest non-null point and, for the time angle, the earliest one in the recency window
(ten years for "any"), at most MAX_DATA_CLAIMS. A point's passage is its own claim text
and quote, so no number is ever reworded. Pure; sentence claims are `picking`'s.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from research_engine.engine.extractive.targets import Target, plan_claim_types, plan_targets
from research_engine.engine.extractive.text import tokens
from research_engine.engine.models import ClaimDraft, SourceText
from research_engine.vocabulary import Angle, ClaimType, Confidence

# A data-series point as `sources.record` writes it: "<country>, <indicator>, <date>: <value>".
SERIES_POINT_RE = re.compile(
    r"^(?P<series>.+), (?P<date>\d{4}(?:[QM]\d{1,2})?): (?P<value>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$"
)
MAX_DATA_CLAIMS = 4  # data points per sub-question: a few latest values (and a trend's start), not a table
TREND_YEARS = 10  # the trend window when the brief's recency is "any"
DATA_ANGLES: tuple[str, ...] = (Angle.ENTITY, Angle.SOURCE_TYPE, Angle.TIME)
DATA_ROLE_ANGLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "latest": ((Angle.ENTITY, Angle.SOURCE_TYPE), (Angle.TIME,)),
    "earliest": ((Angle.TIME,), (Angle.ENTITY, Angle.SOURCE_TYPE)),
}


@dataclass(frozen=True)
class SeriesPoint:
    """One non-null point of a data series, as its passage says it."""

    series: str  # "Japan, GDP (current US$)": everything before the date
    date: str  # "2019", "2019Q1", "2019M01"
    text: str  # the whole passage, verbatim
    ref: str

    @property
    def year(self) -> int:
        return int(self.date[:4])


def series_points(sources: list[SourceText]) -> dict[str, list[SeriesPoint]]:
    """Non-null points of every data series in `sources` (passages of kind "data" shaped like
    "Japan, GDP (current US$), 2019: 5081769542379.77"), oldest first, series in first-seen order.

    Nulls ("no value reported (null)") do not match: a point without a value states nothing.
    """
    out: dict[str, list[SeriesPoint]] = {}
    for source in sources:
        for passage in source.passages:
            if passage.kind != "data":
                continue
            match = SERIES_POINT_RE.match(passage.text)
            if match:
                point = SeriesPoint(match.group("series"), match.group("date"), passage.text, source.ref)
                out.setdefault(point.series, []).append(point)
    for points in out.values():
        points.sort(key=lambda p: (p.date, p.ref))  # stable: equal dates keep the sources' order
    return out


def window_years(recency: str | None) -> int:
    """The brief's recency as whole years (at least one); TREND_YEARS for "any" (the time angle
    then asks what changed "recently", which a point from the 1960s does not answer)."""
    match = re.fullmatch(r"(\d+)([dmy])", str(recency or "").strip())
    if not match:
        return TREND_YEARS
    n, unit = int(match.group(1)), match.group(2)
    return max(1, n if unit == "y" else math.ceil(n / 12) if unit == "m" else 1)


def _earliest(points: list[SeriesPoint], years: int) -> SeriesPoint | None:
    """The earliest point of the span at most `years` before the latest one."""
    inside = [p for p in points if p.year >= points[-1].year - years]
    return inside[0] if inside and inside[0].date != points[-1].date else None


def data_owner(targets: list[Target], kinds: list[str], series_terms: set[str], role: str, me: int) -> int:
    """The sub-question that states a series' `role` point ("latest" or "earliest").

    Among the plan's quantitative sub-questions sharing a term with the series name, the latest
    point goes to a direct question (entity, source-type) before the time angle, the earliest
    (a trend's start) to the time angle first; then the better term match, then plan order.
    The counter angle states no data point. Pure, like `targets.owner`: one sub-question per point.
    When no quantitative question names the series, it was fetched for `me`, which states it.
    """
    groups = DATA_ROLE_ANGLES[role]
    scored = []
    for i, target in enumerate(targets):
        if kinds[i] != ClaimType.QUANTITATIVE or target.angle not in DATA_ANGLES:
            continue
        matched = target.terms & series_terms
        if not matched:
            continue
        rank = next((g for g, angles in enumerate(groups) if target.angle in angles), len(groups))
        score = sum(2.0 if t in target.focus else 1.0 for t in matched) / math.sqrt(max(1, len(target.terms)))
        scored.append((rank, -round(score, 6), i))
    return min(scored)[2] if scored else me


def data_claims(brief: dict[str, Any], sq: dict[str, Any], sources: list[SourceText]) -> list[ClaimDraft]:
    """Data-series points as claims: each one's text and quote is the point's passage, verbatim.

    Only for a quantitative sub-question. Per series, the latest non-null point and, for a
    trend, the earliest non-null point in the recency window before it, each given to one
    sub-question of the plan (`data_owner`); at most MAX_DATA_CLAIMS, latest points first.
    """
    if str(sq.get("claim_type") or "") != ClaimType.QUANTITATIVE:
        return []
    by_series = series_points(sources)
    if not by_series:
        return []
    targets, me = plan_targets(brief, sq)
    kinds = plan_claim_types(brief, sq, len(targets), me)
    years = window_years(brief.get("recency"))
    picked: list[SeriesPoint] = []
    for role in ("latest", "earliest"):
        for series, points in by_series.items():
            if data_owner(targets, kinds, set(tokens(series)), role, me) != me:
                continue  # another sub-question of the plan states this point
            point = points[-1] if role == "latest" else _earliest(points, years)
            if point is not None and point.text not in {p.text for p in picked}:
                picked.append(point)
    drafts = []
    for point in picked[:MAX_DATA_CLAIMS]:
        refs = list(dict.fromkeys(p.ref for p in by_series[point.series] if p.text == point.text))
        drafts.append(
            ClaimDraft(
                text=point.text, evidence=[(ref, point.text) for ref in refs], confidence=Confidence.HIGH
            )
        )
    return drafts
