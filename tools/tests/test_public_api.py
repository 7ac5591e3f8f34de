"""The package's small public API drives a run without the CLI, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

from core_testkit import FAST, allow_robots, fast_verifier, page, serve

import research_engine as re_api

SENTENCE = "The asyncio event loop runs one coroutine at a time on a single thread."


def test_a_script_runs_a_cycle_through_the_public_names(httpserver, brief_file, monkeypatch):
    fast_verifier(monkeypatch)
    allow_robots(httpserver)
    url = serve(httpserver, "/asyncio", page("asyncio", SENTENCE, "Tasks wrap coroutines. " * 20))
    settings = re_api.Settings.from_env()
    run = re_api.open_run(re_api.lock_brief(brief_file(depth="quick"), allow_private=True).run_root)

    sq = re_api.add_sub_question(run, "How does the asyncio event loop schedule coroutines?", "technical")
    with re_api.fetch_policy(settings, run).client(**FAST) as client:
        (got,) = re_api.retrieve_pages(run, sq, [re_api.PageRequest(url, query="asyncio loop")], client)
    assert got.ok and got.ref == f"{sq}/SRC-01"

    clm = re_api.add_claim(run, sq, SENTENCE, [got.ref], [SENTENCE])
    prepared = re_api.prepare_verification(run, settings=settings)
    assert [row["floor"] for row in prepared["claims"]] == ["supported"]
    re_api.record_verdict(run, clm, "supported", "the fresh copy holds the quote verbatim")
    assert re_api.close_verification(run)["summary"]["supported"] == 1

    decision = re_api.control(run)
    assert (decision["action"], decision["stop_reason"]) == ("stop", "criterion-met")
    draft = run.root / "work" / "result.md"
    draft.parent.mkdir()
    draft.write_text(f"# Answer\n\nThe loop runs one coroutine at a time on one thread [{clm}].\n")
    assert re_api.check_deliverable(run, draft).ok
    re_api.finish_deliverable(run, draft)
    assert re_api.validate_run(run).ok


def test_every_public_name_is_listed_and_resolves():
    assert set(re_api.__all__) - {"__version__"} == set(re_api._PUBLIC)
    assert all(getattr(re_api, name) is not None for name in re_api.__all__)


def test_errors_carry_their_exit_code():
    error = re_api.ResearchEngineError("nope", code="x")
    assert int(error.exit_code) in {int(code) for code in re_api.ExitCode}


def test_unknown_names_are_attribute_errors():
    try:
        re_api.no_such_thing  # noqa: B018 - the lookup is the test
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("an unknown public name must raise AttributeError")


def test_importing_the_package_loads_no_heavy_library():
    heavy = ("httpx", "yaml", "jsonschema", "lxml", "trafilatura", "typer")
    code = f"import sys, research_engine; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
