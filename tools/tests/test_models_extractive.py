"""The embedded extractive model: rule-based plans, BM25-chosen verbatim claims, the floor, honest reports."""

from __future__ import annotations

import pytest

from research_engine import grounding
from research_engine.documents import Passage
from research_engine.engine.extractive import bm25_scores, sentences, tokens
from research_engine.engine.models import (
    ClaimDraft,
    ScriptedModel,
    Section,
    SourceText,
    VerdictDraft,
    make_model,
)

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


def test_decompose_covers_the_four_angles_with_the_briefs_claim_types():
    plans = make_model("extractive").decompose(BRIEF)
    assert [p.angle for p in plans] == ["entity", "time", "source-type", "counter"]
    assert [p.claim_type for p in plans] == ["technical", "factual", "technical", "factual"]
    assert "in the last 18 months" in plans[1].text
    assert all("asyncio event loop schedule tasks" in p.text for p in plans)


def test_decomposed_sub_questions_are_accepted_by_the_ledger(locked_run):
    from research_engine import decompose

    for plan in make_model("extractive").decompose(BRIEF):
        decompose.add(locked_run, plan.text, plan.claim_type, plan.angle, plan.answers)
    assert [sq["id"] for sq in decompose.load(locked_run)] == ["SQ-01", "SQ-02", "SQ-03", "SQ-04"]


def test_claims_are_verbatim_sentences_found_exactly_in_their_source():
    claims = make_model("extractive").consolidate(BRIEF, SQ, [LOOP_DOC, TASK_DOC])
    assert claims
    texts = {s.ref: "\n\n".join(p.text for p in s.passages) for s in (LOOP_DOC, TASK_DOC)}
    for claim in claims:
        for ref, quote in claim.evidence:
            assert quote == claim.text
            match = grounding.find_quote(quote, texts[ref])
            assert match.found and match.match == "exact"
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
    assert len(model.decompose(BRIEF)) == 4  # unscripted: the extractive fallback
    assert model.usage.model_tokens == 60 and [c[0] for c in model.calls][-1] == "decompose"


def test_unknown_model_kind_is_bad_input():
    from research_engine.errors import BadInput

    with pytest.raises(BadInput, match="unknown model"):
        make_model("gpt-magic")
