"""The reader on the shared DEV extraction corpus, scored with the shared metric."""

from __future__ import annotations

import gzip
import importlib.util
import json

import pytest
from conftest import shared_path

from research_engine.extract import extract_html

pytestmark = pytest.mark.shared

# The benchmark figure on DEV when this reader was chosen (docs/architecture.md "extract"): 0.978.
# The floor is the best library's score in the same run (trafilatura favor_precision, 0.975).
F1_FLOOR = 0.975


def _scorer():
    path = shared_path("bench", "extraction_eval.py")
    spec = importlib.util.spec_from_file_location("extraction_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scored():
    scorer = _scorer()
    corpus = shared_path("corpora", "extraction")
    pages = []
    for html_path in sorted((corpus / "html").glob("*.html.gz")):
        page_id = html_path.name[: -len(".html.gz")]
        truth = json.loads((corpus / "ground-truth" / f"{page_id}.json").read_text(encoding="utf-8"))
        html = gzip.decompress(html_path.read_bytes()).decode("utf-8", errors="replace")
        extracted = extract_html(html, url=truth.get("url"))
        predicted = "\n".join(p.text for p in extracted.passages)
        tp, fp, fn = scorer.page_counts(truth.get("articleBody") or "", predicted)
        pages.append({**scorer.page_scores(tp, fp, fn), "exact": 0.0, "id": page_id, "text": predicted})
    return scorer.aggregate(pages), pages


def test_no_dev_page_comes_back_empty(scored):
    _, pages = scored
    assert len(pages) == 91
    assert [p["id"] for p in pages if not p["text"].strip()] == []


def test_dev_f1_is_at_least_the_best_library(scored):
    aggregate, _ = scored
    assert aggregate["f1"] >= F1_FLOOR, aggregate
