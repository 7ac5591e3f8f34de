"""The quality benchmark's instrument (bench/quality.py): the dev set's shape, the scorer on a made-up trace.

No corpus, no network: the benchmark itself downloads and serves the documentation; these tests pin what it
counts, so a change to the engine cannot move the ruler.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def quality():
    spec = importlib.util.spec_from_file_location("bench_quality", ROOT / "bench" / "quality.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_quality"] = module
    spec.loader.exec_module(module)
    return module


def test_the_dev_set_is_honest_in_shape(quality):
    corpora, objectives, data = quality.load_devset(ROOT / "bench" / "quality_devset.yaml")
    assert len(objectives) >= 60
    counts = {name: sum(o.corpus == name for o in objectives) for name in corpora}
    assert counts["django"] == 13 and counts["postgresql"] == 13  # issue 12's objectives, kept as they were
    assert len(counts) >= 4 and all(n >= 8 for n in counts.values())  # each set enough to leave out alone
    assert {"python-django-doc", "postgresql-doc-15"} <= {c.package for c in corpora.values()}
    for obj in objectives:
        assert 1 <= len(obj.facts) <= 4, obj.id
        assert obj.answer_pages and all(p.endswith(".html") for p in obj.answer_pages), obj.id
        assert obj.objective.endswith("?"), obj.id
        assert obj.genre in {"reference", "release-notes", "tutorial", "faq", "how-to"}, obj.id
        assert not obj.answer or obj.genre in {"how-to", "faq"}, obj.id  # "how do I": an option answers
    assert {o.genre for o in objectives} == {"reference", "release-notes", "tutorial", "faq", "how-to"}
    how_to = {o.corpus for o in objectives if o.answer}
    assert {"ffmpeg", "zsh", "nodejs"} <= how_to  # toolchains the issue 12 set did not have
    for reserved in ("python3.11", "git-doc", "bash-doc"):
        assert reserved not in json.dumps(data)


def test_a_reserved_package_is_refused(quality, tmp_path):
    devset = tmp_path / "d.yaml"
    devset.write_text(
        "corpora:\n  py:\n    package: python3.11-doc\n    root: usr/share/doc/python3.11/html\n    port: 1\n"
        "objectives: []\n"
    )
    with pytest.raises(quality.BenchError, match="reserved"):
        quality.load_devset(devset)


def test_visible_text_separates_blocks_and_drops_scripts(quality):
    html = b"<html><head><title>T</title><script>x=1</script></head><body><h2>Memory</h2><p>The default is"
    html += b" <code>128MB</code>.</p><dl><dt>a</dt><dd>b</dd></dl></body></html>"
    text = quality.visible_text(html)
    assert "Memory The default is 128MB." in text
    assert "x=1" not in text and not text.startswith("T")
    assert quality.norm("It\u2019s  the\u00a0DEFAULT") == "it's the default"


def _write(path: Path, meta: dict, body: str = "") -> None:
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body, encoding="utf-8")


BASE = "http://127.0.0.1:8392"


@pytest.fixture()
def trace(tmp_path):
    run = tmp_path / "run"
    _write(run / "synthesis" / "result.md", {"cited_claims": ["CLM-01", "CLM-02", "CLM-03"], "cycles": 2})

    def claim(cid, text, source, status="active"):
        return {"id": cid, "text": text, "evidence": [{"source": source, "quote": text}], "status": status}

    _write(
        run / "consolidate" / "synthesis.draft.md",
        {
            "claims": [
                claim("CLM-01", "The default is typically 128 megabytes (128MB).", "SQ-01/SRC-01"),
                claim("CLM-02", "Refused later: the default is 25% of the memory.", "SQ-01/SRC-01"),
                claim("CLM-03", "Port 5432 is the default.", "SQ-01/SRC-02"),
                claim("CLM-04", "Not cited: 100 connections.", "SQ-01/SRC-02"),
            ]
        },
    )
    # Cycle 1 supported CLM-02; cycle 2 (contestation.md, the newest) refused it: the latest verdict counts.
    _write(
        run / "verify" / "contestation.cycle-01.md",
        {
            "cycle": 1,
            "challenges": [{"claim": c, "verdict": "supported", "cycle": 1} for c in ("CLM-01", "CLM-02")],
        },
    )
    _write(
        run / "verify" / "contestation.md",
        {
            "cycle": 2,
            "challenges": [
                {"claim": "CLM-02", "verdict": "refuse", "cycle": 2},
                {"claim": "CLM-03", "verdict": "supported", "cycle": 2},
                {"claim": "CLM-04", "verdict": "supported", "cycle": 2},
            ],
        },
    )
    _write(
        run / "retrieve" / "SQ-01" / "SRC-01.md",
        {"id": "SQ-01/SRC-01", "requested_url": f"{BASE}/runtime-config-resource.html", "final_url": None},
        "# x\n\n## Extracted material\n\n[p01] The default is typically 128 megabytes (\n\n"
        "[p02] {code} 128MB\n\n[p03] ), but might be less.\n\n"
        "[p04] A reasonable value is 25% of the memory in your system.\n",
    )
    _write(
        run / "retrieve" / "SQ-01" / "SRC-02.md",
        {
            "id": "SQ-01/SRC-02",
            "requested_url": f"{BASE}/ssh-tunnels.html",
            "final_url": f"{BASE}/ssh-tunnels.html",
        },
        "## Extracted material\n\n[p01] Port 5432 is the default.\n",
    )
    (run / "select").mkdir()
    (run / "select" / "SQ-01.candidates.json").write_text(
        json.dumps(
            {
                "sub_question": "SQ-01",
                "queries": [{"query": "default shared_buffers", "info": {"engine": {"cycle": 1}}}],
                "candidates": [{"url": f"{BASE}/runtime-config-resource.html"}, {"url": f"{BASE}/x.html"}],
            }
        )
    )
    return run


def test_the_scorer_counts_only_cited_supported_claims_by_their_latest_verdict(quality, trace):
    obj = quality.Objective(
        id="pg-x",
        corpus="postgresql",
        objective="?",
        facts=["128mb", "25% of the memory", "100 connections", "5432"],
        answer_pages=["runtime-config-resource.html"],
    )
    row = quality.score(obj, quality.read_trace(trace, BASE))
    found = {f["fact"]: f for f in row["facts"]}
    assert found["128mb"]["found"]  # case-insensitive, from a cited supported claim
    assert not found["25% of the memory"]["found"]  # its claim was refused in cycle 2
    assert found["25% of the memory"]["in_any_claim"] and found["25% of the memory"]["in_one_passage"]
    assert not found["100 connections"]["found"] and found["100 connections"]["in_any_claim"]  # not cited
    assert found["5432"]["found"]
    assert row["fact_recall"] == 0.5
    # Cited claims: CLM-01 and CLM-02 come from the answer page, CLM-03 does not.
    assert (row["cited_claims"], row["cited_on_answer_page"]) == (3, 2)
    assert row["on_answer_page_share"] == pytest.approx(2 / 3)
    assert row["answer_page_in_candidates"] and row["answer_page_retrieved"]
    # "128MB" is in the retrieved text only as a code passage; the sentence around it is cut there.
    assert found["128mb"]["in_retrieved_text"] and not found["128mb"]["in_one_passage"]


def test_how_to_named_wants_the_option_as_a_whole_token_in_a_cited_supported_claim(quality, trace):
    obj = quality.Objective(
        id="x", corpus="ffmpeg", objective="?", facts=["5432"], answer_pages=["a.html"], answer=["5432"]
    )
    assert quality.score(obj, quality.read_trace(trace, BASE))["answer_named"] is True
    obj.answer = ["543"]  # inside a longer token: not named
    assert quality.score(obj, quality.read_trace(trace, BASE))["answer_named"] is False
    obj.answer = ["100"]  # only in a claim the deliverable does not cite
    row = quality.score(obj, quality.read_trace(trace, BASE))
    assert row["answer_named"] is False and row["answer_in_any_claim"] is True
    assert quality.names("Use -y to overwrite.", "-y") and not quality.names("the -year flag", "-y")


def test_a_run_without_a_trace_scores_zero(quality):
    obj = quality.Objective(id="x", corpus="django", objective="?", facts=["a", "b"], answer_pages=["a.html"])
    row = quality.score(obj, quality._empty_trace())
    assert row["fact_recall"] == 0 and row["on_answer_page_share"] is None and row["cited_claims"] == 0
