"""The embedded extractive model: rule-based plans, BM25-chosen verbatim claims, the floor, honest reports."""

from __future__ import annotations

import pytest
from crossprocess import outputs_of_fresh_processes

from research_engine import answering, grounding
from research_engine.documents import Passage
from research_engine.engine.extractive import (
    bm25_scores,
    facets_of,
    is_claim_sentence,
    rendering,
    sentences,
    tokens,
)
from research_engine.engine.extractive.plan import plan_of
from research_engine.engine.factory import make_model
from research_engine.engine.helpers import already_claimed
from research_engine.engine.models import (
    ClaimDraft,
    Section,
    SelectionJudgement,
    SourceText,
    VerdictDraft,
)
from research_engine.engine.scripted import ScriptedModel

BRIEF = {
    "objective": "How does the asyncio event loop schedule tasks?",
    "claim_types": ["technical", "factual"],
    "recency": "18m",
}
SQ = {"id": "SQ-01", "text": "How does the asyncio event loop schedule tasks?", "angle": "entity"}

LOOP_DOC = SourceText(
    ref="SQ-01/SRC-01",
    title="Event loop",
    url="http://127.0.0.1/loop",
    passages=[
        Passage("p01", "Event Loop", kind="heading"),
        Passage(
            "p02",
            "The event loop is the core of every asyncio application. Event loops run asynchronous tasks "
            "and callbacks, perform network IO operations, and run subprocesses. Application developers "
            "should typically use the high-level asyncio functions, e.g. asyncio.run().",
        ),
        Passage(
            "p03",
            "loop.call_soon(callback) schedules the callback to be called with its arguments at the next "
            "iteration of the event loop.",
            kind="code",
        ),
    ],
)
TASK_DOC = SourceText(
    ref="SQ-01/SRC-02",
    title="Tasks",
    url="http://127.0.0.1/tasks",
    passages=[
        Passage(
            "p01",
            "Tasks are used to schedule coroutines concurrently. When a coroutine is wrapped into a Task "
            "with functions like asyncio.create_task() the coroutine is automatically scheduled to run "
            "soon by the event loop.",
        ),
        Passage("p02", "The weather in the valley was mild for most of 2023, with 41 rainy days recorded."),
    ],
)


CONCURRENCY = {
    "objective": "How should a Python 3.11 program choose between threads, processes and asyncio for "
    "concurrent "
    "work, and what do the official docs say about the GIL's effect?",
    "claim_types": ["technical", "factual"],
    "recency": "any",
}


def test_decompose_adds_only_the_angles_the_brief_can_answer():
    """The counter angle only when the objective weighs something (a choice, a recommendation); "what
    changed" only when the objective asks about change or wants figures and no facet asks it already;
    never a padding "what does the official documentation say" question."""
    model = make_model("extractive")
    plans = model.decompose(BRIEF)  # "How does the asyncio event loop schedule tasks?": an explanation
    assert [p.angle for p in plans] == ["entity"]
    assert {p.claim_type for p in plans} <= {"technical", "factual"}
    changing = model.decompose(
        {**BRIEF, "objective": "How does asyncio.gather() schedule tasks, and should I still use it?"}
    )
    assert [p.angle for p in changing] == ["entity", "entity", "time", "counter"]
    # A question that already asks what changed is its own time angle.
    already = model.decompose({**BRIEF, "objective": "How has asyncio's scheduling changed since 3.11?"})
    assert [p.angle for p in already] == ["entity"]
    assert any("in the last 18 months" in p.text for p in changing if p.angle == "time")
    # the window says when, not what about: the time question is about the topic
    (time_plan,) = [
        p
        for p in plan_of(
            {**BRIEF, "objective": "How does asyncio.gather() schedule tasks, and should I still use it?"}
        )
        if p.angle == "time"
    ]
    assert "month" not in time_plan.focus and {"asyncio", "schedul", "task"} & time_plan.focus
    figures = model.decompose({"objective": "How large is Kenya's GDP?", "claim_types": ["quantitative"]})
    assert "time" in [p.angle for p in figures]  # a series has a trend
    for lookup in (
        "What is the maximum size of a single table in PostgreSQL?",
        "How do I enable persistent database connections in Django?",
        "What is the difference between VACUUM and VACUUM FULL in PostgreSQL?",
    ):
        assert "counter" not in [p.angle for p in model.decompose({**BRIEF, "objective": lookup})], lookup


@pytest.mark.parametrize(
    ("objective", "questions"),
    [
        # A verbless follow-up asks the first clause again.
        (
            "Does Django support asynchronous views, and since which version?",
            [
                "Does Django support asynchronous views?",
                "Since which version does Django support asynchronous views?",
            ],
        ),
        # "them" is the plural thing the first clause names, not all it says; the product stays as scope.
        (
            "Does SQLite enforce foreign key constraints by default, and how do I turn them on?",
            [
                "Does SQLite enforce foreign key constraints by default?",
                "How do I turn foreign key constraints on in SQLite?",
            ],
        ),
        (
            "Does Django support asynchronous views, and how do I write them?",
            ["Does Django support asynchronous views?", "How do I write asynchronous views in Django?"],
        ),
        # A difference asks what each item is, in the clause's scope.
        (
            "What is the difference between VACUUM and VACUUM FULL in PostgreSQL?",
            [
                "What is VACUUM in PostgreSQL?",
                "What is VACUUM FULL in PostgreSQL?",
                "What is the difference between VACUUM and VACUUM FULL in PostgreSQL?",
            ],
        ),
    ],
)
def test_follow_ups_and_differences_become_questions_that_carry_their_subject(objective, questions):
    plans = make_model("extractive").decompose({**BRIEF, "objective": objective})
    assert [p.text for p in plans] == questions


@pytest.mark.parametrize(
    ("objective", "questions"),
    [
        # "does it allow": "it" is who does what the first clause asks of, not all that clause says
        (
            "Which TCP port does a PostgreSQL server listen on by default, and how many concurrent "
            "connections does it allow by default?",
            [
                "Which TCP port does a PostgreSQL server listen on by default?",
                "How many concurrent connections does a PostgreSQL server allow by default?",
            ],
        ),
        # ... or, when the asker acts, what they act on (their possessive gone) and how they have it done
        (
            "How can I run my Django test suite in parallel, and how many processes does it use by default?",
            [
                "How can I run my Django test suite in parallel?",
                "How many processes does the Django test suite use by default in parallel?",
            ],
        ),
        # "how many <things>" is asked whole when the follow-up names it: "... sets how many lines ..."
        (
            "How many lines of history does WeeChat keep per buffer by default, and which option sets it?",
            [
                "How many lines of history does WeeChat keep per buffer by default?",
                "Which option sets how many lines of history WeeChat keeps per buffer by default?",
            ],
        ),
        # a situation stated first goes with each question asked in it; no counter-question of "them back"
        (
            "Some entries in my catalog are marked obsolete. How do I bring them back, and is that safe?",
            [
                "How do I bring them back, given that some entries in my catalog are marked obsolete?",
                "Is that safe, given that some entries in my catalog are marked obsolete?",
            ],
        ),
        # "Which option makes ...": "it" is the option that makes it
        (
            "Which option makes tar keep the owners of the files, and what is it set to by default?",
            [
                "Which option makes tar keep the owners of the files?",
                "What is the option that makes tar keep the owners of the files set to by default?",
            ],
        ),
        # "Is there X ..., and since which version does it exist?": "it" is X
        (
            "Is there a built-in Sphinx extension that reports slow documents, and since which version "
            "does it exist?",
            [
                "Is there a built-in Sphinx extension that reports slow documents?",
                "Since which version does a built-in Sphinx extension that reports slow documents exist?",
            ],
        ),
        # the asker's "I" is no subject of the follow-up's own: it asks of the first clause's topic
        (
            "Can I write my pages in Markdown, and what do I have to set up?",
            ["Can I write my pages in Markdown?", "What do I have to set up for pages in Markdown?"],
        ),
        # "and how many" going on with a question asked inside the first is one question, not two
        (
            "How do I set how many history lines zsh keeps in memory and how many it saves to the file?",
            ["How do I set how many history lines zsh keeps in memory and how many it saves to the file?"],
        ),
    ],
)
def test_a_follow_up_reads_as_a_question_of_its_own(objective, questions):
    plans = make_model("extractive").decompose({**BRIEF, "objective": objective})
    assert [p.text for p in plans][: len(questions)] == questions


