"""Choices by reference: `select log` takes the search results by their recorded ids (`Q-02#3`) with a reason
each, nothing retyped; one rule for the agent's hint against relevance (its judgement wins within stated
floors, and the log says which decided); the source-kind rule asks for another search only when another
kind was offered."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import yaml

from research_engine import selection
from research_engine.selection.scoring import MIN_TOTAL, Scores, decide

RESULTS = [
    {
        "url": f"http://docs.example/python/{slug}.html",
        "title": title,
        "content": snippet,
        "engine": "local",
    }
    for slug, title, snippet in (
        ("exceptions", "Built-in Exceptions: ExceptionGroup", "ExceptionGroup wraps several exceptions."),
        ("compound", "Compound statements: the try statement", "except* clauses handle exception groups."),
        ("tutorial", "Errors and Exceptions", "Raising and handling multiple unrelated exceptions."),
    )
]


@pytest.fixture
def run_with_search(cli, locked_run, httpserver, monkeypatch):
    from research_engine import decompose

    decompose.add(locked_run, "How does except* handle an exception group?", "technical")
    httpserver.expect_request("/search").respond_with_json({"query": "q", "results": RESULTS})
    monkeypatch.setenv("SEARXNG_URL", httpserver.url_for("/"))
    monkeypatch.setenv("RESEARCH_ENGINE_SEARCH_ORDER", "searxng")
    host = f"{httpserver.host}:{httpserver.port}"
    code, _, _, env = cli(
        "search", "except* exception group", "--run", locked_run.root, "--sq", "SQ-01", "--allow-host", host,
        "--json",
    )  # fmt: skip
    assert code == 0, env
    assert [c["ref"] for c in env["data"]["candidates"]] == ["Q-01#1", "Q-01#2", "Q-01#3"]
    return locked_run


def select_log(cli, run, tmp_path, entries) -> tuple[int, dict]:
    path = tmp_path / "candidates.yaml"
    path.write_text(yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
    code, _, _, env = cli("select", "log", "--run", run.root, "--sq", "SQ-01", "--candidates", path, "--json")
    return code, env


def test_search_results_are_chosen_by_their_recorded_ids_with_a_reason_each(cli, run_with_search, tmp_path):
    code, env = select_log(
        cli,
        run_with_search,
        tmp_path,
        [
            {"ref": "Q-01#2", "reason": "the reference for except*", "source_type": "primary"},
            {
                "ref": "Q-01#1",
                "reason": "defines ExceptionGroup",
                "source_type": "primary",
                "verdict_hint": "choose",
            },
            {"ref": "Q-01#3", "reason": "a tutorial retelling the reference", "verdict_hint": "reject"},
        ],
    )
    assert code == 0, env
    chosen = {c["ref"]: c for c in env["data"]["chosen"]}
    assert set(chosen) == {"Q-01#1", "Q-01#2"}
    assert chosen["Q-01#2"]["url"] == RESULTS[1]["url"] and chosen["Q-01#2"]["title"] == RESULTS[1]["title"]
    (rejected,) = env["data"]["rejected"]
    assert rejected["ref"] == "Q-01#3" and rejected["decided_by"] == "agent"
    # The log keeps what the search recorded (title, snippet, rank) with the agent's reason and the id.
    logged = selection.load(run_with_search, "SQ-01")["rounds"][-1]["candidates"]
    by_ref = {c["ref"]: c for c in logged}
    assert by_ref["Q-01#1"]["snippet"] == RESULTS[0]["content"] and by_ref["Q-01#1"]["rank"] == 1
    assert by_ref["Q-01#2"]["reason"] == "the reference for except*"
    body = (run_with_search.root / "select" / "SQ-01.selection.md").read_text().split("\n---\n", 1)[1]
    assert body.count("a tutorial retelling the reference") == 1, "each reason once, in the body"


def test_an_unknown_reference_is_bad_input_naming_the_recorded_ids(cli, run_with_search, tmp_path):
    code, env = select_log(cli, run_with_search, tmp_path, [{"ref": "Q-01#9", "reason": "x"}])
    assert code == 2 and env["errors"][0]["code"] == "unknown-candidate"
    assert "Q-01#1..Q-01#3" in env["errors"][0]["message"]
    code, env = select_log(cli, run_with_search, tmp_path, [{"ref": "Q-1#1", "reason": "x"}])
    # a malformed candidates file is bad input (docs/conventions.md: input errors are 2 everywhere)
    assert code == 2 and env["errors"][0]["field"] == "0.ref"


def test_the_full_form_stays_for_candidates_from_elsewhere(cli, run_with_search, tmp_path):
    entry = {
        "url": "http://docs.example/pep-0654.html",
        "title": "PEP 654: Exception Groups and except*",
        "snippet": "Exception groups and except* for handling multiple exceptions.",
        "reason": "the PEP the brief names in known_sources",
        "source_type": "primary",
    }
    code, env = select_log(cli, run_with_search, tmp_path, [entry, {"ref": "Q-01#2", "reason": "reference"}])
    assert code == 0, env
    assert {c["url"] for c in env["data"]["chosen"]} >= {entry["url"]}


def _scores(relevance: float, total: float) -> Scores:
    parts = {
        "fit": 1.0,
        "verifiability": 0.7,
        "access": 1.0,
        "freshness": 1.0,
        "primary": 1.0,
        "diversity": 1.0,
    }
    return Scores(relevance=relevance, **parts, total=total, basis={k: "" for k in ["relevance", *parts]})


def _item(n: int, hint: str | None = None) -> dict:
    return {"key": f"url:docs.example/{n}", "domain": f"d{n}.example", "rank": n, "verdict_hint": hint}


def test_choose_wins_over_both_relevance_rules_and_the_log_says_the_agent_decided():
    strong = _scores(0.48, 0.80)
    share = _scores(0.28, 0.70)  # under 0.6 x the best chosen relevance: not fetched to fill the budget
    floor = _scores(0.10, 0.66)  # under the relevance floor
    plain = decide([_item(1), _item(2), _item(3)], [strong, share, floor], budget=4)
    assert [d.verdict for d in plain] == ["chosen", "rejected", "rejected"]
    assert [d.decided_by for d in plain] == ["scores"] * 3
    hinted = decide([_item(1), _item(2, "choose"), _item(3, "choose")], [strong, share, floor], budget=4)
    assert [d.verdict for d in hinted] == ["chosen"] * 3
    assert [d.decided_by for d in hinted] == ["scores", "agent", "agent"]
    assert "agent's judgement over the relevance share" in hinted[1].why
    assert "agent's judgement over the relevance floor" in hinted[2].why


def test_choose_never_lifts_the_score_floor_the_budget_or_a_duplicate():
    weak = replace(_scores(0.1, MIN_TOTAL - 0.01))
    decisions = decide([_item(1, "choose")], [weak], budget=4)
    assert decisions[0].verdict == "rejected" and "below the floor" in decisions[0].why
    items = [_item(1), _item(2), {**_item(1, "choose"), "rank": 3}]
    decisions = decide(items, [_scores(0.9, 0.9), _scores(0.9, 0.85), _scores(0.2, 0.6)], budget=1)
    assert [d.verdict for d in decisions] == ["chosen", "rejected", "rejected"]
    assert "duplicate" in decisions[2].why and "budget" in decisions[1].why


def test_another_kind_is_searched_for_only_when_one_was_offered(cli, run_with_search, tmp_path):
    # A corpus of one kind: every page primary documentation. One kind chosen is all there is.
    code, env = select_log(
        cli,
        run_with_search,
        tmp_path,
        [{"ref": f"Q-01#{n}", "reason": "documentation", "source_type": "primary"} for n in (1, 2, 3)],
    )
    assert env["data"]["kinds"] == {
        "chosen": ["primary"],
        "offered": ["primary"],
        "search_other_kinds": False,
    }
    # A practitioner write-up was offered and not chosen: look for that kind once more.
    code, env = select_log(
        cli,
        run_with_search,
        tmp_path,
        [
            {"ref": "Q-01#1", "reason": "documentation", "source_type": "primary"},
            {"ref": "Q-01#3", "reason": "off topic", "source_type": "practitioner", "verdict_hint": "reject"},
        ],
    )
    assert env["data"]["kinds"]["search_other_kinds"] is True
    assert json.dumps(env["data"]["kinds"]["offered"]) == '["practitioner", "primary"]'
