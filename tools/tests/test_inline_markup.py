"""Inline markup stays inside its sentence, on real documentation pages (issue 12, mechanism 3).

The pages are Debian's, byte for byte (tools/tests/fixtures/docs/README.md names each). trafilatura writes an
inline `<code>` with the same tag as a code block; splitting the paragraph there made the very names questions
ask about ("128MB", "AppConfig", "async def") unclaimable fragments.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from research_engine import libraries
from research_engine.engine.extractive.candidates import sentence_candidates
from research_engine.engine.models import Passage, SourceText
from research_engine.extract import extract_html

DOCS = Path(__file__).parent / "fixtures" / "docs"


def passages(name: str) -> list[tuple[str, str]]:
    page = extract_html((DOCS / name).read_bytes(), url=f"http://127.0.0.1/{name}")
    return [(p.kind, p.text) for p in page.passages]


@pytest.mark.parametrize(
    ("page", "sentence"),
    [
        (
            "postgresql-15-runtime-config-resource.html",
            "The default is typically 128 megabytes (128MB), but might be less if your kernel settings will "
            "not support it (as determined during initdb).",
        ),
        (
            "django-3.2-ref-applications.html",
            "If no AppConfig subclass is found, the base AppConfig class will be used.",
        ),
        (
            "django-3.2-topics-async.html",
            "For a function-based view, this means declaring the whole view using async def.",
        ),
    ],
)
def test_a_sentence_with_inline_code_is_one_passage(page, sentence):
    texts = [text for kind, text in passages(page) if kind != "code"]
    assert any(sentence in text for text in texts), sentence


def test_code_blocks_stay_code_and_inline_names_do_not_become_passages_of_their_own():
    found = passages("django-3.2-topics-async.html")
    code = [text for kind, text in found if kind == "code"]
    tree = libraries.lxml_html().fromstring((DOCS / "django-3.2-topics-async.html").read_bytes())
    blocks = {" ".join("".join(pre.itertext()).split()) for pre in tree.iter("pre")}
    assert code and all(text in blocks for text in code)  # every code passage is a <pre> of the page, whole
    assert "%autoawait off" in code  # a one-line example is a code block too
    assert ("code", "async def") not in found
    assert not any(
        text in ("128MB", "shared_buffers")
        for _, text in passages("postgresql-15-runtime-config-resource.html")
    )


def test_a_pronoun_led_sentence_is_quoted_with_the_sentence_that_says_what_it_means():
    text = (
        "The method scram-sha-256 performs SCRAM-SHA-256 authentication, as described in RFC 7677. "
        "It is a challenge-response scheme that prevents password sniffing on untrusted connections."
    )
    source = SourceText(
        ref="SQ-01/SRC-01",
        title="Password authentication",
        url="http://127.0.0.1/auth",
        passages=[Passage("p01", text)],
    )
    (first, second) = sentence_candidates([source])
    assert first.text == text.split(" It is")[0]
    assert second.text == text  # one verbatim span: the antecedent and the pronoun sentence
    assert second.text in text


def test_a_sentence_that_points_back_is_also_a_candidate_with_the_sentence_it_points_to():
    """ "If you override that setting, remember that ..." says which setting only with the sentence before it
    (Django's ref/csrf.html): both the sentence alone and the two together are candidates, each verbatim."""
    page = "django-3.2-ref-csrf.html"
    doc = extract_html((DOCS / page).read_bytes(), url=f"http://127.0.0.1/{page}")
    source = SourceText(
        "SQ-01/SRC-01",
        doc.title,
        page,
        [Passage(f"p{n}", p.text, p.kind) for n, p in enumerate(doc.passages)],
    )
    texts = [c.text for c in sentence_candidates([source])]
    lead = "The CSRF middleware is activated by default in the MIDDLEWARE setting."
    joined = [t for t in texts if t.startswith(lead + " If you override that setting")]
    assert joined and any(t.startswith("If you override that setting") for t in texts)
    assert all(any(t in p.text for p in doc.passages) for t in joined)
