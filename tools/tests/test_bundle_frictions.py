"""The small frictions a capable model met following the skills literally (issue 31), each pinned: retrieve
fetches the choices of every selection round; intake proposes claim types that fit the question and asks
about them; the selection log states each reason once; `--run` commands take the run's allowed hosts."""

from __future__ import annotations

import yaml
from _bundle import SKILLS_DIR, bash_blocks, block_invocations

from research_engine import brief, selection


def test_what_to_fetch_is_every_rounds_choice_not_yet_retrieved(cli, locked_run, tmp_path):
    from helpers_core import add_source, add_sq

    sq = add_sq(locked_run, "How do Python threads share memory?", "technical")

    def log_round(url: str, title: str) -> None:
        entry = {"url": url, "title": title, "snippet": f"{title}: how Python threads share memory.",
                 "reason": "documentation", "source_type": "primary", "verdict_hint": "choose"}  # fmt: skip
        path = tmp_path / "candidates.yaml"
        path.write_text(yaml.safe_dump([entry]), encoding="utf-8")
        code, _, _, env = cli(
            "select", "log", "--run", locked_run.root, "--sq", sq, "--candidates", path, "--json"
        )
        assert code == 0 and env["data"]["chosen"], env

    log_round("https://docs.example.org/threading.html", "Python threads and shared memory")
    log_round("https://docs.example.org/faq/threads.html", "FAQ: Python threads and shared memory")
    code, _, _, env = cli("select", "chosen", "--run", locked_run.root, "--sq", sq, "--json")
    assert code == 0
    assert [(c["round"], c["url"]) for c in env["data"]["to_fetch"]] == [
        (1, "https://docs.example.org/threading.html"),
        (2, "https://docs.example.org/faq/threads.html"),
    ]
    add_source(
        locked_run,
        sq,
        "Threads share the memory of their process.",
        url="https://docs.example.org/threading.html",
    )
    pending, done = selection.to_fetch(locked_run, sq)
    assert [c["url"] for c in pending] == ["https://docs.example.org/faq/threads.html"]
    assert list(done.values()) == ["SQ-01/SRC-01"]


def test_intake_proposes_claim_types_that_fit_the_question_and_asks_about_them():
    question = (
        "What new ways of handling multiple exceptions did Python introduce, and how does except* differ "
        "from a plain except clause?"
    )
    report = brief.check_fields({"objective": question})
    asked = {q["field"]: q for q in report.questions}
    assert "claim_types" in asked, [q["field"] for q in report.questions]
    assert asked["claim_types"]["proposed"] == ["technical", "factual"]
    assert report.fields["claim_types"] == ["technical", "factual"]  # locked as proposed when unanswered
    figures = brief.check_fields({"objective": "How large was Japan's GDP in 2020?"})
    assert figures.fields["claim_types"][0] == "quantitative"
    plain = brief.check_fields({"objective": "Why are there two high tides a day?"})
    assert plain.fields["claim_types"] == ["factual", "quantitative"]  # nothing points elsewhere: the default
    stated = brief.check_fields({"objective": question, "claim_types": ["regulatory"]})
    assert stated.fields["claim_types"] == ["regulatory"] and "claim_types" not in {
        q["field"] for q in stated.questions
    }


def test_the_selection_log_states_each_reason_once_with_one_full_stop(cli, locked_run, tmp_path):
    from helpers_core import add_sq

    sq = add_sq(locked_run, "How do Python threads share memory?", "technical")
    entries = [
        {"url": "https://docs.example.org/a.html", "title": "Python threads", "snippet": "threads memory",
         "reason": "Off topic: a page about processes.", "verdict_hint": "reject"},
        {"url": "https://docs.example.org/b.html", "title": "Python threads share memory", "snippet": "x",
         "reason": "The reference page.", "verdict_hint": "choose"},
    ]  # fmt: skip
    path = tmp_path / "candidates.yaml"
    path.write_text(yaml.safe_dump(entries), encoding="utf-8")
    code, _, _, env = cli(
        "select", "log", "--run", locked_run.root, "--sq", sq, "--candidates", path, "--json"
    )
    assert code == 0, env
    body = locked_run.path("selection", sq=sq).read_text(encoding="utf-8").split("\n---\n", 1)[1]
    assert body.count("Off topic: a page about processes") == 1
    assert body.count("The reference page") == 1
    assert ".." not in body


def test_the_leaves_say_run_commands_take_the_runs_allowed_hosts_and_never_add_one():
    for skill in SKILLS_DIR.iterdir():
        text = (skill / "SKILL.md").read_text(encoding="utf-8")
        for block in bash_blocks(text):
            for inv in block_invocations(block):
                assert "--allow-host" not in inv.line, f"{skill.name}: {inv.line}"
    for name in ("research", "research-select", "research-retrieve"):
        text = " ".join((SKILLS_DIR / name / "SKILL.md").read_text(encoding="utf-8").split())
        assert "given `--run` reach" in text and "`--allow-host`" in text, name
