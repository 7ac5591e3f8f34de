"""Where a run stands: the cycle in progress and the verdicts recorded so far, read from its artifacts.

Every stage needs to know which cycle it works in (claims, sub-questions, gaps and
selection rounds are stamped with it) and several need the latest verdict of each
claim. Both are facts the trace already holds, in `controller/loop-log.md` and in
`verify/contestation*.md`; this module reads them, so no stage has to import the
controller or the verifier to learn them. Read-only; part of the trace layer.
"""

from __future__ import annotations

from typing import Any

from research_engine.artifacts import read_markdown
from research_engine.trace import Run


def load_loop_log(run: Run) -> dict[str, Any]:
    """controller/loop-log.md's front matter (an empty log before the first `control`)."""
    path = run.path("loop_log")
    if not path.is_file():
        return {"schema_version": 1, "cycles": []}
    meta, _ = read_markdown(path)
    meta.setdefault("cycles", [])
    return meta


def current_cycle(run: Run) -> int:
    """The cycle in progress: 1 + the number of cycle blocks in controller/loop-log.md."""
    return 1 + len(load_loop_log(run)["cycles"])


def all_contestations(run: Run) -> list[dict[str, Any]]:
    """Front matter of every contestation file, oldest cycle first (archives, then the current one)."""
    metas: list[dict[str, Any]] = []
    verify_dir = run.root / "verify"
    archives = sorted(verify_dir.glob("contestation.cycle-*.md"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    for path in archives:
        metas.append(read_markdown(path)[0])
    current = run.path("contestation")
    if current.is_file():
        metas.append(read_markdown(current)[0])
    return sorted(metas, key=lambda m: int(m.get("cycle", 0)))


def latest_verdicts(run: Run) -> dict[str, dict[str, Any]]:
    """claim id -> its latest challenge (from the archived cycles, then the current file)."""
    latest: dict[str, dict[str, Any]] = {}
    for meta in all_contestations(run):
        for chl in meta.get("challenges", []):
            latest[chl["claim"]] = {**chl, "cycle": meta.get("cycle")}
    return latest


def load_worksheet(run: Run) -> dict[str, Any] | None:
    """verify/worksheet.md's front matter: the verification in progress (None before `verify prepare`)."""
    path = run.path("worksheet")
    if not path.is_file():
        return None
    meta, _ = read_markdown(path)
    return meta
