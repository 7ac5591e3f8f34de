"""The extractive model on real reference documentation (issue 12, sentence choice with context).

Documentation states many findings in forms a sentence splitter misses: a reference entry (a term, a
"Default:" line, a short sentence), a pronoun-led sentence whose antecedent is the passage before, a sentence
announcing a list or a code example, a release-note item with no full stop. Each test runs the model as a run
does, on Debian's pages byte for byte (tools/tests/fixtures/docs/README.md), and checks the claim that answers
is chosen and stays one verbatim run of the page's text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from research_engine import grounding
from research_engine.engine.extractive.candidates import sentence_candidates
from research_engine.engine.factory import make_model
from research_engine.engine.models import Passage, SourceText
from research_engine.extract import extract_html

DOCS = Path(__file__).parent / "fixtures" / "docs"


def source(name: str, ref: str = "SQ-01/SRC-01") -> SourceText:
    page = extract_html((DOCS / name).read_bytes(), url=f"http://127.0.0.1/{name}")
    passages = [Passage(p.id, p.text, p.kind) for p in page.passages]
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


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in DOCS.glob("*.html")),
)
def test_every_candidate_is_one_run_of_its_page(name):
    page = source(name)
    text = "\n\n".join(p.text for p in page.passages)
    for cand in sentence_candidates([page]):
        assert grounding.find_quote(cand.text, text).found, cand.text
