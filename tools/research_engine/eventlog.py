"""Append-only JSON-lines logs: one JSON object a line, appended, never rewritten.

An append costs the same however long the log is: the record is encoded on one
line (JSON escapes every newline inside strings), written with one `write` on a
descriptor opened with O_APPEND, and fsynced. Appends must be serialized by the
caller (the run lock); reads take no lock.

A crash can leave an unterminated last line (a write cut short). Such a tail is
never read as a record: `read` returns it apart as `torn`, `last` skips it, and
the next `append` cuts it off the log and keeps its bytes in `<log>.torn` before
writing, so a new record is never glued onto half of an old one. The caller is
told (`Repair`) so it can say so in the run's record. Readers running while a
writer appends may see the same unterminated tail; they ignore it the same way.

This module knows nothing about what the records mean (the claims ledger gives
them their meaning and their schema); it is part of the trace layer.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research_engine import bounded
from research_engine.errors import BadInput, storage_failure
from research_engine.trace import fsync_dir

CHUNK = 8192  # bytes read at a time when scanning a log from its end


@dataclass
class LogContents:
    """What a log holds: its complete records, the complete lines that are not JSON objects (1-based line
    numbers, with why), and an unterminated last line (`torn`, bytes), which is never a record."""

    records: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    torn: bytes = b""


@dataclass(frozen=True)
class Repair:
    """An unterminated tail cut off before an append: `removed` bytes at `offset`, kept in `kept_in`."""

    offset: int
    removed: int
    kept_in: Path


def encode(record: dict[str, Any]) -> bytes:
    """One record as one line: compact JSON, UTF-8, newline-terminated."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _parse(line: bytes) -> dict[str, Any]:
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def read(path: Path) -> LogContents:
    """Every complete record of the log at `path` (an empty log when the file does not exist)."""
    if not path.exists():
        return LogContents()
    data = bounded.read_bytes(path, "log")
    contents = LogContents()
    body, newline, tail = data.rpartition(b"\n")
    if not newline:  # no complete line at all
        body, tail = b"", data
    contents.torn = tail
    if not body and not newline:
        return contents
    for number, line in enumerate(body.split(b"\n"), 1):
        try:
            contents.records.append(_parse(line))
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            contents.bad_lines.append((number, str(exc)))
    return contents


def last(path: Path, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The last complete record for which `wanted` is true, read from the end of the log: it costs what
    the records after it cost, not what the whole log does. Lines that are not JSON objects are skipped."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        size = _capped_size(fd, path)
        end = _last_newline(fd, size)  # what follows it is a torn line, never a record
        carry = b""  # the end of a line whose beginning lies in an earlier chunk
        while end >= 0:
            start = max(0, end - CHUNK)
            lines = (os.pread(fd, end - start, start) + carry).split(b"\n")
            carry = lines.pop(0) if start > 0 else b""
            for line in reversed(lines):
                with contextlib.suppress(ValueError):
                    record = _parse(line)
                    if wanted(record):
                        return record
            if start == 0:
                break
            end = start
        return None
    finally:
        os.close(fd)


def _capped_size(fd: int, path: Path) -> int:
    """The log's size; BadInput past its cap (a log is never scanned past what a run can write)."""
    size = os.fstat(fd).st_size
    if size > bounded.CAPS["log"]:
        raise BadInput(
            f"{path} is larger than the {bounded.CAPS['log'] // bounded.MiB} MiB cap of a log; refusing it",
            code="input-too-large",
        )
    return size


def _last_newline(fd: int, size: int) -> int:
    """Offset of the last newline in the file, -1 when there is none."""
    end = size
    while end > 0:
        start = max(0, end - CHUNK)
        at = os.pread(fd, end - start, start).rfind(b"\n")
        if at >= 0:
            return start + at
        end = start
    return -1


def append(path: Path, records: list[dict[str, Any]]) -> Repair | None:
    """Append `records` (one line each) to the log at `path` and fsync; the caller holds the lock that
    serializes appends. An unterminated tail is cut off first and kept in `<log>.torn` (see the module
    docstring); the repair is returned, None when there was nothing to repair."""
    data = b"".join(encode(r) for r in records)
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    try:
        # The umask applies, as for artifacts; O_NOFOLLOW: a log linked elsewhere is never written through.
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        _raise_storage_failure(exc, path)
        raise
    try:
        _capped_size(fd, path)
        repair = _cut_torn_tail(fd, path)
        before = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:  # a regular file takes the whole buffer in one write; loop only for the rule's sake
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError as exc:
            # A refused write or fsync takes the records back out, whole: the command failed, so running it
            # again must not find them there (a claim recorded twice). Were the cut refused too, the torn
            # tail it leaves is cut by the next append (module docstring).
            with contextlib.suppress(OSError):
                os.ftruncate(fd, before)
                os.fsync(fd)
            _raise_storage_failure(exc, path)
            raise
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)
    return repair


def _raise_storage_failure(exc: OSError, path: Path) -> None:
    failure = storage_failure(exc, "appending to", path)
    if failure is not None:
        raise failure from exc


def _cut_torn_tail(fd: int, path: Path) -> Repair | None:
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    cut = _last_newline(fd, size) + 1
    fragment = os.pread(fd, size - cut, cut)
    kept = path.with_name(path.name + ".torn")
    # Kept apart for people to look at; never read back as records. O_NOFOLLOW: never through a link.
    kept_fd = os.open(kept, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    try:
        os.write(kept_fd, fragment + b"\n")
        os.fsync(kept_fd)
    finally:
        os.close(kept_fd)
    os.ftruncate(fd, cut)
    os.fsync(fd)
    return Repair(offset=cut, removed=size - cut, kept_in=kept)
