"""Holding a deliverable's prose to its citations, sentence by sentence.

A model writes prose, so `report check` cannot stop at "the sentence cites a real CLM-NN": a sentence that
cites a real claim but states a number, a name or a code token the claim does not hold is an invention
with a citation on it. The rule, per block of the deliverable (a paragraph, a list item, a table row, a
quote) outside caveat, method and reference sections:

- A citation covers its own sentence and the uncited sentences just before it in the same block ("WAL
  permits readers and writers at once. It can do this because ... [CLM-08]" is one group, held to CLM-08).
  A sentence after the block's last citation that states a fact (six words, or a number) is uncited.
- Every number in a group, with its unit and scale, is in a cited claim's text or quote: "2 GB" is not
  "2 MB", "1.5 million" is not "1.5", "1,000" is "1000", "10%" is "10 percent"; a dotted version (3.7.0)
  must appear as written. A number written without a unit matches the same number with any unit.
- Every capitalised name (a capitalised word that does not open its sentence, an acronym, CamelCase) and
  every code-like token (a `backticked` span, `call()`, snake_case, CONSTANT_CASE, dotted.names, --flags,
  CamelCase) is in a cited claim's text or quote, or in the question itself (the objective and the
  sub-questions: restating the question invents nothing; numbers the question states count as its words).
  Case is ignored.

The extractive writer passes by construction (its sentences are its claims). `findings` is pure and linear in
the text; `report.check_text` turns each finding into a problem, and the headless engine drops the
sentences a model wrote that fail (or falls back to the extractive writer).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field

CLAIM_REF_RE = re.compile(r"\[?\bCLM-[0-9]{2,}\b\]?")
ASIDES_RE = re.compile(r"^\s*(?:\([^()]*\)\s*)+$")  # parentheticals only
LEADING_CITATIONS_RE = re.compile(r"^(?:\[?\bCLM-[0-9]{2,}\b\]?[\s,;]*)+")
ID_RE = re.compile(r"\b(?:SQ-[0-9]{2,}(?:/SRC-[0-9]{2,})?|CLM-[0-9]{2,})\b")
MARKDOWN_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|])")
TAG_RE = re.compile(r"<[^<>\n]*>")
URL_RE = re.compile(r"\b(?:https?|doi):\S+")
LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
EMPHASIS_RE = re.compile(r"(\*\*|__|\*|~~)")
BACKTICK_RE = re.compile(r"`([^`]+)`")
# A sentence ends at . ! or ? followed by space and something that is not a lower-case letter.
SENTENCE_END_RE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[^\sa-z])")
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig.", "dr.", "mr.", "ms.")
FACT_MIN_WORDS = 6

NUMBER_RE = re.compile(
    r"(?<![\w.\-/])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>(?:\.\d+)*)(?![\w])"
    r"(?:\s*(?P<unit>%|per ?cent\b|[A-Za-z]+))?"
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


@dataclass
class Finding:
    """A group of sentences that says what its citations do not hold, or a fact sentence with no citation."""

    line: int
    sentence: str
    cited: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)  # numbers, names and code tokens as written

    @property
    def uncited(self) -> bool:
        return not self.cited

    def message(self) -> str:
        shown = self.sentence if len(self.sentence) <= 100 else self.sentence[:97] + "..."
        if self.uncited:
            return f"line {self.line}: states a fact after the block's last citation: {shown!r}"
        held = (
            f"{self.cited[0]} does not hold"
            if len(self.cited) == 1
            else f"none of {', '.join(self.cited)} holds"
        )
        return (
            f"line {self.line}: {shown!r} states {', '.join(self.unsupported)}, which {held} (text or quote)"
        )


def numbers(text: str) -> list[StatedNumber]:
    out = []
    for m in NUMBER_RE.finditer(text):
        digits = m.group("int").replace(",", "")
        frac = m.group("frac") or ""
        unit_word = (m.group("unit") or "").lower()
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


def _plain(text: str) -> str:
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
        bare = not WORD_RE.search(_plain(CLAIM_REF_RE.sub(" ", piece)).replace("source", ""))
        if out and (bare or (lead and ASIDES_RE.match(piece))):
            # only citations, or "(partly supported: read with caution) (source: ...)" right after them
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _states_fact(sentence: str) -> bool:
    plain = _plain(sentence)
    return len(re.findall(r"[^\W\d_]{2,}", plain)) >= FACT_MIN_WORDS or bool(numbers(plain))


def _holds(token: str, haystack: str) -> bool:
    folded = token.casefold()
    if re.fullmatch(r"\w+", folded):
        return re.search(rf"(?<!\w){re.escape(folded)}(?!\w)", haystack) is not None
    return folded in haystack


def _tokens(plain: str, held: str, asked: str) -> list[str]:
    tokens = code_tokens(plain) + names(plain)
    missing = [t for t in dict.fromkeys(tokens) if not _holds(t, held) and not _holds(t, asked)]
    # "sqlite3_x()" says it; "sqlite3_x" inside it need not be named again
    return [t for t in missing if not any(t != o and t in o for o in missing)]


def findings(text: str, line: int, support: Callable[[list[str]], str], question: str = "") -> list[Finding]:
    """What one block states beyond its citations. `support(ids)` is the text of those claims and their
    quotes; `question` is the objective and sub-questions (names and code in it are not inventions)."""
    out: list[Finding] = []
    pending: list[str] = []
    asked = question.casefold()
    asked_numbers = numbers(question)
    cited_any = False
    for sentence in split_sentences(text):
        pending.append(sentence)
        cited = list(dict.fromkeys(m.group(0).strip("[]") for m in CLAIM_REF_RE.finditer(sentence)))
        if not cited:
            continue
        cited_any = True
        group, pending = pending, []
        held = _plain(
            support(cited)
        )  # normalised like the sentence: `__str__()` reads the same on both sides
        backing = numbers(held) + asked_numbers  # restating the question's own numbers invents nothing
        held = held.casefold()
        missing: list[str] = []
        for part in group:
            plain = _plain(part)
            missing += [n.raw for n in numbers(plain) if not any(n.backed_by(b) for b in backing)]
            missing += _tokens(plain, held, asked)
        if missing:
            out.append(Finding(line, " ".join(group), cited, list(dict.fromkeys(missing))))
    leftover = [s for s in pending if _states_fact(s)]
    if leftover and cited_any:  # a block with no citation at all is the block rule's (uncited-fact)
        out.append(Finding(line, " ".join(leftover)))
    return out
