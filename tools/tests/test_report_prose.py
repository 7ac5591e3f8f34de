"""`report check` holds every sentence to its citations (`research_engine.prose`): a sentence that cites a
real claim but states a number, a unit, a name or a code token the claim does not hold is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_path
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all

from research_engine import decompose, escaping, prose, report, support
from research_engine.engine.extractive import is_claim_sentence, sentences
from research_engine.engine.extractive.candidates import sentence_candidates
from research_engine.engine.models import Passage, SourceText
from research_engine.extract import extract_html

FACT_A = "The Freedonia grid operator counted 42 gigawatts of solar capacity in 2023."
FACT_B = "Set FREEDONIA_GRID_LIMIT to 1,500 MB and call grid.reload() to apply version 3.7.0 of the rules."
FACT_C = "The Ministry of Energy says about 10% of households had rooftop panels."


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file, depth="quick")


@pytest.fixture
def claims3(run, httpserver):
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    ids = [
        grounded_claim(run, httpserver, sq, f"/p{n}", fact) for n, fact in enumerate((FACT_A, FACT_B, FACT_C))
    ]
    verify_all(run, {})
    return ids


def problems(run, text: str) -> list[tuple[str, str]]:
    return [(p.code, p.message) for p in report.check_text(run, text).problems]


def codes(run, text: str) -> list[str]:
    return [code for code, _ in problems(run, text)]


@pytest.mark.parametrize(
    "sentence",
    [
        "Freedonia has 42 gigawatts of solar capacity [CLM-01].",
        "In 2023 the grid operator counted 42 gigawatts of solar power [CLM-01].",
        "Raise `FREEDONIA_GRID_LIMIT` to 1500 MB, then call `grid.reload()` [CLM-02].",
        "Version 3.7.0 of the rules applies once grid.reload() runs [CLM-02].",
        "About 10 percent of households have panels, says the Ministry of Energy [CLM-03].",
        "Solar capacity in Freedonia was 42 gigawatts. Freedonia counted it in 2023 [CLM-01].",
        "Per the grid operator, 42 gigawatts [CLM-01]; per the Ministry of Energy, 10% of homes [CLM-03].",
        "The grid operator's solar/grid count was 42 gigawatts in 2023 [CLM-01].",  # two words, not a path
        "Freedonia's grid operator counted 42 gigawatts of solar capacity in 2023 [CLM-01].",  # a possessive
        "The grid operator counted, e.g., 42 gigawatts of solar capacity in Freedonia in 2023 [CLM-01].",
        "The Freedonia-counted solar capacity was 42 gigawatts in 2023 [CLM-01].",  # a name's compound
    ],
)
def test_a_paraphrase_that_keeps_the_claims_numbers_and_names_passes(run, claims3, sentence):
    assert problems(run, f"# Memo\n\n{sentence}\n") == []


@pytest.mark.parametrize(
    "sentence, invented",
    [
        ("Freedonia has 45 gigawatts of solar capacity [CLM-01].", "45"),
        ("The operator counted 42 gigawatts in 2024 [CLM-01].", "2024"),
        ("Raise the limit to 1,500 GB [CLM-02].", "1,500 GB"),
        ("Raise the limit to 1.5 million MB [CLM-02].", "1.5 million"),
        ("Version 3.8.0 of the rules applies [CLM-02].", "3.8.0"),
        ("The grid operator, audited by Deloitte, counted 42 gigawatts [CLM-01].", "Deloitte"),
        ("Call `grid.restart()` to apply the rules [CLM-02].", "grid.restart()"),
        ("Set FREEDONIA_GRID_MAX to apply the rules [CLM-02].", "FREEDONIA_GRID_MAX"),
        ("About 12% of households had panels [CLM-03].", "12%"),
        ("The IEA says 42 gigawatts of solar capacity were counted [CLM-01].", "IEA"),
        ("Load version 3.7.0 of the rules from /etc/grid/rules.conf [CLM-02].", "/etc/grid/rules.conf"),
        ("The grid/meter module counted 42 gigawatts of solar capacity [CLM-01].", "grid/meter"),
    ],
)
def test_a_sentence_citing_a_real_claim_but_stating_what_it_does_not_hold_is_refused(
    run, claims3, sentence, invented
):
    found = problems(run, f"# Memo\n\n{sentence}\n")
    assert [code for code, _ in found] == ["unsupported-statement"], found
    assert invented in found[0][1] and "CLM-0" in found[0][1]


def test_the_right_claim_must_carry_it_not_another_one_in_the_run(run, claims3):
    """42 gigawatts is CLM-01's figure; citing CLM-03 for it invents the link."""
    assert codes(run, "# Memo\n\nSome 42 gigawatts of solar capacity were counted [CLM-03].\n") == [
        "unsupported-statement"
    ]


