"""The headless engine end to end, against a local mini-web served on 127.0.0.1 by the corpus server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from engine_web import BRIEF, GIL_SENTENCE, write_mini_web

from research_engine import claims, controller, report, runrecord, trace, validate
from research_engine.corpus import CorpusServer
from research_engine.engine import loop
from research_engine.engine.extractive import ExtractiveModel, rendering
from research_engine.engine.models import ClaimDraft
from research_engine.engine.scripted import ScriptedModel
from research_engine.settings import Settings

pytestmark = pytest.mark.slow


def run_engine(*args, **kw):
    """`loop.run` configured from the environment the test set up (as the CLI would be)."""
    return loop.run(*args, settings=Settings.from_env(), **kw)


def start_engine(*args, **kw):
    return loop.start(*args, settings=Settings.from_env(), **kw)


@pytest.fixture(scope="module")
def mini_web_dir(tmp_path_factory):
    return write_mini_web(tmp_path_factory.mktemp("mini-web"))


@pytest.fixture
def mini_web(tmp_path, monkeypatch):
    """A fresh copy of the mini-web (tests may change pages), served with search; SEARXNG_URL points at it."""
    root = write_mini_web(tmp_path / "web")
    with CorpusServer(root) as server:
        monkeypatch.setenv("SEARXNG_URL", server.url)
        # The user's own server, named as --allow-host names it: no pause between its requests.
        monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_HOSTS", server.url.split("://", 1)[1].rstrip("/"))
        server.root = root
        yield server


def brief_at(tmp_path: Path, **fields) -> Path:
    path = tmp_path / "brief.yaml"
    path.write_text(
        yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs"), **fields}), encoding="utf-8"
    )
    return path


def options(**kw) -> loop.EngineOptions:
    return loop.EngineOptions(allow_private=True, **kw)


def assert_valid(run_root: Path) -> None:
    run = trace.open_run(run_root)
    checked = validate.validate_run(run) if hasattr(validate, "validate_run") else None
    if checked is not None:
        problems = getattr(checked, "problems", checked)
        assert not problems, [getattr(p, "message", p) for p in problems]
    result = report.check(run, run.path("result"))
    assert result.ok, [p.message for p in result.problems]


def test_extractive_run_completes_offline_and_passes_validate_and_report_check(mini_web, tmp_path, cli):
    outcome = run_engine(brief_at(tmp_path), options())
    assert outcome.status == "complete"
    assert outcome.result == "synthesis/result.md"
    assert outcome.figures["sources"] >= 4
    assert outcome.figures["supported"] >= 3
    code, out, _, _ = cli("validate", str(outcome.run_root))
    assert code == 0, out
    code, out, _, _ = cli(
        "report", "check", "--run", str(outcome.run_root), str(outcome.run_root / "synthesis/result.md")
    )
    assert code == 0, out
    record = runrecord.read(trace.open_run(outcome.run_root))
    assert record["status"] == "complete" and record["model"]["name"] == "extractive"
    assert record["budgets"]["spent"]["provider_calls"] > 0


def test_every_stage_writes_the_same_trace_tree_the_commands_write(mini_web, tmp_path):
    outcome = run_engine(brief_at(tmp_path), options())
    root = outcome.run_root
    for rel in (
        "brief.md",
        "run.json",
        "decompose/sub-questions.md",
        "select/SQ-01.selection.md",
        "select/SQ-01.candidates.json",
        "retrieve/SQ-01/SRC-01.md",
        "consolidate/claims.jsonl",
        "consolidate/synthesis.draft.md",
        "verify/contestation.md",
        "controller/loop-log.md",
        "synthesis/result.md",
        ".state/engine.json",
    ):
        assert (root / rel).is_file(), rel
    candidates = json.loads((root / "select/SQ-01.candidates.json").read_text())
    angles = {q["info"]["engine"]["angle"] for q in candidates["queries"]}
    assert len(angles) >= 2  # multi-angle gather


def test_planted_refusal_is_re_researched_and_regrounded(mini_web, tmp_path):
    extractive = ExtractiveModel()
    planted: dict[str, str] = {}

    def consolidate(brief, sq, sources):
        drafts = extractive.consolidate(brief, sq, sources)
        if not planted:
            for draft in drafts:
                if draft.text == GIL_SENTENCE:
                    # The page changes after retrieval: the verifier's fresh copy no longer holds the quote.
                    url = _url_of(sources, draft.evidence[0][0])
                    page = mini_web.root / url.split("/", 3)[3]
                    page.write_text(page.read_text().replace(GIL_SENTENCE, "Threads are covered elsewhere."))
                    planted["claim_text"], planted["page"] = draft.text, url
                    break
        return drafts

    model = ScriptedModel({"consolidate": consolidate}, fallback=extractive)
    outcome = run_engine(brief_at(tmp_path), options(), model=model)
    assert planted, "the mini-web never offered the GIL sentence from threading.html"
    run = trace.open_run(outcome.run_root)
    log = controller.load_loop_log(run)["cycles"]
    assert log[0]["decision"]["action"] == "re-research"
    refused = log[0]["decision"]["targets"]
    ledger = {c["id"]: c for c in claims.load(run)["claims"]}
    assert any(ledger[c]["status"] == "retired" for c in refused if c in ledger)
    regrounded = [c for c in claims.active_claims(run) if c["text"] == planted["claim_text"]]
    assert regrounded, "the refused claim was not re-grounded in cycle 2"
    latest = controller.latest_verdicts(run)
    assert latest[regrounded[0]["id"]]["verdict"] == "supported"
    assert (run.root / "verify/contestation.cycle-01.md").is_file()
    record = runrecord.read(run)
    assert record["refused_ever"] is True
    assert outcome.status == "complete"
    assert_valid(run.root)


def _url_of(sources, ref):
    return next(s.url for s in sources if s.ref == ref)


def planting_consolidate(mini_web, planted):
    """The extractive consolidate, plus a page that changes after retrieval (its claim will be refused)."""
    extractive = ExtractiveModel()

    def consolidate(brief, sq, sources):
        drafts = extractive.consolidate(brief, sq, sources)
        if not planted:
            for draft in drafts:
                if draft.text == GIL_SENTENCE:
                    url = _url_of(sources, draft.evidence[0][0])
                    page = mini_web.root / url.split("/", 3)[3]
                    page.write_text(page.read_text().replace(GIL_SENTENCE, "Threads are covered elsewhere."))
                    planted["claim_text"], planted["page"] = draft.text, url
                    break
        return drafts

    return consolidate


def test_token_budget_stops_cleanly_with_a_partial_labelled_result(mini_web, tmp_path, cli):
    planted: dict[str, str] = {}
    critic = ExtractiveModel().critic
    # The plan has one sub-question: its consolidate call and the critic spend 2 x 1000 tokens; the budget
    # is gone after cycle 1's critic, while the planted refusal keeps the criterion from being met: the
    # governor stops the run.
    model = ScriptedModel(
        {"consolidate": planting_consolidate(mini_web, planted), "critic": critic}, tokens_per_call=(800, 200)
    )
    outcome = run_engine(brief_at(tmp_path, budget={"model_tokens": 1500}), options(), model=model)
    assert planted
    assert outcome.partial is True
    assert outcome.stop_reason == "budget:model_tokens"
    run = trace.open_run(outcome.run_root)
    record = runrecord.read(run)
    assert record["stop_reason"] == "budget:model_tokens" and record["partial"] is True
    assert record["budgets"]["spent"]["model_tokens"] >= 1500
    assert controller.load_loop_log(run)["cycles"][-1]["decision"]["stop_reason"] == "budget:model_tokens"
    result = run.path("result").read_text()
    assert "PARTIAL result" in result
    assert report.check(run, run.path("result")).ok
    code, out, _, _ = cli("validate", str(run.root))
    assert code == 0, out


def test_budget_spent_exits_7_from_the_cli(mini_web, tmp_path, cli):
    code, out, _, env = cli(
        "run", str(brief_at(tmp_path, budget={"provider_calls": 3})), "--allow-private", "--json"
    )
    assert code == 7
    assert env["data"]["stop_reason"] == "budget:provider_calls"
    assert env["data"]["partial"] is True


def test_dry_run_prints_queries_and_selected_urls_without_model_calls(mini_web, tmp_path, cli):
    code, out, _, env = cli("run", str(brief_at(tmp_path)), "--allow-private", "--dry-run", "--json")
    assert code == 0, out
    planned = env["data"]["planned"]
    assert planned and all(p["queries"] for p in planned.values())
    assert any(p["selected"] for p in planned.values())
    root = Path(env["data"]["run_root"])
    assert not list((root / "retrieve").glob("SQ-*/SRC-*.md"))
    assert not (root / "consolidate/claims.jsonl").exists()
    assert not (root / "consolidate/synthesis.draft.md").exists()


def test_without_a_search_backend_the_run_is_not_configured(tmp_path, cli):
    code, _, err, env = cli("run", str(brief_at(tmp_path)), "--json")
    assert code == 5
    assert env["errors"][0]["code"] == "search-not-configured"


def test_a_failing_source_never_sinks_the_run(mini_web, tmp_path):
    (mini_web.root / "faq/library.html").unlink()  # the index still lists it; fetching it now gives 404
    outcome = run_engine(brief_at(tmp_path), options())
    assert outcome.result == "synthesis/result.md"
    record = runrecord.read(trace.open_run(outcome.run_root))
    assert any(e["kind"] == "fetch-failed" for e in record["events"])


def test_an_off_topic_candidate_is_logged_rejected_with_the_models_reason(mini_web, tmp_path):
    from research_engine import retrieve, selection
    from research_engine.engine.models import SelectionJudgement

    extractive = ExtractiveModel()
    reason = "release notes, not an answer to this sub-question"

    def select_judgement(brief, sq, candidate):
        if candidate["url"].endswith("whatsnew/3.11.html"):
            return SelectionJudgement(reason, "reject")
        return extractive.select_judgement(brief, sq, candidate)

    model = ScriptedModel({"select_judgement": select_judgement}, fallback=extractive)
    outcome = run_engine(brief_at(tmp_path), options(), model=model)
    run = trace.open_run(outcome.run_root)
    logged = [
        cand
        for path in sorted((run.root / "select").glob("SQ-*.selection.md"))
        for rnd in selection.load(run, path.name.split(".")[0])["rounds"]
        for cand in rnd["candidates"]
    ]
    off_topic = [
        c for c in logged if c["url"].endswith("whatsnew/3.11.html") and not c["why"].startswith("duplicate")
    ]
    assert off_topic, "no sub-question's search offered the release notes"
    for cand in off_topic:
        assert (cand["verdict"], cand["verdict_hint"], cand["reason"]) == ("rejected", "reject", reason)
        assert cand["why"] == "rejected on the agent's judgement" and cand["decided_by"] == "agent"
    urls = [
        retrieve.load_source(run, ref)[0].get("requested_url") or "" for ref in retrieve.list_sources(run)
    ]
    assert urls and not any(u.endswith("whatsnew/3.11.html") for u in urls)
    assert any("subject words" in c["reason"] for c in logged if c not in off_topic)  # the extractive rule


def test_an_unconfigured_openai_model_is_refused_before_any_run_is_locked(
    cli, brief_file, tmp_path, monkeypatch
):
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9")
    out = tmp_path / "runs"
    brief = brief_file(output_path=str(out))
    code, _, _, env = cli("run", brief, "--model", "openai", "--output-path", out, "--json")
    assert code == 5 and env["errors"][0]["code"] == "model-not-configured"
    assert not out.exists() or not any(out.iterdir())


def test_a_supported_claim_that_answers_nothing_leaves_its_sub_question_uncovered_and_re_researched(
    mini_web, tmp_path
):
    """Supported is not covered: SQ-01's only claim holds its quote but says nothing of the global
    interpreter lock or threads, so the controller counts SQ-01 uncovered (its relevance reading says why),
    cycle 2 sends a query led by the key terms no supported claim of SQ-01 carries and records why, and the
    deliverable does not state the off-question claim."""
    extractive = ExtractiveModel()
    off_question = (
        "Python processes do not share memory by default, so data moves between processes through pipes"
    )

    def consolidate(brief, sq, sources):
        drafts = extractive.consolidate(brief, sq, sources)
        if sq["id"] != "SQ-01":
            return drafts
        for source in sources:
            for passage in source.passages:
                if passage.text.startswith(off_question):
                    return [ClaimDraft(text=passage.text, evidence=[(source.ref, passage.text)])]
        return []

    model = ScriptedModel({"consolidate": consolidate}, fallback=extractive)
    outcome = run_engine(brief_at(tmp_path), options(), model=model)
    run = trace.open_run(outcome.run_root)
    first = controller.load_loop_log(run)["cycles"][0]
    assert "SQ-01" in first["signals"]["ids"]["uncovered_sub_questions"]
    assert first["signals"]["ids"]["unanswering_claims"]
    assert "does not answer" in first["signals"]["readings"]["relevance"]
    assert first["decision"]["action"] in ("supplement-gap", "go-deeper")
    candidates = json.loads((run.root / "select/SQ-01.candidates.json").read_text())
    rethought = [q for q in candidates["queries"] if (q["info"].get("engine") or {}).get("why")]
    assert rethought and rethought[0]["info"]["engine"]["cycle"] == 2
    assert "found no supported claim answering SQ-01" in rethought[0]["info"]["engine"]["why"]
    assert "global" in rethought[0]["query"] or "interpreter" in rethought[0]["query"]
    result = (run.root / "synthesis/result.md").read_text()
    # Nothing answers SQ-01, the plan's only sub-question: the claim is shown after the gap note as a
    # related statement, never as the answer or a key finding.
    answer_part, _, related_part = result.partition(rendering.RELATED_HEADING)
    assert off_question not in answer_part and off_question in related_part.partition("## Caveats")[0]
    assert "> **Gap:** no source sentence answered this sub-question." in answer_part
    assert rendering.ANSWER_HEADING not in result
    assert_valid(run.root)


def test_an_extractive_sentence_failing_the_prose_check_is_dropped_not_the_run(mini_web, tmp_path):
    """The extractive writer's sentences are its claims, yet a quote with code in it can read to the prose
    check as two sentences (a quoted shell prompt did, on Django's contributing guide). Such a sentence is
    dropped with an event; the run still ends with a checked deliverable."""
    stray = "CPython threads run 40 times faster than processes [CLM-01]."

    class StrayWriter(ExtractiveModel):
        def write(self, brief, sections):
            text = super().write(brief, sections)
            head, sep, rest = text.partition(rendering.KEY_FINDINGS_HEADING)
            return f"{head}{stray}\n\n{sep}{rest}"

    outcome = run_engine(brief_at(tmp_path), options(), model=StrayWriter())
    assert outcome.status == "complete"
    run = trace.open_run(outcome.run_root)
    result = run.path("result").read_text()
    assert "40 times faster" not in result
    events = (run.root / "run.json").read_text() + "".join(
        p.read_text() for p in run.root.rglob("*.jsonl") if p.is_file()
    )
    assert "deliverable-sentences-dropped" in events
    assert report.check(run, run.path("result")).ok


def test_the_claims_a_model_picked_are_listed_apart_from_the_rules_in_run_json(mini_web, tmp_path):
    """run.json `model.picked_claims`: the claims whose drafts were a model's picks, not the rule answering
    for it (bench/real_model.py counts the deliverable's citations by it)."""
    extractive = ExtractiveModel()

    def consolidate(brief, sq, sources):
        model.usage.add(10, 2, stage="consolidate")
        drafts = extractive.consolidate(brief, sq, sources)
        if sq["id"] == "SQ-01":
            for draft in drafts:
                draft.origin = "model"
        return drafts

    model = ScriptedModel({"consolidate": consolidate}, fallback=extractive)
    outcome = run_engine(brief_at(tmp_path), options(), model=model)
    run = trace.open_run(outcome.run_root)
    picked = runrecord.read(run)["model"]["picked_claims"]
    sq_of = {c["id"]: c["sub_question"] for c in claims.load(run)["claims"]}
    assert picked and {sq_of[c] for c in picked} == {"SQ-01"}
    assert {c for c, sq in sq_of.items() if sq == "SQ-01"} == set(picked)
