"""The sentence-support check's readings of how documentation words a link, a negation or a substitution
(`research_engine.support`): each claim is a sentence of real Debian documentation (Django, PostgreSQL,
SQLite), each sentence one a writer could put over it."""

from __future__ import annotations

from research_engine import support, support_words

CLAIMS = {
    # python-django-doc: releases/1.4.txt, ref/templates/language.txt, releases/1.8.txt
    "CLM-01": "The template system generally escapes all variables to avoid XSS attacks.",
    "CLM-02": "This feature is useful in avoiding repetition in templates.",
    "CLM-03": "Assigning a model instance to a non-relation field will now throw an error.",
    # postgresql-doc-15: the psql \pset null option
    "CLM-04": "Sets the string to be printed in place of a null value.",
    # sqlite3-doc: foreignkeys.html
    "CLM-05": "If SQLITE_OMIT_TRIGGER is defined but SQLITE_OMIT_FOREIGN_KEY is not, then SQLite behaves as "
    "it did prior to version 3.6.19 (2009-10-14) - foreign key definitions are parsed and may be queried "
    "using PRAGMA foreign_key_list, but foreign key constraints are not enforced.",
    # python-django-doc: ref/contrib/admin/index.txt
    "CLM-06": "If a model is abstract, raise ImproperlyConfigured.",
    "CLM-07": "Persistent connections avoid the overhead of re-establishing a connection to the database in "
    "each request.",
}


def passes(text: str, claims: dict[str, str] = CLAIMS) -> bool:
    judge = support.Judge({c: {"id": c, "text": t} for c, t in claims.items()}, "")
    return all(s.ok for s in judge.block(text, 1))


def test_a_purpose_or_a_condition_in_the_claim_is_the_link_a_sentence_states():
    assert passes("The template system escapes variables so that XSS attacks are avoided [CLM-01].")
    assert passes("An abstract model causes ImproperlyConfigured to be raised [CLM-06].")
    # the claim states no link: a sentence's "because" is its own
    assert not passes(
        "Assigning a model instance to a non-relation field throws an error because of caching [CLM-03]."
    )


def test_in_place_of_and_an_alternative_to_are_instead_of():
    assert passes("The string is printed rather than a null value [CLM-04].")
    assert not passes("A null value is printed rather than the string [CLM-04].")


def test_a_negation_that_ends_its_clause_governs_the_words_before_it():
    assert passes(
        "With SQLITE_OMIT_TRIGGER defined but not SQLITE_OMIT_FOREIGN_KEY, foreign key constraints are not "
        "enforced [CLM-05]."
    )
    assert not passes(
        "SQLite behaves as before version 3.6.19 when SQLITE_OMIT_TRIGGER is not defined [CLM-05]."
    )


def test_a_verb_that_negates_agrees_with_a_sentences_not():
    assert passes("This feature is useful for having no repetition in templates [CLM-02].")
    # a sentence that negates the verb itself says the opposite
    assert not passes(
        "Persistent connections do not avoid the overhead of re-establishing a connection to the database in "
        "each request [CLM-07]."
    )


def test_a_hyphenated_negative_prefix_is_the_prefixed_word():
    assert passes(
        "Assigning a model instance to a field that is not a relation will now throw an error [CLM-03]."
    )
    assert not passes(
        "Assigning a model instance to a non-relation field will no longer throw an error [CLM-03]."
    )


def test_unlike_is_no_negation_of_a_claims_like():
    judge = support.Judge(
        {
            "CLM-01": {
                "id": "CLM-01",
                "text": "The loader does not cache templates like the cached loader does.",
            }
        },
        "",
    )
    assert judge.block("Unlike the cached loader, the loader does not cache templates [CLM-01].", 1)[0].ok


