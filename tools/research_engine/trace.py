"""The run directory: run id and slug, scaffold, artifact paths, atomic writes, the run lock.

This module owns the trace tree of DESIGN.md section 3. It never decides what goes
into an artifact; it only knows where each one lives and how to write it safely.

- `make_run_id` / `slugify`: `YYYYMMDD-HHMMSS-<slug>`; the slug is lowercase ASCII
  kebab case, at most 48 characters, never empty, and can never contain a path
  separator or a dot segment, so it cannot escape the output directory.
- `artifact_path`: the one function that knows every artifact's path.
- `atomic_write_bytes` / `atomic_write_text`: temp file in the same directory,
  fsync, rename, fsync of the directory. A reader sees the old file or the new one.
- `Run.lock()`: a per-run inter-process lock (a lock file in the run root), so
  concurrent tool calls serialize their read-modify-write cycles.
- `acquire_writer(run)`: the run's writer lock, held by the one process that drives a
  run (`run`, `run --resume`) for as long as it drives it. A second writer is refused
  (`RunBusy`, exit 75), and so is every write (`Run.lock()`) by another process while it
  is held. It is an advisory `flock` on `.state/writer.lock`, which the kernel drops
  when the holder dies, however it dies (kill -9 included): a stale lock never blocks a
  resume. The file's content (pid, host, since, command) only names the holder.
- `Run.path()` refuses a path that passes through a symbolic link below the run
  directory (a `retrieve/` linked elsewhere would make every write land outside the
  run); `tree_problems` lists such links for `validate`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import stat
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from research_engine import bounded, libraries
from research_engine.errors import BadInput, RunBusy, storage_failure

SLUG_MAX = 48
RUN_ID_RE = re.compile(r"^\d{8}-\d{6}-[a-z0-9]+(?:-[a-z0-9]+)*$")

# Directories created by the scaffold (DESIGN.md section 3).
SCAFFOLD_DIRS = (
    "decompose",
    "select",
    "retrieve",
    "snapshots",
    "consolidate",
    "verify",
    "verify/evidence",
    "controller",
    "synthesis",
    ".state",
)

LOCK_NAME = ".lock"
WRITER_LOCK = (".state", "writer.lock")  # the writer lock, below the run root
WRITER_WAIT = 1.0  # seconds a new writer retries while a short `Run.lock()` check holds the file


def _default_file_mode() -> int:
    # mkstemp creates 0600 files; artifacts are meant to be read by people, so honour the umask instead.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _default_file_mode()


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(dt: datetime | None = None) -> str:
    """RFC 3339 UTC timestamp with a Z suffix, second precision."""
    return (dt or utc_now()).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def slugify(text: str, max_len: int = SLUG_MAX) -> str:
    """Lowercase ASCII kebab form of `text`, at most `max_len` characters, never empty.

    Non-ASCII letters are transliterated where Unicode decomposition allows
    (é -> e); everything that is not [a-z0-9] becomes a separator. Dots and
    slashes therefore never survive, which is what keeps `../../etc` inside the
    output directory (it becomes `etc`).
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            if not slug:  # a single overlong word: cut it
                slug = word[:max_len]
            break
        slug = candidate
    return slug or "research"


def make_run_id(objective: str, now: datetime | None = None) -> str:
    stamp = (now or utc_now()).astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{slugify(objective)}"


def fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems refuse O_RDONLY on dirs
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see either the old or the new file.

    A write the machine refuses (disk full, quota, read-only, no permission) is `StorageFailed` naming the
    path; the old file, if any, is untouched."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        _raise_storage_failure(exc, "writing", path)
        raise
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _raise_storage_failure(exc, "writing", path)
        raise
    fsync_dir(path.parent)