@pytest.mark.parametrize(
    ("objective", "questions"),
    [
        # a scope the question opens with goes last; an item with its own article keeps its noun and article
        (
            "In Emacs, what is the difference between a buffer, a frame and a window pane?",
            [
                "What is a buffer in Emacs?",
                "What is a frame in Emacs?",
                "What is a window pane in Emacs?",
                "What is the difference between a buffer, a frame and a window pane in Emacs?",
            ],
        ),
        # items named in the plural are asked in the plural
        (
            "What is the difference between static routes and dynamic routes in BIRD?",
            ["What are static routes in BIRD?", "What are dynamic routes in BIRD?"],
        ),
        # "that cache" is the cache the first clause names, with the words that name it
        (
            "When does nginx's proxy cache store a response, and when is that cache purged?",
            [
                "When does nginx's proxy cache store a response?",
                "When is nginx's proxy cache purged?",
            ],
        ),
        # a condition the question opens with goes last too
        (
            "After editing the crontab, do I have to restart cron?",
            ["Do I have to restart cron after editing the crontab?"],
        ),
        # a follow-up whose subject is no phrase of the first clause's words is asked after that clause
        (
            "Which formats come built into Pandoc, and how do I add one?",
            [
                "Which formats come built into Pandoc?",
                "Which formats come built into Pandoc, and how do I add one?",
            ],
        ),
        # the situation's own "and <verb>" is no question, and its "it" is its own: "Why" is no topic
        (
            "A build like make -j8 works in bash, but in zsh it stops with an error and does not start at "
            "all. Why, and what should I do instead?",
            [
                "Why, given that a build like make -j8 works in bash, but in zsh it stops with an error and "
                "does not start at all?",
                "What should I do instead, given that a build like make -j8 works in bash, but in zsh it "
                "stops with an error and does not start at all?",
            ],
        ),
    ],
)
def test_a_questions_items_scope_and_pointers_read_as_written(objective, questions):
    plans = make_model("extractive").decompose({**BRIEF, "objective": objective})
    assert [p.text for p in plans][: len(questions)] == questions
    assert not any(p.text.endswith(("of Why?", "for Why?")) for p in plans)


@pytest.mark.parametrize(
    ("objective", "asked"),
    [
        (
            "PostgreSQL has become much slower on my machine. What should I check first?",
            "What should I check first",
        ),
        (
            "Which themes come built into Sphinx, and how do I choose one?",
            "Which themes come built into Sphinx",
        ),
        (
            "In nginx, which cache key should I use when my URLs carry a session id?",
            "Which cache key should I use when my URLs carry a session id in nginx",
        ),
    ],
)
def test_an_angle_question_names_a_topic_that_reads_as_one_or_quotes_the_question(objective, asked):
    """The counter and time angles put the main facet's topic after "of" or "regarding": what is left of a
    question once its opening is cut ("check first", "themes come built into Sphinx", "In nginx, which ...")
    is no topic, so the angle question quotes the question instead and stays a sentence."""
    plans = make_model("extractive").decompose({**BRIEF, "objective": objective})
    assert [p.text for p in plans if p.angle == "counter"] == [
        f'What are the limitations and drawbacks for "{asked}"?'
    ]
    # ... while a topic that reads as one is named
    weighed = make_model("extractive").decompose(
        {**BRIEF, "objective": "Should I use md5 or scram-sha-256 password authentication in PostgreSQL?"}
    )
    (counter,) = [p.text for p in weighed if p.angle == "counter"]
    assert counter.startswith("What are the limitations and drawbacks of md5 or scram-sha-256 password")
    # ... and a question with nothing to ask of ("Why") gets no angle question
    why = make_model("extractive").decompose(
        {**BRIEF, "objective": "My build fails in zsh but works in bash. Why, and what should I do instead?"}
    )
    assert "counter" not in [p.angle for p in why]


def test_a_follow_up_pronoun_stands_for_the_subject_not_what_is_said_of_it():
    plans = make_model("extractive").decompose(
        {**BRIEF, "objective": "Why is default_app_config deprecated in Django 3.2 and what replaces it?"}
    )
    assert [p.text for p in plans][1] == "What replaces default_app_config in Django 3.2?"


def test_decompose_splits_the_objective_into_facets_and_one_question_per_entity():
    plans = make_model("extractive").decompose(CONCURRENCY)
    texts = [p.text for p in plans]
    assert texts[:3] == [
        "When should a Python 3.11 program use threads for concurrent work?",
        "When should a Python 3.11 program use processes for concurrent work?",
        "When should a Python 3.11 program use asyncio for concurrent work?",
    ]
    assert "What do the official docs say about the GIL's effect?" in texts
    assert {p.angle for p in plans} == {"entity", "source-type", "counter"}  # the docs facet is asked
    assert len(plans) <= 6
    assert all(len(t.split()) <= 16 for t in texts)  # short and specific, never the whole objective restated
    assert not any(CONCURRENCY["objective"] in t for t in texts)


def test_the_counter_angle_asks_for_limitations_of_the_main_facet_in_its_own_terms():
    counter = [p for p in make_model("extractive").decompose(CONCURRENCY) if p.angle == "counter"]
    assert [p.text for p in counter] == [
        "What are the limitations and drawbacks of threads, processes and asyncio for concurrent work?"
    ]


def test_decompose_splits_versus_and_between_comparisons():
    model = make_model("extractive")
    versus = [p.text for p in model.decompose({"objective": "decimal vs float for money arithmetic"})]
    assert "When should decimal be used for money arithmetic?" in versus
    assert "When should float be used for money arithmetic?" in versus
    between = model.decompose(
        {
            "objective": "What are the differences between dataclasses and namedtuple in Python, "
            "and when should "
            "each be used?",
            "claim_types": ["technical"],
        }
    )
    assert [p.text for p in between][:2] == [
        "When should dataclasses be used in Python?",
        "When should namedtuple be used in Python?",
    ]
    assert all(p.claim_type == "technical" for p in between)