def test_a_noun_derived_from_the_claims_verb_carries_it():
    judge = support.Judge(
        {"CLM-01": {"id": "CLM-01", "text": "The default implementation creates an admin LogEntry object."}},
        "",
    )  # python-django-doc: ref/contrib/admin/index.txt
    assert judge.block(
        "The default implementation handles creation of an admin LogEntry object [CLM-01].", 1
    )[0].ok
    failed = judge.block(
        "The default implementation quietly handles removal and safe creation of an admin LogEntry object "
        "[CLM-01].",
        1,
    )[0]
    assert [f.words for f in failed.faults] == [("quietly", "handles", "removal", "safe")]  # not "creation"


def _judge(**claims: str) -> support.Judge:
    return support.Judge(
        {c.replace("_", "-"): {"id": c.replace("_", "-"), "text": t} for c, t in claims.items()}, ""
    )


def _ok(judge: support.Judge, text: str) -> bool:
    return all(s.ok for s in judge.block(text, 1))


def test_a_negation_opening_a_clause_governs_it_and_a_sentence_may_not_state_it_plainly():
    judge = _judge(  # python-django-doc: ref/forms/api.txt
        CLM_01="The callable will be evaluated only when the unbound form is displayed, not when it is "
        "defined."
    )
    assert _ok(
        judge,
        "The callable is evaluated when the unbound form is displayed, not when it is defined [CLM-01].",
    )
    assert not _ok(judge, "The callable is evaluated as soon as it is defined [CLM-01].")


def test_unlikely_is_a_negation():
    judge = _judge(CLM_01="More importantly, they are unlikely to fix them.")  # python-django-doc: internals
    assert _ok(judge, "More importantly, they are not likely to fix them [CLM-01].")
    assert not _ok(judge, "More importantly, they will fix them [CLM-01].")


def test_a_command_lines_options_are_held_as_code():
    judge = _judge(  # postgresql-doc-15: app-pg-dumpall.html
        CLM_01="To restore database(s) from this file, you can use: $ psql -X -f db.out -d postgres"
    )
    assert _ok(judge, "Restore the databases from the file with `psql -X -f db.out -d postgres` [CLM-01].")
    assert not _ok(
        judge, "Restore the databases from the file with `psql -X -c db.out -d postgres` [CLM-01]."
    )


def test_a_lowercase_word_with_a_figure_is_a_name():
    judge = _judge(
        CLM_01="Support for the PostgreSQL database via the psycopg2 driver."
    )  # python-sqlalchemy-doc
    assert _ok(judge, "The psycopg2 driver gives support for the PostgreSQL database [CLM-01].")
    failed = judge.block("Support for the PostgreSQL database via the pg8000 driver [CLM-01].", 1)[0]
    assert failed.kind == "name" and ("pg8000",) in [f.words for f in failed.faults]


def test_a_multiple_is_a_figure():
    judge = _judge(CLM_01="Support for the PostgreSQL database via the psycopg2 driver.")
    failed = judge.block("The psycopg2 driver doubles support for the PostgreSQL database [CLM-01].", 1)[0]
    assert failed.kind == "number" and failed.faults[0].words == ("doubles",)


def test_an_obligation_or_a_bound_in_other_words_backs_the_strong_word():
    judge = _judge(  # python-django-doc: topics/db/models.txt, ref/contrib/admin/index.txt
        CLM_01="You have to call save() explicitly.",
        CLM_02="The maximum number of items to display in a QuerySet.",
    )
    assert _ok(judge, "You must call `save()` explicitly [CLM-01].")
    assert not _ok(judge, "You must display the items of a QuerySet [CLM-02].")
    assert _ok(judge, "It is the largest number of items to display in a QuerySet [CLM-02].")
    assert not _ok(judge, "It is the smallest number of items to display in a QuerySet [CLM-02].")


def test_at_all_is_emphasis_not_a_quantifier():
    judge = _judge(CLM_01="ST_Perimeter cannot use a non-projected non-geography field.")  # django: gis
    assert _ok(judge, "ST_Perimeter cannot use a non-projected non-geography field at all [CLM-01].")
    assert not _ok(judge, "ST_Perimeter cannot use all non-projected non-geography fields [CLM-01].")


