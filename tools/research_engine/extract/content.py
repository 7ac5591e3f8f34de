"""The main content of an HTML page as chunks, in document order.

trafilatura (`favor_precision=True`, comments off) removes the boilerplate; we walk the XML tree it returns
to keep the block structure (heading with its level, paragraph, list item, table row, code, definition
term). When it finds nothing, readability-lxml's `summary(html_partial=True)` is walked (`extract.blocks`),
and when that is empty too every visible block of `<body>` is kept. Inline markup (code, links, emphasis)
stays inside its sentence. Corrections to trafilatura for structured documents: a section whose anchor id
is the slug of its own heading is never taken for boilerplate by its id, a loose label ("Changed in Django
3.1:") joins the paragraph it stands before, and decoration hidden from screen readers (`aria-hidden`
permalink marks) is dropped (`_prepared`); a passage whose words the page never wrote in that order is
dropped (`_on_the_page`); blocks it dropped wrongly come back and its passages take the page's structure
(`extract.gaps`). Last, a definition's term and the first paragraph of its description become one `entry`
(`entries`). Pure: no network, no writes.
"""

from __future__ import annotations

import re
from collections import Counter
from copy import deepcopy
from typing import Any

from research_engine import libraries
from research_engine.documents import Chunk
from research_engine.extract.blocks import HEADINGS, Block, clean, html_blocks, link_share, words
from research_engine.extract.gaps import fill_gaps
from research_engine.extract.sections import box_titles_as_labels
from research_engine.extract.text import text_chunks

__all__ = ["clean", "entries", "main_content"]


def main_content(tree: Any, url: str | None, title: str | None = None) -> tuple[list[Chunk], str]:
    """The page's main content as chunks, and how it was found (the extractor's name)."""
    trafilatura = libraries.trafilatura()

    prepared = _prepared(tree)
    doc = trafilatura.bare_extraction(
        prepared, url=url, include_comments=False, favor_precision=True, with_metadata=False
    )
    body = getattr(doc, "body", None) if doc is not None else None
    if body is not None:
        root = _page_body(prepared)
        page = html_blocks(root)
        said = " ".join(b.key for b in page)  # the page's words as its blocks read them, once for both steps
        kept = _on_the_page(_trafilatura_blocks(body), said, root)
        if kept:
            filled = fill_gaps(kept, page, said, title)
            how = f"trafilatura-{trafilatura.__version__}+structure"
            return entries(filled, title), how + ("+gaps" if len(filled) > len(kept) else "")
    blocks = _readability_blocks(tree)
    if blocks:
        version = getattr(libraries.readability(), "__version__", "")
        return entries(blocks, title), f"readability-lxml-{version}".rstrip("-")
    return entries(html_blocks(_page_body(tree)), title), "all-blocks"


def entries(blocks: list[Block], title: str | None = None) -> list[Chunk]:
    """Blocks -> chunks, a definition's terms and the first paragraph of its description made one `entry`.

    `<dt>--some-option=<value></dt><dd><p>Create a new ... which ...</p>` is one unit of a reference page:
    the description never names what it describes, so apart neither answers a question. Several terms over
    one description (`-h, -?, -help`) are one entry. The paragraph is the first block of the description
    that stays (a dropped note before it does not part them); when it is a few words only ("New in version
    3.21.", "Ignored since 3.0."), the paragraph after it in the same description joins it, so the entry
    says what the term does. A term whose description goes on with something else first (a code block, a
    list) stays a paragraph of its own, before it.
    """
    blocks = box_titles_as_labels(blocks, title)
    out: list[Chunk] = []
    terms: list[Block] = []
    i = 0
    while i < len(blocks):
        b = blocks[i]
        i += 1
        if b.kind == "term":
            if terms and terms[-1].definition != b.definition:  # terms whose description went
                out.extend(Chunk("paragraph", t.text) for t in terms)
                terms = []
            terms.append(b)
            continue
        if terms and _describes(b, terms[-1]):
            term = " ".join(t.text for t in terms)
            text = b.text
            if len(text.split()) < _ENTRY_NOTE_WORDS and i < len(blocks) and _describes(blocks[i], terms[-1]):
                text, i = f"{text} {blocks[i].text}", i + 1
            out.append(Chunk("entry", f"{term} {text}", term=term))
        else:
            out.extend(Chunk("paragraph", t.text) for t in terms)
            out.append(Chunk(b.kind, b.text, b.level))
        terms = []
    out.extend(Chunk("paragraph", t.text) for t in terms)
    return out


