"""selection: `select log` writes the selection-and-trust log."""

from __future__ import annotations

import json

import pytest

from research_engine import brief, decompose, trace
from research_engine.artifacts import read_markdown
from research_engine.schemas import validate

AS_OF = "2025-06-01"


@pytest.fixture
def quant_run(brief_file):
    locked = brief.lock(
        brief_file(
            recency="2y", budget={"sources_per_sub_question": 3}, avoid_sources=["content-farm.example"]
        )
    )
    run = trace.open_run(locked.run_root)
    decompose.add(run, "How many households were covered in 2023?", "quantitative")
    return run


HOUSEHOLDS = "Households covered in 2023"


def write_candidates(tmp_path, candidates, name="candidates.json"):
    path = tmp_path / name
    path.write_text(json.dumps(candidates), encoding="utf-8")
    return path


def log(cli, run, path, *extra):
    return cli(
        "select",
        "log",
        "--run",
        run.root,
        "--sq",
        "SQ-01",
        "--candidates",
        path,
        "--as-of",
        AS_OF,
        *extra,
        "--json",
    )


def test_the_same_work_reached_three_ways_counts_once(quant_run, cli, tmp_path):
    path = write_candidates(
        tmp_path,
        [
            {
                "title": "Coverage study",
                "url": "https://api.openalex.org/works/W123",
                "kind": "openalex",
                "doi": "10.5555/Cover.2023",
                "year": 2024,
                "backend": "openalex",
                "rank": 1,
                "reason": "the study",
            },
            {
                "title": "Coverage study (doi link)",
                "url": "https://doi.org/10.5555/cover.2023",
                "kind": "web",
                "backend": "searxng",
                "rank": 2,
                "reason": "same study via search",
            },
            {
                "title": "Coverage study (publisher)",
                "url": "https://journal.example.org/article/42",
                "kind": "web",
                "doi": "10.5555/COVER.2023",
                "backend": "brave",
                "rank": 3,
                "reason": "publisher page",
            },
        ],
    )
    code, _, _, env = log(cli, quant_run, path)
    assert code == 0
    assert [c["n"] for c in env["data"]["chosen"]] == [1]
    assert [r["why"] for r in env["data"]["rejected"]] == [
        "duplicate of candidate 1 (doi:10.5555/cover.2023)"
    ] * 2


def test_per_domain_cap_keeps_the_set_diverse(quant_run, cli, tmp_path):
    path = write_candidates(
        tmp_path,
        [
            {
                "title": f"Households covered in 2023, table {i}",
                "url": f"https://stats.example.org/table/{i}",
                "source_type": "data",
                "published": "2025-01-01",
                "rank": i,
                "reason": "official table",
            }
            for i in range(1, 5)
        ]
        + [
            {
                "title": "How many households were covered",
                "url": "https://other.example.net/x",
                "source_type": "press",
                "published": "2025-01-01",
                "rank": 9,
                "reason": "press",
            }
        ],
    )
    code, _, _, env = log(cli, quant_run, path)
    assert code == 0
    assert [c["n"] for c in env["data"]["chosen"]] == [1, 2, 5]
    capped = [r for r in env["data"]["rejected"] if "domain cap" in r["why"]]
    assert [r["n"] for r in capped] == [3, 4]