def test_a_fact_sentence_after_the_blocks_last_citation_is_uncited(run, claims3):
    text = (
        "# Memo\n\nThe operator counted 42 gigawatts [CLM-01]. "
        "Freedonia therefore leads every neighbour in solar.\n"
    )
    found = problems(run, text)
    assert [code for code, _ in found] == ["uncited-fact"] and "leads every neighbour" in found[0][1]


def test_restating_the_question_is_not_an_invention(run, claims3):
    question = "How much solar capacity does Freedonia have?"
    text = f"# {question}\n\n**SQ-01** ({question}): 42 gigawatts in 2023 [CLM-01].\n"
    assert problems(run, text) == []


def test_caveat_and_framing_sections_are_not_held_to_citations(run, claims3):
    text = (
        "# Memo\n\nFreedonia has 42 gigawatts [CLM-01].\n\n"
        "## Method\n\nWe asked Acme Research in 2025 for 7 reports.\n\n"
        "## Caveats and gaps\n\nThe IEA figure of 51 gigawatts could not be checked.\n"
    )
    assert problems(run, text) == []


@pytest.mark.parametrize(
    "heading",
    [
        "# How much solar capacity does Freedonia have, and what are the limitations of the count?",
        "## SQ-02: What are the limitations and gaps of Freedonia's solar count?",
    ],
)
def test_a_title_or_question_naming_limitations_is_no_caveat_section(run, claims3, heading):
    # A deliverable titled with its objective, or a section titled with a sub-question, is held to its
    # citations whatever words the question uses: only a section of caveats is not.
    text = f"{heading}\n\nFreedonia has 42 gigawatts [CLM-01] and leads every neighbour in solar [CLM-01].\n"
    assert "unsupported-statement" in codes(run, text)


def test_report_check_on_the_command_line_names_the_sentence(run, claims3, tmp_path, cli):
    draft = tmp_path / "draft.md"
    draft.write_text("# Memo\n\nFreedonia has 45 gigawatts of solar capacity [CLM-01].\n", encoding="utf-8")
    code, out, _, env = cli("report", "check", "--run", str(run.root), str(draft), "--json")
    assert code != 0, out
    messages = [p["message"] for p in env["errors"]]
    assert any("45" in m and "Freedonia has 45 gigawatts" in m for m in messages), messages


def test_a_long_deliverable_is_checked_sentence_by_sentence(run, claims3):
    line = "Freedonia has 42 gigawatts of solar capacity, counted in 2023 [CLM-01]. "
    text = "# Memo\n\n" + line * 3000 + "It has 43 gigawatts [CLM-01].\n"
    found = problems(run, text)
    assert [code for code, _ in found] == ["unsupported-statement"] and "43" in found[0][1]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2 GB", [("2 GB", 2.0, "GB")]),
        ("1,500 MB", [("1,500 MB", 1500.0, "MB")]),
        ("1.5 million", [("1.5 million", 1.5e6, None)]),
        ("10 percent", [("10 percent", 10.0, "%")]),
        ("3.7.0", [("3.7.0", "3.7.0", None)]),
        ("utf8 and SQ-01", []),
        ("300 seconds", [("300 seconds", 300.0, "s")]),
    ],
)
def test_numbers_keep_their_unit_and_scale(text, expected):
    assert [(n.raw, n.value, n.unit) for n in prose.numbers(text)] == expected


def test_a_citation_after_the_full_stop_belongs_to_the_sentence_before_it():
    assert prose.split_sentences("One sentence here. [CLM-01] Another one follows.") == [
        "One sentence here. [CLM-01]",
        "Another one follows.",
    ]


def test_a_citation_ends_a_quote_that_ends_in_code():
    # Examples quoted with their lead-in end in code, with no full stop: the citation closes them, so the
    # next claim's sentence is judged against its own claim (a real tig run dropped three claims' sentences).
    text = (
        "Use word diff in the diff view: $ tig --word-diff=plain [CLM-01] `ignore-space` (mixed): Ignore "
        "space changes in diff view. [CLM-04]"
    )
    assert prose.split_sentences(text) == [
        "Use word diff in the diff view: $ tig --word-diff=plain [CLM-01]",
        "`ignore-space` (mixed): Ignore space changes in diff view. [CLM-04]",
    ]
    # A citation inside a sentence, before a lower-case word, leaves it whole.
    assert len(prose.split_sentences("Django 3.2 [CLM-01] supports async views [CLM-02].")) == 1


