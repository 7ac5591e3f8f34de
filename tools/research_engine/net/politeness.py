"""Politeness: per-host minimum interval and concurrency, a global concurrency limit, Retry-After.

`Gate.slot(host)` is a context manager around one request:

1. take one of the host's `per_host_concurrency` slots;
2. reserve the host's next start time (`interval` after the previous reservation, or later
   when the server asked for a pause with Retry-After) and sleep until it;
3. take one of the `global_concurrency` slots for the request itself.

Reservations are made under a lock, so starts to one host are spaced by at least the interval
whatever the number of threads. The global slot is taken last and held only while the
request runs, so a thread waiting for a slow host never blocks other hosts.

When several processes fetch for one purpose (a batch's workers, a cluster's tasks), steps 1 and 2
go to a `HostLedger` they share instead (`net.hostledger.FileHostLedger` on one machine, an actor on
a Ray cluster), so the per-host interval and concurrency hold for all of them together; the global
limit stays per process. A ledger is given to the client, or installed for the process
(`install`), which is how a batch worker hands it to every client its run opens.
No I/O here beyond sleeping.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


class HostLedger(Protocol):
    """Hosts' next start times and connection slots, shared by every process that fetches for one batch."""

    def acquire(self, host: str, *, spacing: float, slots: int, within: float | None) -> tuple[float, Any]:
        """Take one of `host`'s `slots` and reserve its next start, `spacing` after the last one: returns
        (seconds to wait before starting, a lease for `release`). TimeoutError when either cannot be had
        within `within` seconds."""
        ...

    def release(self, lease: Any) -> None:
        """Give the slot back (a process that dies gives its slots back too)."""
        ...

    def pause(self, host: str, seconds: float) -> None:
        """No request to `host` starts for `seconds` (Retry-After, crawl-delay)."""
        ...


_installed: HostLedger | None = None


def install(ledger: HostLedger | None) -> None:
    """Make `ledger` the one every client of this process uses unless given another (None: each its own)."""
    global _installed
    _installed = ledger


def installed() -> HostLedger | None:
    return _installed


@dataclass
class _Host:
    slots: threading.Semaphore
    next_start: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Gate:
    def __init__(
        self,
        *,
        interval: float,
        per_host: int,
        global_limit: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        ledger: HostLedger | None = None,
    ) -> None:
        self.ledger = ledger  # per-host reservations shared with other processes; None: kept here
        self.interval = max(0.0, interval)
        self.per_host = max(1, per_host)
        self.global_slots = threading.Semaphore(max(1, global_limit))
        self._hosts: dict[str, _Host] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep

    def _host(self, host: str) -> _Host:
        with self._lock:
            state = self._hosts.get(host)
            if state is None:
                state = self._hosts[host] = _Host(threading.Semaphore(self.per_host))
            return state

    def pause(self, host: str, seconds: float, *, min_interval: float | None = None) -> None:
        """Push the host's next start at least `seconds` from now (Retry-After, crawl-delay)."""
        if self.ledger is not None:
            self.ledger.pause(host, max(0.0, seconds))
            return
        state = self._host(host)
        with state.lock:
            state.next_start = max(state.next_start, self._clock() + max(0.0, seconds))

    @contextlib.contextmanager
    def slot(
        self,
        host: str,
        *,
        deadline: float | None = None,
        interval: float | None = None,
        exempt: bool = False,
    ) -> Iterator[float]:
        """Hold a polite slot for one request to `host`; yields the seconds spent waiting.

        `exempt`: no interval before the next request to the host (a private host the user allowed; a
        Retry-After pause and the concurrency limits still apply).
        Raises TimeoutError when the reserved start would fall after `deadline` (a monotonic time).
        """
        started = self._clock()
        spacing = self.interval if interval is None else max(self.interval, interval)
        if exempt:
            spacing = 0.0
        remaining = None if deadline is None else max(0.0, deadline - started)
        if self.ledger is not None:
            with self._shared_slot(host, spacing, remaining, deadline):
                yield self._clock() - started
            return
        state = self._host(host)
        if not state.slots.acquire(timeout=remaining if remaining is not None else -1):
            raise TimeoutError(f"no free connection slot for {host} before the deadline")
        try:
            with state.lock:
                now = self._clock()
                start_at = max(now, state.next_start)
                if deadline is not None and start_at > deadline:
                    raise TimeoutError(f"{host} asked for a pause that runs past the deadline")
                state.next_start = start_at + spacing
            if start_at > now:
                self._sleep(start_at - now)
            left = None if deadline is None else max(0.0, deadline - self._clock())
            if not self.global_slots.acquire(timeout=left if left is not None else -1):
                raise TimeoutError("no free global connection slot before the deadline")
            try:
                yield self._clock() - started
            finally:
                self.global_slots.release()
        finally:
            state.slots.release()

    @contextlib.contextmanager
    def _shared_slot(
        self, host: str, spacing: float, remaining: float | None, deadline: float | None
    ) -> Iterator[None]:
        """Steps 1 and 2 through the shared ledger, step 3 here."""
        assert self.ledger is not None
        wait, lease = self.ledger.acquire(host, spacing=spacing, slots=self.per_host, within=remaining)
        try:
            if wait > 0:
                self._sleep(wait)
            left = None if deadline is None else max(0.0, deadline - self._clock())
            if not self.global_slots.acquire(timeout=left if left is not None else -1):
                raise TimeoutError("no free global connection slot before the deadline")
            try:
                yield
            finally:
                self.global_slots.release()
        finally:
            self.ledger.release(lease)
