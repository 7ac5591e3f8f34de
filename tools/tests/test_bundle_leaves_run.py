"""Executable documentation: the commands each skill tells the agent to run, run in order.

The ```bash blocks of the composer and of every leaf are parsed out of the SKILL.md files, their
placeholders (<RUN>, <SQ>, <CLAIM>...) filled with real values, and run through the CLI against a
local mini-web on 127.0.0.1 (pages, a SearXNG-shaped search endpoint, and the recorded OpenAlex and
World Bank responses from ../shared/fixtures/apis/). The test plays the agent: it supplies the
judgement (sub-questions, candidate reasons, claims and quotes, verdicts, the deliverable) and
nothing else. If a leaf's documented command stops working, this test fails, naming the leaf.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from _bundle import PLACEHOLDER_RE, SKILLS_DIR, bash_blocks, block_invocations
from conftest import shared_path

PAGES = {
    "/py/threads.html": (
        "Threads in CPython",
        "In CPython the global interpreter lock allows only one thread to execute Python bytecode at a "
        "time. Threads remain useful for I/O-bound work because the lock is released while a thread waits "
        "on the network or the disk. A pool of 32 threads can keep many slow network requests in flight.",
    ),
    "/py/processes.html": (
        "Processes for CPU-bound work",
        "For CPU-bound work, a process pool runs Python code on several cores at once, because each process "
        "has its own interpreter and its own lock. Starting a process costs far more than starting a thread, "
        "so process pools pay off for tasks that run for at least 10 milliseconds each.",
    ),
    "/py/asyncio-history.html": (
        "A short history of asyncio",
        "The asyncio module was added to the standard library in Python 3.4 in 2014. The async and await "
        "keywords arrived in Python 3.5, and asyncio.run became the usual entry point in Python 3.7. "
        "Event loops multiplex many sockets on a single thread without preemption.",
    ),
    "/critique/asyncio-limits.html": (
        "The limits of asyncio",
        "Critics point out that asyncio does not make CPU-bound code faster: a coroutine that computes "
        "without awaiting blocks the whole event loop. Mixing blocking libraries into asyncio code is the "
        "most common mistake, and it silently serialises the program.",
    ),
}
QUERIES = {
    "SQ-01": (
        "Which CPython mechanism limits threads?",
        "CPython global interpreter lock threads",
        "/py/threads.html",
    ),
    "SQ-02": (
        "When did asyncio arrive and change?",
        "asyncio history Python 3.4 3.5 3.7",
        "/py/asyncio-history.html",
    ),
    "SQ-03": (
        "What do primary docs say about processes?",
        "process pool CPU-bound Python",
        "/py/processes.html",
    ),
    "SQ-04": (
        "What is the case against asyncio?",
        "criticism of asyncio limitations",
        "/critique/asyncio-limits.html",
    ),
}
ANGLES = {"SQ-01": "entity", "SQ-02": "time", "SQ-03": "source-type", "SQ-04": "counter"}


@dataclass
class Agent:
    """Plays the agent: runs a skill's documented blocks with the placeholders filled."""

    ran: dict[str, set[int]] = field(default_factory=dict)

    def blocks(self, skill: str) -> list[str]:
        return bash_blocks((SKILLS_DIR / skill / "SKILL.md").read_text(encoding="utf-8"))

    def run(self, skill: str, index: int, expect: tuple[int, ...] = (0,), **values: str) -> dict[str, Any]:
        block = self.blocks(skill)[index]
        envelope: dict[str, Any] = {}
        for inv in block_invocations(block):
            words = shlex.split(inv.line)
            filled = [self._fill(skill, index, w, values) for w in words[1:]]
            stdin = None if inv.stdin is None else self._fill(skill, index, inv.stdin, values)
            assert inv.stdin is None or inv.quoted, f"{skill} block {index}: an unquoted heredoc expands"
            code, out, err, envelope = self._invoke(filled, stdin)
            line = inv.line
            assert code in expect, (
                f"{skill} block {index}: `{line}` exited {code}\n"
                f"filled: {filled}\nstdout: {out}\nstderr: {err}"
            )
        self.ran.setdefault(skill, set()).add(index)
        return envelope

    @staticmethod
    def _invoke(args: list[str], stdin: str | None = None) -> tuple[int, str, str, dict[str, Any]]:
        """In-process, like the `cli` fixture, but a usage error (no envelope) is reported, not raised."""
        from typer.testing import CliRunner

        from research_engine.cli import app

        result = CliRunner().invoke(app, args, input=stdin, catch_exceptions=False)
        lines = result.stdout.strip().splitlines()
        try:
            envelope = json.loads(lines[-1]) if lines else {}
        except ValueError:
            envelope = {}
        return result.exit_code, result.stdout, result.stderr, envelope

    @staticmethod
    def _fill(skill: str, index: int, word: str, values: dict[str, str]) -> str:
        def sub(m: re.Match[str]) -> str:
            key = m.group(0)[1:-1].replace("-", "_")
            assert key in values, f"{skill} block {index}: the test has no value for {m.group(0)}"
            return values[key]

        return PLACEHOLDER_RE.sub(sub, word)

    def assert_every_block_ran(self) -> None:
        for skill_dir in sorted(SKILLS_DIR.iterdir()):
            count = len(self.blocks(skill_dir.name))
            assert self.ran.get(skill_dir.name, set()) == set(range(count)), (
                f"{skill_dir.name}: blocks run {sorted(self.ran.get(skill_dir.name, set()))} of {count}"
            )


