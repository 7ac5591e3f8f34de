"""trace: run ids, slugs, the scaffold, artifact paths, atomic writes, the run lock."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from research_engine import trace
from research_engine.errors import BadInput


def test_run_id_has_timestamp_and_slug():
    when = datetime(2026, 11, 21, 9, 5, 7, tzinfo=UTC)
    assert trace.make_run_id("What is the GIL?", when) == "20261121-090507-what-is-the-gil"


def test_slug_of_path_traversal_stays_a_single_segment():
    assert trace.slugify("../../etc") == "etc"
    assert trace.slugify("/etc/passwd") == "etc-passwd"


def test_slug_is_never_empty():
    assert trace.slugify("!!! ... ???") == "research"
    assert trace.slugify("日本語だけ") == "research"


def test_slug_transliterates_accents():
    assert trace.slugify("Économie de la Côte d'Ivoire") == "economie-de-la-cote-d-ivoire"


def test_slug_cuts_on_word_boundary_within_48():
    slug = trace.slugify("word " * 40)
    assert len(slug) <= 48 and not slug.endswith("-")


@given(st.text())
def test_slug_is_always_safe_kebab(text):
    slug = trace.slugify(text)
    assert 1 <= len(slug) <= trace.SLUG_MAX
    assert all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in slug)
    assert "/" not in slug and ".." not in slug and not slug.startswith("-")


def test_scaffold_creates_the_trace_tree(tmp_path):
    run = trace.scaffold(tmp_path / "out", "20261121-000000-x")
    for sub in (
        "decompose",
        "select",
        "retrieve",
        "snapshots",
        "consolidate",
        "verify/evidence",
        "controller",
        "synthesis",
    ):
        assert (run.root / sub).is_dir(), sub


def test_scaffold_never_reuses_an_existing_run(tmp_path):
    first = trace.scaffold(tmp_path, "20261121-000000-x")
    second = trace.scaffold(tmp_path, "20261121-000000-x")
    assert first.root != second.root
    assert second.root.name == "20261121-000000-x-2"


def test_scaffold_reports_an_output_path_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(BadInput) as err:
        trace.scaffold(blocker / "runs", "20261121-000000-x")
    assert err.value.code == "output-path-unwritable"
    assert err.value.field == "output_path"


def test_scaffold_rejects_a_malformed_run_id(tmp_path):
    with pytest.raises(BadInput):
        trace.scaffold(tmp_path, "../escape")


def test_artifact_paths_follow_the_design(tmp_path):
    root = tmp_path / "r"
    p = lambda *a, **k: trace.artifact_path(root, *a, **k).relative_to(root).as_posix()  # noqa: E731
    assert p("brief") == "brief.md"
    assert p("run") == "run.json"
    assert p("sub_questions") == "decompose/sub-questions.md"
    assert p("selection", sq="SQ-03") == "select/SQ-03.selection.md"
    assert p("source", sq="SQ-01", src="SRC-02") == "retrieve/SQ-01/SRC-02.md"
    assert p("snapshot", digest="a" * 64) == "snapshots/" + "a" * 64
    assert p("claims_log") == "consolidate/claims.jsonl"
    assert p("draft") == "consolidate/synthesis.draft.md"
    assert p("contestation") == "verify/contestation.md"
    assert p("contestation_archive", cycle=1) == "verify/contestation.cycle-01.md"
    assert p("loop_log") == "controller/loop-log.md"
    assert p("result") == "synthesis/result.md"


@pytest.mark.parametrize("keys", [{"sq": "../x"}, {"sq": "SQ-01/../../"}, {"sq": "SQ-1"}])
def test_artifact_keys_cannot_escape_the_run(tmp_path, keys):
    with pytest.raises(BadInput):
        trace.artifact_path(tmp_path, "selection", **keys)


def test_unknown_artifact_is_an_error(tmp_path):
    with pytest.raises(BadInput):
        trace.artifact_path(tmp_path, "nonsense")


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "d" / "f.txt"
    trace.atomic_write_text(target, "one")
    trace.atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["f.txt"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    trace.atomic_write_text(target, "old")

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        trace.atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_run_lock_serializes_read_modify_write(tmp_path):
    run = trace.scaffold(tmp_path, "20261121-000000-x")
    counter = run.root / "counter.txt"
    counter.write_text("0")

    def bump():
        for _ in range(25):
            with run.lock():
                value = int(counter.read_text())
                trace.atomic_write_text(counter, str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "100"


def test_open_run_refuses_a_directory_that_is_not_a_run(tmp_path):
    with pytest.raises(BadInput) as err:
        trace.open_run(tmp_path)
    assert err.value.code == "unknown-run"
    with pytest.raises(BadInput):
        trace.open_run(tmp_path / "missing")


def test_iso_is_utc_with_z():
    stamp = trace.iso(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert stamp == "2026-01-02T03:04:05Z"
    assert Path  # keep import used


def test_atomic_write_honours_the_umask_not_mkstemp_0600(tmp_path):
    mask = os.umask(0)
    os.umask(mask)
    target = tmp_path / "f.txt"
    trace.atomic_write_text(target, "x")
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
    assert target.stat().st_mode & 0o044, "people must be able to read artifacts"
