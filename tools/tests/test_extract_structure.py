"""The reader hands on a page's structure (issues 24 and 32): heading paths, clean passage boundaries,
openings of reference pages, one passage per reference entry, examples in order after their introduction.

Every page is real documentation, byte for byte as Debian ships it (tools/tests/fixtures/docs/README.md), from
each documentation set the quality dev set reads and from toolchains it does not: Sphinx (Django, Flask,
SQLAlchemy, CMake), DocBook (PostgreSQL), texinfo (FFmpeg's texi2html, zsh's makeinfo), Node.js's own
generator, and Go's. The expectations are read off the page's HTML, not typed from the reader's output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from research_engine import grounding, libraries
from research_engine.documents import Chunk, Passage, number_passages
from research_engine.extract import content, extract_html
from research_engine.retrieve.store import parse_passages, render_passages

DOCS = Path(__file__).parent / "fixtures" / "docs"
SETS = [  # one page or more of every documentation set and toolchain
    "django-3.2-ref-applications.html",
    "django-3.2-ref-csrf.html",
    "postgresql-15-ddl-schemas.html",
    "postgresql-15-runtime-config-resource.html",
    "postgresql-15-sql-vacuum.html",
    "flask-2.2-config.html",
    "sqlalchemy-1.4-orm-exceptions.html",
    "nodejs-18-string_decoder.html",
    "ffmpeg-5.1-ffmpeg-scaler.html",
    "zsh-5.9-conditional-expressions.html",
    "cmake-3.25-ctest_build.html",
    "golang-1.19-go_mem.html",
    "tig-2.5-tigrc.5.html",
    "tig-2.5-manual.html",
    "privoxy-3.0-faq-misc.html",
    "privoxy-3.0-man-page.html",
    "gettext-0.21-gettext_2.html",
    "vim-9.0-usr_05.html",
]


def read(name: str) -> list[Passage]:
    return extract_html((DOCS / name).read_bytes(), url=f"http://127.0.0.1/{name}").passages


def page(name: str) -> object:
    return libraries.lxml_html().fromstring((DOCS / name).read_bytes())


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def shown(el: object) -> str:
    """An element's text as a reader sees it: no permalink marks ("¶", "#"), no hidden decoration."""
    parts: list[str] = []

    def collect(node: object) -> None:
        if node.get("aria-hidden") != "true" and not is_mark(node):  # type: ignore[attr-defined]
            parts.append(node.text or "")  # type: ignore[attr-defined]
            for child in node:  # type: ignore[attr-defined]
                collect(child)
        if node is not el:
            parts.append(node.tail or "")  # type: ignore[attr-defined]

    collect(el)
    return " ".join("".join(parts).split())


def is_mark(el: object) -> bool:
    """A permalink: a link to a place on the page whose text is no word."""
    href = el.get("href") or ""  # type: ignore[attr-defined]
    return el.tag == "a" and href.startswith("#") and not re.search(r"\w", el.text_content())  # type: ignore[attr-defined]


def passage_with(passages: list[Passage], text: str, kind: str | None = None) -> Passage:
    hits = [p for p in passages if text in p.text and (kind is None or p.kind == kind)]
    assert hits, f"{text!r} not among {[p.text[:60] for p in passages]}"
    return hits[0]


# Heading paths


@pytest.mark.parametrize(
    ("name", "text", "path"),
    [
        # DocBook: <h3> three <div>s deep in a title page, restored over the text it heads.
        ("postgresql-15-ddl-schemas.html", "To create a schema, use the CREATE SCHEMA command.",
         ("5.9.1. Creating a Schema",)),
        # Sphinx: sections nest as <section>s, h2 > h3 > h4.
        ("django-3.2-ref-csrf.html", "The recommended source for the token is the csrftoken cookie",
         ("How to use it", "AJAX",
          "Acquiring the token if CSRF_USE_SESSIONS and CSRF_COOKIE_HTTPONLY are False")),
        # Node.js: headings end in a "#" permalink, which is no part of them.
        ("nodejs-18-string_decoder.html", "Creates a new StringDecoder instance.",
         ("String decoder", "Class: StringDecoder", "new StringDecoder([encoding])")),
        # Go: flat <h2>/<h3> siblings.
        ("golang-1.19-go_mem.html", "For any sync.Mutex or sync.RWMutex variable l and n < m",
         ("Synchronization", "Locks")),
        # Sphinx: several commands on one page, each a <section> with the same sections under its <h1>.
        ("borgbackup-1.2-usage-key.html", "If repository encryption is used, the repository is inaccessible",
         ("borg key export", "Description")),
        ("borgbackup-1.2-usage-key.html", "This command restores a key previously backed up",
         ("borg key import", "Description")),
        # texinfo (texi2html): numbered chapter headings with hidden "#" and "TOC" links.
        ("ffmpeg-5.1-ffmpeg-scaler.html", "Set the scaler flags.", ("2 Scaler Options",)),
    ],
)  # fmt: skip
def test_a_passage_carries_the_path_of_headings_above_it_outermost_first(name, text, path):
    found = passage_with(read(name), text)
    assert found.heading_path == path
    for heading in path:  # every heading of the path is a passage of its own, with its level
        h = passage_with(read(name), heading, "heading")
        assert h.text == heading and 1 <= h.level <= 6


