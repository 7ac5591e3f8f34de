"""Sentence candidates: the quotable runs of a source's text, each with what the ranking needs to know.

`sentence_candidates` reads a sub-question's fetched passages in order and returns every quotable
sentence of its claim-bearing passages (fragments, code, navigation and headings filtered out) plus the
runs of text in which reference documentation states a finding without one plain sentence: an entry's
term with its lines, a pronoun-led sentence with the sentences back to the one naming what the pronoun
stands for, a list item with the sentence announcing the list, a sentence with the one-line example it
introduces (`examples` says how an example joins its prose), a table row whole. Each candidate knows its
heading, its entry's head and rank, its page's title and whether the page is release notes; `picking`
ranks them. Pure; every candidate is one run of a source's text (a passage break read as one space, as
the verifier's normalized match reads it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_engine.answering import SECTION_NUMBER_RE, with_parts
from research_engine.engine.extractive.examples import (
    continues_past_example,
    introduces_example,
    is_code,
    labelled_examples,
    lead_into,
    quotable_example,
)
from research_engine.engine.extractive.text import (
    ANTECEDENT_MAX_WORDS,
    TERM_RE,
    TERMINAL_RE,
    is_claim_sentence,
    sentences,
    tokens,
)
from research_engine.engine.models import Passage, SourceText
from research_engine.extract.text import HELP_TAG_RE
from research_engine.mechanisms import entry_name, mechanisms_named

DANGLING_START_RE = re.compile(r"^(it|this|that|these|those|they|its|their|such|he|she)\b", re.IGNORECASE)
CLAIM_PASSAGE_KINDS = ("paragraph", "list-item", "table-row", "data")
NAVIGATION_LABEL_RE = re.compile(
    r"^\s*(?:on this page|(?:table of )?contents|in this (?:article|section|page)|page contents|navigation|"
    r"quick search|previous topic|next topic|this page|related topics)\s*:?\s*$",
    re.IGNORECASE,
)
# A heading that names an option, setting or function: code punctuation, or an identifier's shape. A dash
# between spaces joins words ("Disconnect Handling - Pessimistic"): it names nothing.
NAMING_HEADING_RE = re.compile(
    r"[_=()./<>\[\]`$@]|-(?!\s)|(?<!\s)-|\b[a-z]+[A-Z]\w*|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
)
# A change's issue or pull-request numbers after a heading in words: "Type annotations for event handler
# methods (#2931)", "Fix crash (GH #164, #170)": they name no thing the heading is the name of.
ISSUE_REFS_RE = re.compile(r"\s*\((?:[A-Za-z]{1,4}\s*)?#\d+(?:,\s*(?:[A-Za-z]{1,4}\s*)?#\d+)*\)\s*$")
LABEL_RE = re.compile(r"^\w[\w ]{0,20}:\s")  # "Default: 1209600": a labelled line of a reference entry
ANAPHORA_RE = re.compile(
    r"\b(?:this|that|these|those|such)\s+(?:purpose|option|setting|value|method|mode|case|feature|function|"
    r"variable|parameter|flag|argument|command|behaviou?r|approach|technique)s?\b|^\w+\s+(?:\w+\s+)?also\b",
    re.IGNORECASE,
)
# "For this reason, select_related gets ...", "In these cases it is possible ...": a lead-in pointing back
LEANING_LEAD_RE = re.compile(
    r"^(?:for|in|because\s+of|due\s+to|as\s+a\s+result\s+of|despite|with|without)\s+(?:this|that|these|those|such)\b",
    re.IGNORECASE,
)
NAME_ITEM_MAX_WORDS = 4  # a list item this short is a name, quoted with the sentence announcing the list
EXAMPLE_LEAD_RE = re.compile(r"^(?:for\s+example|for\s+instance|e\.g\.|example)\s*:$", re.IGNORECASE)
# A sentence that says what the example above it shows ("Above, any DBAPI connection that has been open for
# more than one hour will be invalidated ...", "In this example, ..."): it is quoted with that example too.
EXAMPLE_BACK_RE = re.compile(
    r"^(?:above|in\s+(?:the\s+(?:above|previous|preceding)|this|that)\s+example"
    r"|in\s+the\s+example\s+above|the\s+(?:above|previous|preceding)\s+example)\b",
    re.IGNORECASE,
)
CASES_RE = re.compile(  # a sentence summing up the cases its paragraph set out before it
    r"^(?:in\s+(?:either|both|each|all|any|every)\s+(?:of\s+these\s+)?(?:case|cases|instance)|either\s+way)\b",
    re.IGNORECASE,
)
ENTRY_PASSAGES = 3  # a sentence this many passages below its entry's term (term included) may quote it
ENTRY_SENTENCE_MIN_WORDS = 4  # a shorter sentence than a claim's minimum, quoted with its entry's term
TABLE_ROW_WORDS = (3, 40)  # a table row is a candidate at this many words
ITEM_MIN_WORDS = 8  # a list item or line with no full stop is a statement at this length
# ... and on release notes at this length: they state each change as a short item ("Drop Python 2.7 and 3.4
# support"); elsewhere a six-word line is a heading or a caption as often.
CHANGE_ITEM_MIN_WORDS = 6
CHANGELOG_RE = re.compile(
    r"\b(?:release notes?|changelog|change log|what['\u2019]?s new|release \d[\d.]*)\b", re.I
)  # "What\u2019s new": Sphinx sets the apostrophe as typographers do
# ... and a package's notes file by its conventional name ("NEWS", "NEWS.gz", "CHANGES.txt"), in capitals.
CHANGES_FILE_RE = re.compile(r"^(?:NEWS|CHANGES|HISTORY)(?:\.\w+)*$")
# An admonition's title, a heading only in markup: "Note", "Important", "Warning", "See also", "Tip".
ADMONITION_RE = re.compile(
    r"^(?:notes?|important|tip|hint|warning|caution|danger|attention|see\s?also|todo|examples?)\W*$",
    re.IGNORECASE,
)
MANGLED_RE = re.compile(r"\s[,.;:](?:\s|$)")  # "cache , or are using": a sentence the extraction cut up


@dataclass
class SentenceCandidate:
    text: str
    ref: str
    source_index: int
    position: int  # passage order then sentence order inside the source
    terms: list[str]
    heading: set[str]  # the terms of the nearest heading above it, and of the page title
    row: bool = False  # a table row, not a sentence
    # A sentence quoted with its entry's term although it is a claim alone: the terms the term adds. Such a
    # span is a candidate only where it adds what the question is about.
    head_adds: set[str] = field(default_factory=set)
    entry_head: set[str] = field(default_factory=set)  # the own terms of the heading or term it falls under
    entry_rank: int = 0  # how many claimable sentences of its entry come before it
    title: set[str] = field(default_factory=set)  # the terms of its page's title
    changelog: bool = False  # its page is release notes or a changelog (by its title)
    alone_index: int = -1  # a span with its entry's term: the index of the sentence alone
    head_lines: int = 0  # ... and how many passages it quotes before the sentence (term, "Default: ...")
    headings: tuple[str, ...] = ()  # the section headings above it, outermost first (`_section_path`)
    entry_term: str = ""  # the text of the heading or definition term its entry opens with
    entry_name: str = ""  # the name its definition term gives ("mouse" of "mouse (bool)"), if one
    example: bool = False  # quoted with the one-line example it introduces


def _term_over_description(passages: list[Passage]) -> list[Passage]:
    """A reference entry (kind `entry`: a term and its description in one passage) read as its term (kind
    `term`: an entry's head, never a line under a heading) over its description, the shape these rules were
    written for; the text runs on unchanged."""
    out: list[Passage] = []
    for p in passages:
        if p.kind == "entry" and p.term:
            out += [Passage(p.id, p.term, "term"), Passage(p.id, p.text[len(p.term) :].lstrip(), "paragraph")]
        else:
            out.append(p)
    return out


def sentence_candidates(sources: list[SourceText]) -> list[SentenceCandidate]:
    """Every quotable sentence of the sources' claim-bearing passages, in source and reading order.

    Beside each sentence, a span that states what it is about when the sentence does not: a reference
    entry's sentence with the entry's term ("shared_buffers (integer) Sets the amount ... The default is
    typically 128 megabytes (128MB), ..."; "SESSION_COOKIE_AGE Default: 1209600 (2 weeks, in seconds) The
    age of session cookies, in seconds."), and a sentence opening with a pronoun with the sentences back to
    the one naming what it stands for, across a passage break too. A table row is never an entry's term.
    Each is one verbatim run of the page's text.
    """
    out: list[SentenceCandidate] = []
    for s_index, source in enumerate(sources):
        position = 0
        previous_kind: str | None = None
        title = set(tokens(source.title or ""))
        changelog = bool(CHANGELOG_RE.search(source.title or "") or CHANGES_FILE_RE.match(source.title or ""))
        heading = title
        section: tuple[str, ...] = ()  # the headings the passage sits under
        entry: list[str] = []  # the passages since the last heading or term, the heading first
        entry_headed = False  # the entry opens with a heading, not a definition term
        head_terms: set[str] = set()  # the own terms of the entry's heading or term
        named = ""  # the name the entry's definition term gives (`entry_name`)
        rank = 0  # claimable sentences of the entry so far
        intro: str | None = None  # "... contains many new features, including:" and the list's items so far
        passages = _term_over_description(source.passages)
        for p_index, passage in enumerate(passages):
            prior_kind = previous_kind
            after_code, previous_kind = previous_kind == "code", passage.kind
            if passage.kind != "heading" and is_code(passage):
                entry, intro = [], None  # an example line the extraction kept as text heads nothing
                continue
            if NAVIGATION_LABEL_RE.match(passage.text):
                # A theme's label for the page's own table of contents ("On this page"): page chrome the
                # extraction kept, never the term of the paragraph after it ("On this page Markdown is ...").
                entry, intro = [], None
                continue
            if passage.kind == "heading":
                section = _section_path(passage, section)
            shown_examples = labelled_examples(passages, p_index)
            if shown_examples:
                # An examples list's label and its example ("Copy commit ID to clipboard: bind generic 9
                # @sh -c ..."; "Undo add $ git reset ..."), with what the page says of it after: a short
                # line, not an entry's term.
                for shown_text in shown_examples:
                    position += 1
                    out.append(_candidate(shown_text, source.ref, s_index, position, heading, example=True))
                    out[-1].title, out[-1].changelog = title, changelog
                _place_in_section(out[-len(shown_examples) :], section, [], "")
                entry, intro = [], None
                continue
            continued = continues_past_example(passages, p_index)
            # An item of a list is no term over the items after it ("user_agent (str) – String to send as
            # User-Agent header" over "decompress_response (bool) – ..."): they are its siblings.
            sibling = (
                passage.kind == "list-item"
                and p_index + 1 < len(passages)
                and passages[p_index + 1].kind == "list-item"
                and not LABEL_RE.match(passage.text)
            )
            if passage.kind in ("heading", "term") or (
                passage.kind != "table-row" and TERM_RE.match(passage.text) and not continued and not sibling
            ):
                # A heading, or a definition list's term ("shared_buffers (integer)"): what follows is on it.
                # A short line right under a heading ("Default: 1209600 (2 weeks, in seconds)") belongs to
                # the heading's entry.
                # (a texinfo definition's "Function: void * gcry_malloc (size_t n)" is a term naming a thing)
                label = (
                    passage.kind != "heading"
                    and LABEL_RE.match(passage.text)
                    and not (passage.kind == "term" and entry_name(passage.text))
                )
                under_heading = len(entry) == 1 and (entry_headed or label) and passage.kind != "term"
                if passage.kind != "heading" and under_heading:
                    heading = heading | set(with_parts(tokens(passage.text)))
                    entry.append(passage.text)
                elif label:
                    # "Default: timedelta(days=31) (2678400 seconds)" after an entry's description is the
                    # entry's value: quoted with its term and the description it completes. "Release date:
                    # 2023-05-11" under no term heads nothing.
                    value = _entry_span(entry, passage.text, term=bool(named)) if len(entry) > 1 else None
                    if value and not entry_headed:
                        position += 1
                        out.append(_candidate(value, source.ref, s_index, position, heading))
                        out[-1].head_lines = len(entry)
                        rank = _place_in_entry(out[-1:], head_terms, rank, title, changelog)
                        _place_in_section(out[-1:], section, entry, named)
                    entry = []
                else:
                    heading = title | set(with_parts(tokens(passage.text)))
                    entry, entry_headed = [passage.text], passage.kind == "heading"
                    named = (entry_name(passage.text) or "") if passage.kind == "term" else ""
                    head_terms, rank = set(tokens(passage.text)), 0
                intro = None
                continue
            if passage.kind not in CLAIM_PASSAGE_KINDS:
                entry, intro = [], None
                continue
            before = entry[:]
            if entry or not sibling:  # an item opening a list heads no entry of its siblings
                entry.append(passage.text)
            # An item of the list an introducing sentence announces: a list item, or a one-sentence paragraph
            # (extraction flattens some lists).
            one = sentences(passage.text)
            listed_shape = passage.kind == "list-item" or len(one) == 1
            is_item = listed_shape and _is_statement(passage.text, changelog)
            listed = intro if is_item else None
            intro = f"{intro} {passage.text}" if intro and is_item else None  # the list so far
            if passage.kind == "table-row" and " | " in passage.text:
                # A reference table's row ("identifier length | 63 bytes | ...") is a finding, not prose: the
                # whole row is one candidate, kept only where a lookup finds its answer in it.
                position += 1
                cells = passage.text.split(" | ")
                if len(cells) >= 2 and TABLE_ROW_WORDS[0] <= len(passage.text.split()) <= TABLE_ROW_WORDS[1]:
                    out.append(_candidate(passage.text, source.ref, s_index, position, heading, row=True))
                    out[-1].title, out[-1].changelog = title, changelog
                    _place_in_section(out[-1:], section, entry, named)
                continue
            spans = sentences(passage.text)
            for n, (start, end) in enumerate(spans):
                first_new = len(out)
                position += 1
                text = passage.text[start:end]
                if continued and n == len(spans) - 1:
                    continue  # half a sentence: quoted whole, with the example, from the passage after it
                if n == 0 and after_code and text[:1].islower():
                    # "subclass that uses ...": the rest of a sentence whose subject was code. When the
                    # sentence before the code led into it ("Assuming origin is your upstream, using: $ tig
                    # origin..HEAD will list what will be pushed"), the three are one quote.
                    lead = lead_into(passages, p_index, text)
                    if lead and len(f"{lead} {text}".split()) <= ANTECEDENT_MAX_WORDS:
                        out.append(
                            _candidate(
                                f"{lead} {passages[p_index - 1].text} {text}",
                                source.ref,
                                s_index,
                                position,
                                heading,
                                example=True,
                            )
                        )
                        _place_in_section(out[-1:], section, entry, named)
                    continue
                headed = _entry_span(before, passage.text[:end], heading=entry_headed, term=bool(named))
                follows = passages[p_index + 1] if p_index + 1 < len(passages) else None
                introduces_code = (
                    n == len(spans) - 1
                    and follows is not None
                    and is_code(follows)
                    and introduces_example(text)
                )
                # A list item with no full stop ("Remove PUBLIC creation permission on the public schema
                # (Noah Misch)") is a statement all the same: release notes and feature lists read so.
                item = len(spans) == 1 and not is_claim_sentence(text) and _is_statement(text, changelog)
                if (
                    listed
                    and len(f"{listed} {passage.text[:end]}".split()) <= ANTECEDENT_MAX_WORDS
                    and (item or is_claim_sentence(text))
                ):
                    # "PostgreSQL 15 contains many new features and enhancements, including: Support for
                    # the SQL MERGE command.": the item (up to this sentence) with the sentence that says
                    # what the list is.
                    out.append(
                        _candidate(f"{listed} {passage.text[:end]}", source.ref, s_index, position, heading)
                    )
                if n == len(spans) - 1 and passage.kind == "paragraph" and introduces_example(text):
                    intro = text
                if (not is_claim_sentence(text) and not introduces_code and not item) or MANGLED_RE.search(
                    text
                ):
                    # A short sentence of a reference entry ("The age of session cookies, in seconds.")
                    # is a finding with its term and the lines between ("Default: 1209600 ...").
                    if headed and _is_entry_claim(text, headed):
                        out.append(_candidate(headed, source.ref, s_index, position, heading, head=before))
                    elif (
                        n
                        and EXAMPLE_LEAD_RE.match(text)
                        and n == len(spans) - 1
                        and follows is not None
                        and is_code(follows)
                        and quotable_example(follows.text)
                        and is_claim_sentence(passage.text[spans[n - 1][0] : spans[n - 1][1]])
                    ):
                        # "... using the PRAGMA foreign_keys command. For example: sqlite> PRAGMA
                        # foreign_keys = ON;": the sentence, the lead-in and the one-line example.
                        shown_text = f"{passage.text[spans[n - 1][0] : end]} {follows.text}"
                        out.append(
                            _candidate(shown_text, source.ref, s_index, position, heading, example=True)
                        )
                    elif n == len(spans) - 1 and text.endswith(":"):
                        names = _named_items(passages[p_index + 1 :])
                        if names and len(f"{text} {names}".split()) <= ANTECEDENT_MAX_WORDS:
                            # "Each column ... is assigned one of the following type affinities: TEXT
                            # NUMERIC INTEGER REAL BLOB": the sentence and the names it announces.
                            out.append(_candidate(f"{text} {names}", source.ref, s_index, position, heading))
                    rank = _place_in_entry(
                        out[first_new:], head_terms if entry else set(), rank, title, changelog
                    )
                    _place_in_section(out[first_new:], section, entry, named)
                    continue
                if n:
                    # "The method X performs ... It is a challenge-response scheme ... This is the most
                    # secure ...": back to the sentence that names what the pronouns stand for.
                    joined = passage.text[spans[_antecedent(passage.text, spans, n - 1, end, "")][0] : end]
                else:  # the antecedent is the previous passage's last sentence
                    prose = before and prior_kind == "paragraph" and not TERM_RE.match(before[-1])
                    back = sentences(before[-1]) if prose else []
                    if back and not is_claim_sentence(before[-1][back[-1][0] : back[-1][1]]):
                        back = []  # a code line or a fragment says nothing "this" could stand for
                    start = (
                        back[_antecedent(before[-1], back, len(back) - 1, len(before[-1]), text)][0]
                        if back
                        else 0
                    )
                    joined = f"{before[-1][start:]} {text}" if back else ""
                if joined and len(joined.split()) <= ANTECEDENT_MAX_WORDS:
                    if _leans_back(text):
                        # "This is the most secure method": the quote takes the sentence that says what
                        # "this" is, so the claim stands on its own (still one verbatim span of the page).
                        text = joined
                    elif n and CASES_RE.match(text):
                        # "In either case, the value is stored internally as UTC": the cases are the
                        # paragraph's sentences before it (both are candidates).
                        whole = passage.text[:end]
                        if len(whole.split()) <= ANTECEDENT_MAX_WORDS:
                            out.append(_candidate(whole, source.ref, s_index, position, heading))
                    elif ANAPHORA_RE.search(text):
                        # "You can also use X for this purpose": alone it says nothing of the purpose; with
                        # the sentence before it, it is a finding (both are candidates).
                        out.append(_candidate(joined, source.ref, s_index, position, heading))
                shown_above = passages[p_index - 1].text if n == 0 and after_code and p_index else ""
                if shown_above and EXAMPLE_BACK_RE.match(text) and quotable_example(shown_above):
                    # "e = create_engine(..., pool_recycle=3600) Above, any DBAPI connection ...": the
                    # example with the sentence saying what it does (both are candidates).
                    out.append(
                        _candidate(
                            f"{shown_above} {text}", source.ref, s_index, position, heading, example=True
                        )
                    )
                shown = introduces_code and follows is not None and quotable_example(follows.text)
                if shown and follows is not None:
                    text = f"{text} {follows.text}"  # "..., e.g.: <form method="post">{% csrf_token %}"
                out.append(_candidate(text, source.ref, s_index, position, heading, example=shown))
                if headed and (
                    not (set(tokens(before[0])) & set(out[-1].terms))
                    or _names_what_it_lacks(before[0], text)
                    or (named and named not in text)  # "ignore-space (mixed)" over "Ignore space changes ..."
                ):
                    alone = set(out[-1].terms)
                    out.append(
                        _candidate(headed, source.ref, s_index, position, heading, head=before, alone=alone)
                    )
                    out[-1].alone_index, out[-1].head_lines = len(out) - 2, len(before)
                rank = _place_in_entry(
                    out[first_new:], head_terms if entry else set(), rank, title, changelog
                )
                _place_in_section(out[first_new:], section, entry, named)
    return out


def _names_what_it_lacks(term: str, sentence: str) -> bool:
    """Does an entry's term name an option, setting or function the sentence under it does not write
    ("--max-old-space-size=SIZE (in megabytes)" over "Sets the max memory size of V8's old memory section.")?
    Then the sentence says what that name does, and is quoted with it."""
    return any(name not in sentence for names in mechanisms_named(term).values() for name in names)


def _named_items(after: list[Passage]) -> str:
    """The list right after a sentence announcing it, when its items are names ("TEXT", "NUMERIC", ...),
    not statements: the items joined as the page runs them, or "" (fewer than two such items)."""
    items = []
    for passage in after:
        if passage.kind != "list-item":
            break
        if len(passage.text.split()) > NAME_ITEM_MAX_WORDS or TERMINAL_RE.search(passage.text):
            return ""
        items.append(passage.text)
    return " ".join(items) if len(items) >= 2 else ""


def _leans_back(sentence: str) -> bool:
    """Does the sentence lean on the one before it ("It is ...", "For this reason, ...")?"""
    return DANGLING_START_RE.match(sentence) is not None or LEANING_LEAD_RE.match(sentence) is not None


def _antecedent(text: str, spans: list[tuple[int, int]], k: int, stop: int, tail: str) -> int:
    """The sentence of `text` (of `spans`) a quote ending with sentence `k` (or with `tail` after `text`)
    starts at: sentence k, or further back while it opens with a pronoun ("The method X performs ... It is
    a challenge-response scheme ... This is the most secure ...": back to the sentence naming X), within
    ANTECEDENT_MAX_WORDS."""
    while (
        k
        and _leans_back(text[spans[k][0] :])
        and len(f"{text[spans[k - 1][0] : stop]} {tail}".split()) <= ANTECEDENT_MAX_WORDS
    ):
        k -= 1
    return k


def _section_path(passage: Passage, above: tuple[str, ...]) -> tuple[str, ...]:
    """The headings a heading passage opens a section under, outermost first. A heading the reader gave a
    level carries its whole path (`Passage.heading_path`); one of unknown level (older records, plain
    readers) replaces the heading above it, except an admonition's label ("Important", "Note", "Warning"),
    which sits inside the section it is in."""
    if passage.level:
        return (*passage.heading_path, passage.text)
    section = tuple(h for h in above if not ADMONITION_RE.match(h))
    return (*section, passage.text) if ADMONITION_RE.match(passage.text) else (passage.text,)


def _place_in_section(
    new: list[SentenceCandidate], section: tuple[str, ...], entry: list[str], named: str
) -> None:
    """Give `new` the section it sits in and the entry (its heading or term first) it falls under."""
    for cand in new:
        cand.headings = section
        cand.entry_term, cand.entry_name = (entry[0], named) if entry else ("", "")


def _place_in_entry(
    new: list[SentenceCandidate], head: set[str], rank: int, title: set[str], changelog: bool
) -> int:
    """Mark one sentence's candidates with their entry's head and rank; the next sentence's rank."""
    for cand in new:
        cand.entry_head, cand.entry_rank, cand.title, cand.changelog = head, rank, title, changelog
    return rank + 1 if new else rank


# A list item's bullet kept in its text (a list set in a `<pre>`: Vim's "- When a swap file is found, ..."),
# or a help page's anchors before a sentence ("*add-global-plugin* You can add ..."): the claim quotes what
# follows them, still one verbatim run of the page.
LEADING_MARK_RE = re.compile(rf"^(?:[-*\u2022]\s+(?=[A-Za-z])|(?:{HELP_TAG_RE.pattern}\s+)+(?=[A-Z]))")


def _candidate(
    text: str,
    ref: str,
    source_index: int,
    position: int,
    heading: set[str],
    *,
    row: bool = False,
    head: list[str] | None = None,
    alone: set[str] | None = None,
    example: bool = False,
) -> SentenceCandidate:
    adds = set(with_parts(tokens(" ".join(head)))) - (alone or set()) if head and alone is not None else set()
    text = LEADING_MARK_RE.sub("", text, count=1)
    return SentenceCandidate(
        text,
        ref,
        source_index,
        position,
        with_parts(tokens(text)),
        heading,
        row=row,
        head_adds=adds,
        example=example,
    )


def _is_statement(text: str, changelog: bool = False) -> bool:
    """A quotable sentence, or a line with no full stop that would be one with it (shorter on a `changelog`
    page: a release note's item)."""
    return is_claim_sentence(text) or (
        len(text.split()) >= (CHANGE_ITEM_MIN_WORDS if changelog else ITEM_MIN_WORDS)
        and not TERMINAL_RE.search(text)
        and not text.endswith(":")
        and is_claim_sentence(f"{text}.")
    )


def _is_entry_claim(sentence: str, span: str) -> bool:
    return (
        len(sentence.split()) >= ENTRY_SENTENCE_MIN_WORDS
        and TERMINAL_RE.search(sentence) is not None
        and is_claim_sentence(span)
        and not MANGLED_RE.search(span)
    )


def _entry_span(before: list[str], upto: str, *, heading: bool = False, term: bool = False) -> str | None:
    """The entry's term, the passages between and `upto` as one span, when the entry has a term and the
    span is short enough to read as one finding. A section heading heads a span only when it names
    something ("--max-old-space-size=SIZE (in megabytes)", "Session.commit()"): a heading in words
    ("Sending Requests with the Test Client") glued to the sentence under it reads as one garbled sentence.
    `term`: the entry opens with a definition term giving a name (`entry_name`)."""
    if not before or not (TERM_RE.match(before[0]) or term) or len(before) > ENTRY_PASSAGES:
        return None  # (a definition term naming one thing may be long: "commit-order (enum) [auto|...]")
    named = HELP_TAG_RE.sub(" ", ISSUE_REFS_RE.sub("", SECTION_NUMBER_RE.sub("", before[0])))
    if heading and not NAMING_HEADING_RE.search(named):  # a help page's "*tag*" is an anchor, not a name
        return None
    span = " ".join([*before, upto])
    return span if len(span.split()) <= ANTECEDENT_MAX_WORDS else None