def test_every_candidate_is_logged_with_scores_reason_and_verdict(quant_run, cli, tmp_path):
    path = write_candidates(
        tmp_path,
        [
            {
                "title": "GDP series",
                "url": "https://api.worldbank.org/v2/country/KE/indicator/NY.GDP.MKTP.CD",
                "kind": "worldbank",
                "backend": "worldbank",
                "rank": 1,
                "access_tier": "open",
                "published": "2025-03-01",
                "reason": "the official series",
            },
            {
                "title": "Blog about it",
                "url": "http://blog.example.com/post",
                "source_type": "practitioner",
                "published": "2015-01-01",
                "rank": 2,
                "reason": "commentary",
                "verdict_hint": "choose",
            },
            {
                "title": "Paywalled",
                "url": "https://paywall.example.com/a",
                "source_type": "press",
                "access_tier": "paid",
                "rank": 3,
                "reason": "maybe",
            },
            {
                "title": "Irrelevant",
                "url": "https://irrelevant.example.com/",
                "rank": 4,
                "reason": "about another country",
                "verdict_hint": "reject",
            },
            {
                "title": "Farm",
                "url": "https://www.content-farm.example/list",
                "rank": 5,
                "reason": "listicle",
            },
        ],
    )
    code, out, _, env = log(cli, quant_run, path)
    assert code == 0
    meta, body = read_markdown(quant_run.path("selection", sq="SQ-01"))
    assert validate(meta, "selection") == []
    (rnd,) = meta["rounds"]
    assert (rnd["budget"], rnd["recency"], rnd["as_of"]) == (3, "2y", AS_OF)
    by_n = {c["n"]: c for c in rnd["candidates"]}
    assert by_n[1]["verdict"] == "chosen" and by_n[1]["scores"]["fit"] == 1.0
    assert by_n[1]["basis"]["verifiability"] == "re-issuable API request"
    assert by_n[2]["reason"] == "commentary" and by_n[2]["scores"]["freshness"] == 0.05
    assert by_n[2]["verdict"] == "rejected" and "below the floor" in by_n[2]["why"]
    assert by_n[3]["scores"]["access"] == 0.1 and by_n[3]["verdict"] == "rejected"
    assert by_n[4]["why"] == "rejected on the agent's judgement" and by_n[4]["decided_by"] == "agent"
    assert by_n[4]["reason"] == "about another country"
    assert by_n[5]["why"] == "the brief says to avoid content-farm.example"
    assert rnd["chosen"] == [c["n"] for c in rnd["candidates"] if c["verdict"] == "chosen"]
    assert "| 1 | chosen |" in body and "Agent: the official series" in body


def test_a_second_round_is_appended_and_counts_domains_already_used(quant_run, cli, tmp_path):
    first = write_candidates(
        tmp_path,
        [{"url": "https://stats.example.org/a", "title": HOUSEHOLDS, "source_type": "data", "reason": "r"}],
        "one.json",
    )
    assert log(cli, quant_run, first)[0] == 0
    second = write_candidates(
        tmp_path,
        [{"url": "https://stats.example.org/b", "title": HOUSEHOLDS, "source_type": "data", "reason": "r"}],
        "two.json",
    )
    code, _, _, env = log(cli, quant_run, second)
    assert code == 0 and env["data"]["round"] == 2
    meta, _ = read_markdown(quant_run.path("selection", sq="SQ-01"))
    assert [r["round"] for r in meta["rounds"]] == [1, 2]
    assert meta["rounds"][0]["candidates"][0]["scores"]["diversity"] == 1.0
    assert meta["rounds"][1]["candidates"][0]["scores"]["diversity"] == 0.6


def test_a_candidate_already_retrieved_for_the_sub_question_is_not_chosen_again(quant_run, cli, tmp_path):
    from helpers_core import add_source

    add_source(quant_run, "SQ-01", "Some stored text.", url="https://stats.example.org/a")
    path = write_candidates(tmp_path, [{"url": "https://stats.example.org/a?utm_source=x", "reason": "r"}])
    code, _, _, env = log(cli, quant_run, path)
    assert code == 0 and env["data"]["rejected"][0]["why"] == (
        "already retrieved for this sub-question as SQ-01/SRC-01"
    )


def test_an_unknown_sub_question_is_bad_input(quant_run, cli, tmp_path):
    path = write_candidates(tmp_path, [{"url": "https://a.example.org/", "reason": "r"}])
    code, _, _, env = cli(
        "select", "log", "--run", quant_run.root, "--sq", "SQ-09", "--candidates", path, "--json"
    )
    assert code == 2 and env["errors"][0]["code"] == "unknown-sub-question"