def test_a_heading_whose_words_are_a_named_anchor_heads_its_section():
    # DocBook through Jade: <H3><A NAME="TOR">4.10. How do I use ...</A></H3>; an anchor without href links
    # nowhere, so its words are no link text, and every question of the FAQ comes back as its heading.
    passages = read("privoxy-3.0-faq-misc.html")
    tree = page("privoxy-3.0-faq-misc.html")
    named = [shown(h) for h in tree.iter("h3") if h.find("a") is not None and h.find("a").get("href") is None]
    assert len(named) >= 10
    headings = [p.text for p in passages if p.kind == "heading"]
    assert [h for h in named if h in headings] == named
    found = passage_with(passages, "you may have to change the port from 9050 to 9150")
    assert found.heading_path == ("4.10. How do I use Privoxy together with Tor?",)


def test_a_description_s_first_lines_before_its_first_paragraph_stay_with_their_term():
    # man2html: <DT><B>--config-test</B><DD>Exit after loading ...<P>If the exit code is 1 ...
    name = "privoxy-3.0-man-page.html"
    passages = read(name)
    leading = [
        " ".join((dd.text or "").split())
        for dd in page(name).iter("dd")
        if (dd.text or "").strip() and dd.find("p") is not None
    ]
    assert leading
    for text in leading:
        found = passage_with(passages, text[:60])
        assert found.kind == "entry", found


def test_a_heading_whose_words_link_to_the_table_of_contents_heads_its_section():
    # texi2html: <h2 class="section"> <a href="gettext_toc.html#TOC8">2.1 Operating System Installation</a>
    name = "gettext-0.21-gettext_2.html"
    passages = read(name)
    linked = [
        shown(h) for h in page(name).iter("h2", "h3") if h.find("a") is not None and h.find("a").get("href")
    ]
    assert len(linked) >= 4
    headings = [p.text for p in passages if p.kind == "heading"]
    assert [h for h in linked if h in headings] == linked
    found = passage_with(passages, "The default language is often already specified during operating system")
    assert found.heading_path[-1] == "2.1 Operating System Installation"


def test_prose_set_in_one_pre_is_read_as_paragraphs_with_its_examples_as_code():
    # vim2html: the whole help page is one <PRE>; its paragraphs and indented examples are what a reader sees.
    passages = read("vim-9.0-usr_05.html")
    assert len([p for p in passages if p.kind == "paragraph"]) >= 50
    intro = passage_with(passages, "You probably got tired of typing commands that you use very often.")
    assert intro.kind == "paragraph" and "To start Vim with all your favorite option settings" in intro.text
    assert passage_with(passages, ":edit $MYVIMRC").kind == "code"
    assert not [p for p in passages if len(p.text) > 5000]


def test_the_lists_of_prose_set_in_a_pre_keep_their_items():
    # "This switches on three very clever mechanisms:" over "1. Filetype detection. Whenever you start
    # editing a file, ..."; "You can find them in several places:" over "- Some are always loaded, ...".
    # trafilatura dropped every such list (its items bare, a paragraph after it).
    passages = read("vim-9.0-usr_05.html")
    item = passage_with(passages, "1. Filetype detection.")
    assert (
        "Whenever you start editing a file, Vim will try to figure out what kind of file this is."
        in item.text
    )
    assert passage_with(passages, "3. Using indent files").text.endswith(
        "See |:filetype-indent-on| and 'indentexpr'."
    )
    assert passage_with(passages, "2. Drop it in the right directory.")
    assert passage_with(
        passages, "- Download from the net. There is a large collection on http://www.vim.org."
    )


