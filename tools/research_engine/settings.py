"""The machine's configuration: one typed object, read from the environment once, at the edge.

The brief configures a run; `Settings` configures the machine's services: which
search backends exist and where, the OpenAI-compatible model endpoint, a contact
for polite API use, base-URL overrides for every API (tests and replays point
them at local servers), the private-address opt-ins and the HTTP cache.

`Settings.from_env()` is called by the CLI (`cli/_common.settings`) and by
scripts; everything below takes a `Settings` argument and reads no environment.
This is the only module of the package that touches `os.environ`.

Secrets (API keys) are fields like any other but never appear in `repr`, in
`public()` (what a cassette records) or in the trace; `secret_values` lists every
credential-looking value in the environment, so the redaction module can scrub
one wherever an upstream echoes it back.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from research_engine.errors import BadInput
from research_engine.redaction import redact_url

# The public defaults; each is overridable by its variable in `BASE_URL_VARS`.
DEFAULT_BASE_URLS: dict[str, str] = {
    "openalex": "https://api.openalex.org",
    "worldbank": "https://api.worldbank.org/v2",
    "brave": "https://api.search.brave.com/res/v1",
    "tavily": "https://api.tavily.com",
    "duckduckgo": "https://html.duckduckgo.com/html/",
    "arxiv": "https://export.arxiv.org/api",
    "arxiv_web": "https://arxiv.org",  # abstract pages and PDFs
    "crossref": "https://api.crossref.org",
    "europepmc": "https://www.ebi.ac.uk/europepmc/webservices/rest",
    "wikipedia": "https://en.wikipedia.org",
}
# Each keyless service's published pacing, seconds between two requests to its host: arXiv asks for one
# request every 3 s; Europe PMC for about one a second; Crossref's polite pool allows 10 a second.
POLITE_INTERVALS: dict[str, float] = {"arxiv": 3.0, "europepmc": 1.0, "crossref": 0.1}
BASE_URL_VARS: dict[str, str] = {
    "openalex": "RESEARCH_ENGINE_OPENALEX_URL",
    "worldbank": "RESEARCH_ENGINE_WORLDBANK_URL",
    "brave": "RESEARCH_ENGINE_BRAVE_URL",
    "tavily": "RESEARCH_ENGINE_TAVILY_URL",
    "duckduckgo": "RESEARCH_ENGINE_DUCKDUCKGO_URL",
    "arxiv": "RESEARCH_ENGINE_ARXIV_URL",
    "arxiv_web": "RESEARCH_ENGINE_ARXIV_WEB_URL",
    "crossref": "RESEARCH_ENGINE_CROSSREF_URL",
    "europepmc": "RESEARCH_ENGINE_EUROPEPMC_URL",
    "wikipedia": "RESEARCH_ENGINE_WIKIPEDIA_URL",
}

# Every variable the engine reads, with the field it fills (documented in README's configuration table).
VARIABLES: dict[str, str] = {
    "SEARXNG_URL": "searxng_url",
    "BRAVE_API_KEY": "brave_api_key",
    "TAVILY_API_KEY": "tavily_api_key",
    "RESEARCH_ENGINE_ALLOW_DDG": "allow_ddg",
    "RESEARCH_ENGINE_SEARCH_ORDER": "search_order",
    "OPENALEX_API_KEY": "openalex_api_key",
    "RESEARCH_ENGINE_MAILTO": "mailto",
    "RESEARCH_ENGINE_MODEL_BASE_URL": "model_base_url",
    "RESEARCH_ENGINE_MODEL": "model",
    "RESEARCH_ENGINE_MODEL_API_KEY": "model_api_key",
    "RESEARCH_ENGINE_MODEL_TIMEOUT": "model_timeout",
    "RESEARCH_ENGINE_MODEL_CONTEXT": "model_context",
    "RESEARCH_ENGINE_MODEL_RULE_STAGES": "model_rule_stages",
    "RESEARCH_ENGINE_ALLOW_PRIVATE": "allow_private",
    "RESEARCH_ENGINE_ALLOW_HOSTS": "allow_hosts",
    "RESEARCH_ENGINE_CACHE_DIR": "cache_dir",
    "RESEARCH_ENGINE_RANKING": "ranking",
    **{var: f"base_urls.{name}" for name, var in BASE_URL_VARS.items()},
}
# Fields that hold credentials: never recorded, never shown.
SECRET_FIELDS = ("brave_api_key", "tavily_api_key", "openalex_api_key", "model_api_key")
# Environment names whose values are credentials, wherever they come from (scrubbed from anything stored).
SECRET_VARIABLE = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD)$")
SECRET_MIN_CHARS = 6  # shorter values would scrub ordinary words


def default_cache_root() -> Path:
    """Where caches live when `RESEARCH_ENGINE_CACHE_DIR` is not set."""
    return Path.home() / ".cache" / "research-engine"


def _text(environ: Mapping[str, str], name: str) -> str | None:
    value = (environ.get(name) or "").strip()
    return value or None


def _positive(environ: Mapping[str, str], name: str, kind: type[int] | type[float]) -> Any:
    """A positive number from `name`, or None when unset; a clear error (exit 2) when it is not one."""
    value = _text(environ, name)
    if value is None:
        return None
    try:
        number = kind(value)
    except ValueError:
        number = 0
    if not number > 0:
        raise BadInput(
            f"{name} must be a positive {kind.__name__}, not {value!r}", code="bad-setting", field=name
        )
    return number


@dataclass(frozen=True)
class Settings:
    """Where the engine's services are and what they may do. Immutable; `replace` derives a variant."""

    searxng_url: str | None = None
    brave_api_key: str | None = field(default=None, repr=False)
    tavily_api_key: str | None = field(default=None, repr=False)
    allow_ddg: bool = False
    search_order: str | None = None  # raw "searxng,brave"; sources.search validates the names
    openalex_api_key: str | None = field(default=None, repr=False)
    mailto: str | None = None
    model_base_url: str | None = None
    model: str | None = None
    model_api_key: str | None = field(default=None, repr=False)
    # Seconds one model call may take (a CPU model needs minutes; page fetches keep their own timeouts).
    model_timeout: float | None = None
    # The model's context window in tokens; None: what the server reports, else a conservative default.
    model_context: int | None = None
    # Stages the extractive rule does instead of the model ("select,write", "none"); None: as measured.
    model_rule_stages: str | None = None
    base_urls: dict[str, str] = field(default_factory=dict)  # overrides of DEFAULT_BASE_URLS
    allow_private: bool = False
    # Hosts (HOST or HOST:PORT) allowed despite a private address; net.guard.parse_allow_host checks them.
    allow_hosts: tuple[str, ...] = ()
    cache_dir: Path | None = None  # None: ~/.cache/research-engine
    ranking: Path | None = None  # other weights for the extractive sentence ranking (None: the shipped ones)
    secret_values: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every variable once (`environ` defaults to the process environment)."""
        env = os.environ if environ is None else environ
        cache = _text(env, "RESEARCH_ENGINE_CACHE_DIR")
        secrets = {
            value
            for name, value in env.items()
            if SECRET_VARIABLE.search(name) and len(value.strip()) >= SECRET_MIN_CHARS
        }
        return cls(
            searxng_url=_text(env, "SEARXNG_URL"),
            brave_api_key=_text(env, "BRAVE_API_KEY"),
            tavily_api_key=_text(env, "TAVILY_API_KEY"),
            allow_ddg=_text(env, "RESEARCH_ENGINE_ALLOW_DDG") == "1",
            search_order=_text(env, "RESEARCH_ENGINE_SEARCH_ORDER"),
            openalex_api_key=_text(env, "OPENALEX_API_KEY"),
            mailto=_text(env, "RESEARCH_ENGINE_MAILTO"),
            model_base_url=_text(env, "RESEARCH_ENGINE_MODEL_BASE_URL"),
            model=_text(env, "RESEARCH_ENGINE_MODEL"),
            model_api_key=_text(env, "RESEARCH_ENGINE_MODEL_API_KEY"),
            model_timeout=_positive(env, "RESEARCH_ENGINE_MODEL_TIMEOUT", float),
            model_context=_positive(env, "RESEARCH_ENGINE_MODEL_CONTEXT", int),
            model_rule_stages=_text(env, "RESEARCH_ENGINE_MODEL_RULE_STAGES"),
            base_urls={
                name: value for name, var in BASE_URL_VARS.items() if (value := _text(env, var)) is not None
            },
            allow_private=_text(env, "RESEARCH_ENGINE_ALLOW_PRIVATE") == "1",
            allow_hosts=tuple(
                h.strip() for h in (_text(env, "RESEARCH_ENGINE_ALLOW_HOSTS") or "").split(",") if h.strip()
            ),
            cache_dir=Path(cache).expanduser() if cache else None,
            ranking=Path(ranking).expanduser()
            if (ranking := _text(env, "RESEARCH_ENGINE_RANKING"))
            else None,
            # Longest first, so no secret is scrubbed half by a shorter one it contains.
            secret_values=tuple(sorted(secrets, key=len, reverse=True)),
        )

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def base_url(self, name: str) -> str:
        """The API base of source `name`: its override, or the public default."""
        value = self.base_urls.get(name) or DEFAULT_BASE_URLS[name]
        # DuckDuckGo's base is the endpoint itself (`/html/`, trailing slash and all).
        return value if name == "duckduckgo" else value.rstrip("/")

    def polite_intervals(self) -> dict[str, float]:
        """{host: seconds} between two requests to each keyless service's host (`POLITE_INTERVALS`). A base
        with an explicit port (a local stand-in, a mirror) is keyed `host:port`, so its pacing never reaches
        another service on the same machine (a corpus server on 127.0.0.1)."""
        out: dict[str, float] = {}
        for name, seconds in POLITE_INTERVALS.items():
            parts = urlsplit(self.base_url(name))
            host = (parts.hostname or "").lower()
            try:
                port = parts.port
            except ValueError:
                port = None
            host = f"{host}:{port}" if host and port is not None else host
            if host:
                out[host] = max(seconds, out.get(host, 0.0))
        return out

    def contact_agent(self, agent: str) -> str:
        """`agent` with the contact address the services ask for (Wikipedia, Crossref), when one is set."""
        return f"{agent} (mailto:{self.mailto})" if self.mailto else agent

    @property
    def searxng_endpoint(self) -> str:
        """SearXNG's search URL: `SEARXNG_URL` itself when it names `/search`, else that path under it."""
        base = (self.searxng_url or "").rstrip("/")
        return base if base.endswith("/search") else f"{base}/search"

    def provider_endpoints(self) -> tuple[str, ...]:
        """The search backends' and data APIs' endpoints: a request to one is a provider call (a budget).
        SearXNG's search path only, since a local corpus serves its pages from the same origin."""
        endpoints = [self.searxng_endpoint if self.searxng_url else ""]
        endpoints += [self.base_url(name) for name in DEFAULT_BASE_URLS]
        return tuple(e.rstrip("/") for e in endpoints if e)

    @property
    def cache_root(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else default_cache_root()

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every credential this process knows: configured keys and credential-looking variables."""
        configured = {getattr(self, name) for name in SECRET_FIELDS} - {None}
        known = set(self.secret_values) | {str(v) for v in configured if len(str(v)) >= SECRET_MIN_CHARS}
        return tuple(sorted(known, key=len, reverse=True))

    def public(self) -> dict[str, Any]:
        """The configuration without a secret in it, by variable name: what a recorded run keeps so a
        replay or a resume configures itself the same way. Keyed backends are named, never their keys."""
        env: dict[str, str] = {}
        for var, name in VARIABLES.items():
            if name in SECRET_FIELDS or name in ("cache_dir", "allow_private", "allow_hosts"):
                continue
            value = self._value(name)
            if value in (None, False, ""):
                continue
            text = "1" if value is True else str(value)
            env[var] = redact_url(text, self.secrets) if "://" in text else text
        keyed = [var for var, name in VARIABLES.items() if name in SECRET_FIELDS and self._value(name)]
        return {"env": env, "keyed": keyed}

    def _value(self, name: str) -> Any:
        if name.startswith("base_urls."):
            return self.base_urls.get(name.split(".", 1)[1])
        return getattr(self, name)

    @classmethod
    def from_public(cls, recorded: Mapping[str, Any], *, underneath: Settings | None = None) -> Settings:
        """Settings as a recording describes them (`public()`'s shape).

        Without `underneath` (a replay) everything comes from the recording and keyed backends get a
        placeholder key: a cassette never holds keys and its matching ignores them. With `underneath`
        (a live resume) the current settings win and only what they leave unset is filled in.
        """
        environ = {str(k): str(v) for k, v in (recorded.get("env") or {}).items() if k in VARIABLES}
        if underneath is None:
            environ.update(
                {var: "replay-placeholder" for var in recorded.get("keyed") or [] if var in VARIABLES}
            )
            return cls.from_env(environ)
        filled = cls.from_env(environ)
        changes: dict[str, Any] = {}
        for name in (
            {n for n in VARIABLES.values() if not n.startswith("base_urls.")}
            - set(SECRET_FIELDS)
            - {"allow_hosts"}
        ):
            if getattr(underneath, name) in (None, False) and getattr(filled, name) not in (None, False):
                changes[name] = getattr(filled, name)
        base_urls = {**filled.base_urls, **underneath.base_urls}
        return underneath.replace(base_urls=base_urls, **changes)
