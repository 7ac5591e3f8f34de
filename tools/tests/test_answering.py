"""Answer scoring (`research_engine.answering`, issue 12): a supported claim covers its sub-question only when
it answers it. The sentences are real ones, from the Django 3.2 and PostgreSQL 15 documentation."""

from __future__ import annotations

import pytest

from research_engine.answering import (
    AnswerKind,
    answer_score,
    answers_text,
    asked_for,
    claim_terms,
    expected_kind,
    identifier_parts,
    key_terms,
    relevance,
    shared_terms,
    subject_terms,
    version_under_heading,
)
from research_engine.engine.extractive.text import tokens
from research_engine.engine.review import rethought_queries
from research_engine.terms import fold, phrasal_compounds, synonyms


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which Python versions does Django 3.2 support?", AnswerKind.VERSION),
        ("Since which version does Django support asynchronous views?", AnswerKind.VERSION),
        ("What changed recently regarding exclusive backup mode?", AnswerKind.VERSION),
        ("How long does a Django session cookie last by default?", AnswerKind.NUMBER),
        ("Which TCP port does PostgreSQL listen on by default?", AnswerKind.NUMBER),
        ("What is the maximum length of an identifier in PostgreSQL?", AnswerKind.NUMBER),
        ("Which RFC defines SCRAM-SHA-256?", AnswerKind.IDENTIFIER),
        ("What is the CVE number of the flaw fixed in 15.2?", AnswerKind.IDENTIFIER),
        # an identifier's kind named, not asked for: a ticket is a thing here, RFC 7627 a name
        ("Since which version do GnuTLS clients support TLS session tickets?", AnswerKind.VERSION),
        ("Does PostgreSQL follow RFC 7677 for SCRAM?", AnswerKind.YES_NO),
        ("Which Memcached cache backend should I use with Django 3.2?", AnswerKind.NAME),
        ("What replaces default_app_config?", AnswerKind.NAME),
        # "which" and a noun before the verb picks one of a set of named things, whatever the noun
        ("Which pool does a SQLAlchemy Engine use?", AnswerKind.NAME),
        ("Which template loader is tried first?", AnswerKind.NAME),
        ("Does PostgreSQL 15 still support exclusive backup mode?", AnswerKind.YES_NO),
        ("What is the difference between select_related and prefetch_related?", AnswerKind.EXPLANATION),
        ("How do I enable persistent database connections in Django?", AnswerKind.PROCEDURE),
        # what to do, asked as yes/no: the documentation answers with the option that does it
        ("Can I see what patch would do to my files before applying it?", AnswerKind.PROCEDURE),
        ("Is there a way to make tig wrap long lines?", AnswerKind.PROCEDURE),
        ("Can I use SQLite from several threads at once?", AnswerKind.YES_NO),
        ("How does the asyncio event loop schedule tasks?", AnswerKind.EXPLANATION),
        # a version the question mentions is not one it asks for
        ("Which rsync option should I use to copy an old version of a tree over a new one?", AnswerKind.NAME),
        ("In which release did cron stop mailing empty output?", AnswerKind.VERSION),
        # a change between two versions the question names, written short: what changed, not when
        ("What changed for users when moving from fetchmail v5 to v6?", AnswerKind.EXPLANATION),
    ],
)
def test_the_kind_of_answer_a_question_asks_for(question, kind):
    assert expected_kind(question) == kind
    assert answers_text(question)  # the sub-question's `answers` field says it in words


