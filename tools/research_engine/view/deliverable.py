"""The deliverable as HTML: result.md rendered as CommonMark, with its claim and source ids made links.

markdown-it-py (the CommonMark reference port) renders the text; the escaping rules of
`research_engine.escaping` hold on the page as in the file:

- raw HTML is never markup (`html` off: `<script>` arrives as text, `&lt;` as one `<`);
- a link is kept only when its target is http, https, `doi:` (made its https://doi.org/ form) or a
  `#fragment`; any other link, autolink or image stays text; images are never loaded (the page is
  offline), an image becomes its alt text;
- every `CLM-NN` becomes a link to its claim card, every `SQ-NN/SRC-NN` to its source card and every
  `SQ-NN` to its sub-question, but only when the page has that card (links always resolve) and never
  inside code or inside a link the author wrote;
- headings get ids (`h-` and a slug), so an author's `#fragment` link to a heading resolves.

Pure: text in, HTML out.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection
from functools import cache
from typing import Any

from research_engine import escaping, libraries

# A bracketed claim id is linked brackets and all (a citation); bare ids alone.
_ID_RE = re.compile(r"\[(CLM-\d{2,})\]|\b(SQ-\d{2,}/SRC-\d{2,}|CLM-\d{2,}|SQ-\d{2,})\b")
_SLUG_DROP = re.compile(r"[^\w\- ]+")


def source_anchor(ref: str) -> str:
    """The id of a source's card: `SQ-01/SRC-02` -> `src-SQ-01-SRC-02`."""
    return "src-" + ref.replace("/", "-")


def _allowed_link(url: str) -> bool:
    seen = html.unescape(url).strip()
    return seen.startswith("#") or escaping.web_url(seen) is not None


@cache
def _parser() -> Any:
    markdown_it = libraries.markdown_it()
    md = markdown_it.MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.disable("image")  # nothing is fetched by the page: `![alt](url)` reads as "!" and a link
    md.validateLink = _allowed_link
    return md


def _slug(text: str) -> str:
    return "h-" + "-".join(_SLUG_DROP.sub("", text.lower()).split())[:80]


def _linked(content: str, target: Callable[[str], str | None], token_class: Any) -> list[Any]:
    """A text token's content split into text and links for each known id it names."""
    out: list[Any] = []
    at = 0
    for match in _ID_RE.finditer(content):
        found = match.group(1) or match.group(2)
        href = target(found)
        if href is None:
            continue
        if match.start() > at:
            out.append(token_class("text", "", 0, content=content[at : match.start()]))
        kind = "clm" if found.startswith("CLM-") else "ref"
        out.append(token_class("link_open", "a", 1, attrs={"href": href, "class": kind}))
        out.append(token_class("text", "", 0, content=match.group(0)))
        out.append(token_class("link_close", "a", -1))
        at = match.end()
    if not out:
        return []
    if at < len(content):
        out.append(token_class("text", "", 0, content=content[at:]))
    return out


def render_markdown(
    markdown: str,
    *,
    claims: Collection[str] = (),
    sources: Collection[str] = (),
    questions: Collection[str] = (),
) -> str:
    """`markdown` as HTML under the rules above; `claims`, `sources` and `questions` are the ids that have a
    card on the page."""

    def target(found: str) -> str | None:
        if found.startswith("CLM-"):
            return f"#{found}" if found in claims else None
        if "/" in found:
            return f"#{source_anchor(found)}" if found in sources else None
        return f"#{found}" if found in questions else None

    md = _parser()
    token_class = libraries.markdown_it().token.Token
    tokens = md.parse(markdown)
    used: set[str] = set()
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and index + 1 < len(tokens):
            slug = _slug(tokens[index + 1].content)
            while slug in used:
                slug += "-"
            used.add(slug)
            token.attrSet("id", slug)
        if token.type != "inline" or not token.children:
            continue
        children: list[Any] = []
        in_link = 0
        for child in token.children:
            if child.type == "link_open":
                in_link += 1
                href = str(child.attrGet("href") or "")
                if href.lower().startswith("doi:"):
                    child.attrSet("href", escaping.web_url(href) or href)
                if not href.startswith("#"):
                    child.attrSet("rel", "noreferrer")
            elif child.type == "link_close":
                in_link -= 1
            if child.type == "text" and not in_link:
                split = _linked(child.content, target, token_class)
                if split:
                    children.extend(split)
                    continue
            children.append(child)
        token.children = children
    return str(md.renderer.render(tokens, md.options, {}))