_ENTRY_NOTE_WORDS = 6  # a description's first paragraph this short is a note before what the term does


def _describes(b: Block, term: Block) -> bool:
    return b.kind == "paragraph" and bool(b.definition) and b.definition == term.definition


def _prepared(tree: Any) -> Any:
    """The tree as trafilatura should read a structured document: a copy, when anything needs changing.

    - Headed sections lose their id. trafilatura discards any element whose id contains a boilerplate word
      ("cookie", "related", "nav", "share", "tags", "author", ...). Documentation names its sections after
      their headings, so Django's `SESSION_COOKIE_AGE` setting (`<div id="s-session-cookie-age">`) or the
      `select_related()` reference vanished whole. A section whose id is the slug of its own heading, with
      most of its text outside links, is a section of the document, not a cookie banner or a related-posts
      box (those are link lists, or are not named after a heading).
    - Prose set in a `<pre>` (Vim's help pages are each one `<pre>`; text files shown as HTML) is read as
      plain text is (`extract.text`): paragraphs at blank lines, wrapped lines joined, headings and list
      items kept. A listing stays a listing: see `_reads_as_prose`.
    - A label standing before its paragraph joins it: Sphinx writes `<div class="versionchanged"><span>Changed
      in Django 3.1:</span> <p>Support for async views was added.</p>`, and trafilatura keeps the paragraph
      but drops the loose label, which is the version the sentence is about.
    The caller's tree is never changed.
    """
    sections, labels, prose = _headed_sections(tree), _loose_labels(tree), _preformatted_prose(tree)
    if not (sections or labels or prose):
        return tree
    copy = deepcopy(tree)
    # The same elements in the copy, found by their path rather than by searching again.
    paths, twin = tree.getroottree(), copy.getroottree()

    def same(el: Any) -> Any:
        return twin.xpath(paths.getpath(el))[0]

    # Every element is found before any is changed: rewriting one <pre> renumbers its later siblings' paths.
    prose, sections = [same(el) for el in prose], [same(el) for el in sections]
    labels = [(same(lb), same(p)) for lb, p in labels]
    for el in prose:
        _as_paragraphs(el)
    for el in sections:
        del el.attrib["id"]
    for label, paragraph in labels:
        label.getparent().remove(label)  # lxml moves the label's tail with it; it is blank here
        label.tail = " " + (paragraph.text or "")
        paragraph.text = None
        paragraph.insert(0, label)
    return copy


# A <pre> is prose when it is long and most of its lines are sentences' words: a listing's lines are code,
# commands or data, few of them six words or more of plain text.
_PROSE_PRE_MIN_LINES = 20
_PROSE_LINE_MIN_WORDS = 6
_PROSE_LINE_SHARE = 0.5
_COMMENT_RE = re.compile(r"\s*(?://|#|--\s|;|/\*)")
_PLAIN_WORD_RE = re.compile(r"^[A-Za-z][a-z]*(?:['\u2019][a-z]+)?[.,;:!?)]*$")


def _preformatted_prose(tree: Any) -> list[Any]:
    # a <pre> inside another (mdBook writes `<pre><pre class="playground">`) is read with the outer one
    return [
        el
        for el in tree.iter("pre")
        if not any(a.tag == "pre" for a in el.iterancestors()) and _reads_as_prose("".join(el.itertext()))
    ]