def test_a_lookup_is_answered_only_by_a_sentence_stating_what_it_asks_for():
    question = "How many PBKDF2 iterations does Django 3.2 use?"
    subject = asked_for(question)
    assert subject == {"pbkdf2", "iteration"}  # Django 3.2 scopes the question; it is not its subject
    answer = (
        "The default iteration count for the PBKDF2 password hasher is increased from 216,000 to 260,000."
    )
    same_page_other_topic = "Django 3.2 supports Python 3.6, 3.7, 3.8, 3.9, and 3.10 (as of 3.2.9)."
    no_figure = "Django uses the PBKDF2 algorithm with a SHA256 hash, a password stretching mechanism."
    scored = answer_score(question, answer, subject=subject)
    assert scored.answers and scored.kind_found == "216,000"
    assert answer_score(question, same_page_other_topic, subject=subject).score == 0.0
    assert not answer_score(question, no_figure, subject=subject).answers
    assert "does not answer" in answer_score(question, no_figure, subject=subject).basis()


def test_the_questions_own_numbers_are_not_an_answer():
    question = "Which Python versions does Django 3.2 support?"
    assert not answer_score(question, "Django 3.2 is a long-term support release of Django.").answers
    assert answer_score(question, "Django 3.2 supports Python 3.6, 3.7, 3.8, 3.9, and 3.10.").answers


def test_context_terms_weigh_nothing_but_never_take_the_subject_away():
    context = {"django", "pbkdf2", "iteration"}  # say, in every fetched page's title
    question = "How many PBKDF2 iterations does Django 3.2 use?"
    subject = asked_for(question)
    off_topic = "See what is new in Django 3.2 for more details about the 3.2 release."
    assert answer_score(question, off_topic, context, subject).score == 0.0
    answer = (
        "The default iteration count for the PBKDF2 password hasher is increased from 216,000 to 260,000."
    )
    assert answer_score(question, answer, context, subject).answers


def test_a_how_to_is_answered_by_a_sentence_naming_its_mechanism():
    question = "How do I enable persistent database connections in Django?"
    answer = "To enable persistent connections, set CONN_MAX_AGE to a positive integer of seconds."
    topic_only = "Persistent connections avoid the overhead of re-establishing a connection to the database."
    elsewhere = "Django's test runner creates a separate test database for every run of the suite."
    context = {"django"}
    assert answer_score(question, answer, context).answers
    assert answer_score(question, answer, context).kind_found == "CONN_MAX_AGE"
    assert not answer_score(question, topic_only, context).answers  # about it, but never says how
    assert not answer_score(question, elsewhere, context).answers


def test_a_how_to_is_answered_in_words_by_a_sentence_saying_what_to_use():
    # FFmpeg's FAQ names its answer in words, with no option to write: it tells the reader what to use.
    question = "How can I concatenate video files with ffmpeg without re-encoding them?"
    answer = (
        "FFmpeg has a concat demuxer which you can use when you want to avoid a re-encode and your format "
        "doesn't support file level concatenation."
    )
    assert answer_score(question, answer, {"ffmpeg"}).answers
    assert answer_score(question, answer, {"ffmpeg"}).kind_found is None  # it names no option
    # Saying what to do about something else, or barely about this, is no answer.
    assert not answer_score(question, "You can use a faster preset when encoding audio.", {"ffmpeg"}).answers
    described = "FFmpeg can concatenate video files that share a codec."
    assert not answer_score(question, described, {"ffmpeg"}).answers  # about it, never what to use
    # A sentence carrying nearly every term of the how-to says what does it, in words.
    flask = "How do I send requests to a Flask application in tests without running a live server?"
    said = "The test client makes requests to the application without running a live server."
    assert answer_score(flask, said, {"flask"}).answers


def test_an_explanation_is_scored_by_the_terms_it_carries():
    question = "How does the asyncio event loop schedule tasks?"
    assert answer_score(question, "The event loop runs asyncio tasks in the order they become ready.").answers
    assert not answer_score(question, "A coroutine is declared with the async keyword.").answers


def test_the_subject_of_a_sub_question_leaves_out_what_the_whole_run_shares():
    questions = [
        "When should threads be used for CPU-bound work?",
        "When should processes be used for CPU-bound work?",
        "When should asyncio be used for CPU-bound work?",
    ]
    assert subject_terms(questions[0], questions) == {"thread"}
    assert subject_terms("Which TCP port does PostgreSQL listen on?", questions) == {"tcp", "port"}