def test_queries_are_a_few_key_terms_plus_angle_words():
    model = make_model("extractive")
    plans = model.decompose(CONCURRENCY)
    threads = {"id": "SQ-01", "text": plans[0].text, "angle": "entity"}
    entity = model.queries(CONCURRENCY, threads, "entity")[0]
    assert entity.split()[0] == "threads"  # the entity the question is about comes first
    assert len(entity.split()) <= 6
    assert not {"when", "should", "a", "use", "for"} & set(entity.split())
    assert "3.11" in entity.split()  # version numbers stay whole
    assert model.queries(CONCURRENCY, threads, "counter")[0].endswith("limitations")
    assert model.queries(CONCURRENCY, threads, "source-type")[0].endswith("official documentation")


def test_a_message_the_asker_quotes_is_searched_for_first():
    """The words of a quoted message are what the documentation writes: they lead the query even when the
    question's own words would fill it, as they did before ("message mean log nightly rsync run ...")."""
    model = make_model("extractive")
    brief = {
        **BRIEF,
        "objective": 'The log of a nightly rsync run is full of lines saying "partial transfer skipped". '
        "What does that message mean, and is it a sign of a problem?",
    }
    for plan in model.decompose(brief):
        sq = {"id": "SQ-01", "text": plan.text, "angle": plan.angle}
        assert model.queries(brief, sq, "entity")[0].split()[:3] == ["partial", "transfer", "skipped"]
    # a quote inside a word ("ge"andert") is no search phrase
    spelled = {**BRIEF, "objective": 'Why does my program print ge"andert instead of the real characters?'}
    (plan,) = model.decompose(spelled)
    query = model.queries(spelled, {"id": "SQ-01", "text": plan.text, "angle": "entity"}, "entity")[0]
    assert query.split()[0] == "print"  # the question's own words, as without a quote


def test_decomposed_sub_questions_are_accepted_by_the_ledger(locked_run):
    from research_engine import decompose

    for plan in make_model("extractive").decompose(BRIEF):
        decompose.add(locked_run, plan.text, plan.claim_type, plan.angle, plan.answers)
    assert [sq["id"] for sq in decompose.load(locked_run)] == ["SQ-01"]


def test_claims_are_verbatim_sentences_found_exactly_in_their_source():
    claims = make_model("extractive").consolidate(BRIEF, SQ, [LOOP_DOC, TASK_DOC])
    assert claims
    texts = {s.ref: "\n\n".join(p.text for p in s.passages) for s in (LOOP_DOC, TASK_DOC)}
    for claim in claims:
        for ref, quote in claim.evidence:
            assert quote == claim.text
            match = grounding.find_quote(quote, texts[ref])
            # Exact, or a run across a passage break (a term and its entry, a sentence and its antecedent),
            # written with one space where the page breaks the passage: the verifier's normalized match.
            assert match.found and (match.match == "exact" or "\n\n" in texts[ref][match.start : match.end])
            assert grounding.numbers_supported(claim.text, quote)[0]


def test_the_most_relevant_sentence_comes_first_and_irrelevant_ones_never():
    claims = make_model("extractive").consolidate(BRIEF, SQ, [LOOP_DOC, TASK_DOC])
    assert claims[0].text.startswith("When a coroutine is wrapped into a Task") or claims[0].text.startswith(
        "Tasks are used to schedule coroutines"
    )
    assert not any("weather" in c.text for c in claims)
    assert not any("call_soon" in c.text for c in claims)  # code passages are not claims
    assert not any(c.text == "Event Loop" for c in claims)  # nor headings


def test_no_sources_means_no_claims_and_every_claim_cites_a_given_source():
    model = make_model("extractive")
    assert model.consolidate(BRIEF, SQ, []) == []
    refs = {ref for c in model.consolidate(BRIEF, SQ, [LOOP_DOC, TASK_DOC]) for ref, _ in c.evidence}
    assert refs <= {"SQ-01/SRC-01", "SQ-01/SRC-02"}


def test_the_same_sentence_in_two_sources_becomes_one_claim_with_two_sources():
    copy = SourceText(
        ref="SQ-01/SRC-03", title="mirror", url="http://127.0.0.1/m", passages=TASK_DOC.passages
    )
    claims = make_model("extractive").consolidate(BRIEF, SQ, [TASK_DOC, copy])
    top = claims[0]
    assert [ref for ref, _ in top.evidence] == ["SQ-01/SRC-02", "SQ-01/SRC-03"] and top.confidence == "high"


def test_extractive_claims_pass_the_claims_gate(locked_run):
    from research_engine import claims, decompose, retrieve
    from research_engine.documents import Document

    sq = decompose.add(locked_run, SQ["text"], "technical", "entity", None)
    doc = Document(
        kind="web",
        requested_url="http://127.0.0.1/tasks",
        final_url="http://127.0.0.1/tasks",
        status=200,
        retrieved_at="2026-01-01T00:00:00Z",
        body=b"<html>tasks</html>",
        passages=TASK_DOC.passages,
        content_type="text/html",
        title="Tasks",
    )
    ref = retrieve.record(locked_run, sq, doc)
    source = SourceText(
        ref=ref, title="Tasks", url=doc.final_url, passages=retrieve.load_source(locked_run, ref)[1]
    )
    for draft in make_model("extractive").consolidate(BRIEF, {**SQ, "id": sq}, [source]):
        claims.add_claim(
            locked_run,
            sq,
            draft.text,
            [r for r, _ in draft.evidence],
            [q for _, q in draft.evidence],
            draft.confidence,
        )
    assert len(claims.active_claims(locked_run)) >= 1


def test_verify_returns_the_mechanical_floor():
    model = make_model("extractive")
    assert model.verify({}, {"floor": "supported", "floor_reasons": []}, "").verdict == "supported"
    refused = model.verify({}, {"floor": "refuse", "floor_reasons": ["quote absent from the fresh copy"]}, "")
    assert refused.verdict == "refuse" and "quote absent" in refused.reason


def test_critic_names_sub_questions_without_a_supported_claim_as_material_gaps():
    sqs = [SQ, {"id": "SQ-02", "text": "What limits asyncio scheduling fairness?", "angle": "counter"}]
    claims = [
        {"id": "CLM-01", "sub_question": "SQ-01", "verdict": "supported"},
        {"id": "CLM-02", "sub_question": "SQ-02", "verdict": "refuse"},
    ]
    gaps = make_model("extractive").critic(BRIEF, sqs, claims)
    assert [(g.sq, g.material) for g in gaps] == [("SQ-02", True)]
    assert "limitations" in gaps[0].query


def test_the_report_cites_claims_and_keeps_refused_ones_inside_the_caveat_section():
    sections = [
        Section(
            sq=SQ,
            claims=[
                {
                    "id": "CLM-01",
                    "text": "Tasks are used to schedule coroutines concurrently.",
                    "verdict": "supported",
                    "evidence": [{"source": "SQ-01/SRC-02", "quote": "x"}],
                }
            ],
            refused=[{"id": "CLM-02", "text": "The loop is multi-threaded.", "reason": "quote absent"}],
        ),
        Section(sq={"id": "SQ-02", "text": "What changed?"}, claims=[]),
    ]
    report = make_model("extractive").write(BRIEF, sections)
    body, _, caveats = report.partition("## Caveats and gaps")
    assert "[CLM-01]" in body and "CLM-02" not in body
    assert "CLM-02" in caveats and "Refused" in caveats and "SQ-02" in caveats


