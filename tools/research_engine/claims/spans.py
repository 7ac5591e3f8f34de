"""Evidence by reference: a span (`SQ-01/SRC-02#p05.s2`, `#p05.s2-s3`, `#p05`) resolved to the verbatim
words it names in the recorded source, so nobody retypes a quote.

`resolve_span(run, "SQ-01/SRC-02#p05.s2")` is the public entry point (`claims add --span` and the headless
models call it): it parses the span (`sentences.parse_span`), reads the source's stored passages and copies
the sentences out of them (`sentences.quote_of`). An id that names nothing is bad input (exit 2) naming the
ids that exist; a span across passages is refused. `check_span` is `validate`'s: a recorded span must
still name exactly its recorded quote.
"""

from __future__ import annotations

from dataclasses import dataclass

from research_engine.errors import BadInput
from research_engine.retrieve import list_sources, load_source, source_path
from research_engine.sentences import Span, parse_span, quote_of
from research_engine.trace import Run


@dataclass(frozen=True)
class ResolvedSpan:
    """A span and the words it names, copied verbatim from the source's stored text."""

    span: Span
    quote: str

    @property
    def source(self) -> str:
        return self.span.source

    @property
    def local(self) -> str:
        """The span within its source (`p05.s2-s3`), as the claim's evidence records it."""
        return self.span.local


def resolve_span(run: Run, text: str) -> ResolvedSpan:
    """The verbatim words `text` (a span) names in `run`; BadInput naming the known ids when it names
    nothing (an unknown source, passage or sentence) or is malformed."""
    span = parse_span(text)
    if not source_path(run, span.source).is_file():
        sq = span.source.split("/")[0]
        known = [ref for ref in list_sources(run) if ref.startswith(sq + "/")]
        raise BadInput(
            f"span {text.strip()!r}: {span.source} is not a source of this run"
            f" (known for {sq}: {', '.join(known) or 'none yet'})",
            code="unknown-span",
            field="span",
            data={"known_sources": known},
        )
    _, passages = load_source(run, span.source)
    return ResolvedSpan(span, quote_of(span, passages))


def check_span(run: Run, source: str, local: str, quote: str) -> str | None:
    """Why a recorded span no longer names its recorded quote in the source's stored text, or None."""
    try:
        resolved = resolve_span(run, f"{source}#{local}")
    except BadInput as exc:
        return exc.message
    if resolved.quote != quote:
        return f"span {source}#{local} names {resolved.quote[:80]!r}, not the recorded quote"
    return None
