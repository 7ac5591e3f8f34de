"""Markdown -> chunks, read through markdown-it-py's CommonMark parser (with tables).

Rendered structure, not source lines: headings (ATX and setext) are headings, every paragraph of a list
item is a list item, fenced and indented code blocks are code, table rows are rows (cells joined with
` | `, as the HTML reader joins them), block quotes are paragraphs, raw HTML blocks keep their text.
Inline markup (emphasis, links, inline code) stays inside its sentence as plain text; an image keeps its
alt text. YAML front matter is metadata: `title`, a date (`date`/`published`), a modification date
(`updated`/`modified`/`lastmod`) and `lang`/`language` fill the page's fields; the rest is kept in
`metadata`. markdown-it-py is a well-kept CommonMark implementation; hand-parsing Markdown's edge cases
(lazy continuation, nested lists, setext headings) is what it exists to spare us.

Pure: no I/O.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from research_engine import bounded, libraries
from research_engine.errors import BadInput
from research_engine.extract.reading import Reading

_TAG = re.compile(r"<[^>]+>")
_TITLE_KEYS = ("title",)
_PUBLISHED_KEYS = ("date", "published", "created")
_MODIFIED_KEYS = ("updated", "modified", "lastmod", "last_modified")
_LANGUAGE_KEYS = ("lang", "language")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body): YAML between `---` lines at the very start; malformed YAML is left as text."""
    if not text.lstrip("\ufeff").startswith("---"):
        return {}, text
    try:
        meta, body = bounded.front_matter(text.lstrip("\ufeff"))
    except BadInput:
        return {}, text
    return meta, body


def _inline_text(token: Any) -> str:
    """The words of an inline token: text, inline code and image alt text, with markup dropped."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(_inline_text(child) or child.attrGet("alt") or "")
        elif child.type in ("html_inline",):
            continue
    return "".join(parts)


def markdown_chunks(body: str) -> list[tuple[str, str]]:
    """The (kind, text) chunks of a Markdown body, in document order."""
    parser = libraries.markdown_it().MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(body)
    chunks: list[tuple[str, str]] = []
    list_depth = 0
    heading: str | None = None
    row: list[str] | None = None
    for token in tokens:
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "heading_open":
            heading = token.tag
        elif kind == "heading_close":
            heading = None
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            cells = [" ".join(cell.split()) for cell in row]
            chunks.append(("table-row", " | ".join(c for c in cells if c)))
            row = None
        elif kind == "inline":
            text = _inline_text(token)
            if row is not None:
                row.append(text)
            elif heading is not None:
                chunks.append(("heading", text))
            else:
                chunks.append(("list-item" if list_depth else "paragraph", text))
        elif kind in ("fence", "code_block"):
            chunks.append(("code", token.content.rstrip("\n")))
        elif kind == "html_block":
            chunks.append(("paragraph", _TAG.sub(" ", token.content)))
    return [(kind, text) for kind, text in chunks if text.strip()]


def _field(meta: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = meta.get(key)
        if isinstance(value, datetime | date):
            return value.isoformat()
        if value is not None and not isinstance(value, dict | list) and str(value).strip():
            return " ".join(str(value).split())
    return None


def read_markdown(text: str) -> Reading:
    """Markdown (with optional YAML front matter) as a Reading."""
    meta, body = split_front_matter(text)
    chunks = markdown_chunks(body)
    title = _field(meta, _TITLE_KEYS) or next((t for k, t in chunks if k == "heading"), None)
    markdown_it = libraries.markdown_it()
    return Reading(
        chunks,
        f"markdown-it-py-{getattr(markdown_it, '__version__', '')}".rstrip("-"),
        title=title,
        published=_field(meta, _PUBLISHED_KEYS),
        modified=_field(meta, _MODIFIED_KEYS),
        language=_field(meta, _LANGUAGE_KEYS),
        metadata={k: v if isinstance(v, str | int | float | bool) else str(v) for k, v in meta.items()},
    )