def test_a_programs_help_in_a_pre_is_read_as_one_entry_per_option():
    # editcap's --help: "Duplicate packet removal:" over "  -d                     remove packet if duplicate
    # (window == 5)."; a long option's name runs into the column ("-S <strict adjustment> adjust ...").
    passages = read("wireshark-4.0-AppToolseditcap.html")
    assert passage_with(passages, "Duplicate packet removal:").kind == "paragraph"
    option = passage_with(passages, "remove packet if duplicate (window == 5).")
    assert (option.kind, option.term, option.text) == (
        "entry",
        "-d",
        "-d remove packet if duplicate (window == 5).",
    )
    strict = passage_with(passages, "adjust timestamp of packets if necessary")
    assert strict.term == "-S <strict adjustment>" and "strict chronological increasing order" in strict.text
    assert not [p for p in passages if p.kind == "paragraph" and " -r keep the selected packets" in p.text]


@pytest.mark.parametrize(
    "name",
    [
        "golang-1.19-go_mem.html",  # Go's memory model: program listings, however long
        "privoxy-3.0-faq-misc.html",  # DocBook's screens: <TABLE CLASS="SCREEN"><TR><TD><PRE CLASS="SCREEN">
    ],
)
def test_a_listing_in_a_pre_is_one_example_even_framed_by_a_table(name):
    passages = read(name)
    listings = [" ".join("".join(pre.itertext()).split()) for pre in page(name).iter("pre")]
    assert listings
    for text in listings:
        assert passage_with(passages, text).kind == "code"
    assert not [p for p in passages if p.kind == "table-row" and p.text in listings]


def test_a_heading_titling_a_box_heads_nothing_after_the_box():
    # DocBook's admonition: <div class="note"><h3 class="title">Note</h3><p>...</p></div> inside a section.
    passages = read("postgresql-15-ddl-schemas.html")
    after_box = passage_with(passages, "A database contains one or more named schemas")
    assert "Note" not in after_box.heading_path
    assert not [p for p in passages if p.kind == "heading" and p.text == "Note"]


def test_a_section_heading_comes_back_when_only_a_menu_row_of_its_words_was_kept():
    # texinfo (makeinfo): the chapter's menu, "2.1 Author | ...", stands before the section "2.1 Author".
    passages = read("zsh-5.9-introduction.html")
    headings = [(p.level, p.text) for p in passages if p.kind == "heading"]
    assert headings[:3] == [(2, "2.1 Author"), (2, "2.2 Availability"), (2, "2.3 Mailing Lists")], headings
    assert not [p for p in passages if p.kind == "table-row" and p.text.startswith("2.1 Author")]
    assert passages[[p.text for p in passages].index("2.1 Author") + 1].heading_path == ("2.1 Author",)


def test_a_heading_path_lists_only_the_enclosing_headings():
    passages = read("golang-1.19-go_mem.html")
    later = passage_with(passages, "Programs with races are incorrect and can exhibit")
    assert later.heading_path == ("Incorrect synchronization",)  # "Synchronization" and "Locks" closed


def test_heading_paths_are_recorded_in_the_source_file_and_read_back():
    passages = read("django-3.2-ref-csrf.html") + read("flask-2.2-config.html")[:0]
    body = render_passages(passages)
    assert re.search(r"^\[p\d+\] \{heading level=3\} AJAX$", body, re.M)
    assert parse_passages(body) == passages


def test_an_old_source_file_without_levels_reads_with_each_passage_under_its_nearest_heading():
    body = "\n\n".join(
        [
            "[p01] {heading} Overview",
            "[p02] The first paragraph.",
            "[p03] {heading} Details",
            "[p04] {list-item} An item.",
            "[p05] {code} x = 1",
        ]
    )
    passages = parse_passages(body)
    assert [p.heading_path for p in passages] == [(), ("Overview",), (), ("Details",), ("Details",)]
    assert [(p.kind, p.level, p.term) for p in passages][:2] == [("heading", 0, ""), ("paragraph", 0, "")]


def test_levels_nest_and_a_first_heading_of_unknown_level_parents_nothing():
    passages = number_passages(
        [
            Chunk("heading", "Table of contents"),  # level unknown
            Chunk("heading", "Guide", 2),
            Chunk("heading", "Install", 3),
            Chunk("paragraph", "Run the installer."),
            Chunk("heading", "Use", 3),
            Chunk("paragraph", "Start it."),
            Chunk("heading", "Reference", 2),
            Chunk("paragraph", "All options."),
        ]
    )
    assert [p.heading_path for p in passages] == [
        (), (), ("Guide",), ("Guide", "Install"), ("Guide",), ("Guide", "Use"), (), ("Reference",),
    ]  # fmt: skip