def test_sentences_are_verbatim_slices_and_respect_abbreviations():
    text = "Use e.g. asyncio.run() to start. Version 3.11 added TaskGroup! Does it? Yes."
    spans = [text[s:e] for s, e in sentences(text)]
    assert spans == ["Use e.g. asyncio.run() to start.", "Version 3.11 added TaskGroup!", "Does it?", "Yes."]


def test_bm25_prefers_documents_with_rarer_matching_terms():
    docs = [
        tokens("the loop runs tasks"),
        tokens("tasks tasks everywhere"),
        tokens("coroutines scheduled by loop"),
    ]
    scores = bm25_scores(tokens("coroutines loop"), docs)
    assert scores[2] > scores[0] > scores[1] == 0.0


def test_scripted_model_serves_responses_in_order_and_falls_back():
    model = ScriptedModel(
        {
            "verify": [{"verdict": "refuse", "reason": "first"}, VerdictDraft("partial", "second")],
            "consolidate": lambda brief, sq, sources: [{"text": "t", "evidence": [["SQ-01/SRC-01", "q"]]}],
        },
        tokens_per_call=(10, 5),
    )
    assert model.verify({}, {}, "").reason == "first"
    assert model.verify({}, {}, "").verdict == "partial"
    assert model.verify({}, {}, "").verdict == "partial"  # the last response repeats
    assert model.consolidate({}, {}, []) == [ClaimDraft("t", [("SQ-01/SRC-01", "q")])]
    assert model.decompose(BRIEF) == make_model("extractive").decompose(BRIEF)  # unscripted: the fallback
    assert model.usage.model_tokens == 60 and [c[0] for c in model.calls][-1] == "decompose"


def test_unknown_model_kind_is_bad_input():
    from research_engine.errors import BadInput

    with pytest.raises(BadInput, match="unknown model"):
        make_model("gpt-magic")


# ---------------------------------------------------------------------------- sentence choice

POOL = SourceText(
    ref="SQ-01/SRC-01",
    title="threading",
    url="http://127.0.0.1/threading",
    passages=[
        Passage(
            "p01",
            "Python 3.11 is installed by default and Python 3.11 ships with the Python launcher for "
            "Python users.",
        ),
        Passage(
            "p02",
            "Select the Python entry and choose Uninstall to open the Python 3.11 installer in "
            "maintenance mode.",
        ),
        Passage(
            "p03",
            "Due to the global interpreter lock, only one thread can execute Python bytecode at once, "
            "so threads suit I/O-bound work.",
        ),
        Passage("p04", "The threading module also has the following classes for threads:"),
        Passage("p05", "Thread-local data is data whose values are thread specific."),
        Passage("p06", "Previous topic: concurrent execution of threads and the next topic in this page."),
        Passage(
            "p07",
            "Threads are useful when a program waits on the network, since a blocked thread releases "
            "the interpreter lock.",
        ),
    ],
)
THREADS_SQ = {
    "id": "SQ-01",
    "text": "When should a Python 3.11 program use threads for concurrent work?",
    "angle": "entity",
}


def test_ubiquitous_words_alone_never_make_a_claim():
    texts = [c.text for c in make_model("extractive").consolidate(CONCURRENCY, THREADS_SQ, [POOL])]
    assert texts and all("thread" in t.lower() for t in texts)
    assert not any("Uninstall" in t or "launcher" in t for t in texts)  # "Python", "3.11" carry no topic


def test_fragments_navigation_and_short_sentences_are_never_claims():
    texts = [c.text for c in make_model("extractive").consolidate(CONCURRENCY, THREADS_SQ, [POOL])]
    assert not any(t.endswith(":") for t in texts)
    assert not any("Previous topic" in t for t in texts)
    assert not any(len(t.split()) < 8 for t in texts)
    assert not is_claim_sentence("The threading module also has the following classes for threads:")
    assert not is_claim_sentence(">>> import threading; threading.Thread(target=f).start() # runs f now.")
    assert not is_claim_sentence("Threads")
    assert not is_claim_sentence(" ".join(["word"] * 90) + ".")
    assert is_claim_sentence("Threads are useful when a program waits on the network for its replies.")
    # a key or a placeholder in angle brackets is a word, not markup (Vim's help, manual pages' synopses)
    assert is_claim_sentence("When this option is set, the <Tab> key inserts a series of spaces.")
    assert not is_claim_sentence("Set it with a={b}; c=[d]; e=<f|g>; and h={i} in the file.")
    # a help page's header line is the page's record, not a finding (Vim's "*usr_05.txt* For Vim version 9.0.
    # Last change: 2019 May 23"); a sentence about a file's last modified time is one
    assert not is_claim_sentence("*recover.txt* For Vim version 9.0. Last change: 2020 Aug 15")
    assert is_claim_sentence("The last modified time of the file is kept in its inode when it is written.")


def test_repeated_padding_is_one_finding_and_ranks_below_the_answers():
    long_pool = SourceText(
        ref="SQ-01/SRC-02",
        title="t",
        url="http://127.0.0.1/t",
        passages=[
            Passage(
                f"p{i:02d}",
                f"Threads number {i} are described in this long paragraph about threads "
                "and concurrent work in a program.",
            )
            for i in range(10)
        ],
    )
    claims = make_model("extractive").consolidate(CONCURRENCY, THREADS_SQ, [POOL, long_pool])
    padding = [c for c in claims if c.text.startswith("Threads number")]
    assert len(padding) <= 1  # ten near-identical sentences state one finding
    assert claims[0].evidence[0][0] == "SQ-01/SRC-01" and len(claims) <= 5  # the answers first


def test_a_sentence_in_a_sub_questions_own_source_is_claimable_there_and_the_engine_states_it_once():
    """Each sub-question claims from its own sources (no other sub-question's better fit takes a sentence
    away from the only place it was found); the engine keeps the first claim of a sentence per run."""
    model = make_model("extractive")
    changing = {**CONCURRENCY, "objective": CONCURRENCY["objective"] + " What changed in recent versions?"}
    plans = model.decompose(changing)
    shared = SourceText(
        ref="SQ-0X/SRC-01",
        title="concurrency",
        url="http://127.0.0.1/c",
        passages=[
            Passage(
                "p01",
                "Threads cannot run Python bytecode in parallel, so threads do not speed up CPU-bound work.",
            ),
            Passage(
                "p02",
                "The asyncio library cannot use multiple cores, which limits asyncio programs doing "
                "CPU-bound work.",
            ),
            Passage(
                "p03",
                "Processes side-step the global interpreter lock, so processes can use every core of "
                "the machine.",
            ),
            Passage(
                "p04",
                "Changed in version 3.8: threads created by the pool are now reused before new "
                "threads start.",
            ),
        ],
    )
    proposed: dict[str, list[str]] = {}
    ledger: list[dict] = []
    for i, plan in enumerate(plans, 1):
        sq = {"id": f"SQ-{i:02d}", "text": plan.text, "angle": plan.angle}
        for claim in model.consolidate(changing, sq, [shared]):
            proposed.setdefault(claim.text, []).append(sq["id"])
            refs = [ref for ref, _ in claim.evidence]
            if not already_claimed(ledger, sq["id"], claim.text, refs):
                ledger.append({"sub_question": sq["id"], "text": claim.text, "status": "active"})
    time_sq = next(f"SQ-{i:02d}" for i, p in enumerate(plans, 1) if p.text.startswith("What changed"))
    # The versioned sentence is eligible for the question asking what changed, and that one claims it.
    assert time_sq in proposed[shared.passages[3].text]
    assert len({c["text"] for c in ledger}) == len(ledger) >= 3  # each sentence stated once per run
    retired = [{"sub_question": "SQ-01", "text": "A.", "status": "retired", "evidence": [{"source": "x"}]}]
    assert not already_claimed(retired, "SQ-02", "A.", ["x"])  # a refusal elsewhere does not block it
    assert already_claimed(retired, "SQ-01", "A.", ["x"])  # the same refused evidence is not tried again


