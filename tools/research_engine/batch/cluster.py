"""A batch on Ray: each brief a task, per-host politeness held by one named actor every task asks.

`connect("local" | "auto" | "ray://HOST:PORT", workers)` starts a local Ray instance (loopback only) or joins
a cluster, then checks that every node can write the batch's output path (a cluster needs a file system
every node shares, mounted at the same path) before any run starts. What a cluster needs: this package
installed on every node (`pip install 'research-engine[ray]'`, the same version), the output path shared,
and the machine's settings (search backend, keys, allow-lists) in each node's environment; the driver
passes its settings to each task, so keys travel through Ray's object store: use a cluster you trust.

The actor keeps each host's next start and its in-flight leases in its own clock and answers with a delay,
so workers' clocks never have to agree. A lease expires after `LEASE_SECONDS` (longer than any request may
take: the client's deadline is 60 s), so a worker killed mid-request frees its slot.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from research_engine import libraries
from research_engine.batch.record import BatchRecord, BriefEntry
from research_engine.batch.worker import RunRequest, drive
from research_engine.errors import BadInput, UpstreamFailed

LEASE_SECONDS = 180.0
POLL = 0.05


class PolitenessLedger:
    """The actor's state (made a Ray actor by `connect`): hosts' next starts and leases."""

    def __init__(self) -> None:
        self.next_start: dict[str, float] = {}
        self.leases: dict[str, tuple[str, float]] = {}  # lease -> (host, expires at)

    def acquire(self, host: str, spacing: float, slots: int, within: float | None) -> tuple[str, float, str]:
        """("ok", wait, lease) | ("busy", retry in, "") | ("late", 0, "")."""
        now = time.monotonic()
        self.leases = {k: v for k, v in self.leases.items() if v[1] > now}
        if sum(1 for h, _ in self.leases.values() if h == host) >= max(1, slots):
            return "busy", POLL, ""
        start_at = max(now, self.next_start.get(host, 0.0))
        if within is not None and start_at - now > within:
            return "late", 0.0, ""
        self.next_start[host] = start_at + max(0.0, spacing)
        lease = uuid.uuid4().hex
        self.leases[lease] = (host, start_at + LEASE_SECONDS)
        return "ok", start_at - now, lease

    def release(self, lease: str) -> None:
        self.leases.pop(lease, None)

    def pause(self, host: str, seconds: float) -> None:
        self.next_start[host] = max(self.next_start.get(host, 0.0), time.monotonic() + max(0.0, seconds))


class ActorHostLedger:
    """A `net.politeness.HostLedger` that asks the batch's actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def acquire(self, host: str, *, spacing: float, slots: int, within: float | None) -> tuple[float, str]:
        ray = libraries.ray()
        deadline = None if within is None else time.monotonic() + within
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            status, wait, lease = ray.get(self.actor.acquire.remote(host, spacing, slots, left))
            if status == "ok":
                return wait, lease
            if status == "late" or (deadline is not None and time.monotonic() >= deadline):
                raise TimeoutError(f"no polite slot for {host} before the deadline")
            time.sleep(wait)

    def release(self, lease: str) -> None:
        self.actor.release.remote(lease)

    def pause(self, host: str, seconds: float) -> None:
        libraries.ray().get(self.actor.pause.remote(host, seconds))


def _drive_task(request: RunRequest, actor_name: str) -> dict[str, Any]:
    ray = libraries.ray()
    return drive(request, ActorHostLedger(ray.get_actor(actor_name)))


def _probe(directory: str, node: str) -> str:
    path = Path(directory) / f"{node}.probe"
    path.write_text(node, encoding="utf-8")
    return node


class RaySession:
    """A connected Ray driver for one batch."""

    def __init__(self, ray: Any, workers: int, started_local: bool) -> None:
        self.ray = ray
        self.workers = workers
        self.started_local = started_local

    def run(
        self,
        record: BatchRecord,
        requests: list[RunRequest],
        limits: dict[int, float],
        finished: Callable[[BriefEntry], None],
        finish: Callable[..., None],
    ) -> None:
        ray = self.ray
        self._check_shared(record.root)
        actor_name = f"research-engine-politeness-{record.batch_id}"
        actor = ray.remote(num_cpus=0)(PolitenessLedger).options(name=actor_name).remote()
        task = ray.remote(num_cpus=1, max_retries=0)(_drive_task)
        entries = {entry.index: entry for entry in record.runs}
        pending = list(requests)
        running: dict[Any, tuple[int, float]] = {}
        try:
            while pending or running:
                while pending and len(running) < record.workers:
                    request = pending.pop(0)
                    entry = entries[request.index]
                    (record.worker_dir / f"{entry.name}.result.json").unlink(missing_ok=True)
                    running[task.remote(request, actor_name)] = (request.index, time.monotonic())
                    entry.status, entry.attempts = "running", entry.attempts + 1
                    record.save()
                done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
                now = time.monotonic()
                for ref in list(running):
                    index, started = running[ref]
                    if ref not in done and now - started <= limits[index]:
                        continue
                    del running[ref]
                    if ref not in done:
                        ray.cancel(ref, force=True)
                        finish(record, entries[index], now - started, None, "timed-out")
                    else:
                        try:
                            result = ray.get(ref)
                        except Exception:  # the task's worker died (killed) or Ray lost it: no result
                            result = None
                        finish(record, entries[index], now - started, result)
                    finished(entries[index])
        except KeyboardInterrupt:
            for ref, (index, started) in running.items():
                ray.cancel(ref)  # a KeyboardInterrupt in the task: the run records itself failed
                finish(record, entries[index], time.monotonic() - started, None, "interrupted")
            raise
        finally:
            ray.kill(actor)

    def _check_shared(self, batch_root: Path) -> None:
        """Every alive node writes a file in the batch directory and the driver sees it: a shared path."""
        ray = self.ray
        directory = batch_root / ".probe"
        directory.mkdir(exist_ok=True)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy
        probe = ray.remote(num_cpus=0)(_probe)
        refs = [
            probe.options(scheduling_strategy=strategy(node_id=n["NodeID"], soft=False)).remote(
                str(directory), n["NodeID"]
            )
            for n in nodes
        ]
        try:
            written = ray.get(refs, timeout=120)
        except Exception as exc:
            raise UpstreamFailed(
                f"a Ray node could not write the output path {batch_root.parent}: {exc}; a cluster needs the "
                "output path on a file system every node shares, at the same path",
                code="output-not-shared",
            ) from exc
        missing = [node for node in written if not (directory / f"{node}.probe").is_file()]
        if missing:
            raise UpstreamFailed(
                f"{len(missing)} Ray node(s) wrote {directory} but the driver cannot see it: the output path "
                "must be one file system shared by every node, mounted at the same path",
                code="output-not-shared",
            )

    def close(self) -> None:
        if self.started_local:
            self.ray.shutdown()


def connect(address: str, workers: int) -> RaySession:
    """Start a local Ray instance ("local") or join a cluster ("auto", "ray://HOST:PORT")."""
    ray = libraries.ray()
    if address != "local" and not (address == "auto" or address.startswith("ray://")):
        raise BadInput(
            f"--ray {address!r}: expected local, auto or ray://HOST:PORT", code="bad-ray-address", field="ray"
        )
    try:
        if address == "local":
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
                configure_logging=False,
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError... for a cluster it lacks
        raise UpstreamFailed(
            f"cannot reach the Ray cluster at {address}: {' '.join(str(exc).split())[:300]}",
            code="ray-unreachable",
            field="ray",
        ) from exc
    return RaySession(ray, workers, started_local=address == "local")