def test_only_with_an_order_is_the_claims_order():
    judge = _judge(CLM_01="As always, profile first, then optimize.")  # python-django-doc: topics/performance
    assert _ok(judge, "As always, profile first and only optimize afterwards [CLM-01].")
    assert not _ok(judge, "As always, only optimize [CLM-01].")


def test_a_term_swapped_for_the_claims_between_the_same_words_is_a_name():
    judge = _judge(  # postgresql-doc-15: libpq.html
        CLM_01="libpq is the C application programmer's interface to PostgreSQL."
    )
    assert _ok(judge, "libpq is the interface to PostgreSQL for C application programmers [CLM-01].")
    failed = judge.block("ecpg is the C application programmer's interface to PostgreSQL [CLM-01].", 1)[0]
    assert failed.kind == "name" and failed.faults[0].words == ("ecpg (the claim: libpq)",)
    # two common words in that place may be a paraphrase: the share of missing words judges them
    assert _ok(judge, "libpq is the C application programmer's gateway to PostgreSQL [CLM-01].")


def test_the_wordnet_tables_are_written_in_the_checks_stems():
    assert support_words.stem("verify") in support_words.derived_stems(support_words.stem("verification"))
    assert support_words.common_word("libraries") and support_words.common_word("sending")
    assert not support_words.common_word("libswscale") and not support_words.common_word("ksh")
    assert support_words.stem("disable") in support_words.antonym_stems(support_words.stem("enabled"))
    assert support_words.stem("after") in support_words.antonym_stems(support_words.stem("before"))
    paths = (
        support_words.DERIVED_WORDS_FILE,
        support_words.COMMON_WORDS_FILE,
        support_words.ANTONYM_WORDS_FILE,
        support_words.SPELLING_VARIANTS_FILE,
        support_words.DICTIONARY_WORDS_FILE,
    )
    for path in paths:
        assert "WordNet 3.0 Copyright 2006 by Princeton University" in path.read_text(encoding="utf-8")


def test_an_antonym_said_of_the_claims_words_is_a_contradiction():
    judge = _judge(  # postgresql-doc-15: runtime-config-autovacuum.html
        CLM_01="This parameter is on by default; however, track_counts must also be enabled for autovacuum "
        "to work."
    )
    failed = judge.block("For autovacuum to work, track_counts must also be disabled [CLM-01].", 1)[0]
    assert failed.kind == "contradiction" and "disabled (the claim: enabl)" in failed.faults[0].words
    # negated, the antonym says what the claim says; the word itself is the claim's
    assert _ok(judge, "For autovacuum to work, track_counts must not be disabled [CLM-01].")
    assert _ok(judge, "For autovacuum to work, track_counts must be enabled as well [CLM-01].")


def test_a_direction_flipped_on_the_same_words_is_a_contradiction():
    judge = _judge(  # postgresql-doc-15: functions-window.html, lag()
        CLM_01="lag returns value evaluated at the row that is offset rows before the current row within the "
        "partition."
    )
    assert _ok(judge, "lag() returns the value at the row offset rows before the current row [CLM-01].")
    failed = judge.block("lag() returns the value at the row offset rows after the current row [CLM-01].", 1)
    assert failed[0].kind == "contradiction"


def test_a_relation_read_the_other_way_round_with_its_sides_exchanged_is_a_restatement():
    judge = _judge(  # python-django-doc: topics/testing/overview.html
        CLM_01="Migrations are applied before the test fixtures are loaded."
    )
    assert _ok(judge, "The test fixtures are loaded after migrations are applied [CLM-01].")
    failed = judge.block("Migrations are applied after the test fixtures are loaded [CLM-01].", 1)
    assert failed and failed[0].kind == "contradiction"