def test_decomposition_consolidation_and_judgement_are_the_same_in_every_process():
    code = (
        "import test_models_extractive as t\n"
        "model = t.make_model('extractive')\n"
        "print(repr(model.decompose(t.CONCURRENCY)))\n"
        "print(repr(model.consolidate(t.CONCURRENCY, t.THREADS_SQ, [t.POOL])))\n"
        "print(repr(t._judge('asyncio \u2014 Asynchronous I/O', 'x')))\n"
    )
    first, second = outputs_of_fresh_processes(code)
    assert first == second and first.count("ClaimDraft(") >= 1


def test_the_report_opens_with_cited_key_findings_and_every_fact_is_cited():
    from research_engine import report

    sections = [
        Section(
            sq={"id": "SQ-01", "text": "When should threads be used?"},
            claims=[
                {
                    "id": "CLM-01",
                    "text": "Threads suit I/O-bound work because a blocked thread releases the lock.",
                    "verdict": "supported",
                    "confidence": "medium",
                    "evidence": [{"source": "SQ-01/SRC-01"}],
                },
                {
                    "id": "CLM-02",
                    "text": "Only one thread can execute Python bytecode at once in CPython.",
                    "verdict": "supported",
                    "confidence": "high",
                    "evidence": [{"source": "SQ-01/SRC-02"}],
                },
            ],
        ),
        Section(
            sq={"id": "SQ-02", "text": "What changed recently?"},
            claims=[
                {
                    "id": "CLM-03",
                    "text": "Only one thread can execute Python bytecode at once in CPython.",
                    "verdict": "supported",
                    "evidence": [{"source": "SQ-02/SRC-01"}],
                },
            ],
            refused=[{"id": "CLM-04", "text": "Threads run in parallel.", "reason": "quote absent"}],
        ),
        Section(sq={"id": "SQ-03", "text": "What are the limitations of threads?"}, claims=[]),
    ]
    text = make_model("extractive").write(BRIEF, sections)
    order = ["## Answer", "## Key findings", "## SQ-01", "## Caveats and gaps"]
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)
    answer = text.split("## Answer", 1)[1].split("\n## ", 1)[0].strip()
    # The main question's best claims, each cited (not one per sub-question: SQ-01 answers twice here).
    assert answer.startswith("Threads suit I/O-bound work") and answer.count("[CLM-") == 2
    assert answer.endswith("]")
    findings = text.split("## Key findings", 1)[1].split("\n## ", 1)[0]
    assert "**SQ-01**" in findings and "[CLM-02]" in findings  # the best supported claim (high confidence)
    said = text.count("Only one thread can execute")
    assert said == 2 + ("Only one thread" in answer)  # key finding + its section (+ the answer); CLM-03 never
    assert "CLM-03" not in text
    caveats = text.split("## Caveats and gaps", 1)[1]
    assert "SQ-03" in caveats and "CLM-04" in caveats
    for block in report.parse_blocks(text):
        if report._states_fact(block):
            assert report.CLAIM_RE.search(block.text), f"uncited fact: {block.text!r}"


def test_the_extractive_deliverable_passes_the_sentence_check_by_construction():
    """Every sentence it writes is a claim's own text with its citation, partial ones marked after it."""
    from research_engine import report, support

    claims = {
        "CLM-01": "SQLite allows one writer at a time, using a RESERVED lock taken by BEGIN IMMEDIATE.",
        "CLM-02": "Most views need CSRF protection, but a few do not.",
        "CLM-03": "WAL mode was added in version 3.7.0 (2010-07-21) and needs shared memory.",
    }
    verdicts = {"CLM-01": "supported", "CLM-02": "partial", "CLM-03": "supported"}
    questions = {
        "CLM-01": "How many writers does SQLite allow?",
        "CLM-02": "Do Django views need CSRF protection?",
        "CLM-03": "Which SQLite version added WAL mode?",
    }
    sections = [
        Section(
            sq={"id": f"SQ-0{n}", "text": questions[clm]},
            claims=[
                {
                    "id": clm,
                    "text": claims[clm],
                    "verdict": verdicts[clm],
                    "evidence": [{"source": f"SQ-0{n}/SRC-01"}],
                }
            ],
        )
        for n, clm in enumerate(claims, 1)
    ]
    brief = {"objective": "How do SQLite and Django handle concurrency and CSRF?"}
    text = make_model("extractive").write(brief, sections)
    questions = [brief["objective"], *(s.sq["text"] for s in sections)]
    ledger = {c: {"id": c, "text": t} for c, t in claims.items()}
    judge = support.Judge(ledger, " ".join(questions), questions)
    found = [
        s.message()
        for block in report.parse_blocks(text)
        if not (block.caveat or block.exempt or block.references)
        for s in judge.block(block.text, block.line)
        if not s.ok
    ]
    assert "(partly supported: read with caution)" in text and found == []
    assert all(f"[{clm}]" in text for clm in claims)


def test_the_extractive_deliverable_shows_a_claim_not_judged_an_answer_only_as_related():
    """A supported claim that holds its quote but is not judged to answer its sub-question is no answer and
    no key finding (as the controller leaves it out of coverage): it is listed after the answers, under a
    heading that says what it is, and counted in the caveats."""
    on = {
        "id": "CLM-01",
        "text": "SQLite allows one writer at a time, using a RESERVED lock.",
        "verdict": "supported",
    }
    off = {"id": "CLM-02", "text": "The SQLite source code is in the public domain.", "verdict": "supported"}
    sq = {"id": "SQ-01", "text": "How many writers does SQLite allow at a time?"}
    for claim in (on, off):
        claim["evidence"] = [{"source": "SQ-01/SRC-01"}]
    text = make_model("extractive").write({"objective": sq["text"]}, [Section(sq=sq, claims=[on, off])])
    answers, _, related = text.partition(rendering.RELATED_HEADING)
    assert "[CLM-01]" in answers and "CLM-02" not in answers
    assert "[CLM-02]" in related.partition("## Caveats")[0]
    assert "1 supported claim(s) are listed as related statements, not answers" in text
    assert text.index("## Answer") < text.index("[CLM-01]")


# ---------------------------------------------------------------------------- API sources
# World Bank and OpenAlex passages are rendered from the recorded answers in ../shared/fixtures/apis by the
# same functions a run uses (`retrieve.api.page_passages`, `retrieve.api.work_document`).

