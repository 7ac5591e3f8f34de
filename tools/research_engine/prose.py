"""A deliverable's prose as the sentence-support check reads it: sentences, the citations that cover them,
and the numbers, names and code tokens they state.

- A citation covers its own sentence and the uncited sentences just before it in the same block ("WAL
  permits readers and writers at once. It can do this because ... [CLM-08]" is one group, held to CLM-08).
  A sentence after the block's last citation that states a fact (six words, or a number) is uncited.
- Numbers keep their unit and scale: "2 GB" is not "2 MB", "1.5 million" is not "1.5", "1,000" is "1000",
  "10%" is "10 percent"; a dotted version (3.7.0) is compared as written. A number written without a unit
  matches the same number with any unit.
- Names are capitalised words that do not open their sentence, acronyms and CamelCase; code tokens are
  `backticked` spans, `call()`, snake_case, CONSTANT_CASE, dotted.names and --flags.

`support` judges each sentence with these; this module only reads text. Pure and linear in the text.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

CLAIM_REF_RE = re.compile(r"\[?\bCLM-[0-9]{2,}\b\]?")
ASIDES_RE = re.compile(r"^\s*(?:\([^()]*\)\s*)+$")  # parentheticals only
LEADING_CITATIONS_RE = re.compile(r"^(?:\[?\bCLM-[0-9]{2,}\b\]?[\s,;]*)+")
ID_RE = re.compile(r"\b(?:SQ-[0-9]{2,}(?:/SRC-[0-9]{2,})?|CLM-[0-9]{2,})\b")
MARKDOWN_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|])")
# An HTML tag (a name, then attributes), comment or autolink ("<https://...>", "<a@b.org>"); a repr such as
# "<Response [200]>" is text, kept.
TAG_RE = re.compile(
    r"<!--.*?-->|<![A-Za-z][^<>\n]*>|<[A-Za-z][\w+.-]*:[^<>\s]*>|<[^<>\s@]+@[^<>\s]+>|</?[A-Za-z][\w:-]*"
    r"""(?:\s+[A-Za-z_:][\w:.-]*(?:\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|[^\s<>"']+))?)*\s*/?>"""
)
URL_RE = re.compile(r"\b(?:https?|doi):\S+")
LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
EMPHASIS_RE = re.compile(r"(\*\*|__|\*|~~)")
BACKTICK_RE = re.compile(r"`([^`]+)`")
# A sentence ends at . ! or ? followed by space and something that is not a lower-case letter.
SENTENCE_END_RE = re.compile(
    r"(?<=[.!?])[\"'”’)\]]*\s+(?=[^\sa-z])"
    # A citation ends its sentence even when the quote it closes ends in code with no full stop ("...: $ tig
    # --word-diff=plain [CLM-01] `ignore-space` (mixed): Ignore ..."), when a capital, code or quote follows.
    r"|(?:(?<=CLM-\d\d\])|(?<=CLM-\d\d\d\]))\s+(?=[`A-Z\"“])"
)
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig.", "dr.", "mr.", "ms.")
FACT_MIN_WORDS = 6

NUMBER_RE = re.compile(
    r"(?<![\w.\-/])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>(?:\.\d+)*)"
    r"(?:(?P<glued>(?i:[kmgt]i?b|b|ms|s|min|h))(?![\w])"  # "1GB", "10ms": a unit written on
    r"|(?![\w])(?:\s*(?P<unit>%|per ?cent\b|[A-Za-z]+))?)"
)
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
UNITS = {
    "%": "%", "percent": "%", "per cent": "%", "percentage": "%",
    "b": "byte", "byte": "byte", "bytes": "byte",
    "kb": "kB", "kilobyte": "kB", "kilobytes": "kB", "kib": "KiB",
    "mb": "MB", "megabyte": "MB", "megabytes": "MB", "mib": "MiB",
    "gb": "GB", "gigabyte": "GB", "gigabytes": "GB", "gib": "GiB",
    "tb": "TB", "terabyte": "TB", "terabytes": "TB", "tib": "TiB",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "second": "s", "seconds": "s",
    "min": "min", "minute": "min", "minutes": "min",
    "h": "h", "hour": "h", "hours": "h",
    "day": "day", "days": "day", "week": "week", "weeks": "week",
    "month": "month", "months": "month", "year": "year", "years": "year",
}  # fmt: skip
CODE_RES = (
    re.compile(r"[A-Za-z_][\w.]*\(\)"),  # call()
    re.compile(r"(?<![\w-])--?[a-z][\w-]*"),  # --flags
    re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b"),  # snake_case, CONSTANT_CASE
    re.compile(r"\b[a-z_][\w]*(?:\.[A-Za-z_][\w]*)+\b"),  # dotted.names
)
CLAUSE_OPENERS = ':"“('  # a capital after one of these is capitalised by position
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9'’-]*")
# A word that is not part of a code token: CONN inside CONN_MAX_AGE is the code token's to answer for.
NAME_RE = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9'’-]*(?![\w(])")
ACRONYM_RE = re.compile(r"^[A-Z][A-Z0-9]+$")
CAMEL_RE = re.compile(r"^[A-Za-z][a-z0-9]+[A-Z]\w*$")


@dataclass(frozen=True)
class StatedNumber:
    raw: str
    value: float | str  # a dotted version stays a string
    unit: str | None

    def backed_by(self, other: StatedNumber) -> bool:
        if self.value != other.value:
            return False
        return self.unit is None or other.unit is None or self.unit == other.unit


def numbers(text: str) -> list[StatedNumber]:
    out = []
    for m in NUMBER_RE.finditer(text):
        digits = m.group("int").replace(",", "")
        frac = m.group("frac") or ""
        unit_word = (m.group("glued") or m.group("unit") or "").lower()
        if frac.count(".") > 1:
            value: float | str = digits + frac  # a version: compared as written
        else:
            value = float(digits + frac)
            if unit_word in SCALES:
                value *= SCALES[unit_word]
        unit = UNITS.get(unit_word)
        raw = m.group(0) if (unit or unit_word in SCALES) else m.group("int") + frac
        out.append(StatedNumber(raw.strip(), value, unit))
    return out


def plain_text(text: str) -> str:
    """Markdown and identifiers removed: links keep their text; URLs, HTML tags, autolinks and CLM/SQ/SRC
    ids go (markup states nothing; the deliverable shows raw HTML as text anyway)."""
    text = html.unescape(MARKDOWN_ESCAPE_RE.sub(r"\1", text))  # a finished result.md escapes markup
    text = LINK_RE.sub(r"\1", text)
    text = TAG_RE.sub(" ", text)
    text = URL_RE.sub(" ", text)
    text = ID_RE.sub(" ", text)
    return EMPHASIS_RE.sub("", text)


def code_tokens(text: str) -> list[str]:
    found = [m.group(1).strip() for m in BACKTICK_RE.finditer(text)]
    rest = BACKTICK_RE.sub(" ", text)
    for pattern in CODE_RES:
        found += [m.group(0) for m in pattern.finditer(rest)]
    return [t for t in dict.fromkeys(found) if t]


def names(sentence: str) -> list[str]:
    """Capitalised words that do not open the sentence (or a clause after a colon or an opening quote or
    bracket), and acronyms and CamelCase anywhere. An opening word is capitalised by position, so it is
    not taken for a name: a dictionary would be needed to tell "Oracle" from "Call"."""
    text = BACKTICK_RE.sub(" ", sentence)
    first = re.search(r"[A-Za-z0-9]", text)
    out = []
    for m in NAME_RE.finditer(text):
        word = m.group(0).strip("'’-")
        if len(word) < 2 or word.casefold() in UNITS or word.casefold() in SCALES:
            continue
        j = m.start() - 1
        while j >= 0 and text[j].isspace():
            j -= 1
        opens = (first is not None and m.start() <= first.start()) or (j >= 0 and text[j] in CLAUSE_OPENERS)
        if ACRONYM_RE.match(word) or CAMEL_RE.match(word) or (word[0].isupper() and not opens):
            out.append(word)
    return list(dict.fromkeys(out))


def split_sentences(text: str) -> list[str]:
    """Sentences of one block; a piece that is only citations joins the sentence before it."""
    pieces: list[str] = []
    start = 0
    for m in SENTENCE_END_RE.finditer(text):
        before = text[start : m.start()]
        if before.lower().endswith(ABBREVIATIONS) or before.count("`") % 2:
            continue
        pieces.append(text[start : m.start()].strip())
        start = m.end()
    pieces.append(text[start:].strip())
    out: list[str] = []
    for piece in pieces:
        lead = LEADING_CITATIONS_RE.match(piece)
        if out and lead:  # "Sentence. [CLM-01] Next sentence.": the citation closes the sentence before
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end() :]
        if not piece.strip():
            continue
        bare = not WORD_RE.search(plain_text(CLAIM_REF_RE.sub(" ", piece)).replace("source", ""))
        if out and (bare or (lead and ASIDES_RE.match(piece))):
            # only citations, or "(partly supported: read with caution) (source: ...)" right after them
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def states_fact(sentence: str) -> bool:
    plain = plain_text(sentence)
    return len(re.findall(r"[^\W\d_]{2,}", plain)) >= FACT_MIN_WORDS or bool(numbers(plain))


def holds(token: str, haystack: str) -> bool:
    """`token` is in `haystack` (case folded): as a whole word when it is one, else as written."""
    folded = token.casefold()
    if re.fullmatch(r"\w+", folded):
        return re.search(rf"(?<!\w){re.escape(folded)}(?!\w)", haystack) is not None
    return folded in haystack


CITED_RE = re.compile(r"\bCLM-[0-9]{2,}\b")


def groups(text: str) -> list[tuple[list[str], list[str]]]:
    """One block's sentences as (sentences, the claim ids that cover them): each citation covers its own
    sentence and the uncited ones just before it; sentences after the last citation come last, covered by
    none (`[]`)."""
    out: list[tuple[list[str], list[str]]] = []
    pending: list[str] = []
    for sentence in split_sentences(text):
        pending.append(sentence)
        cited = list(dict.fromkeys(CITED_RE.findall(sentence)))
        if cited:
            out.append((pending, cited))
            pending = []
    if pending:
        out.append((pending, []))
    return out