def test_an_antonym_said_of_other_words_is_no_contradiction():
    judge = _judge(  # sqlite3-doc: lang_vacuum.html
        CLM_01="The VACUUM command may change the ROWIDs of entries in any tables that do not have an "
        "explicit INTEGER PRIMARY KEY."
    )
    # "lack" is "have"'s antonym, said here of what the claim negates: the same thing in other words
    assert _ok(judge, "VACUUM may change the ROWIDs of entries in tables that lack an explicit INTEGER "
               "PRIMARY KEY [CLM-01].")  # fmt: skip


def test_two_of_the_claims_words_exchanged_are_a_contradiction():
    judge = _judge(  # postgresql-doc-15: protocol-flow.html
        CLM_01="In the simple Query protocol, the frontend sends a textual query string, which is parsed and "
        "immediately executed by the backend."
    )
    failed = judge.block(
        "In the simple Query protocol, the backend sends a textual query string, which is parsed and "
        "immediately executed by the frontend [CLM-01].",
        1,
    )[0]
    assert failed.kind == "contradiction" and "backend and frontend exchanged" in failed.faults[0].words
    # the same roles in the passive, and an order word moved, are the claim's
    assert _ok(judge, "A textual query string sent by the frontend is parsed and executed at once by the "
               "backend in the simple Query protocol [CLM-01].")  # fmt: skip
    assert _ok(judge, "In the simple Query protocol the backend parses a textual query string the frontend "
               "sends and executes it immediately [CLM-01].")  # fmt: skip


def test_a_repr_in_angle_brackets_is_text_and_its_figures_count():
    judge = _judge(  # python-django-doc: intro/tutorial02.txt
        CLM_01="Question.objects.all() now displays <QuerySet [<Question: Question object (1)>]>."
    )
    assert _ok(
        judge, "Question.objects.all() now shows <QuerySet [<Question: Question object (1)>]> [CLM-01]."
    )
    failed = judge.block(
        "Question.objects.all() now shows <QuerySet [<Question: Question object (2)>]> [CLM-01].", 1
    )[0]
    assert failed.kind == "number"
    # an HTML tag is markup all the same
    shown = "Question.objects.all() now <b>displays</b> <QuerySet [<Question: Question object (1)>]>"
    assert _ok(judge, shown + " [CLM-01].")


def test_a_url_is_compared_as_code():
    judge = _judge(  # postgresql-doc-15: the preface's "Further Information"
        CLM_01="The PostgreSQL wiki is at https://wiki.postgresql.org and holds the project's FAQ."
    )
    assert _ok(judge, "The project's FAQ is on the PostgreSQL wiki, https://wiki.postgresql.org. [CLM-01]")
    failed = judge.block(
        "The project's FAQ is on the PostgreSQL wiki at https://www.postgresql.org [CLM-01].", 1
    )
    assert failed[0].kind == "name" and "https://www.postgresql.org" in failed[0].faults[0].words


def test_a_negative_said_of_the_same_words_is_a_contradiction_where_the_claim_writes_the_word_elsewhere():
    judge = _judge(  # postgresql-doc-15: sql-unlisten.html
        CLM_01="UNLISTEN cancels any existing registration of the current PostgreSQL session as a listener "
        "on the notification channel named channel."
    )
    assert _ok(judge, "UNLISTEN cancels the current session's registration as a listener on a notification "
               "channel [CLM-01].")  # fmt: skip
    failed = judge.block("LISTEN cancels any existing registration of the current PostgreSQL session as a "
                         "listener on the notification channel [CLM-01].", 1)  # fmt: skip
    words = [w for f in failed[0].faults if f.kind == "contradiction" for w in f.words]
    assert failed[0].kind == "contradiction" and "listen (the claim: unlisten)" in words