GDP_BRIEF = {"objective": "How large is GDP in Japan?", "claim_types": ["quantitative"], "recency": "5y"}


def api_response(*parts: str):
    from conftest import shared_path

    from research_engine.sources.endpoints import ApiResponse

    return ApiResponse(
        url="http://127.0.0.1/" + "/".join(parts),
        status=200,
        retrieved_at="2026-01-01T00:00:00Z",
        body=shared_path("fixtures", "apis", *parts).read_bytes(),
        content_type="application/json",
    )


def series_source(name: str, ref: str) -> SourceText:
    from research_engine.documents import number_passages
    from research_engine.retrieve.api import page_passages

    chunks, _ = page_passages(api_response("worldbank", f"{name}.json"), "NY.GDP.MKTP.CD")
    return SourceText(
        ref=ref, title="World Bank: GDP (current US$), Japan", url="", passages=number_passages(chunks)
    )


def test_a_world_bank_point_is_its_own_claim_and_passes_the_grounding_gate(locked_run):
    from research_engine import claims, decompose, retrieve
    from research_engine.documents import Document

    source = series_source("indicator_two_countries", "SQ-01/SRC-01")
    sq = decompose.add(locked_run, "How large is GDP in Japan?", "quantitative", "entity", None)
    doc = Document(
        kind="worldbank",
        requested_url="http://127.0.0.1/wb/v2/country/JPN/indicator/NY.GDP.MKTP.CD?format=json",
        final_url=None,
        status=200,
        retrieved_at="2026-01-01T00:00:00Z",
        body=b"[]",
        passages=source.passages,
        content_type="application/json",
        title=source.title,
    )
    ref = retrieve.record(locked_run, sq, doc)
    stored = SourceText(
        ref=ref, title=source.title, url="", passages=retrieve.load_source(locked_run, ref)[1]
    )
    drafts = make_model("extractive").consolidate(
        GDP_BRIEF,
        {"id": sq, "text": "How large is GDP in Japan?", "angle": "entity", "claim_type": "quantitative"},
        [stored],
    )
    # 2020 is null in the recording: the latest point with a value is 2019, stated in the passage's words.
    assert drafts[0].text == "Japan, GDP (current US$), 2019: 5081769542379.77"
    assert drafts[0].evidence == [(ref, drafts[0].text)]
    assert grounding.numbers_supported(drafts[0].text, drafts[0].evidence[0][1]) == (True, [])
    for draft in drafts:
        claims.add_claim(locked_run, sq, draft.text, [ref], [draft.text], draft.confidence)
    assert [c["text"] for c in claims.active_claims(locked_run)][0] == drafts[0].text


def test_data_points_are_stated_only_for_quantitative_sub_questions():
    source = series_source("indicator_two_countries", "SQ-01/SRC-01")
    model = make_model("extractive")
    sq = {"id": "SQ-01", "text": "How large is GDP in Japan?", "angle": "entity"}
    assert model.consolidate(GDP_BRIEF, {**sq, "claim_type": "factual"}, [source]) == []
    assert model.consolidate(GDP_BRIEF, {**sq, "claim_type": "quantitative"}, [source])


def test_each_point_goes_to_one_sub_question_latest_to_the_question_trend_start_to_the_time_angle():
    model = make_model("extractive")
    plans = model.decompose(GDP_BRIEF)
    by_angle = {p.angle: p for p in plans}
    assert by_angle["entity"].claim_type == by_angle["time"].claim_type == "quantitative"
    source = series_source("indicator_two_countries", "SQ-0X/SRC-01")
    stated: dict[str, str] = {}
    for i, plan in enumerate(plans, 1):
        sq = {"id": f"SQ-{i:02d}", "text": plan.text, "angle": plan.angle, "claim_type": plan.claim_type}
        for draft in model.consolidate(GDP_BRIEF, sq, [source]):
            assert draft.text not in stated, f"{draft.text!r} stated twice"
            stated[draft.text] = plan.angle
    assert stated == {
        "Japan, GDP (current US$), 2019: 5081769542379.77": "entity",
        # recency 5y: the trend starts five years before the latest point
        "Japan, GDP (current US$), 2014: 4850413536037.84": "time",
    }


def test_at_most_a_few_points_latest_first_and_a_point_in_two_sources_cites_both():
    from research_engine.engine.extractive import MAX_DATA_CLAIMS

    sources = [
        series_source("indicator_two_countries", "SQ-01/SRC-01"),  # Japan, 1971-2020
        series_source("indicator_all_countries_mrv", "SQ-01/SRC-02"),  # Arab World, Caribbean: 2019 only
        series_source("indicator_all_countries_page1", "SQ-01/SRC-03"),  # Arab World, 1971-2020
    ]
    brief = {"objective": "Economic output of economies", "claim_types": ["factual"], "recency": "any"}
    sq = {"id": "SQ-09", "text": "How large is GDP?", "angle": "entity", "claim_type": "quantitative"}
    drafts = make_model("extractive").consolidate(brief, sq, sources)
    data = [d for d in drafts if d.text.count(", ") >= 2 and ": " in d.text]
    assert len(data) == MAX_DATA_CLAIMS
    assert [d.text.split(", GDP")[0] for d in data[:3]] == ["Japan", "Arab World", "Caribbean small states"]
    assert all(", 2019: " in d.text for d in data[:3])  # the latest points come first
    assert data[3].text.startswith("Japan, GDP (current US$), 2009: ")  # then a ten-year trend's start
    arab = data[1]
    assert [ref for ref, _ in arab.evidence] == ["SQ-01/SRC-02", "SQ-01/SRC-03"]
    assert all(quote == arab.text for _, quote in arab.evidence)
    assert make_model("extractive").consolidate(brief, sq, sources) == drafts  # deterministic


def test_null_points_and_other_data_passages_are_never_claims():
    source = SourceText(
        ref="SQ-01/SRC-01",
        title="mixed",
        url="",
        passages=[
            Passage("p01", "Japan, GDP (current US$), 2020: no value reported (null)", kind="data"),
            Passage(
                "p02", "Authors: A. Author. Published 2020 in Some Venue. Cited by 12 works.", kind="data"
            ),
            Passage("p03", "Japan, GDP (current US$), 2019: 5081769542379.77", kind="table-row"),
        ],
    )
    sq = {
        "id": "SQ-01",
        "text": "How large is GDP in Japan?",
        "angle": "entity",
        "claim_type": "quantitative",
    }
    assert make_model("extractive").consolidate(GDP_BRIEF, sq, [source]) == []


def test_figure_questions_are_quantitative_only_when_the_brief_allows_it():
    trend = {**GDP_BRIEF, "objective": "How has GDP in Japan grown, and what are the risks?"}
    allowed = make_model("extractive").decompose({**trend, "claim_types": ["factual", "quantitative"]})
    assert {p.angle: p.claim_type for p in allowed}["entity"] == "quantitative"
    assert {p.angle: p.claim_type for p in allowed}["counter"] == "factual"
    refused = make_model("extractive").decompose({**GDP_BRIEF, "claim_types": ["factual"]})
    assert {p.claim_type for p in refused} == {"factual"}


