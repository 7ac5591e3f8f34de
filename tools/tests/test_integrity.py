"""What a run keeps is what it says it keeps: content-addressed files are checked when read back, and a
machine that refuses a write (full disk, quota, read-only) is a named condition that loses nothing.

The tampering tests alter copies of the committed example (a real recorded run over SQLite's documentation).
The full-disk tests run on a real small tmpfs where this machine lets the test mount one, and inject the
operating system's ENOSPC at each write site everywhere else.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from research_engine.errors import ExitCode

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = next(p for p in sorted(EXAMPLES.iterdir()) if (p / "cassette" / "index.json").is_file())


@pytest.fixture
def example_copy(tmp_path) -> Path:
    """A copy of the committed example run (with its cassette), under its own run id."""
    target = tmp_path / "recorded" / EXAMPLE.name
    shutil.copytree(EXAMPLE, target)
    return target


def _alter(path: Path) -> str:
    """Change one byte of a file; returns the sha256 its bytes now have."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x20
    path.write_bytes(bytes(data))
    return hashlib.sha256(data).hexdigest()


def _named_by(run: Path, pattern: str) -> set[str]:
    """Snapshot digests that the artifacts matching `pattern` name."""
    found: set[str] = set()
    for path in run.glob(pattern):
        found.update(m.decode() for m in _SNAPSHOT.findall(path.read_bytes()))
    return found


_SNAPSHOT = __import__("re").compile(rb"snapshots/([0-9a-f]{64})")


# ------------------------------------------------------------------------------------- content-addressed


def test_replay_refuses_an_altered_cassette_body_before_any_run_directory_exists(cli, example_copy, tmp_path):
    body = sorted((example_copy / "cassette" / "bodies").iterdir())[0]
    actual = _alter(body)
    out = tmp_path / "out"
    code, _, _, env = cli(
        "run",
        example_copy / "brief.md",
        "--replay",
        example_copy / "cassette",
        "--output-path",
        out,
        "--json",
    )
    assert code == ExitCode.BAD_INPUT
    error = env["errors"][0]
    assert error["code"] == "digest-mismatch"
    assert str(body) in error["message"] and body.name in error["message"] and actual in error["message"]
    assert not out.exists() or not any(out.iterdir())  # refused before the run was created


def test_replay_command_and_validate_report_an_altered_cassette_body(cli, example_copy):
    body = sorted((example_copy / "cassette" / "bodies").iterdir())[-1]
    _alter(body)
    code, _, _, env = cli("replay", example_copy, "--json")
    assert code == ExitCode.BAD_INPUT and env["errors"][0]["code"] == "digest-mismatch"
    code, _, _, env = cli("validate", example_copy, "--json")
    assert code == ExitCode.CHECK_FAILED
    assert {"file": f"cassette/bodies/{body.name}", "code": "digest-mismatch"} in [
        {"file": p["file"], "code": p["code"]} for p in env["errors"]
    ]


def test_a_cassette_index_naming_a_path_instead_of_a_digest_is_refused(cli, example_copy, tmp_path):
    index_path = example_copy / "cassette" / "index.json"
    index = json.loads(index_path.read_text())
    index["exchanges"][0]["body_sha256"] = "../../brief.md"
    index_path.write_text(json.dumps(index))
    code, _, _, env = cli(
        "run",
        example_copy / "brief.md",
        "--replay",
        example_copy / "cassette",
        "--output-path",
        tmp_path,
        "--json",
    )
    assert code == ExitCode.BAD_INPUT and env["errors"][0]["code"] == "broken-cassette"


@pytest.mark.parametrize(
    "referrer",
    [
        "select/*.candidates.json",  # a search backend's response
        "retrieve/*/*.md",  # a fetched page
        "verify/evidence/*.md",  # the verifier's own copy
    ],
)
def test_validate_reports_an_altered_snapshot_whichever_artifact_names_it(cli, example_copy, referrer):
    digest = sorted(_named_by(example_copy, referrer))[0]
    _alter(example_copy / "snapshots" / digest)
    code, _, _, env = cli("validate", example_copy, "--json")
    assert code == ExitCode.CHECK_FAILED
    assert ("snapshots/" + digest, "digest-mismatch") in [(p.get("file"), p["code"]) for p in env["errors"]]


def test_a_snapshot_named_by_a_search_response_must_exist(cli, example_copy):
    only_searches = _named_by(example_copy, "select/*.candidates.json") - _named_by(
        example_copy, "retrieve/*/*.md"
    )
    digest = sorted(only_searches)[0]
    (example_copy / "snapshots" / digest).unlink()
    code, _, _, env = cli("validate", example_copy, "--json")
    assert code == ExitCode.CHECK_FAILED
    assert any(digest in p["message"] and p["file"].startswith("select/") for p in env["errors"])