def test_what_every_sub_question_shares_is_context_for_each():
    questions = [
        "When should threads be used in Python?",
        "When should processes be used in Python?",
        "What is the difference between threads and processes in Python?",
    ]
    assert shared_terms(questions) == {"python"}
    answer = "Threads suit I/O-bound work, since a blocked thread releases the interpreter lock."
    product_only = "Python programs often use third-party libraries from the package index."
    assert relevance(questions[0], questions, answer).answers
    assert relevance(questions[0], questions, product_only).score == 0.0  # the product's name answers nothing


def test_a_code_like_term_counts_twice():
    """Two of eight key terms: enough when one is the function the question names, not when both are
    the run's everyday words."""
    question = "What happened to exclusive backup mode and the pg_start_backup function in PostgreSQL 15?"
    renamed = "Functions pg_start_backup()/pg_stop_backup() have been renamed to pg_backup_start()."
    assert answer_score(question, renamed).answers
    other = "How does the global interpreter lock limit Python threads compared with processes?"
    assert not answer_score(other, "Python processes do not share memory by default.").answers


def test_a_noun_after_the_verb_is_not_the_thing_asked_for():
    assert (
        expected_kind("What does the VACUUM command do to an SQLite database file?") == AnswerKind.EXPLANATION
    )
    assert expected_kind("Which SQLite command rebuilds the database file?") == AnswerKind.NAME
    # "limits" is a verb as often as a noun: no figure is asked for here.
    assert expected_kind("Which CPython mechanism limits threads?") != AnswerKind.NUMBER
    assert expected_kind("What is the default page size of a new SQLite database?") == AnswerKind.NUMBER


def test_a_year_is_not_the_figure_a_lookup_asks_for():
    question = "What is the default page size of a new SQLite database?"
    dated = (
        "Since the SQLite database file format was designed (in 2003) the default page size has not changed."
    )
    sized = "Beginning with SQLite version 3.12.0 (2016-03-29), the default page size increased to 4096."
    assert not answer_score(question, dated).answers
    assert answer_score(question, sized).kind_found == "4096"


def test_a_size_is_written_in_digits_a_count_may_be_a_word():
    size = "What is the default page size of a new SQLite database?"
    assert not answer_score(
        size, "The page size of a database is one of two values chosen at creation."
    ).answers
    count = "How many processes does the Django test suite use by default?"
    assert answer_score(count, "By default the test suite runs one process per core.").kind_found == "one"


def test_an_identifier_in_a_claim_carries_its_parts():
    # Django's settings reference names the setting, not "session cookies".
    question = "How long does a Django session cookie last by default?"
    entry = (
        "SESSION_COOKIE_AGE Default: 1209600 (2 weeks, in seconds) The age of session cookies, in seconds."
    )
    scored = answer_score(question, entry, subject=asked_for(question))
    assert scored.answers and scored.kind_found == "1209600"
    assert {"session", "cooki"} <= set(claim_terms("SESSION_COOKIE_AGE"))
    assert identifier_parts("session_cookie_age") == ["session", "cooki", "age"]


def test_what_is_the_attribute_of_x_is_about_x_and_an_entry_states_its_figure_anywhere():
    question = "What is the default value of shared_buffers in PostgreSQL?"
    assert asked_for(question) == {"shared_buffers"}
    assert asked_for("What is the maximum length of a table or column name?") == {
        "length",
        "tabl",
        "column",
        "name",
    }
    # The figure is 19 words from the name the entry opens with: still its value.
    entry = (
        "shared_buffers ( integer ) Sets the amount of memory the database server uses for shared memory "
        "buffers. The default is typically 128 megabytes (128MB), but might be less if your kernel settings "
        "will not support it (as determined during initdb)."
    )
    assert answer_score(question, entry, subject=asked_for(question)).kind_found == "128"
    # Another setting's default is no answer, however it words "default value".
    other = "block_size ( integer ) Reports the size of a disk block. The default value is 8192 bytes."
    assert not answer_score(question, other, subject=asked_for(question)).answers


