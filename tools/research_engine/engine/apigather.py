"""The headless loop's rules for gathering from the data APIs (OpenAlex, World Bank) and the keyless
scholarly and reference sources (arXiv, Crossref, Europe PMC, Wikipedia).

What the loop asks here, per sub-question:

- `fits(modality, claim_type)`: is this API worth querying for the claim type?
  Read from `selection.FIT` (which mirrors docs/source-catalog.md): a modality is
  queried when its fit is at least `FIT_FLOOR` (OpenAlex: factual, technical,
  quantitative; World Bank: quantitative).
- `openalex_query(text)`: the sub-question's content words, a keyword query.
- World Bank: `match_countries(text, countries)` finds the countries and regions
  a sub-question names (World Bank country list names, the part before the comma
  of names like "Korea, Rep." when unambiguous, upper-case ISO3 codes, and the
  few common names in `ALIASES`); `indicator_words` keeps the words that could
  name a quantity; `rank_indicators` searches the indicator catalogue for them
  (whole-word hits in the name, more hits first, then the larger share of the
  name hit, then World Development Indicators, then the shorter name);
  `series_candidate` makes the chosen indicator x countries a Candidate whose URL
  is the exact series request (`parse_series_url` reads it back at retrieval).
- `load_countries` / `load_indicators`: the country list and the indicator
  catalogue, through the caller's client. Live runs use the 30-day cache files
  (`worldbank/countries.json` beside the adapter's `worldbank/indicators.json`);
  recorded and replayed runs fetch them through the cassette and never touch the
  cache, so a replay reads exactly what the recording read.

- Keyless sources: `route(modality, question)` says whether a source is asked and why (scholarly claim
  types to arXiv, Crossref and Europe PMC; definitions and background to Wikipedia), `keyless_query` the
  words sent, `best_full_text` which source of one work (same DOI) is retrieved: the best open full text.

Nothing here records into a run or decides what is selected; the loop records,
`selection` scores.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from research_engine import bounded
from research_engine.errors import BadInput
from research_engine.selection import FIT
from research_engine.settings import Settings
from research_engine.sources import arxiv, crossref, europepmc, wikipedia, worldbank
from research_engine.sources.candidate import Candidate
from research_engine.sources.keyless import Found
from research_engine.terms import STOP_WORDS
from research_engine.trace import atomic_write_text, iso
from research_engine.vocabulary import API_KINDS, Modality

FIT_FLOOR = 0.6
MAX_COUNTRIES = 3  # one series request names at most this many countries
INDICATORS_PER_SUB_QUESTION = 2
WDI = "World Development Indicators"
COUNTRIES_PER_PAGE = 400  # the whole country list (297 entries in 2021) in one page

# Common names the World Bank list spells differently (its names are matched as they are).
ALIASES = {
    "usa": "USA",
    "u.s.": "USA",
    "america": "USA",
    "united states of america": "USA",
    "uk": "GBR",
    "britain": "GBR",
    "great britain": "GBR",
    "russia": "RUS",
    "south korea": "KOR",
    "north korea": "PRK",
    "turkey": "TUR",
    "vietnam": "VNM",
    "laos": "LAO",
    "syria": "SYR",
    "iran": "IRN",
    "egypt": "EGY",
    "venezuela": "VEN",
}
# Words that describe the research rather than a quantity: never indicator keywords.
RESEARCH_WORDS = frozenset(
    """what which who how why when where does do did is are was were has have had been compare compared
    comparison change changed changes trend trends recent recently since between among year years period
    regarding state states stated say says said primary sources source official documentation standards
    data evidence counter limitations limitation exceptions exception apply applies according report
    reported reports figure figures latest level levels value values large larger largest small smaller
    high higher low lower much many country countries""".split()  # noqa: SIM905 -- a word block reads better than 80 quoted words
)
# Words that hit too many indicator names to choose one on their own.
WEAK_WORDS = frozenset(
    "total rate share annual current number per average percent ratio index us$ constant growth lcu".split()  # noqa: SIM905
)
_WORD_RE = re.compile(r"[\w$%]+(?:\.\w+)*")


def parse_sources(text: str | list[str] | None) -> list[str]:
    """`web,openalex,worldbank,arxiv,...` (any order, any subset) as a list in canonical order."""
    if text is None:
        return list(Modality)
    items = text if isinstance(text, list) else re.split(r"[,\s]+", text)
    names = [i.strip().lower() for i in items if i and i.strip()]
    unknown = [n for n in names if n not in tuple(Modality)]
    if unknown or not names:
        raise BadInput(
            f"--sources takes a comma-separated list of {', '.join(Modality)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else ""),
            code="bad-sources",
            field="sources",
        )
    return [s for s in Modality if s in names]


def fits(modality: str, claim_type: str) -> bool:
    return FIT.get(claim_type, FIT["factual"]).get(modality, 0.0) >= FIT_FLOOR


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower())


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def openalex_query(text: str, limit: int = 6) -> str:
    """The sub-question's first content words: OpenAlex ranks works by them."""

    out: list[str] = []
    for word in _words(text):
        if word in STOP_WORDS or word in RESEARCH_WORDS or len(word) < 2 or word in out:
            continue
        out.append(word)
    return " ".join(out[:limit])