def _raise_storage_failure(exc: BaseException, operation: str, path: Path) -> None:
    """Raise the StorageFailed `exc` stands for, if the machine's storage explains it; else return."""
    failure = storage_failure(exc, operation, path)
    if failure is not None:
        raise failure from exc


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _valid_id(kind: str, value: str | None) -> str:
    pattern = {
        "sq": r"SQ-[0-9]{2,}",
        "src": r"SRC-[0-9]{2,}",
        "cycle": r"[0-9]{2,}",
        "digest": r"[0-9a-f]{64}",
        "name": r"[A-Za-z0-9][A-Za-z0-9._-]*",
    }[kind]
    # The length cap keeps every key a legal file name (no ENAMETOOLONG from an absurd id).
    if value is None or len(value) > 64 or not re.fullmatch(pattern, value):
        shown = value if value is None or len(value) <= 40 else value[:40] + "..."
        raise BadInput(f"invalid {kind} {shown!r} for an artifact path", code="bad-artifact-key")
    return value


def artifact_path(
    root: Path,
    artifact: str,
    *,
    sq: str | None = None,
    src: str | None = None,
    cycle: int | None = None,
    digest: str | None = None,
    name: str | None = None,
) -> Path:
    """The one function that knows where every artifact of a run lives.

    Keys are validated, so no argument can point outside the run directory.
    """
    root = Path(root)
    match artifact:
        case "brief":
            return root / "brief.md"
        case "run":
            return root / "run.json"
        case "sub_questions":
            return root / "decompose" / "sub-questions.md"
        case "selection":
            return root / "select" / f"{_valid_id('sq', sq)}.selection.md"
        case "candidates":  # raw search results kept for the trust log
            return root / "select" / f"{_valid_id('sq', sq)}.candidates.json"
        case "retrieve_dir":
            return root / "retrieve" / _valid_id("sq", sq)
        case "source":
            return root / "retrieve" / _valid_id("sq", sq) / f"{_valid_id('src', src)}.md"
        case "snapshots_dir":
            return root / "snapshots"
        case "snapshot":
            return root / "snapshots" / _valid_id("digest", digest)
        case "claims_log":  # the claims ledger: an append-only log of ledger events, one JSON object a line
            return root / "consolidate" / "claims.jsonl"
        case "draft":  # the ledger rendered for people (claims.draft), as of a stated number of log records
            return root / "consolidate" / "synthesis.draft.md"
        case "worksheet":
            return root / "verify" / "worksheet.md"
        case "contestation":
            return root / "verify" / "contestation.md"
        case "contestation_archive":
            if cycle is None or cycle < 1:
                raise BadInput(f"invalid cycle {cycle!r}", code="bad-artifact-key")
            return root / "verify" / f"contestation.cycle-{cycle:02d}.md"
        case "evidence_dir":
            return root / "verify" / "evidence"
        case "evidence":
            return root / "verify" / "evidence" / f"{_valid_id('sq', sq)}-{_valid_id('src', src)}.md"
        case "loop_log":
            return root / "controller" / "loop-log.md"
        case "gaps":  # the completeness critic's named gaps
            return root / "controller" / "gaps.md"
        case "answers":  # the completeness critic's judgements of which claims answer which sub-question
            return root / "controller" / "answers.md"
        case "result":
            return root / "synthesis" / "result.md"
        case "result_draft":  # the deliverable as the model wrote it, before `report finish`
            return root / "synthesis" / "draft.md"
        case "support":  # each sentence of result.md, the claims behind it and its verdicts (support_record)
            return root / "synthesis" / "support.json"
        case "prose_worksheet":  # the draft's sentences for the verifier to judge (prose_review)
            return root / "verify" / "prose.md"
        case "view":
            return root / "view.html"
        case "event_log":  # what `run` reported as it went (engine.progress), one logfmt line each
            return root / ".state" / "events.log"
        case "view_pdf":  # the same page printed (`view --pdf`)
            return root / "view.pdf"
        # Inputs an agent writes for a tool (candidates files, deliverable drafts); never artifacts.
        case "work_dir":
            return root / "work"
        case "cassette_dir":  # recorded HTTP exchanges (engine.cassette): index.json + bodies/
            return root / "cassette"
        case "model_exchanges":  # model requests and replies, kept with `run -v` (engine.model_exchange)
            return root / "model"
        case "state":
            return root / ".state" / f"{_valid_id('name', name)}.json"
        case "spend_ledger":  # a headless run's spend, appended as it happens (engine.metering)
            return root / ".state" / "spend.jsonl"
        case "lock":
            return root / LOCK_NAME
        case "writer_lock":
            return root.joinpath(*WRITER_LOCK)
    raise BadInput(f"unknown artifact {artifact!r}", code="bad-artifact-key")


