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


# Each check reads the words its cue governs (`support_spans`). Claims are real documentation sentences
# (Debian's golang-1.19-doc, cmake-doc, nodejs-doc); the sentences are written for these tests.
SPAN_CLAIMS = {
    "CLM-11": "Sending to or closing a closed channel causes a run-time panic.",
    "CLM-12": "A channel may be closed with the built-in function close.",
    "CLM-13": (
        "If a deferred function value evaluates to nil, execution panics when the function is "
        'invoked, not when the "defer" statement is executed.'
    ),
    "CLM-14": (
        "Functions do not introduce their own policy scope though, so policy settings of the "
        "caller will be affected (see below)."
    ),
    "CLM-15": (
        "Calling readable.pause(), readable.unpipe(), or receiving backpressure will cause the "
        "readable.readableFlowing to be set as false, temporarily halting the flowing of events "
        "but not halting the generation of data."
    ),
    "CLM-16": (
        "All policies introduced in later versions will be unset (unless the "
        "CMAKE_POLICY_DEFAULT_CMP<NNNN> variable sets a default)."
    ),
    "CLM-17": (
        "AsyncLocalStorage should be preferred as it is a performant and memory safe "
        "implementation that involves significant optimizations that are non-obvious to "
        "implement."
    ),
    "CLM-18": (
        "CMake 2.8.12 introduced the target_link_libraries() signature using the PUBLIC, PRIVATE,"
        " and INTERFACE keywords to generalize the LINK_PUBLIC and LINK_PRIVATE keywords "
        "introduced in CMake 2.8.7."
    ),
    "CLM-19": (
        "Set CMAKE_FIND_PACKAGE_PREFER_CONFIG to TRUE to tell find_package() to first search "
        "using Config mode before falling back to Module mode."
    ),
    "CLM-20": "highWaterMark <number> The maximum internal queue size before backpressure is applied.",
    "CLM-21": (
        "If the capacity of s is not large enough to fit the additional values, append allocates "
        "a new, sufficiently large underlying array that fits both the existing slice elements "
        "and the additional values."
    ),
    "CLM-22": (
        "Note Call the cmake_minimum_required() command at the beginning of the top-level "
        "CMakeLists.txt file even before calling the project() command. It is important to "
        "establish version and policy settings before invoking other commands whose behavior they"
        " may affect."
    ),
    "CLM-23": (
        "The EventTarget does not implement any special default handling for 'error' type events "
        "like EventEmitter."
    ),
    "CLM-24": (
        "CMake keeps policy settings on a stack, so changes made by the cmake_policy command "
        "affect only the top of the stack."
    ),
}
SPAN_QUESTION = "How does the Go specification treat channels, and what does cmake_policy do?"


def judge_spans(sentence: str) -> support.Sentence:
    claims = {c: {"id": c, "text": t, "evidence": [{"quote": t}]} for c, t in SPAN_CLAIMS.items()}
    (judged,) = support.Judge(claims, SPAN_QUESTION, [SPAN_QUESTION]).block(sentence, 1)
    return judged


@pytest.mark.parametrize(
    "sentence",
    [
        "Sending to a channel that is already closed causes a run-time panic [CLM-11].",
        "The built-in close function closes a channel [CLM-12].",
        "A nil deferred function value panics only when the function is invoked, not when the defer"
        " statement "
        "runs [CLM-13].",
        "Functions get no policy scope of their own, so they affect the policy settings of their "
        "caller [CLM-14].",
        "A default for a later policy can be set through the CMAKE_POLICY_DEFAULT_CMP<NNNN> "
        "variable [CLM-16].",
        "AsyncLocalStorage involves significant optimizations that are not obvious to implement [CLM-17].",
        "The LINK_PUBLIC and LINK_PRIVATE keywords date from CMake 2.8.7 [CLM-18].",
        "With CMAKE_FIND_PACKAGE_PREFER_CONFIG set to TRUE, find_package() falls back to Module "
        "mode only after "
        "searching Config mode [CLM-19].",
        "highWaterMark is the largest size the internal queue reaches before backpressure is "
        "applied [CLM-20].",
        "When cap(s) cannot fit the additional values, append allocates a new, sufficiently large "
        "underlying "
        "array [CLM-21].",
        "Call cmake_minimum_required() before project() so that version and policy settings are "
        "established "
        "before other commands [CLM-22].",
        "Unlike EventEmitter, EventTarget has no special default handling for 'error' events [CLM-23].",
    ],
)
def test_a_restatement_passes_when_each_cue_governs_what_the_claim_says(sentence):
    judged = judge_spans(sentence)
    assert judged.ok, judged.message()


