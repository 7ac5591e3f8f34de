"""The sentence-support check (`research_engine.support`) names each kind of unfaithful sentence, with the
words at fault, and passes a writer's own words for what the claims hold. Claims are real documentation
sentences (Debian's python-django-doc, postgresql-doc-15, python-flask-doc)."""

from __future__ import annotations

import pytest

from research_engine import support

CLAIMS = {
    "CLM-01": "To enable persistent connections, set CONN_MAX_AGE to a positive integer of seconds.",
    "CLM-02": "If your database terminates idle connections after some time, you should set CONN_MAX_AGE "
    "to a lower value, so that Django doesn't attempt to use a connection that has been terminated by the "
    "database server.",
    "CLM-03": "In normal PostgreSQL operation, tuples that are deleted or obsoleted by an update are not "
    "physically removed from their table; they remain present until a VACUUM is done.",
    "CLM-04": "A catch-all error handler registered for HTTPException will not handle RoutingException, "
    "which is used internally during routing.",
    "CLM-05": "Django has built-in protection against most types of CSRF attacks, providing you have enabled "
    "and used it where appropriate.",
    "CLM-06": "inherited from the sqlalchemy.orm.session._SessionClassMethods.close_all method of "
    "sqlalchemy.orm.session._SessionClassMethods Close all sessions in memory.",
    "CLM-07": "You can also Session.prepare() the session for interacting with transactions not managed by "
    "SQLAlchemy.",
    "CLM-08": "The loading of relationships falls into three categories; lazy loading, eager loading, and no "
    "loading.",
}
QUESTION = "What do persistent database connections (CONN_MAX_AGE) do in Django?"


def judge(sentence: str) -> support.Sentence:
    claims = {c: {"id": c, "text": t, "evidence": [{"quote": t}]} for c, t in CLAIMS.items()}
    (judged,) = support.Judge(claims, QUESTION, [QUESTION]).block(sentence, 1)
    return judged


@pytest.mark.parametrize(
    "sentence",
    [
        "Setting CONN_MAX_AGE to a positive integer of seconds enables persistent connections [CLM-01].",
        "Until a VACUUM is done, deleted tuples remain present: PostgreSQL does not physically remove them "
        "[CLM-03].",
        "RoutingException, used internally during routing, is not handled by a catch-all handler registered "
        "for HTTPException [CLM-04].",
        "`close_all()` closes all sessions in memory [CLM-06].",
        "If the database terminates idle connections, set CONN_MAX_AGE lower so that Django does not try to "
        "use a terminated connection [CLM-02].",
        "Relationship loading falls into three categories: lazy, eager and no loading [CLM-08].",
        f"**SQ-01** ({QUESTION}): Set CONN_MAX_AGE to a positive integer of seconds [CLM-01].",
    ],
)
def test_a_writers_own_words_for_what_the_claims_hold_pass(sentence):
    judged = judge(sentence)
    assert judged.ok, judged.message()


@pytest.mark.parametrize(
    ("sentence", "kind", "words"),
    [
        ("Persistent connections are kept in a pool Django shares between threads [CLM-01].", "unsupported",
         {"pool", "threads"}),
        ("Django has no built-in protection against CSRF attacks [CLM-05].", "contradiction", {"no"}),
        ("A catch-all error handler registered for HTTPException also handles RoutingException [CLM-04].",
         "contradiction", {"handl"}),
        ("Session.prepare() prepares the session for transactions managed by SQLAlchemy [CLM-07].",
         "contradiction", {"manag"}),
        ("Django's built-in protection stops all types of CSRF attacks [CLM-05].", "overclaim", {"all"}),
        ("Persistent connections are enabled by CONN_MAX_AGE because they are faster [CLM-01].", "overclaim",
         {"because"}),
        ("Setting CONN_MAX_AGE to a lower value keeps Django from using connections the database server has "
         "terminated [CLM-01].", "misattributed", {"terminated"}),
        ("To enable persistent connections, set CONN_MAX_AGE to 600 seconds [CLM-01].", "number",
         {"600 seconds"}),
        ("The loading of relationships falls into four categories [CLM-08].", "number", {"four"}),
        ("To enable persistent connections, set DB_TIMEOUT to a positive integer of seconds [CLM-01].",
         "name", {"DB_TIMEOUT"}),
    ],
)  # fmt: skip
def test_each_kind_of_unfaithful_sentence_is_named_with_the_words_at_fault(sentence, kind, words):
    judged = judge(sentence)
    assert judged.kind == kind, judged.message()
    said = " ".join(w for f in judged.faults for w in f.words)
    assert all(w in said for w in words), judged.message()
    assert kind in judged.message()


def test_a_misattributed_sentence_names_the_claim_to_cite():
    judged = judge("A catch-all handler for HTTPException will not handle RoutingException [CLM-01].")
    (fault,) = judged.faults
    assert fault.kind == "misattributed" and fault.claims == ("CLM-04",)
    assert "cite CLM-04" in judged.message()


@pytest.mark.parametrize(
    ("token", "claim", "held"),
    [
        ("`str.removeprefix()`", "Use str.removeprefix(prefix) to strip a prefix.", True),
        ("`removeprefix()`", "Use str.removeprefix(prefix) to strip a prefix.", True),
        (
            "`removeprefix()`",
            "Use str.removeprefix(prefix) or bytes.removeprefix(prefix) to strip it.",
            False,
        ),
        ("`bytes.removeprefix()`", "Use str.removeprefix(prefix) to strip a prefix.", False),
        ("`removesuffix()`", "Use str.removeprefix(prefix) to strip a prefix.", False),
    ],
)
def test_code_is_compared_as_code(token, claim, held):
    claims = {"CLM-01": {"id": "CLM-01", "text": claim}}
    (judged,) = support.Judge(claims, "").block(f"Call {token} to strip a prefix [CLM-01].", 1)
    assert judged.ok is held, judged.message()


def test_a_claim_negating_words_it_also_states_plainly_holds_a_sentence_stating_them():
    """A verbatim claim of two sentences, one negating what the other states, passes when restated."""
    text = "Values with time zone are stored as UTC. Values without time zone are stored as written."
    claims = {"CLM-01": {"id": "CLM-01", "text": text}}
    judged = support.Judge(claims, "").block("Values with time zone are stored as UTC [CLM-01].", 1)
    assert all(s.ok for s in judged), [s.message() for s in judged]
