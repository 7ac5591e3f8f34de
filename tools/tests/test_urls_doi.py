"""DOI extraction: every extraction case of the shared doi_cases.json, plus the idutils forms."""

from __future__ import annotations

import json

import pytest
from conftest import shared_path

from research_engine.urls import canonical_key, extract_doi, is_doi

pytestmark = pytest.mark.shared


def _cases(section: str) -> list[dict]:
    data = json.loads(shared_path("corpora", "urls", "doi_cases.json").read_text(encoding="utf-8"))
    return data[section]


def _ids(cases: list[dict]) -> list[str]:
    return [c["input"][:60] or "<empty>" for c in cases]


@pytest.mark.parametrize("case", _cases("extraction"), ids=_ids(_cases("extraction")))
def test_doi_is_found_in_text_or_url(case):
    assert extract_doi(case["input"]) == case["expected_doi"]


@pytest.mark.parametrize("case", _cases("normalization"), ids=_ids(_cases("normalization")))
def test_doi_forms_reduce_to_the_bare_doi(case):
    assert extract_doi(case["input"]) == case["expected_doi"]


@pytest.mark.parametrize("case", _cases("validation"), ids=_ids(_cases("validation")))
def test_whole_value_doi_validation(case):
    assert is_doi(case["input"]) is case["is_doi"]


def _landing_pairs() -> list[tuple[str, str]]:
    # Offline use of the resolution pairs: landing URLs that contain their DOI (Elsevier's pii ones do not).
    pairs = [(c["resolves_to"], c["doi"].replace("%2F", "/")) for c in _cases("resolution")]
    return [(url, doi) for url, doi in pairs if doi.lower() in url.lower()]


@pytest.mark.parametrize(("url", "doi"), _landing_pairs())
def test_landing_url_that_holds_its_doi_keys_on_the_doi(url, doi):
    assert canonical_key(url) == f"doi:{doi.lower()}"
