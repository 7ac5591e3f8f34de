"""The engine's journal, `.state/engine.json`: completed steps, per-cycle plans, carried spend.

Every finished step is journalled (atomically) with its result; `run --resume` skips
journalled steps and redoes the one cut short, which is harmless because every step
recognises what it already wrote.
"""

from __future__ import annotations

import json
from typing import Any

from research_engine import bounded
from research_engine.errors import BadInput
from research_engine.trace import Run, atomic_write_text

JOURNAL_NAME = "engine"


class Journal:
    """`.state/engine.json`: completed steps, per-cycle plans, carried spend. Written atomically."""

    def __init__(self, run: Run) -> None:
        self.path = run.path("state", name=JOURNAL_NAME)
        if self.path.is_file():
            try:
                self.data: dict[str, Any] = bounded.load_json(bounded.read_bytes(self.path), "the journal")
            except BadInput as exc:
                raise BadInput(f"{self.path} is unreadable: {exc.message}", code="malformed-journal") from exc
            if not isinstance(self.data, dict) or not isinstance(self.data.get("steps"), dict):
                raise BadInput(f"{self.path} is not an engine journal", code="malformed-journal")
        else:
            self.data = {
                "schema_version": 1,
                "status": "new",
                "options": {},
                "config": {},
                "steps": {},
                "plans": {},
                "spent": {},
                "timings": {},
                "sessions": 0,
            }

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def done(self, key: str) -> bool:
        return key in self.data["steps"]

    def result(self, key: str) -> Any:
        return self.data["steps"].get(key)

    def mark(self, key: str, result: Any = None) -> None:
        self.data["steps"][key] = result if result is not None else True
        self.save()

    def save(self) -> None:
        atomic_write_text(self.path, json.dumps(self.data, indent=2, ensure_ascii=False, default=str) + "\n")