def test_a_snapshot_no_artifact_names_is_a_warning_and_the_run_stays_valid(cli, example_copy):
    stray = b"bytes nobody cites"
    digest = hashlib.sha256(stray).hexdigest()
    (example_copy / "snapshots" / digest).write_bytes(stray)
    code, _, _, env = cli("validate", example_copy, "--json")
    problems = [p for p in env["errors"] if p["code"] != "cross-reference" or "run_id" not in p["message"]]
    assert code == ExitCode.OK, problems
    assert [(w["file"], w["code"]) for w in env["warnings"]] == [(f"snapshots/{digest}", "stray")]


def test_storing_a_snapshot_again_replaces_an_altered_copy(locked_run):
    from research_engine.retrieve import store_snapshot

    body = b"<html><body><p>the bytes that were fetched</p></body></html>"
    digest = hashlib.sha256(body).hexdigest()
    path = store_snapshot(locked_run, body, digest)
    _alter(path)
    store_snapshot(locked_run, body, digest)
    assert path.read_bytes() == body


# ------------------------------------------------------------------------------------------- storage


@pytest.fixture
def small_fs(tmp_path):
    """A real tmpfs of 8 MiB mounted for the test; skipped where the machine does not allow a mount."""
    mount_point = tmp_path / "fs"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount_point)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("this machine does not let the test mount a tmpfs (the injected-error tests still run)")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, check=False)


def _fill(fs: Path, leave: int = 0) -> Path:
    """Take the file system's free space, leaving about `leave` bytes; returns the filler (delete to free)."""
    stat = os.statvfs(fs)
    filler = fs / "filler"
    with open(filler, "ab") as fh:
        try:
            fh.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def _replayed_run(cli, out: Path) -> Path:
    code, _, _, env = cli(
        "run", EXAMPLE / "brief.md", "--replay", EXAMPLE / "cassette", "--output-path", out, "--json"
    )
    assert code == ExitCode.OK, env
    return Path(env["data"]["run_root"])


def _assert_storage_failure(code: int, env: dict, path_inside: Path) -> None:
    assert code == ExitCode.STORAGE_FAILED
    error = env["errors"][0]
    assert error["code"] == "no-space"
    assert str(path_inside) in error["message"] and "half-written" in error["message"]


def test_a_run_on_a_full_disk_exits_74_naming_the_path_and_resumes_once_space_is_back(cli, small_fs):
    filler = _fill(small_fs, leave=256 * 1024)  # room to start the run, not to finish it
    code, _, _, env = cli(
        "run", EXAMPLE / "brief.md", "--replay", EXAMPLE / "cassette", "--output-path", small_fs, "--json"
    )
    run_dir = next(p for p in small_fs.iterdir() if p.is_dir())
    _assert_storage_failure(code, env, run_dir)
    assert f"run --resume {run_dir}" in env["errors"][0]["message"]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and record["stop_reason"] == "failed:no-space"
    assert cli("validate", run_dir)[0] == ExitCode.OK  # nothing half-written

    filler.unlink()
    code, _, _, env = cli("run", "--resume", run_dir, "--json")
    assert code == ExitCode.OK, env
    assert (run_dir / "synthesis" / "result.md").is_file()
    assert cli("validate", run_dir)[0] == ExitCode.OK


@pytest.fixture
def page_server():
    """A real SQLite documentation page (the example's own snapshot of faq.html) served on loopback."""
    import frontmatter
    from pytest_httpserver import HTTPServer

    meta = frontmatter.load(str(EXAMPLE / "retrieve" / "SQ-01" / "SRC-01.md")).metadata
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    server.expect_request("/robots.txt").respond_with_data("", status=404)
    server.expect_request("/faq.html").respond_with_data(
        (EXAMPLE / meta["snapshot"]).read_bytes(), content_type="text/html; charset=utf-8"
    )
    yield server
    server.stop()


