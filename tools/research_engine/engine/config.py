"""How a headless run is configured: its options, its outcome, the recorded configuration a replay reads.

- `EngineOptions`: the `run` command's flags, journalled so a resume drives the run the same way.
- `Outcome`: what a finished (or stopped) drive returns to the CLI.
- `read_cassette_config`: `cassette/engine.json`, the configuration a recorded run keeps (no secrets) so
  `--replay` configures itself as the recording was.
- `provider_prefixes`: which URLs are provider calls (search and data APIs) for the budget.
- `lock_brief`: the brief locked for a new run (a locked brief.md is re-run with its own fields).
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from research_engine import bounded, brief, trace
from research_engine.errors import BadInput, NotConfigured
from research_engine.net.policy import allow_host_entries
from research_engine.settings import Settings
from research_engine.sources import search
from research_engine.sources.search import searxng_endpoint
from research_engine.trace import Run

ENGINE_CONFIG = "engine.json"  # inside the cassette directory


@dataclass
class EngineOptions:
    """How a headless run is driven (the CLI's flags)."""

    model: str = "extractive"
    depth: str | None = None
    dry_run: bool = False
    record: bool = False
    replay: str | None = None  # a cassette directory
    output_path: str | None = None
    allow_private: bool = False
    allow_hosts: list[str] = field(default_factory=list)  # --allow-host entries, normalized
    search_limit: int = 5  # results asked per query
    queries_per_sub_question: int = 4  # per cycle, across the four angles
    reasons_per_round: int = 8  # candidates the model writes a selection reason for
    max_sub_questions: int = 6
    budget_overrides: dict[str, int] = field(default_factory=dict)
    sources_per_sub_question: int | None = None
    # Source modalities gathered from (`--sources`): None means all three for a new run, the recorded
    # list for a replay (absent in an old cassette: web only) and web only for an old journal.
    sources: list[str] | None = None
    # Keep every model exchange under <run>/model/ (`run -v`): request, parameters, reply, usage, timing.
    keep_exchanges: bool = False
    # Folders served in-process as the run's search backend (`run --corpus DIR`, resolved paths).
    corpus: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Outcome:
    run_root: Path
    run_id: str
    status: str  # complete | stopped | dry-run
    stop_reason: str | None
    partial: bool
    cycles: int
    result: str | None
    figures: dict[str, Any]
    planned: dict[str, Any] | None = None
    no_finding: bool = False  # result.md says no finding could be supported (exit 8)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["run_root"] = str(self.run_root)
        return out


def read_cassette_config(cassette_dir: str | Path) -> dict[str, Any]:
    path = Path(cassette_dir) / ENGINE_CONFIG
    if not path.is_file():
        raise BadInput(
            f"{cassette_dir} is not an engine cassette (no {ENGINE_CONFIG})",
            code="bad-cassette",
            field="replay",
        )
    try:
        return dict(bounded.load_json(bounded.read_bytes(path), str(path)))
    except (BadInput, TypeError, ValueError) as exc:
        raise BadInput(
            f"{path} is not a valid engine configuration: {exc}", code="bad-cassette", field="replay"
        ) from exc


def provider_prefixes(settings: Settings, corpus_searches: list[str] | None = None) -> tuple[str, ...]:
    """The search and data-API endpoints: a request to one is a provider call (`engine.metering`). The
    model's endpoint is not one: model use is metered in tokens."""
    # SearXNG's search path only: a corpus server serves its pages from the same origin, and those are
    # fetches.
    prefixes = [searxng_endpoint(settings) if settings.searxng_url else "", *(corpus_searches or [])]
    prefixes += [
        settings.base_url(name) for name in ("openalex", "worldbank", "brave", "tavily", "duckduckgo")
    ]
    return tuple(p.rstrip("/") for p in prefixes if p)


def brief_for_lock(path: Path, scratch: Path) -> Path:
    """A brief file to lock. A locked brief.md (front matter with `locked`) is re-run with its fields only."""

    try:
        text = bounded.read_text(path, "brief") if path.is_file() else ""
    except BadInput:
        return path  # brief.lock reports it
    if not text.lstrip().startswith("---"):
        return path
    try:
        meta: dict[str, Any] = bounded.front_matter(text.lstrip())[0]
    except Exception:  # not ours to judge here; brief.lock reports malformed front matter
        return path
    if "locked" not in meta:
        return path
    source_name = str((meta.get("locked") or {}).get("source_file") or "brief.yaml")
    # Fields the lock filled in by default are left out again, so the new lock defaults them the same way.
    defaulted = set((meta.get("locked") or {}).get("defaults") or [])
    fields = {k: v for k, v in meta.items() if k != "locked" and k not in defaulted}
    scratch.mkdir(parents=True, exist_ok=True)
    target = scratch / (Path(source_name).stem + ".yaml")
    target.write_text(yaml.safe_dump(fields, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return target


def check_brief(brief_path: str | Path, options: EngineOptions) -> None:
    """The brief `lock_brief` would lock, checked without locking it (BadInput when it is not valid): an
    input error is reported before any question about the machine's configuration."""
    with tempfile.TemporaryDirectory(prefix="re-brief-") as scratch:
        brief.checked(brief_for_lock(Path(brief_path), Path(scratch)), options.output_path)


def lock_brief(brief_path: str | Path, options: EngineOptions) -> Run:
    with tempfile.TemporaryDirectory(prefix="re-brief-") as scratch:
        source = brief_for_lock(Path(brief_path), Path(scratch))
        if options.depth:
            fields, _fmt = brief.read_brief_file(source)
            fields["depth"] = options.depth
            fields.pop("locked", None)

            source = Path(scratch) / (Path(source).stem + ".yaml")
            source.write_text(yaml.safe_dump(fields, sort_keys=False, allow_unicode=True), encoding="utf-8")
        locked = brief.lock(
            source,
            options.output_path,
            allow_private=options.allow_private,
            allow_hosts=allow_host_entries(options.allow_hosts),
        )
    return trace.open_run(locked.run_root)


def check_search_configured(options: EngineOptions, settings: Settings, corpora: int = 0) -> None:
    """A web gather needs a search backend: a configured one, or the run's own corpus folders."""
    if "web" in (options.sources or ["web"]) and not corpora and not search.configured_backends(settings):
        raise NotConfigured(
            "no web search backend is configured: research a folder with --corpus DIR, set SEARXNG_URL, "
            "BRAVE_API_KEY or TAVILY_API_KEY, replay a recorded run with --replay CASSETTE, or "
            "gather from the data APIs only with --sources openalex,worldbank",
            code="search-not-configured",
        )
