"""Grounding checks as pure functions: is this quote in that text, are these numbers in that quote?

Used by the claims gate at entry (`claims add`) and by the verifier against its
fresh copy. Nothing here reads files or the network; callers pass text in.

- `normalize`: the one normalization both sides of a comparison go through:
  Unicode NFKC (per character cluster, so offsets map back to the original),
  curly quotes and primes to straight quotes, every dash and minus to `-`,
  invisible characters (soft hyphen, zero-width) dropped, runs of whitespace to
  one space, no space inside brackets or before closing punctuation (readers
  space inline markup differently: "( integer )" and "(integer)" are one text),
  ends stripped. Case is kept: a quote is verbatim.
- `find_quote`: exact match first, then a match after normalization; when the
  quote is not there, the closest window of the text and its similarity.
- `numbers_in` / `numbers_supported`: numbers with scale words (thousand,
  million, billion, trillion and their short forms), percentages and currency,
  compared by value so formatting does not matter (1,200 == 1200;
  3.5 million == 3,500,000; 12% == 12 percent). Rounding is NOT tolerated: a
  claim must carry the quote's number, not a derived one.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

# Characters folded by `normalize` beyond NFKC.
_QUOTE_MAP = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "\u2035": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u2036": '"',
    "\u00ab": '"',
    "\u00bb": '"',
    "\u2039": "'",
    "\u203a": "'",
    "`": "'",
    "\u00b4": "'",
}
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d"
_INVISIBLE = {"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
_NO_SPACE_AFTER = frozenset("([{")
_NO_SPACE_BEFORE = frozenset(")]},.;:!?")


def _fold_unit(unit: str) -> str:
    out = []
    for ch in unicodedata.normalize("NFKC", unit):
        if ch in _INVISIBLE:
            continue
        if ch in _DASHES:
            out.append("-")
        else:
            out.append(_QUOTE_MAP.get(ch, ch))
    return "".join(out)


def _clusters(text: str) -> list[tuple[int, int]]:
    """(start, end) of each base character with its following combining marks."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        spans.append((i, j))
        i = j
    return spans


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """`normalize(text)` plus, for each output character, the index in `text` it came from."""
    out: list[str] = []
    origin: list[int] = []
    pending_space = False
    for start, end in _clusters(text):
        folded = _fold_unit(text[start:end])
        for ch in folded:
            if ch.isspace():
                pending_space = bool(out) and out[-1] not in _NO_SPACE_AFTER
                continue
            if pending_space and ch not in _NO_SPACE_BEFORE:
                out.append(" ")
                origin.append(start)
            pending_space = False
            out.append(ch)
            origin.append(start)
    return "".join(out), origin


def normalize(text: str) -> str:
    """NFKC, straight quotes, `-` for every dash, no invisible characters, single spaces, stripped."""
    return normalize_with_map(text)[0]


@dataclass(frozen=True)
class QuoteMatch:
    found: bool
    match: str | None  # "exact" | "normalized" | None
    score: float  # 1.0 exact; similarity of the matched or closest window otherwise
    start: int | None  # offsets in the searched text (the original, not the normalized one)
    end: int | None
    closest: str | None  # the closest window of the text when not found

    def to_dict(self) -> dict:
        return {
            "found": self.found,
            "match": self.match,
            "score": self.score,
            "start": self.start,
            "end": self.end,
            "closest": self.closest,
        }


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


_WORD_RE = re.compile(r"\w+", re.UNICODE)


def closest_window(quote: str, text: str) -> tuple[float, int, int] | None:
    """(similarity, start, end) of the window of `text` most like `quote`, in normalized offsets.

    Both arguments are normalized text. Windows are runs of as many words as the
    quote has; they are ranked by shared words (a sliding multiset, linear in the
    text) and the best few are scored with difflib, so long documents stay cheap.
    """
    q_words = [w.casefold() for w in _WORD_RE.findall(quote)]
    t_matches = list(_WORD_RE.finditer(text))
    if not q_words or not t_matches:
        return None
    k = min(len(q_words), len(t_matches))
    wanted = Counter(q_words)
    window: Counter[str] = Counter()
    overlap = 0
    ranked: list[tuple[int, int]] = []  # (overlap, first word index)
    for i, m in enumerate(t_matches):
        w = m.group().casefold()
        window[w] += 1
        if window[w] <= wanted.get(w, 0):
            overlap += 1
        if i >= k:
            old = t_matches[i - k].group().casefold()
            if window[old] <= wanted.get(old, 0):
                overlap -= 1
            window[old] -= 1
        if i >= k - 1:
            ranked.append((overlap, i - k + 1))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    best: tuple[float, int, int] | None = None
    for _, first in ranked[:8]:
        start = t_matches[first].start()
        end = t_matches[first + k - 1].end()
        score = _similarity(quote, text[start:end])
        if best is None or score > best[0]:
            best = (score, start, end)
    return best