def test_what_changed_in_a_named_version_asks_for_the_change():
    assert (
        expected_kind("What changed in PostgreSQL 15 about who may create objects?") == AnswerKind.EXPLANATION
    )
    assert expected_kind("What changed recently regarding Django?") == AnswerKind.VERSION


def test_an_identifier_spelling_the_questions_own_words_is_no_answer():
    question = "How do I choose the type of the automatically added primary key for my Django models?"
    # "primary_key" is the question's "primary key" written as code: it names nothing the asker lacks.
    echo = "If you don’t specify primary_key=True for any field in your model, Django will add a field."
    mechanism = (
        "By default, Django gives each model an auto-incrementing primary key with the type specified "
        "per app in AppConfig.default_auto_field or globally in the DEFAULT_AUTO_FIELD setting."
    )
    assert answer_score(question, echo).kind_found is None
    assert answer_score(question, mechanism).kind_found in ("AppConfig", "DEFAULT_AUTO_FIELD")
    assert answer_score(question, mechanism).answers


def test_a_hyphenated_phrasal_verb_is_also_the_one_word_the_docs_write():
    assert "login" in key_terms("How do I restrict a Django view to logged-in users?")
    assert "login" in claim_terms("The login_required decorator redirects anonymous users.")
    assert phrasal_compounds("a built-in function, a set-up step, stored in a file") == ["builtin", "setup"]


def test_the_documentations_other_words_for_a_question_count():
    assert synonyms(["restrict", "view"]) == {"limit"}
    assert {"enabl", "activat"} <= synonyms([], "How do I turn foreign key constraints on in SQLite?")
    question = "How do I turn foreign key constraints on in SQLite?"
    enabled = (
        "Assuming the library is compiled with foreign key constraints enabled, it must still be enabled by "
        "the application at runtime, using the PRAGMA foreign_keys command."
    )
    assert "turn" in answer_score(question, enabled).terms_found
    assert "turn" not in answer_score(question, "Foreign key constraints are checked at commit.").terms_found
    # "how many history lines" is "the number of history events" in a manual.
    assert synonyms([], "How do I set how many history lines zsh keeps?") == {"number"}
    assert "number" not in synonyms([], "How much memory does it use?")


def test_a_re_research_query_also_asks_in_the_documentations_words():
    sq = {"id": "SQ-01", "text": "How do I restrict a Django view to logged-in users?"}
    first, other = rethought_queries(sq, {"django", "view"}, 1)
    assert first["query"].startswith("restrict logged users")
    assert other["query"].startswith("limit logged users") and "restrict" not in other["query"]
    assert other["why"].endswith("in the documentation's other words for them: limit")
    turned = rethought_queries({"id": "SQ-02", "text": "How do I turn foreign key constraints on?"}, set(), 2)
    assert turned[1]["query"].startswith("enable activate foreign key constraints")
    # Nothing in other words: one query, as before.
    assert len(rethought_queries({"id": "SQ-03", "text": "What does VACUUM do?"}, set(), 2)) == 1
    assert rethought_queries({"id": "SQ-03", "text": "What does VACUUM do?"}, {"vacuum"}, 2) == []


def test_a_contraction_and_get_are_no_key_terms():
    # "haven't" is "have not", "get" is how the question is put: neither may take a query's place
    terms = key_terms("Which look does Sphinx's HTML output get when I haven't picked a theme in conf.py?")
    assert "haven" not in terms and "get" not in terms and "conf" in terms


@pytest.mark.parametrize(
    ("plural", "singular"),
    [("settings", "setting"), ("warnings", "warning"), ("strings", "string"), ("mappings", "mapping")],
)
def test_a_plural_in_ings_folds_as_its_singular_does(plural, singular):
    # "warnings" once folded to "warning" and "warning" to "warn": the asker's "a warning" missed the
    # option entry's "getting warnings".
    assert fold(plural) == fold(singular)


