"""The extractive model on real reference documentation (issue 12, sentence choice with context).

Documentation states many findings in forms a sentence splitter misses: a reference entry (a term, a
"Default:" line, a short sentence), a pronoun-led sentence whose antecedent is the passage before, a sentence
announcing a list or a code example, a release-note item with no full stop. Each test runs the model as a run
does, on Debian's pages byte for byte (tools/tests/fixtures/docs/README.md), and checks the claim that answers
is chosen and stays one verbatim run of the page's text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from research_engine import answering, grounding, mechanisms
from research_engine.engine.extractive import picking
from research_engine.engine.extractive.candidates import NAMING_HEADING_RE, sentence_candidates
from research_engine.engine.extractive.features import FEATURE_NAMES, _opens_with, _phrases
from research_engine.engine.extractive.picking import (
    _same_entry_sentence,
    _same_quote,
    read_candidates,
    sentence_claims,
)
from research_engine.engine.factory import make_model
from research_engine.engine.models import Passage, SourceText
from research_engine.extract import extract_html
from research_engine.terms import words

DOCS = Path(__file__).parent / "fixtures" / "docs"


def source(name: str, ref: str = "SQ-01/SRC-01") -> SourceText:
    page = extract_html((DOCS / name).read_bytes(), url=f"http://127.0.0.1/{name}")
    passages = list(page.passages)
    return SourceText(ref=ref, title=page.title, url=f"http://127.0.0.1/{name}", passages=passages)


def claims_for(objective: str, question: str, *pages: str) -> list[str]:
    brief = {"objective": objective, "claim_types": ["technical", "factual"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    sources = [source(name, f"SQ-01/SRC-{i:02d}") for i, name in enumerate(pages, 1)]
    drafts = make_model("extractive").consolidate(brief, sq, sources)
    texts = {s.ref: "\n\n".join(p.text for p in s.passages) for s in sources}
    for draft in drafts:  # every claim is one run of its page's text (a passage break read as a space)
        for ref, quote in draft.evidence:
            assert grounding.find_quote(quote, texts[ref]).found, quote
    return [d.text for d in drafts]


def test_a_reference_entry_is_quoted_with_its_term():
    # DocBook: "shared_buffers (integer)" is a <dt>, the default is the second sentence of its <dd>.
    question = "What is the default value of shared_buffers in PostgreSQL?"
    texts = claims_for(question, question, "postgresql-15-runtime-config-resource.html")
    assert any(t.startswith("shared_buffers") and "128MB" in t for t in texts), texts


def test_a_sentence_introducing_a_one_line_example_carries_it():
    texts = [c.text for c in sentence_candidates([source("django-3.2-ref-csrf.html")])]
    assert (
        "In any template that uses a POST form, use the csrf_token tag inside the <form> element if the form "
        'is for an internal URL, e.g.: <form method="post">{% csrf_token %}' in texts
    )
    assert not any(t.startswith("<form") for t in texts)  # the example is no antecedent for "This ..."


def test_a_sentence_broken_off_for_an_example_is_quoted_whole_and_never_in_half():
    # DocBook and texinfo set an example inside a sentence as a display of its own: "Actually, the even more
    # general syntax" / database.schema.table / "can be used too, but ...".
    schemas = [c.text for c in sentence_candidates([source("postgresql-15-ddl-schemas.html")])]
    assert (
        "Actually, the even more general syntax database.schema.table can be used too, but at present this "
        "is just for pro forma compliance with the SQL standard." in schemas
    )
    zsh = [c.text for c in sentence_candidates([source("zsh-5.9-conditional-expressions.html")])]
    assert any(
        t.startswith("For example, [[ -n file*(#qN) ]] produces status zero if and only if") for t in zsh
    )
    # Neither half is a candidate, nor the tail of a sentence that goes on past a second example.
    for texts in (schemas, zsh):
        assert not [
            t
            for t in texts
            if t.startswith(("Actually, the even more general syntax", "For example,"))
            and not t.endswith(".")
        ]
    dates = [c.text for c in sentence_candidates([source("postgresql-15-datatype-datetime.html")])]
    assert not [t for t in dates if t.startswith("is a timestamp")]


def test_a_numbered_examples_title_is_quoted_with_its_one_line_listing():
    # DocBook XSL: "Example 4.2. Capturing all telnet traffic not from 10.0.0.5" over the capture filter.
    texts = [c.text for c in sentence_candidates([source("wireshark-4.0-ChCapCaptureFilterSection.html")])]
    assert (
        "Example 4.2. Capturing all telnet traffic not from 10.0.0.5 tcp port 23 and not src host 10.0.0.5"
        in texts
    )
    assert any(
        t.startswith("Example 4.1. A capture filter for telnet") and t.endswith("host 10.0.0.5")
        for t in texts
    )
    question = "Which capture filter records telnet traffic to and from one host only?"
    claims = claims_for(question, question, "wireshark-4.0-ChCapCaptureFilterSection.html")
    assert any("tcp port 23 and host 10.0.0.5" in t for t in claims), claims


def test_a_sentence_saying_what_the_example_above_does_is_quoted_with_it():
    # "Above, any DBAPI connection ... will be invalidated and replaced": only the example before it names
    # the setting (pool_recycle=3600) a "how do I" asks for. The sentence stays a candidate alone too.
    texts = [c.text for c in sentence_candidates([source("sqlalchemy-1.4-core-pooling.html")])]
    joined = [t for t in texts if "pool_recycle=3600)" in t and "Above, any DBAPI connection" in t]
    assert joined and joined[0].startswith("from sqlalchemy import create_engine"), joined
    assert any(t.startswith("Above, any DBAPI connection") for t in texts)
    question = "How do I make SQLAlchemy replace pooled connections that have been open for too long?"
    claims = claims_for(question, question, "sqlalchemy-1.4-core-pooling.html")
    assert any("pool_recycle=3600" in t for t in claims), claims


def test_what_the_run_states_already_leaves_the_sub_questions_claims_to_what_is_new():
    # A run states a finding once: sentences another sub-question already claimed (alone, or with the
    # sentence after them) take none of this one's places, and the page's own contrast gets one.
    question = "What is the difference between the json and jsonb data types in PostgreSQL?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-03", "text": question, "angle": "entity"}
    sources = [source("postgresql-15-datatype-json.html")]
    first = sentence_claims(brief, sq, sources, max_claims=5, per_source_cap=3)
    stated = [" ".join(d.text.split()) for d in first[:2]]
    then = [
        d.text for d in sentence_claims(brief, sq, sources, max_claims=5, per_source_cap=3, stated=stated)
    ]
    assert not any(s in " ".join(t.split()) for s in stated for t in then), then
    assert any(t.startswith("The json data type stores an exact copy of the input text") for t in then), then


def test_a_heading_in_words_is_never_the_first_words_of_a_quote():
    # A Sphinx section heading in words over a paragraph: it is the sentence's heading path, not its quote.
    sources = [source("flask-2.2-config.html")]
    headings = {p.text for p in sources[0].passages if p.kind == "heading"}
    words_only = {h for h in headings if not NAMING_HEADING_RE.search(h)}
    assert words_only
    starts = [
        c.text for c in sentence_candidates(sources) if any(c.text.startswith(h + " ") for h in words_only)
    ]
    assert not starts, starts[:3]


def test_a_difference_is_answered_by_sentences_naming_an_item_whole():
    objective = "What is the difference between VACUUM and VACUUM FULL in PostgreSQL?"
    texts = claims_for(objective, objective, "postgresql-15-sql-vacuum.html")
    assert texts and all("vacuum" in t.lower() for t in texts)
    # ... and those setting one against the other come first ("... more than a plain VACUUM would.").
    contrasts = ("Plain VACUUM (without FULL) simply reclaims space", "more than a plain VACUUM would")
    assert any(c in texts[0] or c in texts[1] for c in contrasts), texts


def test_a_list_item_is_quoted_with_the_sentence_announcing_the_list():
    page = source("postgresql-15-release-15.html")
    texts = [c.text for c in sentence_candidates([page])]
    # The item alone says nothing of the release; with the sentence before the list it does.
    intro = "PostgreSQL 15 contains many new features and enhancements, including:"
    assert f"{intro} Support for the SQL MERGE command." in texts
    question = "Which PostgreSQL release added the MERGE command?"
    assert any(
        "PostgreSQL 15" in t and "MERGE" in t
        for t in claims_for(question, question, "postgresql-15-release-15.html")
    )


def test_a_release_note_item_without_a_full_stop_is_a_statement():
    texts = [c.text for c in sentence_candidates([source("postgresql-15-release-15.html")])]
    assert "Remove PUBLIC creation permission on the public schema (Noah Misch)" in texts
    question = "What changed in PostgreSQL 15 about who may create objects in the public schema?"
    claims = claims_for(question, question, "postgresql-15-release-15.html")
    assert any("PUBLIC creation permission" in t or "pg_database_owner" in t for t in claims), claims


def test_a_short_release_note_item_is_a_statement_and_a_short_caption_elsewhere_is_not():
    # Release notes state a change in six words; elsewhere a six-word line is a heading or a caption.
    notes = [c.text for c in sentence_candidates([source("postgresql-15-release-15.html")])]
    assert "Increase hash_mem_multiplier default to 2.0 (Peter Geoghegan)" in notes
    assert "Remove pg_dump's --no-synchronized-snapshots option (Tom Lane)" in notes
    filter_page = source("wireshark-4.0-ChWorkBuildDisplayFilterSection.html")
    filters = [c.text for c in sentence_candidates([filter_page])]
    assert not any(t.startswith("Table 6.") for t in filters), filters


def test_the_page_that_answers_may_give_every_claim_of_a_sub_question():
    question = "What does PostgreSQL 15 change about the public schema, pg_dump and hash_mem_multiplier?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    drafts = make_model("extractive").consolidate(brief, sq, [source("postgresql-15-release-15.html")], [])
    assert len(drafts) == 5, [d.text for d in drafts]  # one source, no cap below the sub-question's five


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in DOCS.glob("*.html")),
)
def test_every_candidate_is_one_run_of_its_page(name):
    page = source(name)
    text = "\n\n".join(p.text for p in page.passages)
    for cand in sentence_candidates([page]):
        assert grounding.find_quote(cand.text, text).found, cand.text


def test_a_table_row_is_a_finding_and_never_the_term_of_the_row_after_it():
    rows = [c for c in sentence_candidates([source("postgresql-15-limits.html")]) if c.row]
    texts = [c.text for c in rows]
    # "field size | 1 GB" is short enough to read as a definition term; it is a row like the others.
    assert (
        "field size | 1 GB" in texts
        and "relation size | 32 TB | with the default BLCKSZ of 8192 bytes" in texts
    )
    assert all(not c.entry_head for c in rows)
    question = "What is the maximum size of a single field value in PostgreSQL?"
    assert "field size | 1 GB" in claims_for(question, question, "postgresql-15-limits.html")


def test_the_sentence_stating_the_default_is_chosen_once():
    question = "Which of the transaction isolation levels is the default?"
    texts = claims_for(question, question, "postgresql-15-transaction-iso.html")
    assert "Read Committed is the default isolation level in PostgreSQL." in texts
    # No two claims quote one sentence (alone, with its antecedent, with its entry's term).
    assert not any(_same_quote(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]), texts


def test_a_question_about_change_reads_the_release_notes_first():
    question = "What changed in PostgreSQL 15 about who may create objects in the public schema?"
    sources = ("postgresql-15-ddl-schemas.html", "postgresql-15-release-15.html")
    claims = claims_for(question, question, *sources)
    assert "Remove PUBLIC creation permission on the public schema (Noah Misch)" in claims
    assert claims[0] in {c.text for c in sentence_candidates([source("postgresql-15-release-15.html")])}


def test_a_run_of_pronoun_led_sentences_is_quoted_back_to_the_name_and_a_judgement_answers_should_i():
    page = source("postgresql-15-auth-password.html")
    # "It is a challenge-response scheme ..." and "This is the most secure ..." (a <p> of its own) both lean
    # on "The method scram-sha-256 ...": the quote goes back to it across both.
    chain = [
        c.text
        for c in sentence_candidates([page])
        if c.text.startswith("The method scram-sha-256 performs") and "most secure" in c.text
    ]
    assert chain and chain[0].endswith("not supported by older client libraries.")
    question = "Should I use md5 or scram-sha-256 password authentication in PostgreSQL?"
    claims = claims_for(question, question, "postgresql-15-auth-password.html")
    # The judgement is a claim (quoted back to the name), wherever the fitted ranking puts it.
    assert any("most secure of the currently provided methods" in c for c in claims), claims


def test_how_do_i_is_answered_by_the_sentence_saying_what_to_do():
    question = "How do I protect a POST form in a Django template against cross-site request forgery?"
    claims = claims_for(question, question, "django-3.2-ref-csrf.html")
    assert any("{% csrf_token %}" in t for t in claims), claims
    # "... can then be protected by following the steps below." puts its answer off: it is no claim.
    assert not any(t.endswith("steps below.") for t in claims), claims


def test_a_sentence_summing_up_cases_is_quoted_with_its_paragraph():
    texts = [c.text for c in sentence_candidates([source("postgresql-15-datatype-datetime.html")])]
    summed = [t for t in texts if t.endswith("the originally stated or assumed time zone is not retained.")]
    # Alone ("In either case, the value is stored internally as UTC, ...") and with the cases it sums up.
    assert any(t.startswith("In either case") for t in summed)
    assert any(t.startswith("For timestamp with time zone values, an input string") for t in summed)


@pytest.mark.parametrize(
    ("sentence", "subject", "context", "opens"),
    [
        (
            "select_related works by creating an SQL join and including the fields",
            {"select_related"},
            set(),
            True,
        ),
        ("By contrast, jsonb does not preserve white space", {"jsonb"}, set(), True),
        ("prefetch_related, on the other hand, does a separate lookup", {"prefetch_related"}, set(), True),
        ("VACUUM FULL rewrites the entire contents of the table", {"full"}, {"vacuum"}, True),
        ("Plain VACUUM (without FULL) simply reclaims space", {"full"}, {"vacuum"}, False),
        ("Chaining select_related calls works in a similar way", {"select_related"}, set(), False),
        ("The prefetch_related('toppings') implied pizza.toppings.all()", {"prefetch_related"}, set(), False),
        (">>> prefetch_related('pizzas') This works", {"prefetch_related"}, set(), False),
    ],
)
def test_a_definition_sentence_opens_with_its_subject(sentence, subject, context, opens):
    assert _opens_with(sentence, subject, context) is opens


def test_a_sentence_whose_lead_in_points_back_is_quoted_with_the_one_before():
    texts = [c.text for c in sentence_candidates([source("django-3.2-ref-csrf.html")])]
    # "For this reason, there is an alternative method: ..." says for what reason only with its antecedent,
    # and "This is often easier ..." after it goes back past it to the same sentence.
    assert not any(t.startswith("For this reason, there is an alternative method") for t in texts)
    assert any(
        t.startswith("While the above method can be used for AJAX POST requests")
        and t.endswith("allow headers to be set on every request.")
        for t in texts
    )


def test_a_for_example_lead_in_quotes_the_sentence_before_and_the_example():
    passages = [
        Passage(
            "p01",
            "Foreign key constraints are disabled by default. Assuming the library is compiled "
            "with them, they must still be enabled by the application at runtime, using the PRAGMA "
            "foreign_keys command. For example:",
        ),
        Passage("p02", "sqlite> PRAGMA foreign_keys = ON;", "code"),
    ]
    page = SourceText(
        ref="SQ-01/SRC-01", title="Foreign Key Support", url="http://127.0.0.1/fk.html", passages=passages
    )
    texts = [c.text for c in sentence_candidates([page])]
    assert any(
        t.endswith("using the PRAGMA foreign_keys command. For example: sqlite> PRAGMA foreign_keys = ON;")
        and t.startswith("Assuming")
        for t in texts
    ), texts


def test_a_sentence_announcing_a_list_of_names_is_quoted_with_the_names():
    passages = [
        Passage("p01", "Each column in a database is assigned one of the following type affinities:"),
        *(Passage(f"p0{i}", name, "list-item") for i, name in enumerate(("TEXT", "NUMERIC", "INTEGER"), 2)),
        Passage("p05", "A column with TEXT affinity stores all data as text."),
    ]
    page = SourceText(ref="SQ-01/SRC-01", title="Datatypes", url="http://127.0.0.1/d.html", passages=passages)
    texts = [c.text for c in sentence_candidates([page])]
    assert (
        "Each column in a database is assigned one of the following type affinities: TEXT NUMERIC INTEGER"
        in texts
    )


def test_a_sentence_writing_the_questions_phrase_is_told_from_one_writing_another():
    question = "Does PostgreSQL's timestamp with time zone type store the time zone that was given?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    view, picks = read_candidates(brief, sq, [source("postgresql-15-datatype-datetime.html")])
    assert view is not None
    phrase = FEATURE_NAMES.index("phrase")
    writes = {p.cand.text: p.scored.values[phrase] for p in picks if p.scored.values[phrase]}
    assert any(t.endswith("the originally stated or assumed time zone is not retained.") for t in writes)
    said = " ".join(words("Such a value is a timestamp without time zone."))
    assert not any(p in f" {said} " for p in _phrases(question))  # "timestamp without time zone" is no match
    # A phrase opens and closes with content words and is no part of a list of two things.
    assert " timestamp with time zone " in _phrases(question)
    listed = _phrases("What is the difference between the json and jsonb data types in PostgreSQL?")
    assert listed == [" types in postgresql ", " data types in postgresql "]


# AsciiDoc (tig's manual pages, issue 32): definition terms that are plain names, examples lists, and a
# sentence that goes on after the example it introduces.


@pytest.mark.parametrize(
    ("term", "name"),
    [
        ("mouse (bool)", "mouse"),
        ("ignore-space (mixed) [no|all|some|at-eol|<bool>]", "ignore-space"),
        ("blame", "blame"),
        ("-C <path>", "-C"),
        ("shared_buffers (integer)", "shared_buffers"),
        ("--max-old-space-size=SIZE (in megabytes)", "--max-old-space-size"),
        ("Valid bool values", None),  # a term in words names nothing
        ("class Flask(import_name)", None),
    ],
)
def test_a_definition_term_gives_the_name_of_what_it_describes(term, name):
    assert mechanisms.entry_name(term) == name


def test_a_definition_terms_plain_name_is_what_a_how_to_answer_names():
    question = "How do I get tig to respond to mouse clicks and the scroll wheel?"
    scored = answering.answer_score(question, "mouse (bool) Whether to enable mouse support.")
    assert scored.kind_found == "mouse" and scored.answers
    # A sentence opening with a capital is no entry's term ("If ..."), and a question writing the name as
    # code is answered by what the entry says of it, not by its name.
    assert answering.answer_score(question, "If Tig runs, mouse support is enabled.").kind_found is None
    assert (
        answering.answer_score("How do I set `mouse`?", "mouse (bool) Whether to enable it.").kind_found
        != "mouse"
    )
    # The sentence writes the term's words but not its name: it is quoted with the term too.
    texts = [c.text for c in sentence_candidates([source("tig-2.5-tigrc.5.html")])]
    span = "ignore-space (mixed) [no|all|some|at-eol|<bool>] Ignore space changes in diff view."
    assert span in texts
    # ... and, quoted with its term, it names what a how-to asks for, as "--ignore-space" would.
    brief = {"objective": "tig", "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": "How do I hide whitespace changes in tig's diff view?", "angle": "entity"}
    _, picks = read_candidates(brief, sq, [source("tig-2.5-tigrc.5.html")])
    named = FEATURE_NAMES.index("names_mechanism")
    assert [p.scored.values[named] for p in picks if p.cand.text == span] == [1.0]


def test_an_examples_list_label_is_quoted_with_its_example():
    manual = [c.text for c in sentence_candidates([source("tig-2.5-manual.html")])]
    assert (
        'Copy commit ID to clipboard: bind generic 9 @sh -c "echo -n %(commit) | xclip -selection c"'
        in manual
    )
    assert "Display the list of stashes: $ tig stash" in [
        c.text for c in sentence_candidates([source("tig-2.5-tig.1.html")])
    ]
    question = "How can I copy the commit id to the clipboard in tig?"
    assert any("xclip" in t for t in claims_for(question, question, "tig-2.5-manual.html"))


def test_a_sentence_going_on_after_its_example_is_quoted_whole():
    question = "How can I see which commits have not been pushed yet in tig?"
    assert claims_for(question, question, "tig-2.5-manual.html")[0] == (
        "Assuming origin is your upstream remote branch, using: $ tig origin..HEAD will list what will be "
        "pushed to the remote branch."
    )
    texts = [c.text for c in sentence_candidates([source("tig-2.5-manual.html")])]
    assert not any(t.startswith("will list what") for t in texts)  # never the rest alone


def test_two_claims_of_one_entry_never_repeat_a_sentence():
    cands = sentence_candidates([source("tig-2.5-tigrc.5.html")])
    split = [c for c in cands if c.entry_name == "vertical-split" and c.text.startswith("vertical-split")]
    longest = max(split, key=lambda c: len(c.text))
    shorter = [c for c in split if c is not longest]
    assert shorter and all(_same_entry_sentence(c, longest) for c in shorter)
    other = next(c for c in cands if c.entry_name == "split-view-height")
    assert not _same_entry_sentence(other, longest)


def test_a_definition_terms_example_block_is_quoted_with_its_label_and_what_follows():
    # AsciiDoc's EXAMPLES as a labeled list: the term says what the example does, the block is the how, the
    # callout after it what happens (a small page in that shape; the reader gives the term as a line).
    html = (
        b"<html><head><title>frob(1)</title></head><body><div class='sect1'><h2>EXAMPLES</h2>"
        b"<div class='dlist'><dl><dt class='hdlist1'>Frob a file and keep it</dt><dd>"
        b"<div class='listingblock'><div class='content'><pre><code>$ frob --keep notes.txt"
        b"</code></pre></div>"
        b"</div><div class='colist arabic'><ol><li><p>The file stays where it was and a frobbed copy is "
        b"written beside it.</p></li></ol></div></dd>"
        b"<dt class='hdlist1'>Synopsis</dt><dd><div class='listingblock'><div class='content'><pre><code>"
        b"frob [--keep] file</code></pre></div></div></dd></dl></div></div></body></html>"
    )
    page = extract_html(html, url="http://127.0.0.1/frob.1.html")
    texts = [
        c.text
        for c in sentence_candidates(
            [SourceText("SQ-01/SRC-01", page.title, "http://127.0.0.1/frob.1.html", list(page.passages))]
        )
    ]
    assert "Frob a file and keep it $ frob --keep notes.txt" in texts
    assert (
        "Frob a file and keep it $ frob --keep notes.txt The file stays where it was and a frobbed copy is "
        "written beside it." in texts
    )
    assert not any(t.startswith("Synopsis") for t in texts)  # a label announcing, not saying what it does


def test_a_long_definition_term_still_heads_its_entry():
    # "commit-order (enum) [auto|default|topo|date|author-date|reverse]" is longer than a heading-like line,
    # yet the sentences under it are its own ("this option"), not the entry's before it.
    cands = [c for c in sentence_candidates([source("tig-2.5-tigrc.5.html")]) if "speed up loading" in c.text]
    assert cands and all(c.entry_name == "commit-order" for c in cands)
    assert any(
        c.text.startswith("commit-order (enum) [auto|default|topo|date|author-date|reverse]") for c in cands
    )


def test_a_lookup_is_answered_under_the_name_another_page_gives_its_subject():
    # tigrc(5) gives the default ("history-size (int) ... Default is 500.") in words the question never uses;
    # NEWS names the setting in the question's words ("Use history-size to control the number of entries to
    # save."). The claim quotes both, the naming sentence first, each from its own page.
    question = "How many entries does tig keep in its saved command and search history by default?"
    brief = {"objective": question, "claim_types": ["technical", "factual"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    sources = [source("tig-2.5-NEWS.html", "SQ-01/SRC-01"), source("tig-2.5-tigrc.5.html", "SQ-01/SRC-02")]
    drafts = make_model("extractive").consolidate(brief, sq, sources)
    assert drafts, "no claim"
    first = drafts[0]
    assert [ref for ref, _ in first.evidence] == ["SQ-01/SRC-01", "SQ-01/SRC-02"]
    assert first.evidence[0][1] == "Use history-size to control the number of entries to save."
    assert first.evidence[1][1].startswith("history-size (int)") and "Default is 500." in first.evidence[1][1]
    assert answering.relevance(question, [question], first.text).answers
    # The default alone does not answer the question: nothing in it is about entries.
    assert not answering.relevance(question, [question], first.evidence[1][1]).answers


def test_a_name_given_to_the_subject_must_be_a_reference_entrys():
    subject = {"entri"}
    sentences = ["Use history-size to control the number of entries to save.", "See git-log for entries."]
    assert answering.subject_names(subject, sentences, {"history-size"}) == {
        frozenset({"histori", "size"}): sentences[0]
    }
    assert answering.subject_names(subject, sentences, set()) == {}  # no entry of that name: no name
    asked = ["How do I set history-size to keep more entries?"]
    assert answering.subject_names(subject, asked, {"history-size"}) == {}  # a question names nothing


def test_a_question_an_faq_titles_its_entry_with_is_never_a_claim():
    question = "Does SQLAlchemy pool database connections automatically, and which pool does an Engine use?"
    page = "sqlalchemy-1.4-faq-connections.html"
    texts = [c.text for c in sentence_candidates([source(page)])]
    assert "How do I pool database connections?" in texts  # read as a sentence, sharing the question's words
    claims = claims_for(question, question, page)
    assert claims and not [c for c in claims if c.rstrip().endswith("?")]


def test_an_entrys_default_line_after_its_description_is_quoted_with_the_entry():
    # Sphinx's config page gives each setting's default after its description ("Default: timedelta(days=31)
    # (2678400 seconds)"), a line of its own that no sentence carries: it is quoted with the entry it ends.
    page = "flask-2.2-config.html"
    texts = [c.text for c in sentence_candidates([source(page)])]
    whole = [
        t for t in texts if t.startswith("PERMANENT_SESSION_LIFETIME") and t.endswith("(2678400 seconds)")
    ]
    assert whole, [t for t in texts if "PERMANENT_SESSION_LIFETIME" in t]
    assert "Default: timedelta(days=31)" in whole[0]
    question = "How long does a permanent session last in Flask by default?"
    assert any("timedelta(days=31)" in t for t in claims_for(question, question, page))
    # A labelled line under no term heads nothing and is quoted with nothing.
    assert not any(t.startswith("Default:") for t in texts)


def test_a_heading_of_words_joined_by_a_dash_names_nothing():
    # "Disconnect Handling - Pessimistic" is a section title in words, not an option's name: no quote opens
    # with it, while a name with dashes in it still heads its entry.
    assert not NAMING_HEADING_RE.search("Disconnect Handling - Pessimistic")
    assert NAMING_HEADING_RE.search("--max-old-space-size=SIZE (in megabytes)")
    assert NAMING_HEADING_RE.search("wrap-lines")
    texts = [c.text for c in sentence_candidates([source("sqlalchemy-1.4-core-pooling.html")])]
    assert any(t.startswith("The pessimistic approach refers to") for t in texts)
    assert not any(t.startswith("Disconnect Handling - Pessimistic") for t in texts)


def test_a_claim_quotes_the_sentence_that_goes_on_with_its_finding():
    # The FAQ's answer is a sentence and one that leans on it ("These columns do not need to be actually
    # known to the database ..."): the claim quotes both, one finding, never the first alone beside a
    # second claim repeating it.
    question = "Can the SQLAlchemy ORM map a table that has no primary key?"
    claims = claims_for(question, question, "sqlalchemy-1.4-faq-ormconfiguration.html")
    opening = (
        "The SQLAlchemy ORM, in order to map to a particular table, needs there to be at least one column"
    )
    with_it = [c for c in claims if c.startswith(opening)]
    assert len(with_it) == 1, claims
    assert "These columns do not need to be actually known to the database" in with_it[0]


def test_a_reference_pages_stock_section_names_say_nothing_of_the_subject():
    # A SQL command's page puts its definition under "Description": the section is on the page's subject,
    # not off the question (heading_off), so the page's own summary can answer "What is VACUUM?".
    question = "What is VACUUM in PostgreSQL?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    _, picks = read_candidates(brief, sq, [source("postgresql-15-sql-vacuum.html")])
    off = FEATURE_NAMES.index("heading_off")
    described = [p for p in picks if p.cand.headings and p.cand.headings[-1] == "Description"]
    assert described and not any(p.scored.values[off] for p in described)
    assert any(p.scored.values[off] for p in picks if p.cand.headings[-1:] == ("Compatibility",))


def test_an_faq_title_in_the_askers_voice_is_never_a_claim():
    # "I am using multiple connections with a SQLite database ..., and my test program is not working!" is
    # what a reader asked, not what the documentation says; the answer under it is.
    question = "Why does my test program fail when using multiple connections with a SQLite database?"
    claims = claims_for(question, question, "sqlalchemy-1.4-faq-connections.html")
    assert claims and not any(picking.ASKER_VOICE_RE.search(c) for c in claims), claims
    assert not picking.ASKER_VOICE_RE.search(
        "Toggling is bound to i by default, with I controlling the order."
    )


def test_a_compound_is_read_however_the_page_spells_it():
    # The reader asks about "whitespace"; GNU diff's manual writes "white space": its -b and -w entries
    # answer.
    question = "How do I make diff ignore lines that only differ in how much whitespace they contain?"
    claims = claims_for(question, question, "diffutils-3.8-Invoking-diff.html")
    assert any("--ignore-space-change" in c or "--ignore-all-space" in c for c in claims), claims
    # ... and the other way round: "time zone" asked, "TimeZone" written.
    cands = sentence_candidates([source("postgresql-15-datatype-datetime.html")])
    joined = [c for c in cands if re.search(r"\btimezone\b", c.text, re.IGNORECASE)]
    assert joined and not all("zone" in c.terms for c in joined)
    picking.spell_compounds_as_asked("Which time zone does PostgreSQL use to display a timestamp?", cands)
    assert all({"time", "zone"} <= set(c.terms) for c in joined)
    # ... and a word asked, written with a prefix that narrows it: SQLAlchemy's "autocommit" is a commit,
    # its "multiprocessing" processes; "reconnect" is another act than "connect", and is not read so.
    cands = sentence_candidates([source("sqlalchemy-1.4-faq-connections.html")])
    auto = [c for c in cands if "autocommit" in c.terms and "commit" not in c.terms]
    again = [c for c in cands if "reconnect" in c.terms and "connect" not in c.terms]
    assert auto and again
    picking.spell_compounds_as_asked("Does a connection commit by itself, or processes in parallel?", cands)
    assert all("commit" in c.terms for c in auto)
    assert all("process" in c.terms for c in cands if "multiprocess" in c.terms)
    assert not any("connect" in c.terms for c in again)


def test_a_sentence_sending_the_reader_elsewhere_is_never_a_claim():
    # A Texinfo manual ends entries and paragraphs with cross-references ("See Applying Patches in Other
    # Directories."): alone, such a sentence says nothing.
    page = "diffutils-3.8-Invoking-patch.html"
    texts = [c.text for c in sentence_candidates([source(page)])]
    assert any(picking.POINTS_ELSEWHERE_RE.match(t) for t in texts)
    question = "Can I see what patch would do to my files before really applying it?"
    claims = claims_for(question, question, page)
    assert claims and not any(picking.POINTS_ELSEWHERE_RE.match(c) for c in claims), claims
    # "Can I ...?" asks what to do: the option entry that does it answers.
    assert any(c.startswith("--dry-run") for c in claims), claims


def test_a_claim_quotes_a_help_pages_sentence_without_its_bullet_heading_or_tags():
    # Vim's help: "USING A FILETYPE PLUGIN *ftplugin-name*" over "You can add a filetype plugin by dropping
    # it in the right directory."; "*add-global-plugin* You can add a global plugin ..."; "- Download ..."
    texts = claims_for(
        "How do I add a plugin to Vim?", "How do I add a filetype plugin?", "vim-9.0-usr_05.html"
    )
    assert "You can add a filetype plugin by dropping it in the right directory." in texts
    assert not [t for t in texts if t.startswith(("*", "- ")) or re.match(r"[A-Z]{2,} [A-Z]{2,}", t)]


def test_a_texinfo_definition_is_a_term_naming_its_function_and_quoted_with_its_description():
    # makeinfo: "<dt><span class="category">Function: </span><em>int</em> <strong>gsasl_init</strong> ...";
    # "Function:" had been read as a label line ("Default: 1209600"), so no sentence knew what it described.
    assert mechanisms.entry_name("Function: int gsasl_init (Gsasl ** ctx)") == "gsasl_init"
    assert mechanisms.entry_name("Function: const char * gsasl_check_version (const char * v)") == (
        "gsasl_check_version"
    )
    assert mechanisms.entry_name("Macro: AC_CHECK_FUNCS (function…, [action-if-found])") == "AC_CHECK_FUNCS"
    assert mechanisms.entry_name("Default: 1209600") is None
    texts = claims_for("What does gsasl_init do?", "What does gsasl_init do?", "gsasl-2.2-gsasl.html")
    defined = [t for t in texts if t.startswith("Function: int gsasl_init (Gsasl ** ctx)")]
    assert defined and "This functions initializes libgsasl." in defined[0]
