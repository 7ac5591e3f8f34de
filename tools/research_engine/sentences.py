"""Sentence ids within a passage, and spans: evidence named by reference (`SQ-01/SRC-02#p05.s2`).

A source's passages have stable ids (`p01`, `p02`, ...; the extractor gives the same passages for the same
bytes). This module gives each sentence of a passage a stable id within it (`p05.s1`, `p05.s2`, ...) by
one deterministic splitter, so a model or a skill can name the words a claim rests on and the tool copies
them verbatim (`claims add --span`): nobody retypes a quote.

The splitter is part of the trace format (a recorded span is checked again by `validate`), so its rules
are fixed here and documented in docs/conventions.md; ranking code that wants other sentence boundaries
keeps its own. The rules: a heading, a code block or a table row is one sentence; otherwise a sentence
ends at `.`, `!` or `?` (closing quotes and brackets included) followed by white space and a character
that can open a sentence (a capital, a digit, an opening quote or bracket, a backtick, or a code-like
word: `select_related()`, `os.path`, `max_length`), except after a known abbreviation (e.g., i.e., etc.,
vs., Dr., ...) or a one-letter initial (J. Smith, U.S.). Every sentence is a verbatim slice of its passage.

Spans: `#p05` (the whole passage: a heading is quoted this way), `#p05.s2` (one sentence) and `#p05.s2-s3`
(a run of sentences within one passage). A span across passages is refused: cite each passage's sentences
as a span of its own. Pure functions of their text; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from research_engine.errors import BadInput

WHOLE_PASSAGE_KINDS = frozenset({"heading", "code", "table-row"})
ABBREVIATIONS = frozenset(
    {
        "e.g", "i.e", "etc", "vs", "cf", "al", "approx", "fig", "figs", "no", "nos", "vol", "pp", "ch", "sec",
        "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "co",
    }
)  # fmt: skip
_CLOSERS = "\"'\u201d\u2019)]"
_CLOSER_CLASS = "[" + re.escape(_CLOSERS) + "]"
_BOUNDARY_RE = re.compile(r"[.!?]" + _CLOSER_CLASS + r"*(?=\s+\S)")
_OPENERS = "\"'\u201c\u2018([`"
_CODE_WORD_RE = re.compile(r"[a-z_][\w]*(?:[_.]\w+|\(\))")  # max_length, os.path, select_related()
_WORD_BEFORE_RE = re.compile(r"(?:^|(?<=[\s(]))([A-Za-z][\w.]*)\." + _CLOSER_CLASS + "*$")

SPAN_RE = re.compile(
    r"^(?P<source>SQ-[0-9]{2,}/SRC-[0-9]{2,})#(?P<passage>p[0-9]{2,})"
    r"(?:\.s(?P<first>[0-9]+)(?:-s?(?P<last>[0-9]+))?)?\Z"
)
_ACROSS_RE = re.compile(r"#p[0-9]{2,}(?:\.s[0-9]+)?-(?:p[0-9]{2,}|s?[0-9]+\.)")


def split(text: str, kind: str = "paragraph") -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of one passage's text, in order; each a verbatim slice."""
    if not text.strip():
        return []
    if kind in WHOLE_PASSAGE_KINDS:
        return [_trimmed(text, 0, len(text))]
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.end()
        rest = text[end:].lstrip()
        if not _opens_sentence(rest) or _abbreviation_before(text[start:end]):
            continue
        spans.append(_trimmed(text, start, end))
        start = end
    spans.append(_trimmed(text, start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _opens_sentence(rest: str) -> bool:
    if not rest:
        return False
    first = rest[0]
    if first.isupper() or first.isdigit() or first in _OPENERS:
        return True
    return bool(_CODE_WORD_RE.match(rest))


def _abbreviation_before(sentence: str) -> bool:
    """Whether the sentence so far ends with a known abbreviation or a one-letter initial ("J.", "U.S.")."""
    match = _WORD_BEFORE_RE.search(sentence)
    if match is None:
        return False
    word = match.group(1).lower()
    if word in ABBREVIATIONS:
        return True
    last = match.group(1).rsplit(".", 1)[-1]
    return len(last) == 1 and last.isupper()  # an initial: "J. Smith", "U.S. Navy"


def sentences(text: str, kind: str = "paragraph") -> list[str]:
    """The sentences of one passage, verbatim, in order (sentence k has id `s<k>`)."""
    return [text[s:e] for s, e in split(text, kind)]


def numbered(passage_id: str, text: str, kind: str = "paragraph") -> dict[str, str]:
    """`{"s1": ..., "s2": ...}`: a passage's sentences by id, as the tools show them to a model."""
    return {f"s{i}": sentence for i, sentence in enumerate(sentences(text, kind), 1)}


@dataclass(frozen=True)
class Span:
    """Evidence by reference: a source, a passage, and a run of its sentences (None: the whole passage)."""

    source: str  # SQ-NN/SRC-NN
    passage: str  # pNN
    first: int | None = None
    last: int | None = None

    @property
    def local(self) -> str:
        """The span within its source: `p05`, `p05.s2` or `p05.s2-s3`."""
        if self.first is None:
            return self.passage
        if self.last is None or self.last == self.first:
            return f"{self.passage}.s{self.first}"
        return f"{self.passage}.s{self.first}-s{self.last}"

    def __str__(self) -> str:
        return f"{self.source}#{self.local}"


def parse_span(value: str) -> Span:
    """A span from its written form; BadInput (exit 2) saying the accepted forms."""
    text = (value or "").strip()
    if _ACROSS_RE.search(text):
        raise BadInput(
            f"span {text!r} runs across passages; a span stays within one passage: cite each passage's "
            "sentences as a span of its own (--span SQ-NN/SRC-NN#p05.s3 --span SQ-NN/SRC-NN#p06.s1)",
            code="span-across-passages",
            field="span",
        )
    match = SPAN_RE.match(text)
    if match is None:
        raise BadInput(
            f"not a span: {text!r} (expected SQ-NN/SRC-NN#p05, SQ-NN/SRC-NN#p05.s2 or "
            "SQ-NN/SRC-NN#p05.s2-s3)",
            code="bad-span",
            field="span",
        )
    first = int(match.group("first")) if match.group("first") else None
    last = int(match.group("last")) if match.group("last") else None
    if first is not None and (first < 1 or (last is not None and last < first)):
        raise BadInput(
            f"span {text!r}: sentences are numbered from s1 and a run goes forward (s2-s3)",
            code="bad-span",
            field="span",
        )
    return Span(match.group("source"), match.group("passage"), first, last)


class PassageText(Protocol):
    """What a span is resolved against: a passage's id, kind and text (the `documents.Passage` shape)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def kind(self) -> str: ...


def quote_of(span: Span, passages: Sequence[PassageText]) -> str:
    """The verbatim words `span` names in `passages` (one source's); BadInput naming the known ids when
    the passage or a sentence does not exist."""
    passage = next((p for p in passages if p.id == span.passage), None)
    if passage is None:
        known = [p.id for p in passages]
        listed = f"{known[0]}..{known[-1]}" if len(known) > 6 else ", ".join(known)
        raise BadInput(
            f"{span.source} has no passage {span.passage}; its passages are {listed or 'none'}",
            code="unknown-span",
            field="span",
            data={"known_passages": known},
        )
    if span.first is None:
        return passage.text
    bounds = split(passage.text, passage.kind)
    last = span.last if span.last is not None else span.first
    if last > len(bounds):
        known_sentences = [f"{passage.id}.s{i}" for i in range(1, len(bounds) + 1)]
        raise BadInput(
            f"{span.source}#{passage.id} has {len(bounds)} sentence(s) ({', '.join(known_sentences)}); "
            f"there is no s{last}",
            code="unknown-span",
            field="span",
            data={"known_sentences": known_sentences},
        )
    return passage.text[bounds[span.first - 1][0] : bounds[last - 1][1]]


def locate(passages: Sequence[PassageText], start: int, end: int) -> str | None:
    """The span (`p05.s2-s3`; `p05` for a whole passage) covering offsets [start, end) of the passages'
    text joined by blank lines (a source's stored text); None when the words run across passages."""
    offset = 0
    for passage in passages:
        length = len(passage.text)
        if offset <= start < offset + length:
            if end > offset + length:
                return None
            local_start, local_end = start - offset, end - offset
            bounds = split(passage.text, passage.kind)
            covered = [i for i, (s, e) in enumerate(bounds, 1) if s < local_end and e > local_start]
            if not covered or len(covered) == len(bounds):
                return passage.id
            first, last = covered[0], covered[-1]
            return f"{passage.id}.s{first}" if first == last else f"{passage.id}.s{first}-s{last}"
        offset += length + 2
    return None