def test_fetch_claims_add_and_report_finish_on_a_full_disk_exit_74_and_succeed_again(
    cli, small_fs, page_server
):
    run_dir = _replayed_run(cli, small_fs)
    url = page_server.url_for("/faq.html")
    host = f"127.0.0.1:{page_server.port}"

    filler = _fill(small_fs)
    code, _, _, env = cli("fetch", url, "--run", run_dir, "--sq", "SQ-01", "--allow-host", host, "--json")
    _assert_storage_failure(code, env, run_dir)
    filler.unlink()
    code, _, _, env = cli("fetch", url, "--run", run_dir, "--sq", "SQ-01", "--allow-host", host, "--json")
    assert code == ExitCode.OK, env
    source = env["data"]["source"]

    quote = "A column declared INTEGER PRIMARY KEY will autoincrement."
    claim_args = ("claims", "add", "--run", run_dir, "--sq", "SQ-01", "--source", source, "--quote", quote)
    filler = _fill(small_fs)
    code, _, _, env = cli(*claim_args, quote, "--json")
    _assert_storage_failure(code, env, run_dir)
    filler.unlink()
    code, _, _, env = cli(*claim_args, quote, "--json")
    assert code == ExitCode.OK, env
    code, _, _, env = cli("claims", "list", "--run", run_dir, "--json")
    stated = [c for c in env["data"]["claims"] if c["text"] == quote]
    assert len(stated) == 1  # the failed attempt left no record behind

    draft = small_fs / "draft.md"
    result = (run_dir / "synthesis" / "result.md").read_text()
    draft.write_text(result.split("\n---\n", 1)[1] if result.startswith("---\n") else result)
    (run_dir / "synthesis" / "result.md").unlink()
    filler = _fill(small_fs)
    code, _, _, env = cli("report", "finish", "--run", run_dir, draft, "--json")
    assert code == ExitCode.STORAGE_FAILED and env["errors"][0]["code"] == "no-space"
    filler.unlink()
    code, _, _, env = cli("report", "finish", "--run", run_dir, draft, "--json")
    assert code == ExitCode.OK, env
    assert cli("validate", run_dir)[0] == ExitCode.OK


def _failing(real, *, errno_: int = errno.ENOSPC, when=lambda *a: True):
    def fail(*args, **kwargs):
        if when(*args):
            raise OSError(errno_, os.strerror(errno_))
        return real(*args, **kwargs)

    return fail


def test_an_artifact_write_the_disk_refuses_keeps_the_old_file_and_leaves_no_temporary(monkeypatch, tmp_path):
    from research_engine.errors import StorageFailed
    from research_engine.trace import atomic_write_text

    target = tmp_path / "run.json"
    atomic_write_text(target, "old")
    monkeypatch.setattr(os, "fsync", _failing(os.fsync))
    with pytest.raises(StorageFailed) as caught:
        atomic_write_text(target, "new")
    assert caught.value.code == "no-space" and str(target) in caught.value.message
    assert caught.value.exit_code == ExitCode.STORAGE_FAILED
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


@pytest.mark.parametrize("refused", [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EMFILE])
def test_a_ledger_append_the_disk_refuses_half_way_takes_the_record_back_out(monkeypatch, tmp_path, refused):
    from research_engine import eventlog
    from research_engine.errors import StorageFailed

    log_path = tmp_path / "claims.jsonl"
    eventlog.append(log_path, [{"id": "CLM-01"}])
    before = log_path.read_bytes()
    real_write = os.write

    def half_then_fail(fd, data):
        real_write(fd, bytes(data)[: len(data) // 2])  # a short write, as a full disk leaves one
        raise OSError(refused, os.strerror(refused))

    monkeypatch.setattr(os, "write", half_then_fail)
    with pytest.raises(StorageFailed) as caught:
        eventlog.append(log_path, [{"id": "CLM-02", "text": "x" * 200}])
    monkeypatch.undo()
    assert str(log_path) in caught.value.message and caught.value.exit_code == ExitCode.STORAGE_FAILED
    assert log_path.read_bytes() == before
    eventlog.append(log_path, [{"id": "CLM-02"}])
    assert [r["id"] for r in eventlog.read(log_path).records] == ["CLM-01", "CLM-02"]


def test_claims_add_on_a_refused_write_exits_74_with_no_traceback_and_no_record(cli, monkeypatch, locked_run):
    from research_engine import documents, retrieve

    text = "SQLite allows multiple readers to work at the same time as a single writer in WAL mode."
    doc = documents.Document(
        kind="web",
        requested_url="https://sqlite.org/wal.html",
        final_url="https://sqlite.org/wal.html",
        status=200,
        retrieved_at="2026-11-26T00:00:00Z",
        body=text.encode(),
        passages=documents.number_passages([("paragraph", text)]),
    )
    from research_engine import decompose

    decompose.add(locked_run, "How does WAL let readers and writers work together?", "factual")
    ref = retrieve.record(locked_run, "SQ-01", doc)
    args = (
        "claims",
        "add",
        "--run",
        locked_run.root,
        "--sq",
        "SQ-01",
        "--source",
        ref,
        "--quote",
        text,
        text,
    )
    monkeypatch.setattr(os, "fsync", _failing(os.fsync))
    code, out, err, env = cli(*args, "--json")
    monkeypatch.undo()
    assert code == ExitCode.STORAGE_FAILED and env["errors"][0]["code"] == "no-space"
    assert "Traceback" not in out + err
    assert cli(*args)[0] == ExitCode.OK
    code, _, _, env = cli("claims", "list", "--run", locked_run.root, "--json")
    assert [c["text"] for c in env["data"]["claims"]] == [text]
