"""The grounding gate at entry (`claims add`): a claim is recorded only if its evidence holds.

A cited source must exist in the run and have stored text; each quote must be
found in its source's stored text (exactly, or after `grounding.normalize`; a
quote named by a span is copied from that text, so it always is);
every number in the claim must appear in its quotes (all of them together). A
claim may carry several quotes of one source (a heading and the sentence under
it); the same words twice are refused. A failure raises
`CheckFailed` (exit 1) naming every offending id, with the closest passage when
a quote is not found; malformed input is `BadInput` (exit 2). The gate reads
only the cited sources, never the ledger, so it costs the same however many
claims the run holds. It never judges whether a claim is true: that is the
verifier's job, against its own fresh copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from research_engine import grounding, ids, retrieve
from research_engine.claims.spans import resolve_span
from research_engine.errors import BadInput, CheckFailed, Problem
from research_engine.trace import Run

MIN_QUOTE_CHARS = 4  # after normalization; shorter strings are found anywhere and carry nothing


@dataclass
class SourceText:
    """A source's stored text (its passages joined by blank lines) and where each passage starts."""

    text: str
    starts: list[tuple[int, str]]  # (offset in text, passage id)

    def passage_at(self, offset: int | None) -> str | None:
        if offset is None:
            return None
        found = None
        for start, pid in self.starts:
            if start > offset:
                break
            found = pid
        return found


def source_text(run: Run, ref: str) -> SourceText:
    _, passages = retrieve.load_source(run, ref)
    starts, offset = [], 0
    for p in passages:
        starts.append((offset, p.id))
        offset += len(p.text) + 2  # joined by a blank line, as retrieve.stored_text does
    return SourceText("\n\n".join(p.text for p in passages), starts)


def check_claim(
    run: Run, text: str, sources: list[str], quotes: list[str], spans: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Run the grounding gate; return the evidence entries, or raise CheckFailed naming every problem.

    Evidence comes as `--source`/`--quote` pairs (quotes copied by the author) and as `spans`
    (`SQ-NN/SRC-NN#p05.s2`: the tool copies the words, `claims.spans`); a span's entry records both."""
    text = " ".join((text or "").split())
    if not text:
        raise BadInput("a claim needs its text", code="empty-claim", field="text")
    if not sources and not spans:
        raise CheckFailed(
            "a claim must cite at least one source (--span SQ-NN/SRC-NN#p05.s2, or --source SQ-NN/SRC-NN "
            "with --quote): un-cited claims are refused",
            code="uncited-claim",
            field="source",
        )
    if sources and not quotes:
        raise CheckFailed(
            "a claim must carry the verbatim quote that supports it (--quote), or name it by reference "
            "(--span)",
            code="missing-quote",
            field="quote",
        )
    if quotes and not sources:
        raise BadInput(
            "--quote needs the --source it is quoted from", code="quote-source-mismatch", field="quote"
        )
    for ref in sources:
        ids.parse_source_ref(ref)  # malformed references are bad input (exit 2)
    pairs: list[tuple[str, str, str | None]] = []
    if len(quotes) == len(sources):
        pairs = [(ref, quote, None) for ref, quote in zip(sources, quotes, strict=True)]
    elif len(quotes) == 1:
        pairs = [(ref, quotes[0], None) for ref in sources]  # one quote must then be found in every source
    else:
        raise BadInput(
            f"{len(sources)} sources and {len(quotes)} quotes: give one --quote per --source, "
            "in the same order, or one quote found in every source",
            code="quote-source-mismatch",
            field="quote",
        )
    for given in spans:
        resolved = resolve_span(run, given)
        pairs.append((resolved.source, resolved.quote, resolved.local))
    # Several quotes of one source are one claim's evidence (a heading and the sentence under it); the
    # same words of one source twice are a slip.
    seen: set[tuple[str, str]] = set()
    for ref, quote, _ in pairs:
        key = (ref, grounding.normalize(quote))
        if key in seen:
            raise BadInput(
                f"the same words of {ref} are cited twice; cite each quote once",
                code="duplicate-evidence",
                field="quote",
            )
        seen.add(key)
    sources = list(dict.fromkeys(ref for ref, _, _ in pairs))
    for _, quote, span in pairs:
        if len(grounding.normalize(quote)) < MIN_QUOTE_CHARS:
            what = f"span {span} ({quote!r})" if span else f"quote {quote!r}"
            raise BadInput(f"{what} is too short to carry a claim", code="short-quote", field="quote")

    problems: list[Problem] = []
    texts: dict[str, SourceText] = {}
    missing = [ref for ref in sources if not run.path("source", **source_keys(ref)).is_file()]
    if missing:
        problems.append(
            Problem(
                "unknown-source", f"cited source(s) not in this run: {', '.join(missing)}", field="source"
            )
        )
    for ref in sources:
        if ref in missing:
            continue
        loaded = source_text(run, ref)
        if not loaded.text.strip():
            problems.append(
                Problem(
                    "no-stored-text", f"source {ref} has no stored text to ground a claim in", field="source"
                )
            )
        else:
            texts[ref] = loaded
    if problems:
        raise CheckFailed(
            "grounding gate: " + "; ".join(p.message for p in problems),
            code="grounding-gate",
            problems=problems,
            data={"offending_sources": missing + [r for r in sources if r not in missing and r not in texts]},
        )

    evidence: list[dict[str, Any]] = []
    not_found: list[dict[str, Any]] = []
    for ref, quote, span in pairs:
        match = grounding.find_quote(quote, texts[ref].text)
        if not match.found:
            passage = texts[ref].passage_at(match.start)
            not_found.append(
                {
                    "source": ref,
                    "quote": quote,
                    "closest": match.closest,
                    "passage": passage,
                    "score": match.score,
                }
            )
            shown = (
                f" closest passage [{passage}] (similarity {match.score:.2f}): {match.closest!r}"
                if match.closest
                else " (nothing similar)"
            )
            problems.append(Problem("quote-not-found", f"quote not found in {ref}:{shown}", field="quote"))
            continue
        entry = {
            "source": ref,
            "quote": quote,
            "match": match.match,
            "score": float(match.score),
            "passage": texts[ref].passage_at(match.start),
        }
        evidence.append({**entry, "span": span} if span else entry)
    quoted = dict.fromkeys(quote for _, quote, _ in pairs)
    ok, missing_numbers = grounding.numbers_supported(text, "\n".join(quoted))
    if not ok:
        problems.append(
            Problem(
                "number-not-in-quote",
                f"number(s) in the claim not found in its quote(s): {', '.join(missing_numbers)}",
                field="text",
            )
        )
    if problems:
        raise CheckFailed(
            "grounding gate: " + "; ".join(p.message for p in problems),
            code="grounding-gate",
            problems=problems,
            data={"not_found": not_found, "missing_numbers": missing_numbers},
        )
    return evidence


def source_keys(ref: str) -> dict[str, str]:
    sq, src = ref.split("/")
    return {"sq": sq, "src": src}