def test_two_things_ordered_the_other_way_round_is_a_contradiction():
    judge = _judge(  # postgresql-doc-15: sql-createindex.html, building indexes concurrently
        CLM_01="In a concurrent index build, the index is actually entered as an invalid index into the "
        "system catalogs in one transaction, then two table scans occur in two more transactions."
    )
    assert _ok(judge, "A concurrent index build enters the index into the system catalogs as invalid in one "
               "transaction, then scans the table twice in two more transactions [CLM-01].")  # fmt: skip
    reversed_order = (
        "In a concurrent index build, two table scans occur first, then the index is entered into the "
        "system catalogs as an invalid index [CLM-01]."
    )
    failed = judge.block(reversed_order, 1)
    words = [w for f in failed[0].faults if f.kind == "contradiction" for w in f.words]
    assert any("then" in w and "the claim:" in w for w in words)
    # "after" orders the same two things the other way: it is compared with "after" only
    after = (
        "A concurrent index build runs two table scans in two more transactions after it enters the index "
        "into the system catalogs as invalid in one transaction [CLM-01]."
    )
    assert _ok(judge, after)


def test_a_term_inside_an_identifier_is_not_the_term_written():
    judge = _judge(  # postgresql-doc-15: monitoring-stats.html, pg_stat_ssl
        CLM_01="The pg_stat_ssl view will contain one row per backend or WAL sender process, showing "
        "statistics about SSL usage on this connection."
    )
    failed = judge.block(
        "The pg_stat_ssl view has one row per backend or WAL sender process, showing statistics about tls "
        "usage on this connection [CLM-01].",
        1,
    )[0]
    assert failed.kind == "name" and "tls (the claim: ssl)" in failed.faults[0].words
    assert _ok(judge, "The pg_stat_ssl view has one row per backend or WAL sender process, showing "
               "statistics about SSL usage on this connection [CLM-01].")  # fmt: skip


def test_a_claims_negated_phrase_is_not_affirmed_by_its_words_in_separate_clauses():
    claims = {
        # sqlite3-doc: rbu.html; postgresql-doc-15: the default of a setting
        "CLM-01": "The RBU extension is not enabled by default. To enable it, compile the amalgamation with "
        "the SQLITE_ENABLE_RBU compile-time option.",
        "CLM-02": "The default is on.",
    }
    # "enable" and "default" are each stated plainly, but never together: "enabled by default" is negated
    assert not passes("The RBU extension is enabled by default [CLM-01][CLM-02].", claims)
    assert passes(
        "The RBU extension is not enabled by default; compile with SQLITE_ENABLE_RBU to enable it [CLM-01].",
        claims,
    )


def test_one_where_the_claim_says_more_than_one_of_the_same_thing_is_a_contradiction():
    claims = {
        # postgresql-doc-15: ddl-constraints.html; sqlite3-doc: wal.html
        "CLM-01": "A table can have at most one primary key.",
        "CLM-02": "A single WAL can and usually does record multiple transactions.",
    }
    assert not passes("A table can have several primary keys [CLM-01].", claims)
    assert passes("A table can have at most a single primary key [CLM-01].", claims)
    assert not passes("A single WAL records only one transaction [CLM-02].", claims)
    assert passes("One WAL usually records several transactions [CLM-02].", claims)


def test_a_claims_no_is_not_undone_by_a_negation_of_the_word_elsewhere_in_the_sentence():
    # postgresql-doc-15: index-unique-checks.html
    claims = {"CLM-01": "If it rolls back then there is no conflict."}
    assert passes("When it rolls back, no conflict arises [CLM-01].", claims)
    # the sentence negates "conflict" once, then states it plainly: the claim never does
    assert not passes("Even with no conflict at first, a rollback still causes a conflict [CLM-01].", claims)