# Clean boundaries


@pytest.mark.parametrize("name", SETS)
def test_a_heading_is_never_the_first_words_of_the_passage_under_it(name):
    passages = read(name)
    tree = page(name)
    for h in tree.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        nxt = h.getnext()
        while nxt is not None and not (isinstance(nxt.tag, str) and words(nxt.text_content())):
            nxt = nxt.getnext()
        head = words(shown(h))
        if not head or nxt is None:
            continue
        glued = f"{head} {' '.join(words(nxt.text_content()).split()[:3])}"
        assert not [p.text for p in passages if p.kind != "heading" and words(p.text).startswith(glued)], head


@pytest.mark.parametrize("name", SETS)
def test_a_code_passage_is_a_whole_preformatted_block_and_no_other_passage_holds_one(name):
    passages = read(name)
    pres = ["".join(pre.itertext()) for pre in page(name).iter("pre")]
    blocks = {" ".join(text.split()) for text in pres if not content._reads_as_prose(text)}
    prose = " ".join(" ".join(text.split()) for text in pres if content._reads_as_prose(text))
    for p in passages:
        if p.kind == "code":  # an example in prose set in a <pre> is a block of it
            assert p.text in blocks or p.text in prose, p.text[:80]
    prose = [p.text for p in passages if p.kind != "code"]
    for block in blocks:
        if len(block.split()) >= 4:
            assert not [t for t in prose if block in t and t != block], block[:80]


def test_an_example_follows_the_sentence_introducing_it():
    for name, intro, example in [
        ("django-3.2-ref-csrf.html", "use the csrf_token tag inside the <form> element",
         '<form method="post">'),
        ("postgresql-15-ddl-schemas.html", "Give the schema a name of your choice. For example:",
         "CREATE SCHEMA myschema;"),
        ("flask-2.2-config.html", "so you can read and write them from there:", "app.testing = True"),
    ]:  # fmt: skip
        passages = read(name)
        at = passages.index(passage_with(passages, intro))
        assert passages[at + 1].kind == "code" and passages[at + 1].text.startswith(example), name


# Openings of reference pages


@pytest.mark.parametrize(
    ("name", "opening"),
    [
        ("sqlalchemy-1.4-orm-exceptions.html", "SQLAlchemy ORM exceptions."),
        ("cmake-3.25-ctest_build.html", "Perform the CTest Build Step as a Dashboard Client."),
        ("nodejs-18-string_decoder.html", "The node:string_decoder module provides an API for decoding"),
        ("ffmpeg-5.1-ffmpeg-scaler.html", "The FFmpeg rescaler provides a high-level interface to the"),
        ("flask-2.2-config.html", "Applications need some kind of configuration."),
        ("django-3.2-ref-applications.html", "Django contains a registry of installed applications"),
        ("zsh-5.9-conditional-expressions.html", "A conditional expression is used with the [[ compound"),
    ],
)  # fmt: skip
def test_a_reference_page_keeps_its_opening_paragraph(name, opening):
    passages = read(name)
    first = passages.index(passage_with(passages, opening))
    # Only headings and short labels ("Stability: 2 - Stable", "New in version 3.19.") come before it.
    assert all(p.kind == "heading" or len(p.text.split()) <= 5 for p in passages[:first])


def test_a_reference_page_opening_under_its_title_keeps_its_name_and_heading():
    # trafilatura drops the first entry's signature and the heading over it; only "A mixin that ..." stayed.
    passages = read("django-3.2-ref-class-based-views-mixins-multiple-object.html")
    assert (passages[0].kind, passages[0].text) == ("heading", "MultipleObjectMixin")
    assert passages[1].kind == "entry"
    assert passages[1].term == "class django.views.generic.list.MultipleObjectMixin"
    assert passages[1].text.endswith(
        "MultipleObjectMixin A mixin that can be used to display a list of objects."
    )
    assert passages[1].heading_path == ("MultipleObjectMixin",)


# Reference entries


def entries_of_page(name: str) -> list[tuple[str, str]]:
    """(term, first paragraph of its description) for every <dt> whose <dd> opens with a paragraph."""
    out = []
    for dt in page(name).iter("dt"):
        dd = dt.getnext()
        while dd is not None and dd.tag == "dt":
            dd = dd.getnext()
        first = next((c for c in dd if isinstance(c.tag, str)), None) if dd is not None else None
        if first is not None and first.tag == "p" and not (dd.text or "").strip():
            out.append((shown(dt), first.text_content()))
    return out