# ---------------------------------------------------------------------------- countries


def _cache_file(name: str, settings: Settings) -> Path:
    return settings.cache_root / "worldbank" / name


def load_countries(client: Any, *, use_cache: bool, settings: Settings) -> list[dict[str, Any]]:
    """[{id (ISO3), iso2, name, aggregate}] from the World Bank country list."""

    path = _cache_file("countries.json", settings)
    if use_cache and path.is_file():
        try:
            cached = bounded.load_json(bounded.read_bytes(path), "country cache")
            if time.time() - float(cached.get("fetched_epoch", 0)) < worldbank.CATALOGUE_TTL_SECONDS:
                return list(cached["countries"])
        except (BadInput, OSError, ValueError, KeyError, AttributeError, TypeError):
            pass  # a damaged cache is simply refetched
    _, _, rows = worldbank.fetch_pages(
        "/country",
        {"format": "json", "per_page": str(COUNTRIES_PER_PAGE)},
        "the country list",
        client,
        settings,
    )
    countries = [
        {
            "id": str(r.get("id") or "").upper(),
            "iso2": str(r.get("iso2Code") or "").upper(),
            "name": " ".join(str(r.get("name") or "").split()),
            "aggregate": str((r.get("region") or {}).get("value") or "").strip() == "Aggregates",
        }
        for r in rows
        if r.get("id") and r.get("name")
    ]
    if use_cache:
        atomic_write_text(path, json.dumps({"fetched_epoch": time.time(), "countries": countries}))
    return countries


def _phrase_re(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])")