def test_a_negation_whose_words_the_claims_state_plainly_is_a_contradiction():
    claims = {  # postgresql-doc-15: ddl-basics.html
        "CLM-01": "Furthermore, SQL does not assign unique identifiers to rows, so it is possible to have "
        "several completely identical rows in a table."
    }
    assert passes("SQL assigns no unique identifiers to rows, so a table can hold several completely "
                  "identical rows [CLM-01].", claims)  # fmt: skip
    # the claims' "not" governs other words ("assign unique identifiers") than the sentence's "no"
    assert not passes("SQL allows no completely identical rows in a table [CLM-01].", claims)


def test_usually_where_the_claim_says_rarely_of_the_same_thing_is_a_contradiction():
    claims = {  # postgresql-doc-15: pgupgrade.html
        "CLM-01": "Major PostgreSQL releases regularly add new features that often change the layout of the "
        "system tables, but the internal data storage format rarely changes."
    }
    assert not passes("The internal data storage format usually changes in a major release [CLM-01].", claims)
    assert passes("Major releases seldom change the internal data storage format [CLM-01].", claims)
    assert passes("Major PostgreSQL releases often change the layout of the system tables [CLM-01].", claims)


def test_a_word_in_square_brackets_is_notation_held_as_code():
    claims = {  # sqlite3-doc: vdbe.html
        "CLM-01": "The [EXPLAIN] keyword will cause sqlite to print the VDBE program rather than execute it."
    }
    assert passes("With the [EXPLAIN] keyword, sqlite prints the VDBE program instead of executing it "
                  "[CLM-01].", claims)  # fmt: skip
    assert not passes("With the [ANALYZE] keyword, sqlite prints the VDBE program instead of executing it "
                      "[CLM-01].", claims)  # fmt: skip
    # the name without its brackets is the claim's name all the same
    assert passes("The EXPLAIN keyword makes sqlite print the VDBE program rather than execute it [CLM-01].",
                  claims)  # fmt: skip


def test_an_adverb_moved_or_a_verb_in_another_voice_is_no_exchange():
    judge = _judge(  # the shape of postgresql-doc-15's and r-doc-html's sentences, in PostgreSQL's words
        CLM_01="When vacuuming a table, other tables in its inheritance tree will also be vacuumed "
        "recursively as they are scanned.",
        CLM_02="Many systems have conventions for using backslash as an escape character in string literals, "
        "but the SQL standard does not. It is optional in PostgreSQL whether such conventions are applied to "
        "string constants.",
    )
    # "recursively vacuums" is "vacuumed recursively": an adverb says how wherever it stands
    assert _ok(judge, "Vacuuming a table recursively vacuums the other tables in its inheritance tree as "
               "those get scanned [CLM-01].")  # fmt: skip
    # "applying conventions" is "conventions are applied": the verb's object on its other side
    assert _ok(judge, "Applying backslash escape conventions to string constants is optional in PostgreSQL "
               "[CLM-02].")  # fmt: skip


def test_no_way_to_do_a_thing_negates_the_thing():
    judge = _judge(  # postgresql-doc-15: the shape of an "ignored, because there is no way to" sentence
        CLM_01="Such a setting is ignored by default, because the server has no way to load it before "
        "startup."
    )
    failed = judge.block("By default the server loads such a setting before startup [CLM-01].", 1)
    assert failed and failed[0].kind == "contradiction"
    assert _ok(judge, "By default such a setting is ignored, as the server cannot load it before startup "
               "[CLM-01].")  # fmt: skip


def test_neither_and_nor_are_one_negation_of_two_things():
    judge = _judge(  # the shape of libpam-doc's pam.conf(5) sentence, in PostgreSQL's words
        CLM_01="If a column's value is not specifically defined via an INSERT column list, and the default "
        "value is not specified, that column's value defaults to null."
    )
    assert _ok(judge, "A column whose value is given neither by its own INSERT column list nor by a default "
               "counts as null [CLM-01].")  # fmt: skip
    failed = judge.block(
        "A column whose value is given neither by its own INSERT column list nor by a null counts as default "
        "[CLM-01].",
        1,
    )
    assert failed and failed[0].kind == "contradiction"
