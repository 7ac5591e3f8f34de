"""run.json: the machine record of a run (schema/run.schema.json).

Every update is a read-modify-write under the run lock, through `update`, so
concurrent tool calls never lose each other's changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from research_engine import __version__, bounded
from research_engine.errors import BadInput
from research_engine.redaction import redact_url
from research_engine.trace import Run, atomic_write_text, iso
from research_engine.vocabulary import CYCLE_CEILING, Depth

SCHEMA_VERSION = 1


def create(
    run: Run,
    brief_fields: dict[str, Any],
    brief_digest: str,
    *,
    budgets: dict[str, int],
    allow_private: bool = False,
    allow_hosts: Sequence[str] = (),
) -> dict:
    """The first run.json of a run locked from `brief_fields` (`budgets`: the brief's, defaults filled in)."""
    now = iso()
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run.run_id,
        "brief_digest": brief_digest,
        "created_at": now,
        "updated_at": now,
        "tool_version": __version__,
        "status": "locked",
        "depth": brief_fields.get("depth", "standard"),
        "cycle_ceiling": CYCLE_CEILING[brief_fields.get("depth", Depth.STANDARD)],
        "cycles": 0,
        "stop_reason": None,
        "allow_private": allow_private,
        "model": None,
        "sources": [],
        "reproducibility": {"label": "pending", "reasons": []},
        "grounding": {"checked": 0, "supported": 0, "partial": 0, "refused": 0, "score": None},
        "cycles_detail": [],
        "refused_ever": False,
        "refused_claims": [],
        "budgets": {"set": dict(budgets), "spent": {}},
        "events": [],
    }
    if allow_hosts:  # absent when none were named: run.json stays as it was for every other run
        record["allow_hosts"] = list(allow_hosts)
    write(run, record)
    return record


def read(run: Run) -> dict[str, Any]:
    path = run.path("run")
    if not path.exists():
        raise BadInput(f"no run.json in {run.root}", code="unknown-run")
    try:
        record = bounded.load_json(bounded.read_bytes(path), str(path))
    except BadInput as exc:
        raise BadInput(exc.message, code="malformed-run-json") from exc
    if not isinstance(record, dict):
        raise BadInput(f"{path} is not a JSON object", code="malformed-run-json")
    return record


