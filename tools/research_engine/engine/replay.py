"""`research-engine replay RUN`: re-execute a recorded run offline and report every difference.

The run's brief (its locked fields) is run again by the same engine, with the same
options, into a temporary directory, with every HTTP exchange served from the run's
cassette (`engine.cassette.Replayer`: no socket, no DNS). The new trace is then
compared with the recorded one file by file:

- compared: every file of the trace tree, except `cassette/` (the recording
  itself), `.state/` (the engine journal: timings and session counts), the run
  lock, `view.html` and `view.pdf` (renderings, written on demand);
- equal when the bytes are equal, or when they are equal after the documented
  volatile fields are masked (`VOLATILE_PATTERNS`): timestamps (anything a tool
  stamps when it runs: RFC 3339 date-times), the run id's creation stamp, the brief
  digest (it covers the lock time), the brief's output_path (a replay writes
  elsewhere), elapsed and wall-clock figures.

A difference anywhere else is reported with the path and the first differing
line of both sides; `identical` is true only when there is none. Cassette misses
(a request the recording does not hold) are reported too: they mean the engine
asked for something it did not ask for when recording.

This module never writes into the recorded run.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research_engine import bounded, trace
from research_engine.engine import loop
from research_engine.engine.cassette import VOLATILE
from research_engine.errors import BadInput

SKIP_TOP = ("cassette", ".state", ".lock", "view.html", "view.pdf")
VOLATILE_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "timestamps",
        re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"),
        "<time>",
    ),
    ("run id stamp", re.compile(r"\b\d{8}-\d{6}-(?=[a-z0-9])"), "<stamp>-"),
    ("brief digest", re.compile(r"(brief_digest\"?:\s*\"?)sha256:[0-9a-f]{64}"), r"\1<digest>"),
    ("output path", re.compile(r"^(output_path:\s*|- \*\*output_path\*\*:\s*).*$", re.M), r"\1<output-path>"),
    (
        "elapsed figures",
        re.compile(r"((?:elapsed_ms|elapsed_seconds|duration_ms|wall_clock_seconds)\"?:?\s*)\d+(?:\.\d+)?"),
        r"\1<n>",
    ),
)


@dataclass
class ReplayReport:
    recorded: str
    replayed: str
    identical: bool
    differences: list[dict[str, Any]] = field(default_factory=list)
    compared: int = 0
    misses: list[str] = field(default_factory=list)
    volatile: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "recorded": self.recorded,
            "replayed": self.replayed,
            "identical": self.identical,
            "compared_files": self.compared,
            "differences": self.differences,
            "cassette_misses": self.misses,
            "volatile": self.volatile,
        }


def mask(text: str) -> str:
    for _name, pattern, replacement in VOLATILE_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _files(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.split("/", 1)[0] in SKIP_TOP or path.name.endswith(".tmp"):
            continue
        out[rel] = path
    return out


def _first_difference(a: str, b: str) -> dict[str, Any]:
    la, lb = a.splitlines(), b.splitlines()
    for n, (x, y) in enumerate(zip(la, lb, strict=False), 1):
        if x != y:
            return {"line": n, "recorded": x[:300], "replayed": y[:300]}
    n = min(len(la), len(lb)) + 1
    return {
        "line": n,
        "recorded": (la[n - 1] if n <= len(la) else "<end>")[:300],
        "replayed": (lb[n - 1] if n <= len(lb) else "<end>")[:300],
    }


def compare_trees(recorded: Path, replayed: Path) -> tuple[list[dict[str, Any]], int]:
    """Differences between two trace trees beyond the volatile fields; and how many files were compared."""
    left, right = _files(recorded), _files(replayed)
    diffs: list[dict[str, Any]] = []
    for rel in sorted(set(left) | set(right)):
        if rel not in right:
            diffs.append({"path": rel, "kind": "missing-in-replay"})
            continue
        if rel not in left:
            diffs.append({"path": rel, "kind": "extra-in-replay"})
            continue
        a, b = bounded.read_bytes(left[rel], "snapshot"), bounded.read_bytes(right[rel], "snapshot")
        if rel.startswith("snapshots/") and hashlib.sha256(a).hexdigest() != rel.removeprefix("snapshots/"):
            diffs.append(
                {"path": rel, "kind": "altered-in-recorded"}
            )  # its bytes lost the digest it is named for
            continue
        if a == b:
            continue
        try:
            ta, tb = a.decode("utf-8"), b.decode("utf-8")
        except UnicodeDecodeError:
            diffs.append({"path": rel, "kind": "bytes-differ"})
            continue
        ma, mb = mask(ta), mask(tb)
        if ma != mb:
            diffs.append({"path": rel, "kind": "differs", **_first_difference(ma, mb)})
    return diffs, len(set(left) | set(right))


def replay_run(run_dir: str | Path, *, keep: str | Path | None = None) -> ReplayReport:
    """Re-execute the recorded run at `run_dir` offline from its cassette and compare the traces."""

    run = trace.open_run(run_dir)
    cassette = run.path("cassette_dir")
    if not (cassette / "index.json").is_file():
        raise BadInput(
            f"{run.root} has no cassette (record it with `research-engine run --record`)",
            code="no-cassette",
            field="run",
        )
    journal = loop.Journal(run)
    if not journal.exists:
        raise BadInput(
            f"{run.root} was not produced by `research-engine run`", code="not-an-engine-run", field="run"
        )
    known = set(loop.EngineOptions.__dataclass_fields__)
    recorded_options = {k: v for k, v in (journal.data.get("options") or {}).items() if k in known}
    with tempfile.TemporaryDirectory(prefix="re-replay-") as scratch:
        out_dir = Path(keep) if keep else Path(scratch)
        options = loop.EngineOptions(
            **{
                **recorded_options,
                "record": False,
                "replay": str(cassette),
                "output_path": str(out_dir / "runs"),
                "dry_run": False,
            }
        )
        outcome = loop.run(run.path("brief"), options)
        diffs, compared = compare_trees(run.root, outcome.run_root)
        misses = list(outcome.figures.get("replay_misses") or [])
        report = ReplayReport(
            recorded=str(run.root),
            replayed=str(outcome.run_root) if keep else "(temporary)",
            identical=not diffs and not misses,
            differences=diffs,
            compared=compared,
            misses=misses,
            volatile=[name for name, _, _ in VOLATILE_PATTERNS] + list(VOLATILE),
        )
    return report
