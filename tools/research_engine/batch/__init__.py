"""Many briefs: `research-engine batch`, on one machine or on a Ray cluster.

A batch is a list of ordinary runs plus a record of them (`batch.record`): each brief becomes a normal
headless run (`engine.loop`) with its complete trace tree in the output path, driven by a worker
(`batch.worker`) in a process of its own or a Ray task (`batch.cluster`), at most `workers` at a time
(`batch.runner`). Runs share per-host politeness (`net.hostledger`, or an actor on Ray) and the HTTP
revalidation cache; the run stays the unit of work and of trust.
"""

from __future__ import annotations

from research_engine.batch.record import BatchRecord, BriefEntry
from research_engine.batch.runner import (
    BatchOptions,
    Reporter,
    batch_exit_code,
    find_briefs,
    resume_batch,
    run_batch,
)

__all__ = [
    "BatchOptions",
    "BatchRecord",
    "BriefEntry",
    "Reporter",
    "batch_exit_code",
    "find_briefs",
    "resume_batch",
    "run_batch",
]
