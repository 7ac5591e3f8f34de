"""Headings as the page's structure says: what a heading heads, and which headings only title a box.

A heading's section is read from the page, not from its tag alone. Generators wrap headings (DocBook puts
`<h2>` three `<div>`s deep in a title page), so what a heading heads is what follows its outermost lone
wrapper (`following`). A heading inside a box that ends before the section does (DocBook's `<div
class="note"><h3>Note</h3>...</div>` in the middle of a section, a related-links box in an article) titles
the box, not the text after it: `box_titles_as_labels` reads it as a paragraph, so no heading path runs on
past the box. Pure.
"""

from __future__ import annotations

from typing import Any

from research_engine.extract.blocks import HEADINGS, NAVIGATION_LINK_SHARE, Block, words


def lone_wrapper(el: Any) -> Any:
    """The outermost element around `el` holding no other text than `el`'s (`el` itself when none)."""
    parent = el.getparent()
    while parent is not None and parent.getparent() is not None and _alone_in(el, parent):
        el, parent = parent, parent.getparent()
    return el


def _alone_in(el: Any, parent: Any) -> bool:
    if (parent.text or "").strip():
        return False
    for child in parent:
        if (child.tail or "").strip():
            return False
        if child is not el and isinstance(child.tag, str) and any(t.strip() for t in child.itertext()):
            return False
    return True


def following(el: Any) -> Any:
    """The first element with text after `el`'s outermost lone wrapper, among its siblings; None if none."""
    nxt = lone_wrapper(el).getnext()
    while nxt is not None and not (isinstance(nxt.tag, str) and "".join(nxt.itertext()).strip()):
        nxt = nxt.getnext()
    return nxt


def _follows_a_heading(el: Any) -> bool:
    """Whether a heading stands before `el` among its siblings: the element holding them holds sections (a
    Doxygen page's members, each an `<h2>` over its entry), and is no box that a heading titles."""
    return any(
        isinstance(before.tag, str)
        and (before.tag in HEADINGS or next(before.iterdescendants(*HEADINGS), None) is not None)
        for before in el.itersiblings(preceding=True)
    )


def box_titles_as_labels(blocks: list[Block], title: str | None = None) -> list[Block]:
    """The blocks with each heading that titles a box read as a paragraph.

    A heading titles a box when the element holding it (past lone wrappers) ends, and a block that is not a
    heading at its level or above follows, before any heading at its level or above: text of the section
    goes on after the box; and when no heading stands before it in that element (one that does is a section
    of several, as the last member of a Doxygen page is, with the page's footer after them all). Blocks
    whose element is unknown (trafilatura's own passages that are no block of the page) decide nothing and
    are passed over. A heading repeating the page's title is the title, left
    for `cleanup.drop_title_heading`.
    """
    out = list(blocks)
    title_key = words(title or "")
    for i, b in enumerate(blocks):
        is_title = bool(title_key) and (b.key in title_key or title_key in b.key)
        if b.kind != "heading" or b.element is None or is_title:
            continue
        wrapper = lone_wrapper(b.element)
        box = wrapper.getparent()
        if box is None or box.getparent() is None or _follows_a_heading(wrapper):
            continue
        for later in blocks[i + 1 :]:
            if later.element is None or later.link_share >= NAVIGATION_LINK_SHARE:
                continue  # a navigation bar is no text of the section (texinfo puts the next one's first)
            if later.kind == "heading" and (not later.level or not b.level or later.level <= b.level):
                break  # the section ends here; the box with it or before it
            outside = later.element is not box and box not in later.element.iterancestors()
            if outside and later.kind == "heading":
                break  # another section opens (its own heading at this level lost): no text goes on
            if outside:
                out[i] = Block("paragraph", b.text, b.element, linked=b.linked, figure=b.figure)
                break
    return out
