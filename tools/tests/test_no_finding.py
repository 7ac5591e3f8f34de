"""A run that ends without one supported claim writes a deliverable that says so, why (what was searched,
what was refused) and what stays open, and exits 8 (no finding), not the generic failure."""

from __future__ import annotations

import pytest
import yaml
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all
from engine_web import write_mini_web

from research_engine import controller, decompose, report, runrecord, trace, validate
from research_engine.artifacts import read_markdown
from research_engine.corpus import CorpusServer
from research_engine.errors import CheckFailed, ExitCode

FACT = "The Freedonia grid operator counted 42 gigawatts of solar capacity in 2023."
NO_FINDING_MEMO = """# Freedonia's solar capacity

> **Gap:** the one figure found (CLM-01) was refused by the verifier; nothing could be established.
"""


@pytest.fixture
def run(brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    return locked_private_run(brief_file, depth="quick")


def test_report_finish_writes_a_no_finding_result_and_exits_8(run, httpserver, tmp_path, cli):
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    clm = grounded_claim(run, httpserver, sq, "/solar", FACT)
    verify_all(run, {clm: "refuse"})
    assert controller.control(run)["action"] == "stop"
    memo = tmp_path / "memo.md"
    memo.write_text(NO_FINDING_MEMO.replace("CLM-01", clm), encoding="utf-8")
    code, out, _, env = cli("report", "check", memo, "--run", run.root, "--json")
    assert code == 0 and env["data"]["no_finding"] is True
    assert [w["code"] for w in env["data"]["warnings"]] == ["no-finding"]
    code, out, _, env = cli("report", "finish", memo, "--run", run.root, "--json")
    assert code == ExitCode.NO_FINDING == 8, out
    assert env["data"]["no_finding"] is True and env["data"]["cited_claims"] == [clm]  # in a caveat
    meta, body = read_markdown(run.path("result"))
    assert meta["no_finding"] is True and runrecord.read(run)["result"]["cited_claims"] == [clm]
    assert "No finding could be supported" in body
    assert "## Method: what was searched and what was refused" in body and "## Open questions" in body
    assert f"refused by the verifier: {clm}" in body and "SQ-01: How much solar capacity" in body
    record = runrecord.read(run)
    assert record["status"] == "complete" and record["result"]["no_finding"] is True
    assert validate.validate_run(run).ok, validate.validate_run(run).problems


def test_citing_nothing_while_a_claim_is_supported_still_fails(run, httpserver, tmp_path):
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    grounded_claim(run, httpserver, sq, "/solar", FACT)
    verify_all(run)
    assert controller.control(run)["action"] == "stop"
    memo = tmp_path / "memo.md"
    memo.write_text("# Solar\n\n> **Gap:** nothing to say.\n", encoding="utf-8")
    assert [p.code for p in report.check(run, memo).problems] == ["no-citations"]
    with pytest.raises(CheckFailed):
        report.finish(run, memo)


@pytest.mark.slow
def test_a_run_that_finds_nothing_writes_a_no_finding_deliverable_and_exits_8(tmp_path, monkeypatch, cli):
    # The corpus says nothing about the objective: searches return no page at all.
    with CorpusServer(write_mini_web(tmp_path / "web")) as server:
        monkeypatch.setenv("SEARXNG_URL", server.url)
        brief = tmp_path / "brief.yaml"
        fields = {
            "objective": "What is the tidal range of the Zorblax estuary on Kepler-22b?",
            "deliverable": "a cited memo",
            "depth": "quick",
            "output_path": str(tmp_path / "runs"),
        }
        brief.write_text(yaml.safe_dump(fields), encoding="utf-8")
        host = server.url.removeprefix("http://")
        code, out, _, env = cli("run", str(brief), "--sources", "web", "--allow-host", host, "--json")
    assert code == ExitCode.NO_FINDING, out
    data = env["data"]
    assert (
        data["status"] == "complete"
        and data["no_finding"] is True
        and data["result"] == "synthesis/result.md"
    )
    run = trace.open_run(data["run_root"])
    meta, body = read_markdown(run.path("result"))
    assert meta["no_finding"] is True
    assert "No finding could be supported" in body and "searched:" in body and "## Open questions" in body
    assert validate.validate_run(run).ok, validate.validate_run(run).problems