def test_an_openalex_abstract_sentence_becomes_a_claim_citing_the_work():
    import json

    from research_engine.retrieve.api import work_document
    from research_engine.sources.openalex import WorkFetch, parse_work

    response = api_response("openalex", "works_cursor_seq_page1.json")
    row = json.loads(response.body)["results"][0]
    doc = work_document(WorkFetch(parse_work(row), response, {}))
    source = SourceText(ref="SQ-01/SRC-01", title=doc.title, url=doc.requested_url, passages=doc.passages)
    brief = {"objective": "Do open access articles receive more citations?", "claim_types": ["factual"]}
    sq = {"id": "SQ-01", "text": brief["objective"], "angle": "entity", "claim_type": "factual"}
    drafts = make_model("extractive").consolidate(brief, sq, [source])
    assert drafts, "no abstract sentence was claimed"
    abstract = {p.text for p in doc.passages if p.kind == "paragraph"}
    for draft in drafts:
        assert draft.evidence == [("SQ-01/SRC-01", draft.text)]
        assert any(draft.text in sentence for sentence in abstract)  # a sentence of the abstract, verbatim
    # The work itself (title, year) is the source's heading and facts line: never quoted, kept for references.
    assert doc.title and doc.passages[0].text == doc.title and "Published 2020" in doc.passages[1].text


# ---------------------------------------------------------------------------- subject words and ownership


def test_generic_question_words_are_never_subject_words():
    brief = {
        "objective": "What do the official docs say about the GIL's effect?",
        "claim_types": ["technical"],
    }
    sq = {
        "id": "SQ-01",
        "text": "What do the official docs say about the GIL's effect?",
        "angle": "source-type",
    }
    doc = SourceText(
        ref="SQ-01/SRC-01",
        title="init",
        url="http://127.0.0.1/init",
        passages=[
            Passage(
                "p01",
                "The effect of this is that the callback is called upon return to each frame as the "
                "exception propagates.",
            ),
            Passage("p02", "The GIL must be held by the current thread before it can safely access objects."),
        ],
    )
    texts = [c.text for c in make_model("extractive").consolidate(brief, sq, [doc])]
    assert texts == [doc.passages[1].text]
    assert "effect" not in tokens("the GIL's effect on a program's work") and "gil" in tokens("the GIL")


def test_a_sentence_naming_more_of_the_subjects_ranks_first():
    sq = {
        "id": "SQ-06",
        "text": "What are the limitations and drawbacks of threads, processes and asyncio for concurrent "
        "work?",
        "angle": "counter",
    }
    one = "Asyncio tasks cannot block: one blocking asyncio call stalls every asyncio task."
    two = "Most asyncio objects are not safe to touch from another thread than their event loop's."
    doc = SourceText(
        ref="SQ-06/SRC-01", title="dev", url="http://127.0.0.1/d", passages=[Passage("p01", f"{one} {two}")]
    )
    texts = [c.text for c in make_model("extractive").consolidate(CONCURRENCY, sq, [doc])]
    assert texts[0] == two


def test_a_one_entity_question_keeps_its_entitys_sentences_from_an_umbrella_question():
    model = make_model("extractive")
    plans = model.decompose(CONCURRENCY)
    asyncio_only = "An asyncio program cannot block on slow calls without stalling every other task."
    both = "Almost all asyncio objects are not thread safe, which is not a problem for code in one thread."
    doc = SourceText(
        ref="SQ-0X/SRC-01",
        title="dev",
        url="http://127.0.0.1/d",
        passages=[Passage("p01", asyncio_only), Passage("p02", both)],
    )
    owner = {}
    for i, plan in enumerate(plans, 1):
        sq = {"id": f"SQ-{i:02d}", "text": plan.text, "angle": plan.angle}
        for claim in model.consolidate(CONCURRENCY, sq, [doc]):
            owner[claim.text] = plan
    assert "asyncio" in owner[asyncio_only].text and owner[asyncio_only].angle == "entity"
    assert owner[both].angle == "counter"  # two of the umbrella question's three subjects, and its cue


ASYNCIO_SQ = {"id": "SQ-03", "text": "When should a Python 3.11 program use asyncio for concurrent work?"}


def _judge(title: str, snippet: str = "", **extra):
    candidate = {"title": title, "snippet": snippet, "backend": "searxng", "rank": 4, **extra}
    return make_model("extractive").select_judgement(CONCURRENCY, ASYNCIO_SQ, candidate)


def test_a_candidate_with_none_of_the_subject_words_is_rejected_and_the_reason_says_so():
    judgement = _judge("threading - Thread-based parallelism", "A Python 3.11 program for concurrent work.")
    assert judgement.verdict_hint == "reject"
    assert "none of SQ-03's subject words (asyncio;" in judgement.reason and "rank 4" in judgement.reason


def test_a_candidate_with_all_the_subject_words_is_chosen_and_the_reason_names_them():
    judgement = _judge("Coroutines and Tasks", "High-level asyncio APIs for coroutines.")
    assert judgement == SelectionJudgement(
        "on-topic: title and snippet carry all of SQ-03's subject words (asyncio; searxng rank 4)", "choose"
    )


def test_a_candidate_with_some_subject_words_gets_no_hint_and_the_reason_names_both_sides():
    sq = {"id": "SQ-04", "text": CONCURRENCY["objective"].split(", and")[0] + "?"}
    judgement = make_model("extractive").select_judgement(
        CONCURRENCY, sq, {"title": "threading - Thread-based parallelism", "snippet": "", "rank": 1}
    )
    assert judgement.verdict_hint is None
    assert "carry thread" in judgement.reason or "carry threads" in judgement.reason
    assert "asyncio" in judgement.reason.split("but not", 1)[1]


def test_subject_words_are_matched_after_folding():
    assert _judge("ASYNCIO.", "").verdict_hint == "choose"
    sq = {"id": "SQ-01", "text": "When should a Python 3.11 program use threads for concurrent work?"}
    judged = make_model("extractive").select_judgement(CONCURRENCY, sq, {"title": "Threading", "rank": 1})
    assert judged.verdict_hint == "choose"  # threads and threading fold to one word


def test_api_candidates_are_judged_on_their_titles():
    brief = {"objective": "What is Japan's GDP?", "claim_types": ["quantitative"], "recency": "any"}
    sq = {"id": "SQ-01", "text": "What is Japan's GDP?"}
    model = make_model("extractive")
    series = {"title": "Japan, GDP (current US$)", "backend": "worldbank", "kind": "dataset", "rank": 1}
    work = {"title": "Soil erosion in the Andes", "backend": "openalex", "kind": "scholarly", "rank": 2}
    assert model.select_judgement(brief, sq, series).verdict_hint == "choose"
    assert model.select_judgement(brief, sq, work).verdict_hint == "reject"


def test_scripted_selection_judgements_accept_dicts_and_bare_reasons():
    model = ScriptedModel({"select_judgement": [{"reason": "off", "verdict_hint": "reject"}, "fine"]})
    assert model.select_judgement({}, {}, {}) == SelectionJudgement("off", "reject")
    assert model.select_judgement({}, {}, {}) == SelectionJudgement("fine", None)


