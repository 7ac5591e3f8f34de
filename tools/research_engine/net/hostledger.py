"""`FileHostLedger`: politeness shared by every process on one machine, kept in files under one directory.

Per host (named by a digest of the host, so any host is a legal file name):

    <key>.next      the host's next allowed start, seconds since the epoch, one fixed-width line
    <key>.slot<N>   one file per connection slot; a process holds a slot by holding an flock on it

A start is reserved under an exclusive flock on `<key>.next` (read, take max(now, next), write
start + spacing), so starts to one host are spaced by the interval whichever process asks. A slot is
an flock held for the request's duration: the kernel drops it when the holder closes the file or
dies, so a worker killed mid-request never keeps a slot (no lease to expire, nothing to clean up).
flock is per open file description, so threads of one process that each open the files are kept
apart too. Clocks: one machine's wall clock, shared by its processes; a cluster uses an actor instead
(`research_engine.batch.cluster`), since flock over a network file system is not to be trusted.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

WIDTH = 32  # bytes of the `.next` record: one pwrite, never a torn number


class FileHostLedger:
    """A `net.politeness.HostLedger` in `directory` (created if missing; every process names the same one)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        poll: float = 0.02,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._poll = poll
        self._clock = clock
        self._sleep = sleep

    def _path(self, host: str, suffix: str) -> Path:
        key = hashlib.sha256(host.encode("utf-8")).hexdigest()[:24]
        return self.directory / f"{key}.{suffix}"

    def acquire(self, host: str, *, spacing: float, slots: int, within: float | None) -> tuple[float, int]:
        deadline = None if within is None else self._clock() + within
        lease = self._take_slot(host, max(1, slots), deadline)
        try:
            with self._next_start(host) as (now, start_at, record):
                start_at = max(now, start_at)
                if deadline is not None and start_at > deadline:
                    raise TimeoutError(f"{host} asked for a pause that runs past the deadline")
                record(start_at + max(0.0, spacing))
        except BaseException:
            os.close(lease)
            raise
        return start_at - now, lease

    def release(self, lease: int) -> None:
        os.close(lease)  # closing the descriptor drops its flock

    def pause(self, host: str, seconds: float) -> None:
        with self._next_start(host) as (now, start_at, record):
            record(max(start_at, now + max(0.0, seconds)))

    def _take_slot(self, host: str, slots: int, deadline: float | None) -> int:
        while True:
            for n in range(slots):
                fd = os.open(self._path(host, f"slot{n}"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                return fd
            if deadline is not None and self._clock() >= deadline:
                raise TimeoutError(f"no free connection slot for {host} before the deadline")
            self._sleep(self._poll)

    @contextlib.contextmanager
    def _next_start(self, host: str) -> Iterator[tuple[float, float, Callable[[float], None]]]:
        """(now, the recorded next start, a function recording a new one), under the host's exclusive lock."""
        fd = os.open(self._path(host, "next"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                start_at = float(os.pread(fd, WIDTH, 0).decode("ascii").strip() or 0.0)
            except ValueError:
                start_at = 0.0  # unreadable: the next request may start now, which is never impolite twice

            def record(value: float) -> None:
                os.pwrite(fd, f"{value:<{WIDTH - 1}.6f}\n".encode("ascii"), 0)

            yield self._clock(), start_at, record
        finally:
            os.close(fd)