def test_the_extractive_writers_asides_after_a_citation_belong_to_its_sentence():
    """The extractive writer marks a partial claim "(partly supported: read with caution)" after its citation;
    a real run's fallback deliverable failed `report check` on it until asides joined the cited sentence."""
    line = "Most views need CSRF protection, but a few do not. [CLM-04] (partly supported: read with caution)"
    assert prose.split_sentences(f"{line} (source: SQ-01/SRC-04)") == [f"{line} (source: SQ-01/SRC-04)"]
    assert prose.split_sentences("A claim [CLM-01]. (An aside stating a new fact of its own here.)") == [
        "A claim [CLM-01].",
        "(An aside stating a new fact of its own here.)",
    ]


DOCS = Path(__file__).parent / "fixtures" / "docs"


def _doc_sentences() -> list[str]:
    out: list[str] = []
    for page in sorted(DOCS.glob("*.html")):
        doc = extract_html(page.read_bytes(), url=f"http://127.0.0.1/{page.name}")
        passages = [Passage(id=f"P{n}", kind=p.kind, text=p.text) for n, p in enumerate(doc.passages)]
        out += [
            c.text for c in sentence_candidates([SourceText("SQ-01/SRC-01", doc.title, page.name, passages)])
        ]
    return out


def _news_sentences() -> list[str]:
    out: list[str] = []
    for path in sorted(shared_path("corpora", "extraction", "ground-truth").glob("*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))["articleBody"]
        out += [body[s:e] for s, e in sentences(body) if is_claim_sentence(body[s:e])]
    return out


@pytest.mark.parametrize("pool", [_doc_sentences, _news_sentences], ids=["docs", "news"])
def test_a_verbatim_source_sentence_citing_itself_always_passes(pool):
    """The extractive writer's guarantee, over every quotable sentence of real pages (the committed
    Django and PostgreSQL pages; the shared news corpus): a sentence quoted verbatim with its own citation
    states nothing its claim does not hold, raw (the draft) and escaped (result.md). Real runs failed
    here on `CONN_MAX_AGE` (its parts read as acronyms) and `__str__()` (underscores read as emphasis on
    the sentence's side only)."""
    sentences_ = pool()
    assert len(sentences_) > 200
    failed = []
    for sentence in sentences_:
        for block in (f"{sentence} [CLM-01]", escaping.document(f"- {sentence} [CLM-01]")[2:]):
            judge = support.Judge({"CLM-01": {"id": "CLM-01", "text": sentence}}, "")
            failed += [s.message() for s in judge.block(block, 1) if not s.ok]
    assert failed == []


def test_a_bound_and_a_lack_are_read_as_the_claims_put_them():
    judge = support.Judge(
        {
            "CLM-01": {"id": "CLM-01", "text": "The maximum length of a string is 1,000,000,000 bytes."},
            "CLM-02": {
                "id": "CLM-02",
                "text": "VACUUM may change the rowids of tables that do not have an explicit INTEGER PRIMARY "
                "KEY.",
            },
            "CLM-03": {"id": "CLM-03", "text": "A string of 1,000,000,000 bytes is stored in one row."},
        },
        "",
    )

    def passes(text: str) -> bool:
        return all(s.ok for s in judge.block(text, 1))

    assert passes("A string may be at most 1,000,000,000 bytes long [CLM-01].")  # the claim's maximum
    assert not passes(
        "A string may be at most 1,000,000,000 bytes long [CLM-03]."
    )  # a bound CLM-03 never sets
    assert passes(
        "VACUUM may change the rowids of tables that lack an explicit INTEGER PRIMARY KEY [CLM-02]."
    )
    assert not passes(
        "VACUUM may change the rowids of tables that have an explicit INTEGER PRIMARY KEY [CLM-02]."
    )


def test_a_version_on_its_name_and_an_idiom_of_all_are_read_as_the_claims_put_them():
    judge = support.Judge(
        {
            "CLM-01": {
                "id": "CLM-01",
                "text": "Since pytest-2.3, fixture factories are found at collection time.",
            },
            "CLM-02": {"id": "CLM-02", "text": "Most importantly, the hook can call metafunc.parametrize()."},
        },
        "",
    )

    def passes(text: str) -> bool:
        return all(s.ok for s in judge.block(text, 1))

    assert passes("Since pytest 2.3, fixture factories are found at collection time [CLM-01].")
    assert not passes("Since pytest 2.4, fixture factories are found at collection time [CLM-01].")
    assert passes("Above all, the hook can call `metafunc.parametrize()` [CLM-02].")  # "most importantly"
    assert not passes("The hook can call `metafunc.parametrize()` for all tests [CLM-02].")  # a quantifier