def test_follow_up_questions_carry_their_subject_and_the_asker_drops_out():
    from research_engine.engine.extractive.plan import plan_of

    texts = [
        p.text
        for p in plan_of(
            {
                "objective": "Which function replaced pg_start_backup in PostgreSQL 15, "
                "and what does it return?",
                "recency": "any",
            }
        )
    ]
    # "it" does something: it is who did what the first clause asks of ("the function that replaced ...")
    assert texts[1] == "What does the function that replaced pg_start_backup in PostgreSQL 15 return?"
    topic = facets_of("Which Memcached cache backend should I use with Django 3.2?")[0].phrase
    assert topic == "Memcached cache backend to use with Django 3.2"
    assert facets_of("How do I enable persistent connections in Django?")[0].phrase == (
        "persistent connections in Django"  # the asker's verb drops out with the asker
    )
    texts = [
        p.text
        for p in plan_of({"objective": "How do I enable persistent connections, and what is the default?"})
    ]
    assert texts[1] == "What is the default for persistent connections?"  # no subject of its own: one given
    wal = "How does SQLite lock a database, and when should an application switch to WAL mode?"
    texts = [p.text for p in plan_of({"objective": wal})]
    assert texts[1] == "When should an application switch to WAL mode?"  # it has a subject of its own
    texts = [
        p.text
        for p in plan_of(
            {
                "objective": "What is the default isolation level in PostgreSQL, "
                "and which one is the strictest?"
            }
        )
    ]
    assert "isolation level" in texts[1] and "strictest" in texts[1]


def test_the_page_about_the_version_asked_of_wins_and_the_versions_own_number_is_no_match():
    """ "Which Python versions does Django 3.2 support?": the 3.2 release notes answer it; an old release note
    saying "Python 3.2" matches the number, not the question."""
    old = SourceText(
        "SQ-01/SRC-01",
        "Django 1.8 release notes",
        "http://127.0.0.1/releases/1.8.html",
        [
            Passage("p01", "Django 1.8 is designated as a long-term support release of the framework."),
            Passage(
                "p02", "Python 3.2 users should know that Django drops Python 3.2 at the end of the year."
            ),
            Passage("p03", "The admin interface gained several new options for listing related objects."),
        ],
    )
    new = SourceText(
        "SQ-01/SRC-02",
        "Django 3.2 release notes",
        "http://127.0.0.1/releases/3.2.html",
        [
            Passage("p01", "Django 3.2 supports Python 3.6, 3.7, 3.8, 3.9, and 3.10 (as of 3.2.9)."),
            Passage("p02", "Django 3.2 is designated as a long-term support release of the framework."),
            Passage("p03", "The admin interface gained a new decorator for registering display functions."),
        ],
    )
    brief = {"objective": "Which Python versions does Django 3.2 support?", "claim_types": ["technical"]}
    sq = {"id": "SQ-01", "text": brief["objective"], "angle": "entity"}
    texts = [c.text for c in make_model("extractive").consolidate(brief, sq, [old, new])]
    assert texts[0] == "Django 3.2 supports Python 3.6, 3.7, 3.8, 3.9, and 3.10 (as of 3.2.9)."


@pytest.mark.parametrize(
    ("objective", "question"),
    [
        (
            "tig opens files in the same editor git uses for commit messages; how do I give tig an editor of "
            "its own?",
            "How do I give tig an editor of its own, given that tig opens files in the same editor git uses "
            "for commit messages?",
        ),
        (
            "My build fails with a linker error. How do I fix it?",
            "How do I fix it, given that my build fails with a linker error?",
        ),
    ],
)
def test_a_situation_before_the_question_is_its_context_not_a_question_of_its_own(objective, question):
    from research_engine.engine.extractive.plan import plan_of

    assert [p.text for p in plan_of({"objective": objective, "recency": "any"})] == [question]
    assert answering.expected_kind(question) == answering.AnswerKind.PROCEDURE
    # An objective that opens by instructing sets no situation, and its question drops the instruction.
    texts = [p.text for p in plan_of({"objective": "Compare json and jsonb; which one is faster?"})]
    assert not any("given that" in t for t in texts) and "What is known about json and jsonb?" in texts
    assert plan_of({"objective": "Explain SQLite WAL mode"})[0].text == "What is known about SQLite WAL mode?"
    # A bare "why?" after a statement asks about the statement; an objective of punctuation alone plans too.
    assert "given that" not in plan_of({"objective": "My app crashes on start: why?"})[0].text
    assert plan_of({"objective": "???"}) and plan_of({"objective": "tig is slow"})[0].text.startswith(
        "What is known about tig"
    )
    assert answering.expected_kind("What can I change in its configuration to make it load faster?") == (
        answering.AnswerKind.PROCEDURE
    )


@pytest.mark.parametrize(
    ("claim", "shown"),
    [
        ("TIG_EDITOR The editor command to use.", "`TIG_EDITOR`: The editor command to use."),
        ("mouse-scroll (int) Interval to scroll.", "`mouse-scroll` (int): Interval to scroll."),
        (
            "--max-old-space-size=SIZE (in megabytes) Sets the max memory size.",
            "`--max-old-space-size=SIZE` (in megabytes): Sets the max memory size.",
        ),
        ("blame Show given file annotated by commits.", "`blame`: Show given file annotated by commits."),
        ("SQLite uses a write-ahead log.", "SQLite uses a write-ahead log."),  # a sentence, not an entry
        ("In SQLite, readers do not block writers.", "In SQLite, readers do not block writers."),
        ("Node.js will adjust the V8 heap.", "Node.js will adjust the V8 heap."),
    ],
)
def test_the_deliverable_shows_an_entrys_term_and_description_together(claim, shown):
    from research_engine.engine.extractive.rendering import shown as display

    assert display(claim) == shown
    # The words stay the source's: only the name's code marks and the colon are added.
    assert (
        display(claim).replace("`", "").replace(":", "", 1).split() == claim.split()
        or display(claim) == claim
    )


def test_a_claim_of_two_quotes_shows_each_as_its_own():
    from research_engine.engine.extractive.rendering import shown_claim

    naming = "Use history-size to control the number of entries to save."
    entry = "history-size (int) Size of the persistent ~/.tig_history file. Default is 500."
    claim = {
        "text": f"{naming} {entry}",
        "evidence": [{"source": "SQ-01/SRC-01", "quote": naming}, {"source": "SQ-01/SRC-02", "quote": entry}],
    }
    assert shown_claim(
        claim
    ) == f"{naming} `history-size` (int): Size of the persistent ~/.tig_history file. " + ("Default is 500.")
    # One sentence found on two pages is one quote: shown as its text.
    twice = {"text": entry, "evidence": [{"source": "A", "quote": entry}, {"source": "B", "quote": entry}]}
    assert (
        shown_claim(twice)
        == "`history-size` (int): Size of the persistent ~/.tig_history file. Default is 500."
    )


def test_a_situation_is_context_never_the_topic_nor_a_focus_word():
    from research_engine.engine.extractive.plan import plan_of

    plans = plan_of(
        {
            "objective": "I want the nightly build to fail on any warning. Which option does that, and is it "
            "safe to use?",
            "recency": "any",
        }
    )
    assert (
        plans[0].text == "Which option does that, given that I want the nightly build to fail on any warning?"
    )
    assert all("given" not in p.focus for p in plans)
    # a topic ending in a pronoun has no counter-question ("limitations and drawbacks of option does that")
    assert not any(p.angle == "counter" for p in plans), [p.text for p in plans]