@dataclass(frozen=True)
class Run:
    """A handle on one run directory."""

    root: Path

    @property
    def run_id(self) -> str:
        return self.root.name

    def path(self, artifact: str, **keys: object) -> Path:
        """The artifact's path; refused (BadInput) when it would pass through a symbolic link below the
        run directory, since reading or writing there would leave the run."""
        target = artifact_path(self.root, artifact, **keys)  # type: ignore[arg-type]
        check_inside(self.root, target)
        return target

    @contextlib.contextmanager
    def lock(self, timeout: float = 120.0) -> Iterator[None]:
        """Serialize read-modify-write cycles across processes (and threads). Refused (RunBusy) while
        another process holds the run's writer lock: a run has one writer."""
        refuse_if_other_writer(self)
        filelock = libraries.filelock()
        lock = filelock.FileLock(str(self.path("lock")), timeout=timeout, is_singleton=True)
        try:
            with lock:
                yield
        except filelock.Timeout as exc:
            raise BadInput(
                f"run {self.root} is locked by another process for more than {timeout:.0f}s",
                code="run-locked",
            ) from exc

    def write_text(self, artifact: str, text: str, **keys: object) -> Path:
        target = self.path(artifact, **keys)
        atomic_write_text(target, text)
        return target

    def relative(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.root.resolve()).as_posix()


# ----------------------------------------------------------------------------- symbolic links


def check_inside(root: Path, target: Path) -> None:
    """Refuse `target` when a component of it below `root` is a symbolic link (or it is not below root).

    Components that do not exist yet are fine: they will be created as directories or files here.
    """
    try:
        rel = Path(target).relative_to(root)
    except ValueError as exc:
        raise BadInput(f"{target} is outside the run {root}", code="outside-run") from exc
    current = Path(root)
    for part in rel.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _path_error(current, exc) from exc
        if stat.S_ISLNK(mode):
            raise BadInput(
                f"refusing {current.relative_to(root).as_posix()} in run {root.name}: it is a symbolic link "
                f"(to {os.readlink(current)}); a run's files and directories must be inside the run",
                code="symlink-in-run",
            )


def _path_error(path: Path, exc: OSError) -> BadInput:
    if exc.errno == errno.ENAMETOOLONG:
        return BadInput(f"path too long for the file system: {str(path)[:120]}...", code="path-too-long")
    return BadInput(f"cannot use {path}: {exc.strerror or exc}", code="unreadable-path")