def _reads_as_prose(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < _PROSE_PRE_MIN_LINES:
        return False
    return sum(map(_sentence_line, lines)) >= _PROSE_LINE_SHARE * len(lines)


def _sentence_line(line: str) -> bool:
    if _COMMENT_RE.match(line):
        return False  # a listing's comment reads as words but is code
    plain = [w for w in line.split() if _PLAIN_WORD_RE.match(w)]
    return len(plain) >= _PROSE_LINE_MIN_WORDS and len(plain) >= 0.7 * len(line.split())


def _as_paragraphs(pre: Any) -> None:
    """Replace `pre` (in place) by a `<div>` of the blocks its text reads as."""
    html = libraries.lxml_html()
    div = html.Element("div")

    def put(tag: str, text: str) -> None:
        block = html.Element("p" if tag == "li" else tag)
        block.text = text
        if tag != "li":
            div.append(block)
            return
        # An item joins the list just before it or starts one, its text a paragraph: trafilatura drops a
        # list of bare items followed by a paragraph (Vim's "1. Another edit session is active ..."),
        # not one whose items hold paragraphs.
        item = html.Element("li")
        item.append(block)
        if not len(div) or div[-1].tag != "ul":
            div.append(html.Element("ul"))
        div[-1].append(item)

    for lines in re.split(r"\n\s*\n", "".join(pre.itertext())):
        if not re.search(r"\w", lines):
            continue  # a rule of "=" or "-" between sections
        written = [line for line in lines.splitlines() if line.strip()]
        indented = all(line[:1] == "\t" or line.startswith("    ") for line in written)
        if indented and sum(map(_sentence_line, written)) < _PROSE_LINE_SHARE * len(written):
            put("pre", lines.strip("\n"))  # indented under the prose, and no sentences: an example
            continue
        options = _option_list(written)
        if options is not None:  # a program's --help: each option a definition, its wrapped lines joined
            label, items = options
            if label:
                put("p", label)
            dl = html.Element("dl")
            for term, description in items:
                dt, dd = html.Element("dt"), html.Element("dd")
                dt.text = term
                para = html.Element("p")
                para.text = description
                dd.append(para)
                dl.extend([dt, dd])
            div.append(dl)
            continue
        for kind, text, *_ in text_chunks(lines):
            put({"heading": "h4", "list-item": "li"}.get(kind, "p"), text)
    div.tail = pre.tail
    pre.getparent().replace(pre, div)


# An option of a program's help text: indented, a dash and a name, its description after two spaces or more
# ("  -d                     remove packet if duplicate (window == 5).").
_OPTION_LINE_RE = re.compile(
    r"^(?P<indent>[ \t]+)(?P<term>-{1,2}[A-Za-z0-9?].*?)(?:[ \t]{2,}(?P<text>\S.*))?$"
)
OPTION_LIST_MIN = 2  # one option line alone is a sentence that starts with a dash, not a list


def _option_list(lines: list[str]) -> tuple[str, list[tuple[str, str]]] | None:
    """(label, [(option, description)]) when a block is a list of options, each line an option or the
    wrapped continuation of one (indented further): "Duplicate packet removal:" over "--novlan  remove vlan
    info ..." and "-d  remove packet if duplicate ...". None for anything else."""
    label: list[str] = []
    items: list[list[str]] = []
    indent = -1
    # Descriptions start in one column; a long option fills it to one space ("-S <strict adjustment> adjust").
    matches = [(line, _OPTION_LINE_RE.match(line)) for line in lines]
    starts = Counter(m.start("text") for _, m in matches if m and m.group("text"))
    column = starts.most_common(1)[0][0] if starts else 0
    for line, m in matches:
        if m and (indent < 0 or len(m.group("indent")) <= indent):
            indent = len(m.group("indent"))
            term, text = m.group("term").strip(), (m.group("text") or "").strip()
            cut = line.find(" ", column - 1) if column else -1
            if not text and cut > 0:  # the first space from the column on ends a long option's name
                term, text = line[:cut].strip(), line[cut:].strip()
            items.append([term, text])
        elif items and len(line) - len(line.lstrip()) > indent:
            items[-1][1] = f"{items[-1][1]} {line.strip()}".strip()  # a wrapped description
        elif not items:
            label.append(line.strip())
        else:
            return None  # prose after the options: not a list of them
    if len(items) < OPTION_LIST_MIN or any(not text for _, text in items):
        return None
    return " ".join(label), [(term, text) for term, text in items]


def _headed_sections(tree: Any) -> list[Any]:
    return [el for el in tree.iter() if isinstance(el.tag, str) and el.get("id") and _is_headed_section(el)]


def _loose_labels(tree: Any) -> list[tuple[Any, Any]]:
    """(label, paragraph): a short inline element ending in ":" that stands alone in a block right before a
    `<p>`, with nothing but blank space between."""
    out = []
    for el in tree.iter("span", "strong", "b", "em"):
        nxt, parent = el.getnext(), el.getparent()
        if (
            nxt is None
            or nxt.tag != "p"
            or parent is None
            or parent.tag not in ("div", "section", "li", "dd", "blockquote")
            or (el.tail or "").strip()
        ):
            continue  # the cheap tests first: this runs over every inline element of every page
        text = " ".join("".join(el.itertext()).split())
        if text.endswith(":") and len(text) <= _LABEL_CHARS:
            out.append((el, nxt))
    return out


_LABEL_CHARS = 60
_SECTION_LINK_SHARE_MAX = 0.5


def _is_headed_section(el: Any) -> bool:
    heading = next(
        (c for c in el if isinstance(c.tag, str) and c.tag.lower() in HEADINGS),
        None,
    )
    if heading is None:
        return False
    title = _slug_words(" ".join(heading.itertext()))
    anchor = _slug_words(el.get("id", ""))
    if not title or len(title) > len(anchor) or anchor[len(anchor) - len(title) :] != title:
        return False
    return link_share(el, " ".join(el.itertext())) <= _SECTION_LINK_SHARE_MAX


def _slug_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _trafilatura_blocks(body: Any) -> list[Block]:
    """Walk trafilatura's XML (head, p, list/item, table/row/cell, code, quote) into blocks.

    Inline markup stays inside its sentence: trafilatura writes inline `<code>` (a name, a value, a
    keyword in running text) with the same tag as a code block, so a `code` element is a block only when
    its text spans lines or it stands alone between blocks; otherwise it is text of the passage around it,
    and a run of inline elements and their tails between two blocks is one passage ("shared_buffers
    (integer)", not three fragments). A definition list's items (`rend="dt-N"`, `"dd-N"`) become a term and
    the blocks of its description; a list item holding blocks is read block by block, the first the item.
    """
    blocks: list[Block] = []
    definition = [0]  # trafilatura's descriptions are numbered -1, -2, ...: apart from the page's own
    opens_item = [False]  # the next paragraph opens a list item

    def add(kind: str, text: str, level: int = 0, number: int = 0) -> None:
        if text:
            kind = "list-item" if opens_item[0] and kind == "paragraph" else kind
            blocks.append(Block(kind, text, level=level, definition=number or definition[0]))
            opens_item[0] = False

    def walk(el: Any) -> None:
        tag = el.tag
        if tag == "head":
            add("heading", _xml_text(el), _level(el.get("rend")))
        elif tag == "list":
            for item in el:
                if item.tag != "item":
                    walk(item)
                elif (item.get("rend") or "").startswith("dt"):
                    add("term", _xml_text(item), number=-int(item.get("rend", "dt-0")[3:] or 0) or -1)
                elif (item.get("rend") or "").startswith("dd"):
                    outer, definition[0] = definition[0], -int(item.get("rend", "dd-0")[3:] or 0) or -1
                    walk_mixed(item)
                    definition[0] = outer
                elif any(_is_block(sub) or (sub.tag == "code" and _is_code_block(sub)) for sub in item):
                    opens_item[0] = True  # an item holding paragraphs, lists or examples: block by block
                    walk_mixed(item)
                    opens_item[0] = False
                else:
                    add("list-item", _xml_text(item))
        elif tag == "table":
            # Its own rows: a table nested in a cell is read with the cell (`_layout_cells`), once.
            for row in (r for r in el.iter("row") if next(r.iterancestors("table")) is el):
                cells = [cell for cell in row if cell.tag == "cell"]
                if _layout_cells(cells):  # a page laid out in a table: its cells hold the page's blocks
                    for cell in cells:
                        walk_mixed(cell)
                    continue
                texts = [_xml_text(cell) for cell in cells]
                add("table-row", " | ".join(c for c in texts if c))
        elif tag == "code" and _is_code_block(el):
            add("code", _xml_text(el))
        elif tag in ("p", "quote") and not any(_is_block(child) for child in el):
            add("paragraph", _xml_text(el))
        elif tag in _XML_BLOCKS or tag in ("body", "div", "doc", "main"):
            walk_mixed(el)
        else:  # an inline element reached on its own
            add("paragraph", _xml_text(el))

    def walk_mixed(el: Any) -> None:
        """Children in order: runs of text and inline elements become one paragraph each."""
        run: list[str] = [el.text or ""]

        def flush() -> None:
            add("paragraph", clean(" ".join(run)))
            run.clear()

        for child in el:
            if _is_block(child) or (child.tag == "code" and _is_code_block(child)):
                flush()
                walk(child)
            else:
                run.append(_xml_text(child))
            run.append(child.tail or "")
        flush()

    walk(body)
    return blocks


def _level(rend: str | None) -> int:
    """A heading's level from trafilatura's `rend` ("h2" -> 2); 0 when it does not say."""
    return int(rend[1]) if rend and len(rend) == 2 and rend[0] == "h" and rend[1] in "123456" else 0


def _on_the_page(blocks: list[Block], said: str, root: Any) -> list[Block]:
    """The blocks whose words run in this order somewhere on the page.

    trafilatura sometimes strings the tails of removed inline elements from several list items into one
    paragraph ("Use allowlist instead of domain_allowlist instead of default_app_config application
    configuration variable is deprecated"): words the page never wrote in that order, which a claim must
    not quote. Compared on words alone (`words`), so spacing and punctuation never matter. `said` holds the
    words of the page's blocks; a passage not found there is looked for in all the page's text (buttons,
    hidden decoration) before it is dropped.
    """
    everything: list[str] = []

    def on_page(key: str) -> bool:
        if key in said:
            return True
        if not everything:
            everything.append(words(" ".join(root.itertext())))
        return key in everything[0]

    kept = [b for b in blocks if on_page(b.key)]
    return kept if kept else blocks


def _is_code_block(el: Any) -> bool:
    text = "".join(el.itertext())
    return "\n" in text.strip() or el.get("lang") is not None


def _layout_cells(cells: list[Any]) -> bool:
    """trafilatura's row of a layout table (as `blocks._layout_row` reads the page's): a cell holds a heading
    or a table, or one cell alone holds paragraphs and lists."""
    if any(sub.tag in ("head", "table") for cell in cells for sub in cell.iter() if sub is not cell):
        return True
    return len(cells) == 1 and sum(sub.tag in ("p", "list") for sub in cells[0]) >= 2


def _is_block(el: Any) -> bool:
    return el.tag in _XML_BLOCKS and el.tag != "code"


_XML_BLOCKS = frozenset({"head", "p", "list", "item", "table", "row", "cell", "code", "quote", "div"})


def _xml_text(el: Any, skip: tuple[str, ...] = ()) -> str:
    """Text of an element; line breaks become spaces so words never glue."""
    parts: list[str] = []

    def collect(node: Any, top: bool) -> None:
        if not top and node.tag in skip and (node.tag != "code" or _is_code_block(node)):
            if node.tail:
                parts.append(node.tail)
            return
        if node.tag in ("lb", "cell", "item", "p", "head"):
            parts.append(" ")
        if node.text:
            parts.append(node.text)
        for child in node:
            collect(child, False)
        if node.tail and not top:
            parts.append(node.tail)

    collect(el, True)
    return clean("".join(parts))


def _readability_blocks(tree: Any) -> list[Block]:
    lxml_html = libraries.lxml_html()
    Document = libraries.readability().Document

    try:
        summary = Document(lxml_html.tostring(tree, encoding="unicode")).summary(html_partial=True)
    except Exception:  # readability raises bare Unparseable/ValueError on odd pages: fall through
        return []
    if not summary or not summary.strip():
        return []
    return html_blocks(lxml_html.fromstring(summary))


def _page_body(tree: Any) -> Any:
    bodies = tree.xpath("//body")
    return bodies[0] if bodies else tree