def test_a_malformed_candidates_file_is_refused_naming_the_field(quant_run, cli, tmp_path):
    path = write_candidates(tmp_path, [{"url": "not a url"}, {"title": "no url"}])
    code, _, _, env = log(cli, quant_run, path)
    assert code == 2 and env["errors"][0]["field"] in ("0.url", "1.url")  # bad input, as the conventions say
    assert not quant_run.path("selection", sq="SQ-01").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, _, env = log(cli, quant_run, bad)
    assert code == 2 and env["errors"][0]["code"] == "unreadable-candidates"


def test_a_search_envelope_is_accepted_as_the_candidates_file(quant_run, cli, tmp_path):
    path = write_candidates(
        tmp_path,
        {
            "schema_version": 1,
            "command": "search",
            "ok": True,
            "data": {
                "candidates": [{"url": "https://a.example.org/", "title": "A", "rank": 1, "reason": "r"}]
            },
        },
    )
    code, _, _, env = log(cli, quant_run, path)
    assert code == 0 and env["data"]["chosen"][0]["url"] == "https://a.example.org/"


def test_validate_passes_on_a_selection_log_and_flags_a_tampered_one(quant_run, cli, tmp_path):
    path = write_candidates(tmp_path, [{"url": "https://a.example.org/", "title": HOUSEHOLDS, "reason": "r"}])
    assert log(cli, quant_run, path)[0] == 0
    code, _, _, env = cli("validate", quant_run.root, "--json")
    assert code == 0, env["errors"]
    sel = quant_run.path("selection", sq="SQ-01")
    sel.write_text(sel.read_text().replace("verdict: chosen", "verdict: rejected"))
    code, _, _, env = cli("validate", quant_run.root, "--json")
    assert code == 1 and any("disagrees" in p["message"] for p in env["errors"])


def test_one_host_fills_the_budget_and_the_log_says_the_cap_was_lifted(quant_run, cli, tmp_path):
    """A local corpus or a site-scoped brief has one host: the domain cap must not empty the round."""
    path = write_candidates(
        tmp_path,
        [
            {"title": f"{HOUSEHOLDS}: part {i}", "url": f"http://127.0.0.1:8000/p{i}.html", "rank": i}
            for i in range(1, 5)
        ],
    )
    code, _, _, env = log(cli, quant_run, path)
    assert code == 0
    assert [c["n"] for c in env["data"]["chosen"]] == [1, 2, 3]  # the budget is 3
    meta, body = read_markdown(quant_run.path("selection", sq="SQ-01"))
    whys = {c["n"]: c["why"] for c in meta["rounds"][0]["candidates"]}
    assert "domain cap of 2 lifted" in whys[3] and "budget of 3" in whys[4]
    assert "| relev. |" in body


def test_relevance_orders_candidates_and_an_off_topic_one_is_not_fetched(quant_run, cli, tmp_path):
    path = write_candidates(
        tmp_path,
        [
            {
                "title": "Annual report of the port authority",
                "url": "https://a.example.org/port",
                "rank": 1,
                "source_type": "primary",
            },
            {"title": "Statistics", "url": "https://b.example.org/stats", "rank": 9},
            {
                "title": "Households covered by the 2023 census",
                "url": "https://c.example.org/census",
                "snippet": "In 2023 the survey covered 41,200 households.",
                "rank": 2,
            },
        ],
    )
    code, _, _, env = log(cli, quant_run, path)
    assert code == 0
    meta, _ = read_markdown(quant_run.path("selection", sq="SQ-01"))
    by_n = {c["n"]: c for c in meta["rounds"][0]["candidates"]}
    assert by_n[3]["verdict"] == "chosen" and by_n[3]["scores"]["relevance"] > by_n[1]["scores"]["relevance"]
    assert "3/3 key terms" in by_n[3]["basis"]["relevance"]  # households, covered, 2023
    assert by_n[2]["verdict"] == "rejected" and "relevance" in by_n[2]["why"]
    assert env["data"]["chosen"][0]["n"] == 3  # the on-topic page first, although ranked second