def test_a_spelled_out_version_also_reads_as_its_short_form():
    # "moving from v7 to v8" is answered by "Version 8 offers a rewritten core".
    assert "v8" in tokens("Version 8 offers a rewritten core, unlike release 7.4.")
    assert "v7.4" in tokens("Version 8 offers a rewritten core, unlike release 7.4.")


@pytest.mark.parametrize(
    ("question", "off_topic", "on_topic"),
    [
        (
            "How do I configure a Kubernetes pod disruption budget?",
            "You can configure the mapping in setup.py with the message_extractors keyword.",
            "Set the budget with spec.minAvailable in the PodDisruptionBudget object.",
        ),
        (
            "How can I quickly enable gzip compression of responses in my web server?",
            "To enable the debugger, set FLASK_DEBUG=1 before starting the app.",
            "Use the gzip_types directive to compress responses of other types.",
        ),
        (
            "Which option controls the colours of the diff output?",
            "MAX_COOKIE_SIZE controls a warning from Werkzeug about large cookies.",
            "--color=WHEN colours the diff output; WHEN is never, always or auto.",
        ),
    ],
)
def test_a_claim_carrying_only_the_verb_asked_does_not_answer(question, off_topic, on_topic):
    # "configure", "enable" and "controls" are said of everything in documentation: with a code token beside
    # them the kind's credit made such a sentence an answer to a question about something else entirely.
    off = relevance(question, [question], off_topic)
    assert not off.answers and "carries only the verb asked" in off.basis()
    assert answer_score(question, off_topic).answers  # the ranking's feature weighs it as fitted
    assert relevance(question, [question], on_topic).answers


def test_a_version_lookup_is_no_how_to_and_keeps_its_thing():
    # "Which version added ..." names no verb asked: its "added" and "version" are what the answer states.
    question = "Which version added the compact JSON output?"
    assert relevance(question, [question], "Added in version 2.1: the compact JSON output.").answers


def test_the_planners_given_that_is_no_key_term():
    # The planner puts the asker's situation after "given that": a claim saying "given" (as in "the given
    # string") carries nothing of the question.
    question = "How do I recover the file, given that Vim found a swap file for it?"
    assert "given" not in key_terms(question) and "swap" in key_terms(question)
    assert "given" not in relevance(question, [question], "The given file is read again.").terms_found


def test_a_headings_own_number_is_no_version():
    # NTPsec's manual quoted "6.1. Manual Pages" before a line of its menu, and the section number read as
    # the version "What changed in NTPsec compared with NTP Classic?" asked for.
    question = "What changed in NTPsec compared with NTP Classic?"
    claim = "6.1. Manual Pages: ntptrace(1) - trace a chain of NTP servers back to the primary source"
    assert relevance(question, [question], claim).kind_found is None
    assert (
        version_under_heading(
            answer_score(question, "The NTP Classic ntpdc was removed."), question, ("6.1. Manual Pages",)
        )[1]
        == ""
    )
    under = version_under_heading(
        answer_score(question, "The NTP Classic ntpdc was removed."), question, ("Version 1.2.2",)
    )
    assert under[1] == "Version 1.2.2"


def test_the_name_after_the_verb_is_what_a_lookup_of_its_values_asks_for():
    assert asked_for("Which values can CMAKE_BUILD_TYPE take?") == {"valu", "cmake_build_type"}
    assert asked_for("Which options does pg_dump accept?") == {"option", "pg_dump"}
    # a product and its version after the verb only scope the question
    assert asked_for("How many PBKDF2 iterations does Django 3.2 use?") == {"pbkdf2", "iteration"}
    # an adverb is how the question is put: no thing is named
    assert asked_for("What exactly does --keep-within 2d keep for borg prune?") == set()