@pytest.fixture
def mini_web(httpserver, monkeypatch):
    """Pages, robots.txt, a SearXNG-shaped search, and recorded OpenAlex / World Bank responses."""
    from werkzeug.wrappers import Response

    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nAllow: /\n", content_type="text/plain"
    )
    for path, (title, text) in PAGES.items():
        html = (
            f"<!doctype html><html lang='en'><head><title>{title}</title></head><body><article>"
            f"<h1>{title}</h1><p>{text}</p></article></body></html>"
        )
        httpserver.expect_request(path).respond_with_data(html, content_type="text/html; charset=utf-8")

    def searxng(request):
        query = request.args.get("q", "")
        hits = [p for sq, (_, q, p) in QUERIES.items() if q == query] or list(PAGES)[:1]
        results = [
            {
                "url": base + p,
                "title": PAGES[p][0],
                "content": PAGES[p][1][:120],
                "engine": "local",
                "engines": ["local"],
                "positions": [i + 1],
                "score": 1.0,
                "category": "general",
            }
            for i, p in enumerate(hits)
        ]
        body = {
            "query": query,
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }
        return Response(json.dumps(body), content_type="application/json")

    httpserver.expect_request("/search").respond_with_handler(searxng)
    apis = shared_path("fixtures", "apis")
    works = (apis / "openalex" / "works_filter_title_search.json").read_text()
    work = (apis / "openalex" / "work_by_doi.json").read_text()
    series = json.loads((apis / "worldbank" / "indicator_two_countries.json").read_text())
    series[0].update(pages=1, total=len(series[1]))  # serve the recorded first page as the whole series
    indicators = [
        {"page": 1, "pages": 1, "per_page": 50, "total": 1},
        [
            {
                "id": "NY.GDP.MKTP.CD",
                "name": "GDP (current US$)",
                "unit": "",
                "source": {"id": "2", "value": "World Development Indicators"},
                "sourceNote": "GDP at purchaser's prices.",
                "sourceOrganization": "World Bank",
                "topics": [],
            }
        ],
    ]
    httpserver.expect_request(re.compile(r"^/works/.+")).respond_with_data(
        work, content_type="application/json"
    )
    httpserver.expect_request("/works").respond_with_data(works, content_type="application/json")
    httpserver.expect_request(re.compile(r"^/v2/countr(y|ies)/.+")).respond_with_json(series)
    httpserver.expect_request(re.compile(r"^/v2/indicators?$")).respond_with_json(indicators)

    # One local server plays every host, so the one-second per-host politeness interval would only
    # measure sleep; the interval is shortened for this test (the client is otherwise untouched).
    from research_engine.net.client import HttpClient

    monkeypatch.setitem(HttpClient.__init__.__kwdefaults__, "per_host_interval", 0.0)
    monkeypatch.setenv("SEARXNG_URL", base)
    monkeypatch.setenv("RESEARCH_ENGINE_SEARCH_ORDER", "searxng")
    monkeypatch.setenv("RESEARCH_ENGINE_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("RESEARCH_ENGINE_OPENALEX_URL", base)
    monkeypatch.setenv("RESEARCH_ENGINE_WORLDBANK_URL", base + "/v2")
    return base


@pytest.mark.slow
def test_every_documented_command_runs_in_order_through_a_whole_run(mini_web, tmp_path):
    agent = Agent()

    # -- the composer: intake and lock ------------------------------------------------------------
    brief_file = tmp_path / "brief.yaml"  # a brief the user already has, named in the request
    brief_file.write_text("objective: How should a Python program choose between threads and asyncio?\n")
    assert agent.run("research", 0, expect=(2,), BRIEF=str(brief_file))["data"]["questions"]
    request = (
        "---\nobjective: How should a Python program choose between threads, processes and asyncio?\n---\n"
    )
    asked = agent.run("research", 1, expect=(2,), BRIEF_AS_FRONT_MATTER_AND_REQUEST=request)["data"]
    assert {q["field"] for q in asked["questions"]} >= {"deliverable", "output_path"}
    brief = (
        "---\nobjective: How should a Python program choose between threads, processes and asyncio?\n"
        f"deliverable: a cited memo\noutput_path: {tmp_path / 'runs'}\ndepth: quick\n"
        "claim_types: [technical, factual]\nrecency: any\n---\n"
    )
    run = agent.run("research", 2, COMPLETE_BRIEF=brief)["data"]["run_root"]
    assert agent.run("research", 3, RUN=run)["data"]["valid"]

    # -- decompose: one sub-question per angle -----------------------------------------------------
    for sq, (text, _, _) in QUERIES.items():
        env = agent.run(
            "research-decompose",
            0,
            RUN=run,
            SUB_QUESTION=text,
            TYPE="technical",
            ANGLE=ANGLES[sq],
            WHAT_A_FULL_ANSWER_CONTAINS="the mechanism and when it matters",
        )
        assert env["data"]["id"] == sq
    listed = agent.run("research-decompose", 1, RUN=run)["data"]["sub_questions"]
    assert {item.get("angle") for item in listed} == set(ANGLES.values())

    # -- select: search, write the candidates with reasons, log ------------------------------------
    found: dict[str, list[dict[str, Any]]] = {}
    for sq, (_, query, _) in QUERIES.items():
        found[sq] = agent.run("research-select", 0, RUN=run, SQ=sq, QUERY=query)["data"]["candidates"]
    agent.run("research-select", 1, RUN=run, SQ="SQ-02", QUERY="chemistry tools language models")
    agent.run("research-select", 2, RUN=run, SQ="SQ-03", KEYWORDS="GDP current")
    for sq, candidates in found.items():
        # By reference: the id each result was printed with, and the agent's judgement; nothing retyped.
        judged = [
            {"ref": c["ref"], "reason": f"the page answers {sq} directly", "source_type": "primary"}
            for c in candidates
        ]
        listed = yaml.safe_dump(judged, default_flow_style=False, sort_keys=False)
        chosen = agent.run("research-select", 3, RUN=run, SQ=sq, CANDIDATES_YAML=listed)["data"]
        assert chosen["chosen"], f"{sq}: nothing chosen"
        found[sq] = chosen["chosen"]

    # -- retrieve: fetch what was chosen, plus the API spine ---------------------------------------
    sources: dict[str, str] = {}
    for sq, chosen in found.items():
        # What to fetch: every round's choices not yet retrieved.
        to_fetch = agent.run("research-retrieve", 0, RUN=run, SQ=sq)["data"]["to_fetch"]
        assert [c["url"] for c in to_fetch] == [c["url"] for c in chosen]
        env = agent.run("research-retrieve", 1, RUN=run, SQ=sq, URL=to_fetch[0]["url"], QUERY=QUERIES[sq][1])
        sources[sq] = env["data"]["source"] if "source" in env["data"] else env["data"]["id"]
    agent.run("research-retrieve", 2, RUN=run, SQ="SQ-02", DOI="10.1073/pnas.1414271111")
    agent.run("research-retrieve", 3, RUN=run, SQ="SQ-03", COUNTRIES="JPN;USA", INDICATOR="NY.GDP.MKTP.CD")

    # -- consolidate: one grounded claim per sub-question, named by span, a tension, a retirement ---
    claims_by_sq = {
        "SQ-01": ("In CPython only one thread executes Python bytecode at a time.", "bytecode at a time"),
        "SQ-02": ("asyncio joined the standard library in Python 3.4 in 2014.", "Python 3.4 in 2014"),
        "SQ-03": (
            "A process pool runs Python code on several cores at once for CPU-bound work.",
            "several cores",
        ),
        "SQ-04": (
            "A coroutine that computes without awaiting blocks the whole asyncio event loop.",
            "blocks the whole event loop",
        ),
    }
    ids = {}
    for sq, (claim, words) in claims_by_sq.items():
        shown = agent.run("research-consolidate", 0, RUN=run, SRC=sources[sq], SUB_QUESTION=QUERIES[sq][0])[
            "data"
        ]
        # The agent reads the sentences by id and names the one that carries the claim.
        (span,) = [
            f"{sources[sq]}#{view['id']}.{sid}"
            for view in shown["passages"]
            for sid, sentence in view["sentences"].items()
            if words in sentence
        ]
        env = agent.run("research-consolidate", 2, RUN=run, SQ=sq, CLAIM=claim, SPAN=span, CONFIDENCE="high")
        ids[sq] = env["data"]["id"]
        assert words in env["data"]["claim"]["evidence"][0]["quote"]
    assert agent.run("research-consolidate", 1, RUN=run, SRC=sources["SQ-01"], PAGE="1")["data"]["passages"]
    tension = agent.run(
        "research-consolidate",
        4,
        RUN=run,
        CLM_A=ids["SQ-01"],
        CLM_B=ids["SQ-04"],
        WHAT_THEY_DISAGREE_ABOUT="whether concurrency without parallelism helps",
    )["data"]["id"]
    agent.run(
        "research-consolidate",
        5,
        RUN=run,
        TENSION=tension,
        HOW_AND_WHY="both hold: threads and asyncio help I/O-bound work, neither helps CPU-bound work",
    )
    extra = agent.run(
        "research-consolidate",
        3,
        RUN=run,
        SQ="SQ-01",
        SRC=sources["SQ-01"],
        CLAIM="Threads help I/O-bound work because the lock is released while waiting.",
        QUOTE="the lock is released while a thread waits on the network or the disk",
        CONFIDENCE="medium",
    )["data"]["id"]
    agent.run("research-consolidate", 6, RUN=run, CLM=extra, WHY="duplicates the sub-question's main claim")
    ledger = agent.run("research-consolidate", 7, RUN=run)["data"]
    assert ledger["counts"]["active"] == 4 and ledger["counts"]["retired"] == 1

    # -- verify: fresh copies, one corroboration search, verdicts, close ---------------------------
    prepared = agent.run("research-verify", 0, RUN=run)["data"]
    assert {row["claim"] for row in prepared["claims"]} == set(ids.values())
    assert all(row["floor"] == "supported" for row in prepared["claims"])
    agent.run("research-verify", 1, CORROBORATION_QUERY=QUERIES["SQ-04"][1])
    for clm in ids.values():
        agent.run(
            "research-verify",
            2,
            RUN=run,
            CLM=clm,
            VERDICT="supported",
            REASON="the fresh copy states it in the same words",
        )
    closed = agent.run("research-verify", 3, RUN=run)["data"]
    assert closed["summary"]["grounding_score"] == 1.0

    # -- control: the critic's gap, closed, then the controller ------------------------------------
    assert agent.run("research-control", 0, RUN=run)["data"]["gaps"] == []
    gap = agent.run(
        "research-control",
        1,
        RUN=run,
        SQ="SQ-04",
        WHAT_IS_MISSING="benchmarks of asyncio under load",
        QUERY_THAT_WOULD_CLOSE_IT="asyncio benchmark CPU-bound event loop",
    )["data"]["id"]
    agent.run(
        "research-control", 2, RUN=run, GAP=gap, WHY="the counter-angle source already states the limit"
    )
    # The critic's answer judgements: SQ-04 first judged unanswered, then answered (the latest counts).
    none = agent.run("research-control", 4, RUN=run, SQ="SQ-04", WHY_NONE_ANSWERS="not read yet")["data"]
    assert none["answering"] == [] and none["considered"] == [ids["SQ-04"]]
    for sq, clm in ids.items():
        agent.run(
            "research-control",
            3,
            RUN=run,
            SQ=sq,
            ANSWERING_CLAIMS=clm,
            WHY_THEY_ANSWER="it states the answer",
        )
    decision = agent.run("research-control", 5, RUN=run)["data"]
    assert decision["action"] == "stop" and decision["stop_reason"] == "criterion-met", decision
    agent.run("research", 3, RUN=run)

    # -- synthesize: the draft cites claims only; check, finish, validate --------------------------
    draft = (
        "# Threads, processes or asyncio\n\n"
        f"In CPython only one thread executes Python bytecode at a time ({ids['SQ-01']}). "
        f"For CPU-bound work a process pool runs Python code on several cores at once ({ids['SQ-03']}).\n\n"
        f"asyncio has been in the standard library since Python 3.4 in 2014 ({ids['SQ-02']}). "
        "A coroutine that "
        f"computes without awaiting blocks the whole event loop ({ids['SQ-04']}).\n"
    )
    sheet = agent.run("research-synthesize", 0, RUN=run, DRAFT_MARKDOWN=draft)["data"]["prose_worksheet"]
    assert sheet["unjudged"] == ["S-01", "S-02", "S-03", "S-04"]
    # -- the prose pass: the verifier judges each sentence against its claims' quotes ----------------
    assert agent.run("research-verify", 4, RUN=run)["data"]["unjudged"] == sheet["unjudged"]
    for sentence in sheet["unjudged"]:
        agent.run(
            "research-verify",
            5,
            RUN=run,
            SENTENCE=sentence,
            VERDICT="supported",
            REASON="the quotes hold it in other words",
        )
    finished = agent.run("research-synthesize", 1, RUN=run)["data"]
    assert Path(finished["result"]).name == "result.md" or finished["result"].endswith("synthesis/result.md")
    assert agent.run("research-synthesize", 2, RUN=run)["data"]["valid"]
    assert (Path(run) / "synthesis" / "result.md").is_file()
    assert not (Path(run) / "work").exists(), "no scratch file: every input went on stdin"

    agent.assert_every_block_ran()


def test_a_leaf_command_that_no_longer_exists_fails_the_runner(tmp_path, monkeypatch):
    """The runner is strict: a documented command the CLI rejects makes the test fail, naming the leaf."""
    skill = tmp_path / "skills" / "research-broken"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: research-broken\n---\n\n```bash\n"
        "research-engine sq remove <SQ> --run <RUN> --json\n```\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.SKILLS_DIR", tmp_path / "skills")
    with pytest.raises(AssertionError, match="research-broken block 0"):
        Agent().run("research-broken", 0, SQ="SQ-01", RUN=str(tmp_path))