@pytest.mark.parametrize(
    ("sentence", "kind", "words"),
    [
        # the subject is what the sentence is about: one word of it the claim never writes is enough
        ("Reading from a closed channel causes a run-time panic [CLM-11].", "unsupported", {"reading"}),
        # code named in words: another name in the claim's place
        ("A channel is closed with the built-in function free [CLM-12].", "name", {"free"}),
        # "not when ..." governs its clause
        ("A nil function value panics when the defer statement is executed [CLM-13].", "contradiction",
         {"defer statement"}),
        # a negation is the claim's only when it governs the same words, not when it shares one
        ("Functions have no effect on the policy settings of their caller [CLM-14].", "contradiction",
         {"no effect"}),
        # the claim's negation stated plainly, though the claim affirms its verb elsewhere
        ("Pausing a readable stream halts both the flowing of events and the generation of data [CLM-15].",
         "contradiction", {"halt generat data"}),
        # a prefix antonym on a short stem, read where the sentence is: the policies are unset
        ("Policies introduced in later versions are set as well [CLM-16].", "contradiction", {"unset"}),
        ("AsyncLocalStorage involves obvious optimizations [CLM-17].", "contradiction", {"nonobvious"}),
        # a figure of the claim, but the one it gives something else
        ("target_link_libraries() got its PUBLIC, PRIVATE and INTERFACE signature in CMake 2.8.7 [CLM-18].",
         "number", {"2.8.7"}),
        ("CMake 2.8.12 triples the keywords of target_link_libraries() [CLM-18].", "number", {"triples"}),
        ("With CMAKE_FIND_PACKAGE_PREFER_CONFIG set to TRUE, find_package() searches only Config mode "
         "[CLM-19].", "contradiction", {"only"}),
        ("highWaterMark is the fastest internal queue size [CLM-20].", "overclaim", {"fastest"}),
        ("Run cmake -S to inspect the policy stack [CLM-24].", "name", {"-S"}),
    ],
)  # fmt: skip
def test_each_cue_is_held_to_what_it_governs(sentence, kind, words):
    judged = judge_spans(sentence)
    assert judged.kind == kind, judged.message()
    said = " ".join(w for f in judged.faults for w in f.words)
    assert all(w in said for w in words), judged.message()


def test_a_wrong_name_is_a_name_not_a_misattribution_to_the_claim_that_names_it():
    """The sentence restates CLM-24 with another claim's command in it: citing that claim too would make
    the wrong sentence pass, so the finding names the wrong name."""
    judged = judge_spans(
        "Changes made by the cmake_minimum_required command affect only the top of the policy stack [CLM-24]."
    )
    assert judged.kind == "name", judged.message()
    assert "cite" not in judged.message()


def test_a_possessive_names_the_name():
    claims = {
        "CLM-01": {"id": "CLM-01", "text": "The approach was presented by Hans-J. Boehm and Sarita V. Adve."}
    }
    (judged,) = support.Judge(claims, "").block("The approach is Boehm and Adve's [CLM-01].", 1)
    assert judged.ok, judged.message()


# Claims from Debian's rust-doc (the Rust book) and zsh-doc; the sentences are written for these tests.
MORE_CLAIMS = {
    "CLM-31": (
        "When a variable that includes data on the heap goes out of scope, the value will be cleaned up by "
        "drop unless ownership of the data has been moved to another variable."
    ),
    "CLM-32": "Vectors can only store values that are the same type.",
    "CLM-33": "We create a new channel using the mpsc::channel function; mpsc stands for multiple producer, "
    "single consumer.",
    "CLM-34": "Adding data is called pushing onto the stack, and removing data is called popping off the "
    "stack.",
    "CLM-35": "When the function is first executed, the shell searches for its definition using the elements "
    "of the fpath variable.",
    "CLM-36": "Note that this mechanism merely allocates or closes a file descriptor; it does not perform "
    "any redirections from or to it.",
}


def judge_more(sentence: str) -> support.Sentence:
    claims = {c: {"id": c, "text": t, "evidence": [{"quote": t}]} for c, t in MORE_CLAIMS.items()}
    question = "How do Rust and zsh manage memory, channels and functions?"
    (judged,) = support.Judge(claims, question, [question]).block(sentence, 1)
    return judged


@pytest.mark.parametrize(
    "sentence",
    [
        "When a variable owning heap data leaves scope, drop cleans up the value, provided the data has not "
        "been moved to another variable [CLM-31].",
        "All the values a vector stores must be of the same type [CLM-32].",
        "Removing data from the stack is called popping, and adding data is called pushing [CLM-34].",
        "The first time a function is executed, the shell looks for its definition in the elements of the "
        "fpath variable [CLM-35].",
        "This mechanism only allocates or closes a file descriptor [CLM-36].",
    ],
)
def test_a_restatement_in_other_words_for_a_condition_a_restriction_or_an_order_passes(sentence):
    judged = judge_more(sentence)
    assert judged.ok, judged.message()


@pytest.mark.parametrize(
    ("sentence", "kind", "words"),
    [
        # a passive's agent is what the sentence is about
        ("A heap value is cleaned up by the garbage collector when its variable goes out of scope [CLM-31].",
         "unsupported", {"garbage", "collector"}),
        # opposites no prefix spells, where the claim has the other
        ("Vectors can store values of different types [CLM-32].", "contradiction", {"different"}),
        ("mpsc stands for multiple producer, multiple consumer [CLM-33].", "contradiction", {"multiple"}),
        ("Adding data is called popping onto the stack [CLM-34].", "contradiction", {"popping"}),
        # code named before its kind
        ("When the function is first executed, the shell searches the elements of the path variable "
         "[CLM-35].", "name", {"path"}),
    ],
)  # fmt: skip
def test_a_substitution_the_claim_names_otherwise_is_refused(sentence, kind, words):
    judged = judge_more(sentence)
    assert judged.kind == kind, judged.message()
    said = " ".join(w for f in judged.faults for w in f.words)
    assert all(w in said for w in words), judged.message()
