"""The fetch policy: what a client may fetch and how, decided in one place from the settings and the run.

Every client the engine opens (the `fetch` command, the search and API commands, the
verifier's independent re-fetch, the headless engine) is built from a `FetchPolicy`
made by `fetch_policy`, so the opt-ins a run was locked with, the machine's settings
and a command's flags combine the same way everywhere:

- private and loopback addresses are allowed when the command asks (`--allow-private`),
  the machine allows them (`RESEARCH_ENGINE_ALLOW_PRIVATE=1`) or the run was locked
  with the opt-in (run.json `allow_private`);
- named hosts (`HOST` or `HOST:PORT`) are allowed despite a private address, and only they,
  from the command's `--allow-host`, `RESEARCH_ENGINE_ALLOW_HOSTS` and the run's
  run.json `allow_hosts` together; a malformed entry is bad input;
- robots.txt is consulted unless the command says `--ignore-robots`;
- PDF is accepted only when asked for;
- the revalidation cache lives in `Settings.cache_root`, and is off for the verifier
  (a cached body is not an independent copy) and while recording or replaying;
- a client opened for a run is metered into the run's spend ledger (`spend.RunMeter`: provider calls
  and fetched bytes, a call past a budget refused with exit 7) unless the caller brings its own meter
  (the headless engine).

The SSRF guard, caps and politeness themselves live in the client; this module only
decides the options it is opened with.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research_engine import runrecord, spend
from research_engine.errors import BadInput
from research_engine.net.client import HttpClient
from research_engine.net.guard import parse_allow_host
from research_engine.settings import Settings
from research_engine.trace import Run


@dataclass(frozen=True)
class FetchPolicy:
    allow_private: bool = False
    allow_hosts: tuple[str, ...] = ()  # HOST or HOST:PORT entries, normalized
    ignore_robots: bool = False
    allow_pdf: bool = False
    cache_dir: Path | None = None
    use_cache: bool = True
    secrets: tuple[str, ...] = field(default=(), repr=False)  # scrubbed from the client's logs
    host_intervals: dict[str, float] = field(default_factory=dict)  # published pacing per host
    # Further HttpClient options (politeness tuning, a cassette's transport hook and resolver).
    client_options: dict[str, Any] = field(default_factory=dict)

    @property
    def accept(self) -> tuple[str, ...]:
        """The content families a page fetch accepts under this policy."""
        return ("html", "text", "pdf") if self.allow_pdf else ("html", "text")

    def replace(self, **changes: Any) -> FetchPolicy:
        return dataclasses.replace(self, **changes)

    def client(self, **overrides: Any) -> HttpClient:
        """A new HttpClient under this policy (the caller closes it)."""
        options: dict[str, Any] = {
            "allow_private": self.allow_private,
            "allow_hosts": self.allow_hosts,
            "ignore_robots": self.ignore_robots,
            "cache_dir": self.cache_dir,
            "use_cache": self.use_cache,
            "secrets": self.secrets,
            "host_intervals": self.host_intervals,
            **self.client_options,
            **overrides,
        }
        return HttpClient(**options)


def run_allows_private(run: Run) -> bool:
    """Whether `run` was locked with the private-address opt-in (recorded in run.json)."""
    try:
        return bool(runrecord.read(run).get("allow_private"))
    except BadInput:
        return False


def run_allowed_hosts(run: Run) -> list[str]:
    """The hosts `run` was locked (or later run) with `--allow-host` (recorded in run.json)."""
    try:
        hosts = runrecord.read(run).get("allow_hosts") or []
    except BadInput:
        return []
    return [str(h) for h in hosts] if isinstance(hosts, list) else []


def allow_host_entries(entries: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`--allow-host` entries normalized (`Example.ORG.` -> `example.org`), in order, without repeats;
    BadInput naming the first malformed one."""
    out: list[str] = []
    for entry in entries:
        try:
            host, port = parse_allow_host(entry)
        except ValueError as exc:
            raise BadInput(f"--allow-host {exc}", code="bad-allow-host", field="allow_host") from exc
        shown = f"[{host}]" if ":" in host else host
        text = f"{shown}:{port}" if port is not None else shown
        if text not in out:
            out.append(text)
    return tuple(out)


def fetch_policy(
    settings: Settings,
    run: Run | None = None,
    *,
    allow_private: bool = False,
    allow_hosts: list[str] | tuple[str, ...] = (),
    ignore_robots: bool = False,
    allow_pdf: bool = False,
    use_cache: bool = True,
    client_options: dict[str, Any] | None = None,
) -> FetchPolicy:
    """The one place a client's policy is decided: the command's flags, the settings, the run's opt-ins."""
    private = allow_private or settings.allow_private or (run is not None and run_allows_private(run))
    hosts = [*allow_hosts, *settings.allow_hosts, *(run_allowed_hosts(run) if run is not None else [])]
    options = dict(client_options or {})
    if run is not None and options.get("meter") is None:
        options["meter"] = spend.RunMeter(run, settings.provider_endpoints())
    return FetchPolicy(
        allow_private=private,
        allow_hosts=allow_host_entries(hosts),
        ignore_robots=ignore_robots,
        allow_pdf=allow_pdf,
        cache_dir=settings.cache_root,
        use_cache=use_cache,
        secrets=settings.secrets,
        host_intervals=settings.polite_intervals(),
        client_options=options,
    )
