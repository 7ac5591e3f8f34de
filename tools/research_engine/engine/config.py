"""How a headless run is configured: its options, its outcome, the recorded configuration a replay reads.

- `EngineOptions`: the `run` command's flags, journalled so a resume drives the run the same way.
- `Outcome`: what a finished (or stopped) drive returns to the CLI.
- `read_cassette_config`: `cassette/engine.json`, the configuration a recorded run keeps (no secrets) so
  `--replay` configures itself as the recording was.
- `provider_prefixes`: which URLs are provider calls (search and data APIs) for the budget.
- `lock_brief`: the brief locked for a new run (a locked brief.md is re-run with its own fields).
- `check_search_configured`, `check_search_reachable`: a web search that cannot happen (no backend, or
  every backend refused by the guard, robots.txt or DNS) stops `run` before anything is locked.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from research_engine import bounded, brief, trace
from research_engine.errors import BadInput, ExitCode, NotConfigured, Refused, Unresolved
from research_engine.net.guard import check_url, parse_allow_host
from research_engine.net.policy import allow_host_entries, fetch_policy
from research_engine.settings import Settings
from research_engine.sources import search
from research_engine.trace import Run
from research_engine.vocabulary import Modality

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

    @property
    def exit_code(self) -> ExitCode:
        """7 when a budget stopped the run (it says why first, finding or not), 8 with no finding, else 0."""
        if self.partial or (self.stop_reason or "").startswith("budget:"):
            return ExitCode.BUDGET_SPENT
        if self.no_finding:
            return ExitCode.NO_FINDING
        return ExitCode.OK


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
    # A corpus server's search path is a provider endpoint too; the pages it serves are fetches.
    return (*settings.provider_endpoints(), *(url.rstrip("/") for url in corpus_searches or []))


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


def check_search_reachable(options: EngineOptions, settings: Settings, corpora: int = 0) -> None:
    """Before anything is locked: when the guard would refuse every configured search backend (a private
    address not allowed, robots.txt for a crawled backend, a name that does not resolve), the run would
    search nothing and blame its sources, so it stops here as a missing backend does: Refused (exit 3),
    or Unresolved (4) when every backend's name failed to resolve, naming each and how to allow it. A run
    with its own corpus folders (`corpora`) always has one backend the guard lets through."""
    if "web" not in (options.sources or ["web"]) or corpora:
        return
    policy = fetch_policy(settings, allow_private=options.allow_private, allow_hosts=options.allow_hosts)
    allowed = [parse_allow_host(entry) for entry in policy.allow_hosts]
    refusals: list[tuple[str, str, str]] = []  # (backend, code, why)
    for name in search.configured_backends(settings):
        url = search.backend_endpoint(name, settings)
        verdict = check_url(url, allow_private=policy.allow_private, allow_hosts=allowed)
        why = None if verdict.allowed else f"{verdict.reason}{_allow_hint(url, verdict.code)}"
        if why is None and name in search.CRAWLED_BACKENDS:
            with policy.client() as client:
                why = client.robots_refusal(url)
            code = "refused-robots"
        else:
            code = str(verdict.code or "refused-ssrf")
        if why is None:
            return  # one backend the guard lets through is enough: the search chain falls back to it
        refusals.append((name, code, f"{name} at {url}: {why}"))
    if not refusals:
        return
    message = (
        ("the search backend is" if len(refusals) == 1 else "every search backend is")
        + " refused, so the run would search nothing: "
        + "; ".join(why for _, _, why in refusals)
        + "; no run was started"
    )
    if all(code == "unresolved" for _, code, _ in refusals):
        raise Unresolved(message, code="search-unresolved")
    raise Refused(message, code="search-refused")


def _allow_hint(url: str, code: str | None) -> str:
    """How to let the run reach a refused private backend: the exact --allow-host entry."""
    if code != "refused-ssrf":
        return ""
    parts = urlsplit(url)
    if not parts.hostname:
        return ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f". Allow it with --allow-host {host}:{port} (or RESEARCH_ENGINE_ALLOW_HOSTS)"


def preflight(
    brief_path: str | Path,
    options: EngineOptions,
    settings: Settings,
    check_model: Callable[[], Any] | None = None,
    corpora: int = 0,
) -> None:
    """What must hold before a new run is locked, in order: a valid brief (2), a search backend and the
    model's endpoint configured (5, `check_model`), a backend the guard lets through (3, or 4). `run` calls
    it before it loads the engine, so a doomed run stops at once; `loop.start` calls it again for library
    callers (it reads and resolves, it writes nothing). `corpora`: how many corpus folders the run serves
    itself (each is a search backend)."""
    check_brief(brief_path, options)
    if options.sources is not None and not (options.sources and set(options.sources) <= set(Modality)):
        return  # `loop.start` refuses the unknown name (2) before anything is asked of the network
    check_search_configured(options, settings, corpora=corpora)
    if check_model is not None:
        check_model()
    if not options.replay:  # a replay contacts nothing: its cassette answers as the recording was answered
        check_search_reachable(options, settings, corpora=corpora)