def match_countries(text: str, countries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The countries and regions `text` names, in order of first mention (a series asks for the first
    MAX_COUNTRIES). Each match is {id, name, said}; the words of `said` are not indicator keywords.
    """
    lowered = text.lower()
    by_id = {c["id"]: c for c in countries}
    bases: dict[str, list[str]] = {}
    for c in countries:
        if "," in c["name"]:
            bases.setdefault(c["name"].split(",")[0].strip().lower(), []).append(c["id"])
    phrases: list[tuple[str, str]] = []
    for c in countries:
        name = c["name"].lower()
        if c["aggregate"] and " " not in name:
            continue  # "World" and the like: too common a word to mean the aggregate
        phrases.append((name, c["id"]))
    phrases += [(base, ids[0]) for base, ids in bases.items() if len(ids) == 1]
    phrases += [(alias, code) for alias, code in ALIASES.items() if code in by_id]
    found: dict[str, tuple[int, str]] = {}
    # Longest phrase first, and a matched span is blanked: "Papua New Guinea" is not also "Guinea".
    for phrase, code in sorted(phrases, key=lambda p: -len(p[0])):
        match = _phrase_re(phrase).search(lowered)
        if match and code not in found:
            found[code] = (match.start(), phrase)
            lowered = lowered[: match.start()] + " " * len(phrase) + lowered[match.end() :]
    for match in re.finditer(r"\b[A-Z]{3}\b", text):
        code = match.group(0)
        if code in by_id and not by_id[code]["aggregate"] and code not in found:
            found[code] = (match.start(), code.lower())
    ordered = sorted(found.items(), key=lambda item: item[1][0])
    return [{"id": code, "name": by_id[code]["name"], "said": said} for code, (_, said) in ordered]


# ---------------------------------------------------------------------------- indicators


def load_indicators(client: Any, *, use_cache: bool, settings: Settings) -> dict[str, Any]:
    """The indicator catalogue as the adapter keeps it ({indicators, fetched_at, ...})."""

    if use_cache:
        return worldbank.load_catalogue(client=client, settings=settings)
    # The adapter's own request (`load_catalogue`), without its cache: the cassette must hold it.
    _, meta, rows = worldbank.fetch_pages(
        "/indicator",
        {"format": "json", "per_page": str(worldbank.CATALOGUE_PER_PAGE)},
        "the indicator list",
        client,
        settings,
    )
    return {
        "fetched_at": iso(),
        "total": meta.get("total"),
        "truncated": bool(meta.get("truncated")),
        "indicators": [worldbank.parse_indicator(r).to_dict() for r in rows if r.get("id")],
        "from_cache": False,
    }


def indicator_words(text: str, said: list[str]) -> list[str]:
    """Content words of `text` that could name a quantity (not stop words, countries or research words)."""

    country_words = {w for phrase in said for w in _words(phrase)}
    out: list[str] = []
    for word in _words(text):
        if word in STOP_WORDS or word in RESEARCH_WORDS or word in country_words or len(word) < 2:
            continue
        if word.isdigit():
            continue  # years and counts are not indicator names
        stem = _stem(word)
        if stem not in out:
            out.append(stem)
    return out


def rank_indicators(
    indicators: list[dict[str, Any]], words: list[str], limit: int = INDICATORS_PER_SUB_QUESTION
) -> list[dict[str, Any]]:
    """Indicators whose name holds some of `words` as whole words (see the module docstring for the order)."""
    wanted = set(words)
    if not wanted - WEAK_WORDS:
        return []
    scored = []
    for row in indicators:
        name_words = {_stem(w) for w in _words(str(row.get("name") or ""))}
        hits = wanted & name_words
        if not hits or not hits - WEAK_WORDS:
            continue
        scored.append(
            (
                -len(hits),
                -len(hits) / max(1, len(name_words)),
                row.get("source") != WDI,
                len(str(row.get("name") or "")),
                str(row.get("id")),
                row,
            )
        )
    scored.sort(key=lambda item: item[:5])
    return [item[-1] for item in scored[:limit]]


def series_url(countries: list[str], indicator: str, base: str) -> str:
    """The exact first request `worldbank.fetch_series(countries, indicator)` sends (every year), under the
    API base `base` (`Settings.base_url("worldbank")`)."""

    joined = ";".join(countries)
    return (
        f"{base}/country/{quote(joined, safe=';')}/indicator/"
        f"{quote(indicator, safe='.;')}?format=json&per_page={worldbank.PER_PAGE}&page=1"
    )


def parse_series_url(url: str) -> tuple[list[str], str, str | None, int | None]:
    """(countries, indicator, date, mrv) of a series request URL (the inverse of `series_url`)."""
    parts = urlsplit(url)
    match = re.search(r"/country/([^/]+)/indicator/([^/?]+)$", parts.path)
    if not match:
        raise BadInput(f"{url} is not a World Bank series request", code="bad-series-url")
    params = dict(parse_qsl(parts.query))
    mrv = params.get("mrv")
    countries = [c for c in unquote(match.group(1)).split(";") if c]
    return countries, unquote(match.group(2)), params.get("date"), int(mrv) if mrv and mrv.isdigit() else None


def series_candidate(
    indicator: dict[str, Any], countries: list[dict[str, Any]], rank: int, base: str
) -> Candidate:
    names = ", ".join(c["name"] for c in countries)
    return Candidate(
        title=f"World Bank: {indicator.get('name')}, {names}",
        url=series_url([c["id"] for c in countries], str(indicator["id"]), base),
        snippet=str(indicator.get("source_note") or "")[:500],
        rank=rank,
        backend="worldbank",
        kind="worldbank",
        access_tier="open",
        source_type="data",
        extra={
            "indicator": indicator["id"],
            "countries": [c["id"] for c in countries],
            "source": indicator.get("source"),
        },
    )


# ---------------------------------------------------------------------------- keyless sources

KEYLESS_SEARCH: dict[str, Callable[..., Found]] = {
    Modality.ARXIV: arxiv.search,
    Modality.CROSSREF: crossref.search,
    Modality.EUROPEPMC: europepmc.search,
    Modality.WIKIPEDIA: wikipedia.search,
}
SCHOLARLY = (Modality.ARXIV, Modality.CROSSREF, Modality.EUROPEPMC)
HOLDS: dict[str, str] = {
    Modality.ARXIV: "preprints in physics, mathematics, computer science and related fields",
    Modality.CROSSREF: "the metadata of every work with a DOI",
    Modality.EUROPEPMC: "life-science literature, with open-access full text",
    Modality.WIKIPEDIA: "encyclopedic background and definitions",
}
# A sub-question asking what something is, or for its background: Wikipedia's kind of question.
_BACKGROUND = re.compile(
    r"^\s*(what|who)\s+(is|are|was|were)\b|\b(define|definition|meaning of|overview|background|history of|"
    r"known as|refers? to)\b",
    re.IGNORECASE,
)


def route(modality: str, question: dict[str, Any]) -> tuple[bool, str]:
    """Whether a keyless source is asked for this sub-question, and why (the selection log says it).

    Scholarly sources (arXiv, Crossref, Europe PMC, like OpenAlex) take the claim types they fit
    (`selection.FIT` at least `FIT_FLOOR`) and any sub-question searched from the source-type angle;
    Wikipedia takes definitions and background: a "what is" question, or one searched for its entity."""
    claim_type, angle, text = question["claim_type"], question.get("angle"), question["text"]
    if modality in SCHOLARLY:
        if fits(modality, claim_type):
            return True, f"a {claim_type} claim is scholarly: {modality} holds {HOLDS[modality]}"
        if angle == "source-type":
            return True, f"the source-type angle asks for primary sources: {modality} holds {HOLDS[modality]}"
        return False, f"a {claim_type} claim is not one {modality} fits"
    if _BACKGROUND.search(text):
        return True, "a definition or background question: Wikipedia holds " + HOLDS[Modality.WIKIPEDIA]
    if angle == "entity":
        return True, "the entity angle asks what the subject is: Wikipedia holds " + HOLDS[Modality.WIKIPEDIA]
    return False, "not a definition or background question"


def keyless_query(modality: str, text: str) -> str:
    """The sub-question's content words (as for OpenAlex); Wikipedia gets the first four (short titles)."""
    return openalex_query(text, limit=4 if modality == Modality.WIKIPEDIA else 6)


# The kind of full text a candidate leads to, best first: Europe PMC's open-access article (JATS), an
# arXiv PDF, an OpenAlex open-access copy; metadata and abstracts last.
FULL_TEXT_RANK = {"jats": 3, "pdf": 2, "oa": 1}


def full_text_rank(candidate: dict[str, Any]) -> int:
    extra = candidate.get("extra") or {}
    if candidate.get("kind") == "openalex" and extra.get("oa_url"):
        return FULL_TEXT_RANK["oa"]
    return FULL_TEXT_RANK.get(str(extra.get("full_text") or ""), 0)


def best_full_text(chosen: dict[str, Any], candidates: list[dict[str, Any]]) -> dict[str, Any]:
    """Among the candidates of one work (same DOI key) from every source, the one with the best open full
    text; the chosen one when none is better (one work, one source: `selection` deduplicates by DOI)."""
    if not chosen.get("doi"):
        return chosen
    same = [
        c
        for c in candidates
        if c.get("canonical_key") == chosen.get("canonical_key") and (c.get("kind") or "web") in API_KINDS
    ]
    best = max(same, key=full_text_rank, default=chosen)
    return best if full_text_rank(best) > full_text_rank(chosen) else chosen


def with_extra(chosen: dict[str, Any], offered: list[dict[str, Any]]) -> dict[str, Any]:
    """A chosen candidate (as the selection log keeps it) with the backend's extras it was offered with
    (an arXiv id, a Europe PMC record key), which retrieval needs and the log leaves out."""
    kind = chosen.get("kind") or "web"
    for cand in offered:
        if cand.get("url") == chosen.get("url") and (cand.get("kind") or "web") == kind:
            return {**chosen, "extra": cand.get("extra") or {}}
    return chosen