def write(run: Run, record: dict[str, Any]) -> None:
    atomic_write_text(run.path("run"), json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def update(run: Run, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply `change` to run.json under the run lock and stamp updated_at."""
    with run.lock():
        record = read(run)
        change(record)
        record["updated_at"] = iso()
        write(run, record)
    return record


def add_event(run: Run, kind: str, **details: Any) -> None:
    """Append an audit event (e.g. a private-address or robots override)."""

    def change(record: dict[str, Any]) -> None:
        record.setdefault("events", []).append({"at": iso(), "kind": kind, **details})

    update(run, change)


def note_allowed_hosts(run: Run, hosts: Sequence[str], **context: Any) -> None:
    """Add `hosts` (`--allow-host` entries) to run.json's `allow_hosts`, with an `allow-host` event naming
    the ones that are new and `context` (the command)."""

    def change(record: dict[str, Any]) -> None:
        known = list(record.get("allow_hosts") or [])
        new = [h for h in hosts if h not in known]
        if new:
            record["allow_hosts"] = known + new
            record.setdefault("events", []).append(
                {"at": iso(), "kind": "allow-host", "hosts": new, **context}
            )

    update(run, change)


def note_overrides(run: Run, client: Any, secrets: Sequence[str] = (), **context: Any) -> None:
    """Put a client's explicit opt-ins (private addresses, ignored robots) into run.json's events, each
    with `context` (the command, the sub-question)."""
    for override in getattr(client, "overrides", []) or []:
        # The client notes the URL it fetched, api_key and all: secrets never reach the trace.
        details = {
            k: redact_url(v, secrets) if isinstance(v, str) and "://" in v else v
            for k, v in override.items()
            if k != "kind"
        }
        add_event(run, str(override.get("kind", "override")), **context, **details)


def add_model_use(earlier: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """Two per-stage model-use tables (run.json `model.use`) added up, stage by stage and kind by kind."""
    out: dict[str, Any] = {}
    for stage in sorted(set(earlier) | set(now)):
        a, b = earlier.get(stage) or {}, now.get(stage) or {}
        merged: dict[str, Any] = {}
        for key in sorted(set(a) | set(b)):
            x, y = a.get(key), b.get(key)
            if isinstance(x, dict) or isinstance(y, dict):
                kinds = {**(x or {})}
                for kind, n in (y or {}).items():
                    kinds[kind] = kinds.get(kind, 0) + n
                merged[key] = dict(sorted(kinds.items()))
            else:
                merged[key] = round((x or 0) + (y or 0), 3)
        out[stage] = merged
    return out


def describe_model_use(use: dict[str, Any], rule_stages: dict[str, str] | None = None) -> list[str]:
    """One line per stage of who did the work, for the deliverable's reproducibility footer:
    "consolidate: model, 4 calls; extractive fallback 2 times (after 3 context-length errors; 1
    quote-not-in-source reply rejected)"."""
    lines = []
    for stage, figures in use.items():
        calls, fallbacks = int(figures.get("calls") or 0), int(figures.get("fallbacks") or 0)
        failures = ", ".join(f"{n} {kind} error(s)" for kind, n in (figures.get("failures") or {}).items())
        rejected = ", ".join(f"{n} {kind}" for kind, n in (figures.get("rejections") or {}).items())
        why = "; ".join(
            part for part in (failures and f"after {failures}", rejected and f"{rejected} rejected") if part
        )
        if not fallbacks:
            done = f"model, {calls} call(s)"
        elif not calls:
            done = f"extractive fallback {fallbacks} time(s), no model reply"
        else:
            done = f"model, {calls} call(s); extractive fallback {fallbacks} time(s)"
        tokens = int(figures.get("prompt_tokens") or 0) + int(figures.get("completion_tokens") or 0)
        lines.append(f"{stage}: {done}" + (f" ({why})" if why else "") + f", {tokens} tokens")
    for stage, why in (rule_stages or {}).items():  # not asked of this model: the rule does it, by choice
        lines.append(f"{stage}: extractive rule, not asked of this model ({why})")
    return lines


def human_bytes(count: float) -> str:
    """A byte count as people read it: 512 B, 551 KB, 50 MB (binary multiples, as the budgets are set)."""
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" or value >= 10 else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.0f} GB"  # pragma: no cover - the loop returns at GB


def describe_spend(name: str, spent: Any, limit: Any = None) -> str:
    """One budget as a reader wants it: `fetched_bytes 551 KB/50 MB`, `provider_calls 12/80`."""

    def shown(value: Any) -> str:
        if value is None or value == "-":
            return "-"
        sized = name.endswith("_bytes") and isinstance(value, int | float)
        return human_bytes(value) if sized else str(value)

    return f"{name} {shown(spent)}" + (f"/{shown(limit)}" if limit is not None else "")


def corpus_origins(run: Run) -> list[str]:
    """The base URLs of the corpus folders `run` served (`run --corpus`): their PDFs and Word files are
    read without --pdf, by the retrieval and by the verifier's re-fetch alike."""
    try:
        entries = read(run).get("corpus") or []
    except BadInput:
        return []
    return [str(e["url"]) for e in entries if isinstance(e, dict) and e.get("url")]


def cited_claims(run: Run) -> list[str]:
    """The claims the run's deliverable cites: run.json `result.cited_claims` (a deliverable written before
    result.md's front matter was cut down carries them in its front matter instead)."""
    try:
        result = read(run).get("result") or {}
    except BadInput:
        result = {}
    cited = result.get("cited_claims") if isinstance(result, dict) else None
    if cited is None and run.path("result").is_file():
        meta = bounded.front_matter(bounded.read_bytes(run.path("result")).decode("utf-8", "replace"))[0]
        cited = (meta or {}).get("cited_claims")
    return [str(c) for c in cited or []]
