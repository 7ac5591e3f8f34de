"""The batch record: `<output>/batch-<stamp>/batch.json` (schema/batch.schema.json) and `batch.md` beside it.

The batch directory also holds what workers leave for the driver:

    .runs/NNN.json          written by the worker of brief NNN: its run directory as soon as the run exists
    .runs/NNN.result.json   written by the same worker when it ends: how the run ended
    .politeness/            the hosts' shared start times and slots (`net.hostledger`), local batches only

Only the driver writes batch.json and batch.md (atomically, after every change), so a batch killed at any
instant leaves a record that says which briefs ended, which ran and which never started; `--resume` reads
it back together with the workers' files.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from research_engine import __version__, bounded, trace
from research_engine.errors import BadInput
from research_engine.schemas import validate

SCHEMA_VERSION = 1
RECORD = "batch.json"
TABLE = "batch.md"
WORKER_FILES = ".runs"
# A run that ended with a deliverable: complete (0), stopped on a budget (7), or no finding (8).
DELIVERED = (0, 7, 8)
FINAL = ("complete", "stopped", "failed", "killed", "timed-out")


@dataclass
class BriefEntry:
    """One brief of the batch and the run it became."""

    index: int
    brief: str
    brief_sha256: str
    run_dir: str | None = None
    status: str = "pending"
    exit_code: int | None = None
    stop_reason: str | None = None
    cycles: int = 0
    claims_supported: int = 0
    claims_refused: int = 0
    seconds: float = 0.0
    model_tokens: int = 0
    provider_calls: int = 0
    fetched_bytes: int = 0
    attempts: int = 0
    error: str | None = None

    @property
    def delivered(self) -> bool:
        return self.status in ("complete", "stopped") and self.exit_code in DELIVERED

    @property
    def name(self) -> str:
        return f"{self.index:03d}"


@dataclass
class BatchRecord:
    batch_id: str
    root: Path
    output_path: str
    executor: str
    workers: int
    options: dict[str, Any]
    runs: list[BriefEntry]
    ray_address: str | None = None
    status: str = "running"
    created_at: str = field(default_factory=trace.iso)
    updated_at: str = field(default_factory=trace.iso)

    # ------------------------------------------------------------------ files

    @property
    def worker_dir(self) -> Path:
        return self.root / WORKER_FILES

    def announced_run(self, entry: BriefEntry) -> str | None:
        """The run directory the worker of `entry` announced, if it got that far."""
        path = self.worker_dir / f"{entry.name}.json"
        if not path.is_file():
            return None
        try:
            value = bounded.load_json(bounded.read_bytes(path), str(path)).get("run_dir")
        except (BadInput, AttributeError):
            return None
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        delivered = sum(1 for e in self.runs if e.delivered)
        pending = sum(1 for e in self.runs if e.status in ("pending", "running", "interrupted"))
        return {
            "schema_version": SCHEMA_VERSION,
            "batch_id": self.batch_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "tool_version": __version__,
            "status": self.status,
            "output_path": self.output_path,
            "executor": self.executor,
            "ray_address": self.ray_address,
            "workers": self.workers,
            "options": self.options,
            "totals": {
                "briefs": len(self.runs),
                "with_deliverable": delivered,
                "failed": len(self.runs) - delivered - pending,
                "pending": pending,
                "seconds": round(sum(e.seconds for e in self.runs), 3),
            },
            "runs": [asdict(e) for e in self.runs],
        }

    def save(self) -> None:
        """Write batch.json (checked against its schema first) and batch.md, each atomically."""
        self.updated_at = trace.iso()
        data = self.to_dict()
        problems = validate(data, "batch")
        if problems:  # a bug here, never the user's input: say which field
            raise BadInput(f"batch record does not match its schema: {problems[0].message}", code="bad-batch")
        trace.atomic_write_text(self.root / RECORD, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        trace.atomic_write_text(self.root / TABLE, render_table(data))


def brief_digest(path: Path) -> str:
    return hashlib.sha256(bounded.read_bytes(path, "brief")).hexdigest()


def create(
    output: Path,
    *,
    briefs: list[Path],
    executor: str,
    workers: int,
    options: dict[str, Any],
    ray_address: str | None = None,
) -> BatchRecord:
    """A new batch directory under `output` (a numeric suffix when two start in the same second)."""
    output.mkdir(parents=True, exist_ok=True)
    stamp = trace.utc_now().strftime("%Y%m%d-%H%M%S")
    for attempt in range(1, 1000):
        name = f"batch-{stamp}" if attempt == 1 else f"batch-{stamp}-{attempt}"
        try:
            (output / name).mkdir()
        except FileExistsError:
            continue
        root = (output / name).resolve()
        (root / WORKER_FILES).mkdir()
        entries = [
            BriefEntry(index=n, brief=str(path.resolve()), brief_sha256=brief_digest(path))
            for n, path in enumerate(briefs, 1)
        ]
        record = BatchRecord(
            name, root, str(output.resolve()), executor, workers, options, entries, ray_address
        )
        record.save()
        return record
    raise BadInput(f"too many batches started this second in {output}", code="batch-id-exhausted")


def load(batch_dir: str | Path) -> BatchRecord:
    """Read a batch back (`--resume`); BadInput when it is not one."""
    root = Path(batch_dir).expanduser().resolve()
    path = root / RECORD
    if not path.is_file():
        raise BadInput(f"{root} is not a batch directory (no {RECORD})", code="unknown-batch", field="resume")
    data = bounded.load_json(bounded.read_bytes(path), str(path))
    problems = validate(data, "batch")
    if problems:
        raise BadInput(f"{path} is not a valid batch record: {problems[0].message}", code="bad-batch")
    runs = [BriefEntry(**entry) for entry in data["runs"]]
    return BatchRecord(
        batch_id=data["batch_id"],
        root=root,
        output_path=data["output_path"],
        executor=data["executor"],
        workers=data["workers"],
        options=data["options"],
        runs=runs,
        ray_address=data.get("ray_address"),
        status=data["status"],
        created_at=data["created_at"],
        updated_at=data["updated_at"],
    )


def render_table(data: dict[str, Any]) -> str:
    """batch.md: what a person reads first."""
    totals = data["totals"]
    lines = [
        f"# {data['batch_id']}",
        "",
        f"{totals['briefs']} brief(s), {totals['with_deliverable']} with a deliverable, {totals['failed']} "
        f"failed, {totals['pending']} not finished; status {data['status']}; {data['executor']} executor, "
        f"{data['workers']} worker(s); {totals['seconds']:.1f} s of runs.",
        "",
        "| # | brief | status | exit | stop reason | cycles | supported | refused | seconds | tokens | "
        "provider calls | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in data["runs"]:
        run = Path(e["run_dir"]).name if e["run_dir"] else "-"
        status = e["status"] + (f": {_cell(e['error'])}" if e["error"] else "")
        lines.append(
            f"| {e['index']} | {_cell(Path(e['brief']).name)} | {status} | "
            f"{'-' if e['exit_code'] is None else e['exit_code']} | {_cell(e['stop_reason'] or '-')} | "
            f"{e['cycles']} | {e['claims_supported']} | {e['claims_refused']} | {e['seconds']:.1f} | "
            f"{e['model_tokens']} | {e['provider_calls']} | {_cell(run)} |"
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe in a table cell: one line, no column bar, at most 120 characters."""
    one = " ".join(str(text).split()).replace("|", "\\|")
    return one if len(one) <= 120 else one[:117] + "..."