@pytest.mark.parametrize(
    "name",
    [
        "django-3.2-ref-applications.html",  # Sphinx desc: signature and body
        "postgresql-15-runtime-config-resource.html",  # DocBook varlistentry
        "flask-2.2-config.html",  # Sphinx py:data
        "sqlalchemy-1.4-orm-exceptions.html",  # Sphinx py:exception
        "cmake-3.25-ctest_build.html",  # Sphinx definition list of keyword options
        "ffmpeg-5.1-ffmpeg-scaler.html",  # texinfo @table (texi2html)
        "zsh-5.9-conditional-expressions.html",  # texinfo @table (makeinfo)
        "tig-2.5-tigrc.5.html",  # AsciiDoc labeled list (xhtml11)
        "tig-2.5-tig.1.html",  # AsciiDoc labeled list of subcommands and options
    ],
)
def test_every_definition_list_entry_is_one_passage_with_its_term(name):
    passages = read(name)
    entries = [p for p in passages if p.kind == "entry"]
    expected = entries_of_page(name)
    assert len(expected) >= 3
    for term, description in expected:
        # (several terms may share one description: "string = pattern", "string == pattern")
        hits = [p for p in entries if words(term) in words(p.term) and words(description) in words(p.text)]
        assert hits, (term, description[:60])
        assert hits[0].text.startswith(hits[0].term)
        assert hits[0].text[len(hits[0].term) :].lstrip()  # the term and its description, both


@pytest.mark.parametrize(
    ("name", "quote"),
    [
        ("postgresql-15-runtime-config-resource.html",
         "shared_buffers (integer) Sets the amount of memory the database server uses for shared memory"),
        ("ffmpeg-5.1-ffmpeg-scaler.html", "sws_flags Set the scaler flags."),
        ("zsh-5.9-conditional-expressions.html", "-a file true if file exists."),
        ("flask-2.2-config.html", "SECRET_KEY A secret key that will be used for securely signing"),
        ("cmake-3.25-ctest_build.html", "BUILD <build-dir> Specify the top-level build directory."),
        ("tig-2.5-tigrc.5.html", "mouse (bool) Whether to enable mouse support."),
    ],
)  # fmt: skip
def test_a_claim_can_quote_an_option_with_its_description(name, quote):
    passages = parse_passages(render_passages(read(name)))  # as a run stores and reads them
    stored = "\n\n".join(p.text for p in passages)
    assert grounding.find_quote(quote, stored).found
    entry = passage_with(passages, quote, "entry")
    assert quote.startswith(entry.term) and entry.term


def test_an_entry_records_its_term_in_the_source_file():
    passages = read("zsh-5.9-conditional-expressions.html")
    body = render_passages(passages)
    assert "{entry term=7} -a file true if file exists." in body
    entry = [p for p in parse_passages(body) if p.kind == "entry"][0]
    assert (entry.term, entry.description) == ("-a file", "true if file exists.")


def test_a_version_note_opening_a_description_stays_with_what_the_term_does():
    entry = passage_with(read("cmake-3.25-ctest_build.html"), "PARALLEL_LEVEL <parallel>", "entry")
    assert entry.text.startswith("PARALLEL_LEVEL <parallel> New in version 3.21. Specify the parallel level")


def test_identical_descriptions_of_two_options_each_stay_with_their_own_term():
    passages = read("zsh-5.9-conditional-expressions.html")
    texts = [p.text for p in passages if p.kind == "entry"]
    assert "-a file true if file exists." in texts and "-e file true if file exists." in texts


STAMP_HTML_RE = re.compile(r"This document was generated|Created using\s*<a[^>]*>Sphinx")
STAMPED = [  # pages whose HTML ends with a generator's stamp
    name
    for name in SETS + ["zsh-5.9-introduction.html", "sqlalchemy-1.4-core-pooling.html"]
    if STAMP_HTML_RE.search((DOCS / name).read_text("utf-8"))
]


@pytest.mark.parametrize("name", STAMPED)
def test_a_generators_stamp_is_no_passage_of_the_page(name):
    # texinfo ends every page "This document was generated on <date> using texi2any." (or "... using
    # makeinfo."), Sphinx "Created using Sphinx 5.3.0.": furniture about the page, which the last entry of a
    # definition list would otherwise run on into.
    passages = read(name)
    assert passages
    assert not [p.text for p in passages if re.search(r"document was generated|Created using Sphinx", p.text)]


