"""report check / finish: citations, refusals only in caveats, facts cite claims, references, result.md."""

from __future__ import annotations

import pytest
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all

from research_engine import claims, controller, decompose, report, runrecord
from research_engine.artifacts import read_markdown
from research_engine.errors import CheckFailed
from research_engine.validate import validate_run

FACT_A = "The Freedonia grid operator counted 42 gigawatts of solar capacity in 2023."
FACT_B = "Freedonia's wind farms produced 12 terawatt hours of electricity in 2022."


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file, depth="quick")


@pytest.fixture
def two_claims(run, httpserver):
    """CLM-01 supported (SQ-01), CLM-02 refused (SQ-02)."""
    sq1 = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    sq2 = decompose.add(run, "How much wind power does Freedonia produce?", "quantitative")
    a = grounded_claim(run, httpserver, sq1, "/solar", FACT_A)
    b = grounded_claim(run, httpserver, sq2, "/wind", FACT_B)
    verify_all(run, {b: "refuse"})
    return a, b


def _problems(run, text):
    return [(p.code, p.message) for p in report.check_text(run, text).problems]


def codes(run, text):
    return [c for c, _ in _problems(run, text)]


GOOD = """# Freedonia's renewables

Freedonia counted 42 gigawatts of solar capacity in 2023 [CLM-01].

## Gaps

Wind output could not be established: the figure of 12 terawatt hours (CLM-02) was refused by the verifier.
"""


def test_a_deliverable_citing_supported_claims_with_refusals_in_a_gap_section_passes(run, two_claims):
    checked = report.check_text(run, GOOD)
    assert checked.ok, checked.problems
    assert checked.cited == ["CLM-01", "CLM-02"]


def test_a_refused_claim_stated_as_established_fails(run, two_claims):
    text = "# Memo\n\nFreedonia produced 12 terawatt hours of wind power in 2022 [CLM-02].\n"
    assert "refused-claim-stated" in codes(run, text)


def test_a_refused_claim_in_a_marked_caveat_blockquote_passes_but_not_in_a_plain_one(run, two_claims):
    head = "# Memo\n\nSolar reached 42 gigawatts [CLM-01].\n\n"
    marked = head + "> **Caveat:** the wind figure [CLM-02] was refused.\n"
    plain = head + "> The wind figure was 12 terawatt hours [CLM-02].\n"
    assert report.check_text(run, marked).ok
    assert "refused-claim-stated" in codes(run, plain)


def test_a_caveat_section_ends_at_the_next_heading_of_its_level(run, two_claims):
    text = (
        "# Memo\n\n## Caveats\n\nCLM-02 was refused.\n\n## Findings\n\n"
        "Wind output was 12 terawatt hours [CLM-02].\n"
    )
    assert "refused-claim-stated" in codes(run, text)


def test_unknown_and_retired_claims_fail(run, two_claims):
    a, b = two_claims
    assert "unknown-claim" in codes(run, "# Memo\n\nSolar reached 42 gigawatts [CLM-09].\n")
    claims.retire(run, b, "refused: the page does not hold the figure")
    assert "retired-claim" in codes(run, "# Memo\n\nWind output was 12 terawatt hours [CLM-02].\n")


def test_a_paragraph_stating_a_fact_without_a_claim_fails_but_framing_sections_do_not(run, two_claims):
    text = (
        "# Memo\n\nSolar reached 42 gigawatts [CLM-01].\n\n"
        "Freedonia also leads the region in battery storage deployments this decade.\n\n"
        "## Method\n\nWe searched national statistics and the grid operator's register for this memo.\n"
    )
    found = _problems(run, text)
    assert [c for c, _ in found] == ["uncited-fact"]
    assert "battery storage" in found[0][1]


def test_a_bare_number_is_a_fact_that_needs_a_claim(run, two_claims):
    text = "# Memo\n\nSolar reached 42 gigawatts [CLM-01].\n\n- Capacity: 42 GW\n"
    assert codes(run, text) == ["uncited-fact"]


def test_an_author_reference_list_must_name_every_carrying_source(run, two_claims):
    missing = "# Memo\n\nSolar reached 42 gigawatts [CLM-01].\n\n## References\n\n- something else\n"
    assert "incomplete-references" in codes(run, missing)
    complete = (
        "# Memo\n\nSolar reached 42 gigawatts [CLM-01].\n\n## References\n\n- SQ-01/SRC-01 grid operator\n"
    )
    assert report.check_text(run, complete).ok


def test_naming_a_source_that_is_not_in_the_run_fails(run, two_claims):
    assert "unknown-source" in codes(run, "# Memo\n\nSolar reached 42 gigawatts [CLM-01] (SQ-01/SRC-09).\n")


def test_finish_needs_a_stopped_run(run, two_claims, tmp_path):
    path = tmp_path / "memo.md"
    path.write_text(GOOD, encoding="utf-8")
    with pytest.raises(CheckFailed) as exc:
        report.finish(run, path)
    assert exc.value.code == "run-not-stopped"


def test_finish_places_the_result_with_references_evidence_map_and_footer(run, two_claims, tmp_path):
    path = tmp_path / "memo.md"
    path.write_text(GOOD, encoding="utf-8")
    assert controller.control(run)["stop_reason"] == "governor"
    out = report.finish(run, path)
    assert out["reproducibility"] == {"label": "reproducible", "reasons": []}
    meta, body = read_markdown(run.path("result"))
    # The front matter keeps what a reader wants; the cited claims are in run.json.
    assert set(meta) == {"run_id", "finished_at", "stop_reason", "reproducibility"}
    assert meta["reproducibility"] == "reproducible" and meta["stop_reason"] == "governor"
    assert runrecord.read(run)["result"]["cited_claims"] == ["CLM-01", "CLM-02"]
    for heading in (
        "## References",
        "## Evidence map",
        "### Well supported",
        "### Needs caution",
        "### Refused during the run (not established)",
        "## Reproducibility",
    ):
        assert heading in body
    assert "SQ-01/SRC-01" in body and "sha256" in body
    record = runrecord.read(run)
    assert (record["status"], record["stop_reason"], record["refused_ever"]) == ("complete", "governor", True)
    assert record["reproducibility"]["label"] == "reproducible"
    assert validate_run(run).ok, validate_run(run).problems


def test_a_gated_source_carrying_a_claim_makes_the_run_checkable_naming_it(run, httpserver, tmp_path):
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    grounded_claim(run, httpserver, sq, "/solar", FACT_A, access_tier="gated")
    verify_all(run)
    controller.control(run)
    path = tmp_path / "memo.md"
    path.write_text(
        "# Memo\n\nFreedonia counted 42 gigawatts of solar capacity in 2023 [CLM-01].\n", encoding="utf-8"
    )
    out = report.finish(run, path)
    assert out["reproducibility"]["label"] == "checkable"
    assert "SQ-01/SRC-01" in out["reproducibility"]["reasons"][0]


def test_validate_catches_a_refusal_slipped_into_a_finished_result(run, two_claims, tmp_path):
    path = tmp_path / "memo.md"
    path.write_text(GOOD, encoding="utf-8")
    controller.control(run)
    report.finish(run, path)
    target = run.path("result")
    text = target.read_text(encoding="utf-8").replace(
        "# Freedonia's renewables\n", "# Freedonia's renewables\n\nWind was 12 terawatt hours [CLM-02].\n", 1
    )
    target.write_text(text, encoding="utf-8")
    assert any(p.code == "refused-claim-stated" for p in validate_run(run).problems)
