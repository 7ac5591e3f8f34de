"""The extractive model's fitted sentence ranking (issues 24, 32): the features it reads, the weights it
ships, the rules it keeps, and the deliverable's direct answer.

What a feature says is pinned here on real sentences; how much it counts is the fit's (bench/fit_ranking.py),
so no test pins a weight's value, only that the shipped file fits the features and was fitted.
"""

from __future__ import annotations

import json

import pytest
from test_extractive_reference_docs import source

from research_engine.answering import mechanism_asked
from research_engine.engine.extractive import features, ranker, rendering
from research_engine.engine.extractive.candidates import SentenceCandidate, sentence_candidates
from research_engine.engine.extractive.picking import RULES, Chosen, rank, read_candidates
from research_engine.engine.extractive.plan import plan_of
from research_engine.engine.extractive.rendering import answer_paragraph
from research_engine.engine.extractive.situations import situation_referent
from research_engine.engine.extractive.text import about_the_page, states_a_clause
from research_engine.engine.factory import make_model
from research_engine.engine.models import Passage, SourceText
from research_engine.errors import BadInput
from research_engine.mechanisms import Mechanism, mechanisms_named


def test_every_feature_says_why_it_may_matter_and_the_shipped_weights_fit_them():
    assert all(reason for _, reason in features.FEATURES.values())
    data = json.loads(ranker.WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert set(data["weights"]) == set(features.FEATURE_NAMES)
    assert data["fitted"]["on"] and data["fitted"]["at"]  # the card's facts travel with the weights
    assert ranker.WEIGHTS_FILE.with_suffix(".md").is_file()
    shipped = ranker.default_ranker()
    assert len(shipped.weights) == len(features.FEATURE_NAMES) and shipped.keep_margin > 0


def test_weights_for_a_feature_that_does_not_exist_are_refused(tmp_path, monkeypatch):
    bad = tmp_path / "w.json"
    bad.write_text(
        json.dumps({"schema": ranker.SCHEMA, "weights": {"no_such_feature": 1.0}, "keep_margin": 1})
    )
    monkeypatch.setenv(ranker.WEIGHTS_ENV, str(bad))
    with pytest.raises(BadInput, match="unknown features no_such_feature"):
        ranker.default_ranker()
    monkeypatch.setenv(ranker.WEIGHTS_ENV, str(tmp_path / "missing.json"))
    with pytest.raises(BadInput, match="cannot read ranking weights"):
        ranker.default_ranker()


def test_other_weights_change_the_order_and_nothing_else(tmp_path):
    question = "What is the default value of shared_buffers in PostgreSQL?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    page = source("postgresql-15-runtime-config-resource.html")
    view, picks = read_candidates(brief, sq, [page])
    assert view is not None
    only_lead = ranker.Ranker(tuple(float(n == "lead") for n in features.FEATURE_NAMES), 1.0)
    scores = [only_lead.score(p.scored.values) for p in picks]
    assert scores == [p.scored.values[features.FEATURE_NAMES.index("lead")] for p in picks]


def test_answering_is_a_weighed_feature_not_a_gate():
    """A sentence whose terms do not reach the answer threshold still outranks an answering one that the
    rest of the ranking scores far lower: the threshold is one reading among the features."""
    question = "What is the default value of shared_buffers in PostgreSQL?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    view, picks = read_candidates(brief, sq, [source("postgresql-15-runtime-config-resource.html")])
    assert view is not None and any(p.scored.answers for p in picks)
    answers = features.FEATURE_NAMES.index("answers")
    assert all(p.scored.values[answers] == float(p.scored.answers) for p in picks)
    # A feature on which some sentence that does not answer beats every answering one, weighed ten times
    # answering: the ranking follows the scores, so that sentence comes first.
    answering = [p for p in picks if p.scored.answers]
    other = next(
        i
        for i in range(len(features.FEATURE_NAMES))
        if i != answers
        and max(p.scored.values[i] for p in picks) > max(p.scored.values[i] for p in answering) + 0.2
    )
    weights = {other: 10.0, answers: 1.0}
    ranked = rank(
        picks, ranker.Ranker(tuple(weights.get(i, 0.0) for i in range(len(features.FEATURE_NAMES))), 1.0)
    )
    assert [p.score for p in ranked] == sorted((p.score for p in ranked), reverse=True)
    assert not ranked[0].scored.answers


def test_the_rules_are_named_and_say_why():
    assert len({r.name for r in RULES}) == len(RULES)
    assert all(r.reason and r.name == r.name.lower() for r in RULES)
    assert {r.name for r in RULES if r.alone} == {
        "shares-no-term",
        "off-subject",
        "entry-term-off-question",
        "lookup-without-answer",
        "puts-answer-off",
        "asks",
        "points-elsewhere",
        "row-explains-nothing",
    }


def _cand(text: str, **kw: object) -> SentenceCandidate:
    base = SentenceCandidate(text, "SQ-01/SRC-01", 0, 1, features.tokens(text), set())
    for key, value in kw.items():
        setattr(base, key, value)
    return base


def _view(question: str, objective: str | None = None) -> features.QuestionView:
    brief = {"objective": objective or question, "claim_types": ["technical"]}
    return features.question_view(brief, {"id": "SQ-01", "text": question}, [], [])


def _value(name: str, cand: SentenceCandidate, view: features.QuestionView) -> float:
    (scored,) = features.score_pool([cand], view)
    return scored.values[features.FEATURE_NAMES.index(name)]


def test_a_section_about_something_else_is_read_from_the_headings_above_the_sentence():
    view = _view("Which transaction isolation levels does PostgreSQL support?")
    text = "Read Committed is the default isolation level in PostgreSQL."
    assert _value("heading_off", _cand(text, headings=("Transaction Isolation",)), view) == 0
    assert _value("heading_off", _cand(text, headings=("Serialization Failure Handling",)), view) == 1
    # An admonition's title sits inside its section: the section's heading still counts.
    page = SourceText(
        "SQ-01/SRC-01",
        "Transaction Isolation",
        "http://127.0.0.1/t.html",
        [
            Passage("p01", "13.2. Transaction Isolation", "heading"),
            Passage("p02", "Important", "heading"),
            Passage("p03", text),
        ],
    )
    (cand,) = [c for c in sentence_candidates([page]) if c.text == text]
    assert cand.headings == ("13.2. Transaction Isolation", "Important")
    assert _value("heading_off", cand, view) == 0


def test_pages_about_another_version_and_release_notes_are_features_not_special_cases():
    view = _view("What changed in PostgreSQL 15 about the public schema?")
    text = "Remove PUBLIC creation permission on the public schema (Noah Misch)."
    notes = _cand(text, title={"release", "15"}, changelog=True)
    other = _cand(text, title={"release", "14"}, changelog=True)
    assert _value("version_match", notes, view) == 1 and _value("version_other", notes, view) == 0
    assert _value("version_other", other, view) == 1
    assert _value("changelog_change", notes, view) == 1
    lookup = _view("What is the default owner of the public schema in PostgreSQL 15?")
    assert _value("changelog_other", notes, lookup) == 1


@pytest.mark.parametrize(
    ("sentence", "about"),
    [
        ("This article explains the new features in Python 3.10, compared to 3.9.", True),
        ("Author: Pablo Galindo Salgado", True),
        ("In this tutorial, we will build a basic blog application.", True),
        ("This option both imports new commands from the history file.", False),
        ("This parameter can only be set in the postgresql.conf file.", False),
    ],
)
def test_a_sentence_about_the_page_is_told_from_one_about_the_subject(sentence, about):
    assert about_the_page(sentence) is about


@pytest.mark.parametrize(
    ("sentence", "says"),
    [
        ('The write-ahead log file, usually named "X-wal".', False),
        ("The age of session cookies, in seconds.", False),
        ("The mimetype of jsonify responses.", False),
        ("While a database connection is open on a WAL-mode database, SQLite maintains an extra file.", True),
        ("-y (global) Overwrite output files without asking.", True),
        ("Overwrite output files without asking.", True),
        ("The test client makes requests to the application without running a live server.", True),
        ("Read Committed is the default isolation level in PostgreSQL.", True),
    ],
)
def test_a_fragment_is_told_from_a_sentence_that_says_something(sentence, says):
    assert states_a_clause(sentence) is says


def test_how_to_answers_name_options_settings_functions_and_commands():
    named = mechanisms_named(
        "-y (global) Overwrite output files without asking.", "How do I overwrite files?"
    )
    assert named == {Mechanism.OPTION: ["-y"]}
    assert mechanisms_named("SHARE_HISTORY <K> This option both imports ...")[Mechanism.SETTING] == [
        "SHARE_HISTORY"
    ]
    assert Mechanism.FUNCTION in mechanisms_named("Use app.test_client() to send requests.")
    # What the question itself names is not its answer.
    assert not mechanisms_named("Set HISTSIZE to 1000.", "How do I set HISTSIZE?")
    assert mechanism_asked("Which option makes ffmpeg overwrite its output?") == Mechanism.OPTION
    assert mechanism_asked("How do I make ffmpeg overwrite its output?") is None  # it does not say


def test_a_how_to_sentence_under_an_option_entry_is_read_as_describing_it():
    view = _view("How do I make ffmpeg overwrite output files without asking?")
    entry = _cand("Overwrite output files without asking.", entry_term="-y (global)")
    prose = _cand("Output files are overwritten when asked.", entry_term="5.4 Main options")
    assert _value("entry_of_mechanism", entry, view) == 1 and _value("entry_of_mechanism", prose, view) == 0


def test_an_angle_question_about_how_something_works_stays_grammatical():
    texts = [
        p.text
        for p in plan_of(
            {
                "objective": "How does SQLite let readers and writers work on one database at the same time, "
                "and when should an application switch to write-ahead logging (WAL) mode?",
                "claim_types": ["factual", "technical"],
            }
        )
    ]
    lets = "of how SQLite lets readers and writers work on one database at the same time?"
    assert f"What are the limitations and drawbacks {lets}" in texts
    assert not any("of SQLite let readers" in t for t in texts)


def _claim(cid: str, text: str) -> dict[str, object]:
    return {"id": cid, "text": text, "verdict": "supported", "evidence": [{"source": "SQ-01/SRC-01"}]}


def test_the_answer_states_the_main_questions_best_claims_first_and_never_a_fragment_or_the_page():
    stated = [
        ("SQ-01", _claim("CLM-01", 'The write-ahead log file, usually named "X-wal".'), 1.0, True),
        ("SQ-01", _claim("CLM-02", "WAL mode permits simultaneous readers and writers."), 0.9, True),
        ("SQ-01", _claim("CLM-03", "This article explains how WAL mode works in SQLite."), 0.9, True),
        (
            "SQ-01",
            _claim("CLM-04", "Readers do not block writers and a writer does not block readers."),
            0.8,
            True,
        ),
        (
            "SQ-02",
            _claim("CLM-05", "An application should use WAL when it has many concurrent readers."),
            0.7,
            True,
        ),
        ("SQ-03", _claim("CLM-06", "WAL does not work over a network filesystem."), 1.0, False),
    ]
    answer = answer_paragraph(stated)
    assert answer is not None
    assert answer.startswith("WAL mode permits simultaneous readers and writers. [CLM-02]")
    assert "CLM-01" not in answer and "CLM-03" not in answer  # a fragment, a sentence about the page
    assert "CLM-05" in answer and "CLM-04" in answer  # the second facet answers too; the main one twice
    assert "CLM-06" not in answer  # the counter angle only when no facet has a claim


def _page(*passages: tuple[str, str]) -> SourceText:
    return SourceText(
        "SQ-01/SRC-01",
        "Command-line API",
        "http://127.0.0.1/cli.html",
        [Passage(f"p{i:02d}", text, kind) for i, (kind, text) in enumerate(passages, 1)],
    )


def test_an_option_heading_is_quoted_with_the_sentence_describing_it():
    # Node.js's API docs: the option is an <h4>, its description the paragraph under it; the sentence
    # shares "max" and "size" with the option's name but not the name itself.
    page = _page(
        ("heading", "--max-old-space-size=SIZE (in megabytes)#"),
        ("paragraph", "Sets the max memory size of V8's old memory section."),
    )
    texts = [c.text for c in sentence_candidates([page])]
    assert (
        "--max-old-space-size=SIZE (in megabytes)# Sets the max memory size of V8's old memory section."
        in texts
    )


def test_a_how_to_keeps_an_option_entry_whose_term_the_question_does_not_name():
    # zsh's manual: "HIST_IGNORE_DUPS ( -h )" is the term, the description says what it does. For a how-to
    # the term is the answer's name, not an unasked word the entry adds.
    page = _page(
        ("paragraph", "HIST_IGNORE_DUPS ( -h )"),
        (
            "paragraph",
            "Do not enter command lines into the history list if they are duplicates of the previous event.",
        ),
    )
    question = (
        "How do I stop zsh from adding a command line to the history when it duplicates the previous one?"
    )
    view, picks = read_candidates({"objective": question}, {"id": "SQ-01", "text": question}, [page])
    assert view is not None and view.procedure
    (entry,) = [p for p in picks if p.cand.text.startswith("HIST_IGNORE_DUPS")]
    assert entry.scored.answers
    off_question = next(r for r in RULES if r.name == "entry-term-off-question")
    assert not off_question.skips(entry, Chosen(view, 5, 3, 1.0))


def test_a_situation_is_context_and_the_question_is_about_what_it_leans_on():
    # "them" is the situation's subject; "missing" and "archive" only say where the asker stands.
    view = _view(
        "How can I make tar keep them, given that symbolic links inside my backup directory are missing "
        "from the restored archive?"
    )
    assert {"symbol", "link"} <= view.subject or {"symbolic", "link"} <= view.subject
    assert not view.subject & {"miss", "missing", "restor", "archiv"}
    # A question naming its own topic takes nothing from the situation.
    assert situation_referent("Which option sets the block size", "my tape drive rejects writes") == ""
    # The asker as the situation's subject: the whole situation is what "that" means.
    situation = "I want the nightly job to stop whenever a test fails"
    assert situation_referent("Which flag does that", situation) == situation
    assert situation_referent("How do I silence them", "deprecation warnings appear in every log") == (
        "deprecation warnings"
    )
    # A bare name is the actor: "it" is what the situation says of it.
    situation = "cron sends a mail for every job it runs"
    assert situation_referent("How can I make it quieter", situation) == situation


def test_a_question_that_names_nothing_in_its_situation_is_about_the_situation():
    view = _view(
        "What is going on, given that the mail log is full of rejected bounces for addresses nobody owns?"
    )
    assert {"bounc", "log"} <= view.subject or {"bounce", "log"} <= view.subject
    assert "going" not in view.subject


def _plan(objective: str) -> list[str]:
    return [q.text for q in plan_of({"objective": objective, "claim_types": ["technical"], "recency": "5y"})]


def test_a_situation_of_several_sentences_stays_one_context_for_the_closing_question():
    (question,) = _plan(
        "Our build machine has no network access; the package index is mirrored on a local disk. "
        "How do I point pip at it?"
    )
    assert question.startswith("How do I point pip at it, given that our build machine has no network access")
    assert "the package index is mirrored on a local disk?" in question


def test_a_follow_up_whose_pronoun_stands_for_the_situation_is_left_as_asked():
    questions = _plan(
        'Since the upgrade, cron mails me lines saying "bad minute". What do they mean, and how do I make '
        "them stop?"
    )
    assert questions[1].startswith("How do I make them stop, given that")
    # No "what changed regarding that happen": a time question needs a topic of its own.
    questions = _plan("Nightly backups are sometimes empty. Why does that happen and what can I change?")
    assert not any("regarding that" in q for q in questions)


def test_a_situation_enumerates_items_only_for_a_question_that_refers_back_to_them():
    # What the asker did is context: no "What is close the editor?" or "What is open?" beside the question.
    (question,) = _plan(
        "After I close the editor and open the same file again, my earlier changes can no longer be undone. "
        "How do I keep the undo history between editing sessions?"
    )
    assert question.startswith("How do I keep the undo history between editing sessions, given that after I")
    # A question that names them only by a pronoun asks about the situation's items.
    questions = _plan("PostgreSQL has json and jsonb types. What is the difference between them?")
    assert "What is json?" in questions and "What is jsonb?" in questions


def test_a_follow_up_to_what_is_going_wrong_asks_about_the_situation():
    questions = _plan(
        "Since I switched my login shell, scp to this machine fails with errors like 'message too long'. "
        "What is going wrong, and how do I fix it?"
    )
    assert questions[1].startswith("How do I fix it, given that since I switched my login shell"), questions


def test_a_themes_table_of_contents_label_is_no_term_of_the_paragraph_after_it():
    # Sphinx themes put "On this page" (a sidebar <h3>) before the body; the extraction keeps it as text.
    text = "Markdown is a lightweight markup language with a simplistic plain text formatting syntax."
    page = SourceText(
        "SQ-01/SRC-01",
        "Markdown",
        "http://127.0.0.1/usage/markdown.html",
        [Passage("p01", "On this page"), Passage("p02", text)],
    )
    quotes = [c.text for c in sentence_candidates([page])]
    assert text in quotes
    assert not any(q.startswith("On this page") for q in quotes)


@pytest.mark.parametrize(
    ("sentence", "defers"),
    [
        ("The options are described below.", True),
        ("Use one of the following options:", True),
        ("MkDocs includes two built-in themes (mkdocs and readthedocs), as documented below.", False),
        ("The limit is 100 rows by default, see below.", False),
    ],
)
def test_a_sentence_that_points_below_for_more_still_states_its_answer(sentence, defers):
    assert features.defers(sentence) is defers


def test_a_release_heading_states_the_version_its_sentence_does_not():
    """Release notes put the version in the section heading and the change in an item under it: a question
    asking which release did something is answered by the item with its heading quoted beside it, each a
    verbatim quote of the page."""
    question = "In which tig release was an environment variable added to configure the editor?"
    brief = {"objective": question, "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": question, "angle": "entity"}
    page = source("tig-2.5-NEWS.html")
    drafts = make_model("extractive").consolidate(brief, sq, [page])
    item = "Add TIG_EDITOR environment variable to configure editor."
    claim = drafts[0]
    assert [quote for _, quote in claim.evidence] == ["tig-2.5.4", item]
    assert all(any(quote in p.text for p in page.passages) for _, quote in claim.evidence)
    shown = rendering.shown_claim(
        {"text": claim.text, "evidence": [{"source": r, "quote": q} for r, q in claim.evidence]}
    )
    assert shown.startswith("tig-2.5.4: Add ")


def test_a_changelog_heading_with_its_issue_number_is_not_glued_to_the_sentence_under_it():
    # A heading in words names nothing a description is of; "(#2931)" after it does not make it a name.
    heading = "Type annotations for event handler methods (#2931)"
    text = "MkDocs' plugin event methods now have type annotations."
    page = SourceText(
        "SQ-01/SRC-01",
        "Release Notes",
        "http://127.0.0.1/about/release-notes.html",
        [Passage("p01", heading, kind="heading", level=4), Passage("p02", text)],
    )
    quotes = [c.text for c in sentence_candidates([page])]
    assert text in quotes
    assert not any(q.startswith(heading) for q in quotes)


def test_a_sentence_under_a_question_heading_is_read_as_about_what_the_heading_asks():
    # SQLAlchemy's connections FAQ: the answer under "Why does SQLAlchemy issue so many ROLLBACKs?" does
    # not repeat the question; a user asks it in words of their own.
    view = _view("What are all the ROLLBACK statements SQLAlchemy keeps sending for?")
    text = "An application can otherwise hang."
    faq = _cand(text, headings=("Connection Pooling", "Why does SQLAlchemy issue so many ROLLBACKs?"))
    statement = _cand(text, headings=("Connection Pooling", "Resetting on Return"))
    assert set(features.asked_by_heading(faq)) == set(features.tokens("SQLAlchemy issue many ROLLBACKs"))
    assert features.asked_by_heading(statement) == []
    assert _value("bm25_subject", faq, view) > 0
    assert _value("bm25_subject", statement, view) == 0
    # The sentence's own terms are not counted twice.
    own = _cand(
        "SQLAlchemy resets the connection.", headings=("Why does SQLAlchemy issue so many ROLLBACKs?",)
    )
    assert features.tokens("SQLAlchemy")[0] not in features.asked_by_heading(own)


def test_the_answer_under_the_faq_title_that_asks_what_the_question_asks_leads():
    # SQLAlchemy's connections FAQ titles an entry with the asker's complaint ("..., and my test program is
    # not working!"); the answer under it shares next to no word with a user's question about that trouble.
    page = source("sqlalchemy-1.4-faq-connections.html")
    question = "Why does my test program fail when it opens several connections to one SQLite database?"
    view, picks = read_candidates({"objective": question}, {"id": "SQ-01", "text": question}, [page])
    assert view is not None
    at = features.FEATURE_NAMES.index("answers_asked_heading")
    under: dict[str, list[float]] = {}
    for pick in picks:
        heading = pick.cand.headings[-1] if pick.cand.headings else ""
        under.setdefault(heading, []).append(pick.scored.values[at])
    complaint = next(h for h in under if h.endswith("my test program is not working!"))
    assert under[complaint][:2] == [1.0, 0.5]  # the best-matching title's first sentences, first the most
    assert all(v < 0.6 for h, vs in under.items() if h != complaint for v in vs)
    assert set(under["“MySQL Server has gone away”"]) == {0.0}  # a title that neither asks nor complains
    assert not features.asks_as_heading("Using DBAPI Autocommit Allows for a Readonly Version")
    # Weighed by the shipped ranking, the first sentence of Privoxy's FAQ answer to "I notice considerable
    # delays in page requests. What's wrong?" answers a user who asks in words of their own.
    slow = "Since I set up Privoxy, every page loads slowly. Why?"
    brief = {"objective": slow, "claim_types": ["technical"]}
    drafts = make_model("extractive").consolidate(
        brief, {"id": "SQ-01", "text": slow, "angle": "entity"}, [source("privoxy-3.0-faq-misc.html")]
    )
    answer = "If you use any filter action, such as filtering banners by size"
    assert any(d.text.startswith(answer) for d in drafts)


def test_a_note_set_in_a_one_cell_table_row_is_prose_and_a_heading_number_is_no_version():
    # DocBook XSL with admonition graphics: <table summary="Note"><tr><td><img alt="[Note]"></td><th>Note</th>
    # </tr><tr><td><p>The meaning of != ...</p></td></tr></table>: the note reads as one cell of a table.
    page = source("wireshark-4.0-ChWorkBuildDisplayFilterSection.html")
    note = "The meaning of != (all not equal) was changed in Wireshark 3.6."
    assert any(p.kind == "table-row" and note in p.text for p in page.passages)
    assert any(c.text.startswith(note) for c in sentence_candidates([page]))
    # "6.4.2. Comparing Values" is where the section stands in the guide, not a release it is about
    heading = next(p.heading_path for p in page.passages if note in p.text)
    assert heading[-1].startswith("6.4.2")
    assert not {t for t in features.section_terms(heading) if t[0].isdigit()}
    assert features.section_terms(("Django 3.2 release notes",)) >= {"django", "3.2"}
    # nor is an address in the question a version it asks about
    question = (
        'Did the meaning of != change, given that my filter "ip.src != 10.0.0.5" matches other packets?'
    )
    view, _ = read_candidates({"objective": question}, {"id": "SQ-01", "text": question}, [page])
    assert view is not None and "10.0.0.5" not in view.scope


def test_a_list_item_heads_none_of_the_items_after_it():
    # Tornado's HTTPRequest parameters (Sphinx field list): an item with no full stop is no term over its
    # siblings, so no quote glues "user_agent (str) – ..." to the parameter after it.
    page = _page(
        ("list-item", "user_agent (str) – String to send as User-Agent header"),
        (
            "list-item",
            "decompress_response (bool) – Request a compressed response from the server. Default is True.",
        ),
        ("list-item", "request_timeout (float) – Timeout for entire request in seconds, default 20 seconds."),
    )
    texts = [c.text for c in sentence_candidates([page])]
    assert "request_timeout (float) – Timeout for entire request in seconds, default 20 seconds." in texts
    assert not any(t.startswith("user_agent") and "decompress_response" in t for t in texts)


@pytest.mark.parametrize(
    "title",
    [
        "What’s new in Tornado 6.2.0 — Tornado 6.2 documentation",
        "What's new in 2.0",
        "NEWS.gz",
        "Release notes",
    ],
)
def test_release_notes_are_known_by_their_title_with_either_apostrophe(title):
    # Sphinx sets "What's" with a typographic apostrophe: Tornado's notes for 6.2.0 were not release notes.
    item = Passage("p01", "The minimum supported Python version is now 3.7.", "paragraph")
    found = sentence_candidates([SourceText("SQ-01/SRC-01", title, "http://127.0.0.1/notes.html", [item])])
    assert found and all(c.changelog for c in found)