def find_quote(quote: str, text: str) -> QuoteMatch:
    """Find `quote` in `text`: exactly, or after `normalize`; else report the closest window."""
    if quote and quote.strip() and quote in text:
        start = text.index(quote)
        return QuoteMatch(True, "exact", 1.0, start, start + len(quote), None)
    norm_quote = normalize(quote)
    norm_text, origin = normalize_with_map(text)
    if not norm_quote:
        return QuoteMatch(False, None, 0.0, None, None, None)
    at = norm_text.find(norm_quote)
    if at >= 0:
        start = origin[at]
        last = origin[at + len(norm_quote) - 1]
        end = last + 1
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1
        score = round(_similarity(quote, text[start:end]), 4)
        return QuoteMatch(True, "normalized", score, start, end, None)
    near = closest_window(norm_quote, norm_text)
    if near is None:
        return QuoteMatch(False, None, 0.0, None, None, None)
    score, n_start, n_end = near
    start, end = origin[n_start], origin[n_end - 1] + 1
    return QuoteMatch(False, None, round(score, 4), start, end, text[start:end])


# ---------------------------------------------------------------------------- numbers

SCALE_WORDS: dict[str, float] = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
    "t": 1e12,
}
# Short scale forms count only glued to the number ("3.5bn", "50k"); the one-letter m, b and t
# only after a currency ("$3.5m"). Spelled-out words may follow a space ("3.5 million").
PERCENT_WORDS = ("%", "percent", "per cent", "pct")
CURRENCY_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CNY", "INR", "CHF", "CAD", "AUD")

_NUMBER_RE = re.compile(
    r"""
    (?P<cur>US\$|[$€£¥₹])?\s?
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?P<scale>\s?(?:thousand|million|billion|trillion)s?\b|(?:mln|mn|bn|tn|k|m|b|t)\b)?
    (?P<unit>\s?(?:%|per\s?cent\b|percent\b|pct\b|percentage\spoints?\b|pp\b)
      |\s(?:USD|EUR|GBP|JPY|CNY|INR|CHF|CAD|AUD)\b)?
    """,
    re.VERBOSE | re.IGNORECASE,
)


@dataclass(frozen=True)
class Number:
    raw: str  # as written
    value: float  # mantissa times scale (sign dropped: direction is usually said in words)
    mantissa: float
    scale: str | None  # "million", ...
    unit: str | None  # "%", "pp", "USD", ...

    def same_as(self, other: Number) -> bool:
        if self.unit and other.unit and self.unit != other.unit:
            return False
        return _close(self.value, other.value)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _scale_name(token: str) -> str | None:
    token = token.strip().lower().rstrip("s") if token else ""
    if not token:
        return None
    for name in ("thousand", "million", "billion", "trillion"):
        if token == name:
            return name
    factor = SCALE_WORDS.get(token)
    return {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}.get(factor) if factor else None


def numbers_in(text: str) -> list[Number]:
    """Every number in `text` with its scale and unit, in order.

    A digit run glued to letters on its left is part of a name, not a number
    (COVID-19, G20, Python3), and is skipped.
    """
    norm = normalize(text)
    out: list[Number] = []
    for m in _NUMBER_RE.finditer(norm):
        start = m.start() if m.group("cur") else m.start("num")
        before = norm[:start]
        if before and (before[-1].isalnum() or before[-1] == "_" or re.search(r"[A-Za-z]-$", before)):
            continue  # part of a name (COVID-19, G20) or of a longer number (3.11.2)
        if re.search(r"\d\.$", before):
            continue  # the tail of a dotted version (3.11.2)
        currency = CURRENCY_SYMBOLS.get(m.group("cur") or "")
        scale_token = (m.group("scale") or "").strip().lower()
        end = m.end("scale") if scale_token else m.end("num")
        dropped_scale = scale_token in {"m", "b", "t"} and not currency
        if dropped_scale:
            scale_token = ""  # "5m" is more often metres than millions; "$5m" is millions
            end = m.end("num")
        scale = _scale_name(scale_token)
        unit_raw = "" if dropped_scale else (m.group("unit") or "").strip().lower()
        compact = unit_raw.replace(" ", "")
        unit: str | None
        if compact in ("%", "percent", "pct"):
            unit = "%"
        elif compact.startswith("percentagepoint") or compact == "pp":
            unit = "pp"
        elif compact.upper() in CURRENCY_CODES:
            unit = compact.upper()
        else:
            unit = currency
        if unit_raw:
            end = m.end("unit")
        mantissa = float(m.group("num").replace(",", ""))
        factor = SCALE_WORDS[scale] if scale else 1.0
        out.append(
            Number(
                raw=norm[start:end].strip(),
                value=mantissa * factor,
                mantissa=mantissa,
                scale=scale,
                unit=unit,
            )
        )
    return out


def numbers_supported(claim: str, quote: str) -> tuple[bool, list[str]]:
    """Is every number in `claim` present in `quote` (by value, formatting aside)?

    Returns (ok, the claim's numbers that the quote does not carry, as written).
    A number with a scale word in one text and only its mantissa in the other
    ("3.5 million" vs a table cell "3.5" under "millions") is accepted, because
    the quote shows the same figure; two different scales never match.
    """
    quote_numbers = numbers_in(quote)
    missing: list[str] = []
    for number in numbers_in(claim):
        if not any(_supports(q, number) for q in quote_numbers):
            missing.append(number.raw)
    return (not missing), missing


def _supports(quoted: Number, claimed: Number) -> bool:
    if quoted.same_as(claimed):
        return True
    if quoted.unit != claimed.unit:
        return False  # the scale-less fallback needs the same unit: "12 million" is not "12%"
    one_side_unscaled = (quoted.scale is None) != (claimed.scale is None)
    return one_side_unscaled and _close(quoted.mantissa, claimed.mantissa)
