"""The faithfulness benchmark's dev set (bench/faithfulness.py) keeps its promised shape: enough sentences,
about half faithful, every unfaithful kind in both halves, real claims on named pages, no reserved package.

No corpus, no network: the benchmark fetches the documentation itself; this pins the ruler."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_faithfulness", ROOT / "bench" / "faithfulness.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_faithfulness"] = module
    spec.loader.exec_module(module)
    return module


def test_the_dev_set_covers_every_kind_in_both_halves(bench):
    corpora, cases = bench.load_devset(bench.DEFAULT_DEVSET)
    sentences = [(c.half, s) for c in cases for s in c.sentences if not s.limit]
    assert len(sentences) >= 60
    faithful = sum(s.faithful for _, s in sentences)
    assert 0.4 <= faithful / len(sentences) <= 0.6
    for half in ("tune", "check"):
        kinds = {s.kind for h, s in sentences if h == half and not s.faithful}
        assert kinds == set(bench.KINDS), half
    assert not {c.package for c in corpora.values()} & bench.RESERVED_PACKAGES
    assert {c.half for c in cases} == {"tune", "check"}


def test_every_citation_names_a_claim_of_its_case(bench):
    _, cases = bench.load_devset(bench.DEFAULT_DEVSET)
    for case in cases:
        ids = {claim["id"] for claim in case.claims}
        assert all(claim["page"].endswith(".html") and claim["text"] for claim in case.claims), case.id
        for sentence in case.sentences:
            cited = set(bench.CLAIM_ID_RE.findall(sentence.text))
            assert cited and cited <= ids, (case.id, sentence.text)