def tree_problems(root: Path) -> list[tuple[str, str]]:
    """(relative path, why) for every symbolic link inside the run directory and every path that resolves
    outside it; `validate` reports them. Links are not followed."""
    root = Path(root)
    real_root = root.resolve()
    out: list[tuple[str, str]] = []
    for directory, dirs, files in os.walk(root, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(directory) / name
            if not path.is_symlink():
                continue
            rel = path.relative_to(root).as_posix()
            resolved = path.resolve()
            where = "outside the run" if not resolved.is_relative_to(real_root) else "inside the run"
            out.append((rel, f"{rel} is a symbolic link to {os.readlink(path)} ({where}); tools refuse it"))
    return sorted(out)


# ------------------------------------------------------------------------------ the writer lock

_HELD_WRITERS: dict[str, WriterLock] = {}  # run root -> the writer lock this process holds


@dataclass
class WriterLock:
    """The run's writer lock, held by this process until `release` (see the module docstring)."""

    run: Run
    fd: int | None

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        _HELD_WRITERS.pop(str(self.run.root), None)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # no holder named any more
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(fd: int) -> str:
    """Who holds the writer lock, as its file names it (best effort)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or not info.get("pid"):
        return "another process"
    return (
        f"process {info.get('pid')} on {info.get('host', '?')} ({info.get('command', 'a writer')}, "
        f"since {info.get('since', '?')})"
    )


def _busy(run: Run, fd: int) -> RunBusy:
    return RunBusy(
        f"run {run.run_id} is busy: {_holder(fd)} is writing it; try again when it has ended",
        data={"run": str(run.root)},
    )


def acquire_writer(run: Run, command: str = "run", *, wait: float = WRITER_WAIT) -> WriterLock:
    """Take the run's writer lock for this process, or raise RunBusy naming the live holder.

    Reentrant within a process (the same lock comes back). `wait` covers the instants in which another
    command's `Run.lock()` checks the file with a shared lock; a real writer holds it far longer."""
    held = _HELD_WRITERS.get(str(run.root))
    if held is not None and held.fd is not None:
        return held
    path = run.path("writer_lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, _FILE_MODE)
    except OSError as exc:
        raise _path_error(path, exc) from exc
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                error = _busy(run, fd)
                os.close(fd)
                raise error from None
            time.sleep(0.02)
    info = {"pid": os.getpid(), "host": os.uname().nodename, "since": iso(), "command": command}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
    os.fsync(fd)
    lock = WriterLock(run, fd)
    _HELD_WRITERS[str(run.root)] = lock
    return lock


def refuse_if_other_writer(run: Run) -> None:
    """RunBusy when another process holds the run's writer lock; nothing when this process holds it, when
    nobody does, or when the run has never had a writer (the file is not created here)."""
    held = _HELD_WRITERS.get(str(run.root))
    if held is not None and held.fd is not None:
        return
    path = artifact_path(run.root, "writer_lock")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _path_error(path, exc) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(run, fd) from None
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def open_run(path: str | os.PathLike[str]) -> Run:
    """Open an existing run directory, or fail with a clear message."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise BadInput(f"no run directory at {root}", code="unknown-run", field="run")
    if not (root / "brief.md").is_file() and not (root / "run.json").is_file():
        raise BadInput(
            f"{root} is not a run directory (no brief.md or run.json)", code="unknown-run", field="run"
        )
    _check_run_record(root / "run.json")
    return Run(root.resolve())


def _check_run_record(path: Path) -> None:
    """A run.json that is there must be a JSON object: a torn or hand-mangled record stops every command
    (a command that went on would write new artifacts into a run nothing can read any more)."""

    if not path.exists():
        return
    try:
        record = bounded.load_json(bounded.read_bytes(path), str(path))
    except BadInput as exc:
        if exc.code in ("input-too-large", "path-too-long"):
            raise
        raise BadInput(exc.message, code="malformed-run-json", field="run") from exc
    if not isinstance(record, dict):
        raise BadInput(f"{path} is not a JSON object", code="malformed-run-json", field="run")


def scaffold(output_dir: str | os.PathLike[str], run_id: str) -> Run:
    """Create the trace tree for a new run under `output_dir` and return it.

    If a run with the same id already exists (two runs in the same second), a
    numeric suffix keeps both; an existing run is never reused.
    """
    if not RUN_ID_RE.match(run_id):
        raise BadInput(f"invalid run id {run_id!r}", code="bad-run-id")
    base = Path(output_dir).expanduser()
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(
            f"cannot create output directory {base}: {exc.strerror or exc}",
            code="output-path-unwritable",
            field="output_path",
        ) from exc
    for attempt in range(1, 1000):
        name = run_id if attempt == 1 else f"{run_id}-{attempt}"
        root = base / name
        try:
            root.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise BadInput(
                f"cannot create run directory {root}: {exc.strerror or exc}",
                code="output-path-unwritable",
                field="output_path",
            ) from exc
        for sub in SCAFFOLD_DIRS:
            (root / sub).mkdir(parents=True, exist_ok=True)
        return Run(root.resolve())
    raise BadInput(f"too many runs named {run_id} in {base}", code="run-id-exhausted")
