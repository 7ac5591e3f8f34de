"""The page reader: fetched bytes -> structured text with its metadata.

Owns turning one HTML page (or plain text, or a PDF when explicitly allowed)
into an `ExtractedPage`: the main content as `Passage`s (`p01`, `p02`, ... one
per heading, paragraph, list item, table row, code block or reference entry,
in document order, each with the path of headings above it), plus the title,
the canonical URL (`<link rel=canonical>`), the language, the
published/modified dates the page states, and its robots meta.

How the main content is found (chosen by measurement, figures in
docs/architecture.md "extract"): trafilatura with `favor_precision=True` and
comments off does the boilerplate removal; we walk the XML tree it returns to
keep the block structure. When trafilatura finds nothing, readability-lxml's
`summary(html_partial=True)` is tried, and when that is empty too, every
visible block of the page is kept, so a page never comes back empty just
because it does not look like an article. A page with under `THIN_CHARS`
characters of body text is marked `thin`: not a source.

Modules: `page` (entry points, kinds, PDF), `content` (the main content walk
and reference entries), `blocks` (the page's own blocks), `aligning` (where
trafilatura's passages stand in the page), `gaps` (what trafilatura dropped
wrongly, and the page's structure on its passages),
`sections` (what a heading heads), `cleanup` (furniture and the title out of
the body), `metadata` (title, canonical URL, language, dates, robots meta). trafilatura,
readability, lxml, pypdf and charset-normalizer are loaded on first use
(`research_engine.libraries`).

Same bytes -> same passages: nothing here depends on time, randomness or the
network. This package never fetches anything (that is `net`) and never writes
anything (that is `retrieve`); it is pure apart from importing its libraries.
"""

from __future__ import annotations

from research_engine.extract.metadata import normalize_date
from research_engine.extract.page import (
    THIN_CHARS,
    ExtractedPage,
    extract_document,
    extract_html,
    extract_pdf,
)

__all__ = ["THIN_CHARS", "ExtractedPage", "extract_document", "extract_html", "extract_pdf", "normalize_date"]