def test_the_stamped_pages_cover_texinfo_and_sphinx():
    assert {"zsh-5.9-introduction.html", "ffmpeg-5.1-ffmpeg-scaler.html"} <= set(STAMPED)  # texinfo
    assert "flask-2.2-config.html" in STAMPED  # Sphinx


def test_a_one_page_texinfo_manual_keeps_its_chapters_as_headings_and_drops_its_node_bars():
    # makeinfo's one-page HTML (GNU SASL's manual): each node opens with a bar "Next: <a>, Previous: <a>, Up:
    # <a> [<a>Contents</a>][<a>Index</a>]", and a chapter's heading stands over a menu of its sections.
    passages = read("gsasl-2.2-gsasl.html")
    assert not [p for p in passages if re.match(r"(Next|Previous|Up): ", p.text)]
    headings = {p.text: p.level for p in passages if p.kind == "heading"}
    for chapter in ("2 Preparation", "3 Using the Library", "4 Properties"):
        assert headings.get(chapter) == 2, chapter
    assert headings.get("2.5.2 Standalone Autoconf test using Libtool") == 4
    opening = passage_with(passages, "use of the library can be roughly modeled into the")
    assert opening.heading_path == ("3 Using the Library",)
    libtool = passage_with(passages, "can use the normal Autoconf tests to find Libgsasl")
    assert libtool.heading_path == (
        "2 Preparation",
        "2.5 Autoconf tests",
        "2.5.2 Standalone Autoconf test using Libtool",
    )


def test_a_pre_inside_a_pre_is_read_with_it_and_a_listings_comments_keep_it_a_listing():
    # mdBook: `<pre><pre class="playground"><code>` around a Rust example whose comment lines read as English.
    passages = read("rust-1.63-rust-by-example-explicit.html")
    listings = [p for p in passages if "fn print_refs" in p.text]
    assert len(listings) == 1 and listings[0].kind == "code"
    assert "fn failed_borrow" in listings[0].text and "fn main()" in listings[0].text
    opening = passage_with(passages, "The borrow checker uses explicit lifetime annotations")
    assert opening.kind == "paragraph"
    assert passage_with(passages, "the lifetime of foo cannot exceed that of either").kind == "paragraph"


def test_a_help_pages_capitalised_heading_with_its_tags_is_a_heading_not_the_next_sentences_start():
    # vim2html: "GLOBAL PLUGINS<tab>*standard-plugin*" over "When you start Vim, it will automatically load
    # ...", no blank line between them; the tag is an anchor, so the line is all capitals.
    passages = read("vim-9.0-usr_05.html")
    heading = passage_with(passages, "GLOBAL PLUGINS")
    assert heading.kind == "heading" and "When you start Vim" not in heading.text
    under = passage_with(passages, "When you start Vim, it will automatically load a number of global")
    assert under.text.startswith("When you start Vim") and under.heading_path[-1] == heading.text


def test_a_page_laid_out_in_tables_is_read_as_its_paragraphs_and_lists_not_as_rows():
    # libxml2: a navigation column beside a cell holding a nested table of paragraphs and a list.
    passages = read("libxml2-2.9-threads.html")
    opening = passage_with(passages, "Starting with 2.4.7, libxml2 makes provisions to ensure that")
    assert opening.kind == "paragraph" and opening.text.endswith("a couple of things to do to ensure it:")
    item = passage_with(passages, "configure the library accordingly using the --with-threads options")
    assert item.kind == "list-item"
    assert passage_with(passages, "Note that the thread safety cannot be ensured").kind == "paragraph"
    assert not [p for p in passages if p.kind == "table-row"]
    assert not [p for p in passages if "Related links" in p.text or "Mail archive" in p.text]


def test_a_heading_kept_nowhere_is_not_kept_because_its_words_are_elsewhere():
    # borg key change-passphrase's "Examples" heading is not the "Examples:" paragraph of borg key export:
    # both come back, each where it stands, and every "Description" heads its command's description.
    passages = read("borgbackup-1.2-usage-key.html")
    headings = [(p.text, p.level) for p in passages if p.kind == "heading"]
    assert headings.count(("Description", 2)) == 3 and ("Examples", 2) in headings
    assert passage_with(passages, "Examples:", "paragraph").text == "Examples:"
    assert not [p for p in passages if p.kind == "paragraph" and p.text in ("Description", "Examples")]
