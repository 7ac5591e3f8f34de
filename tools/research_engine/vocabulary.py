"""The closed sets of names the engine speaks in, defined once.

Every artifact, schema, prompt and rule uses these words; nothing else spells
them out. Each enum is a `StrEnum`, so a member IS its string (`Verdict.REFUSE ==
"refuse"`, JSON and YAML write the plain word), and `tools/tests/test_vocabulary.py`
checks each one against the matching `enum` in `schema/*.json`.

Order matters where it is meaningful and is stated: verdicts strictest first,
actions in the ladder's priority order after `stop`, depths shallow to deep.
This module imports nothing from the package: every layer may use it.
"""

from __future__ import annotations

from enum import StrEnum


class Depth(StrEnum):
    """How deep a run goes; the governor's cycle ceiling is `CYCLE_CEILING[depth]`."""

    QUICK = "quick"
    STANDARD = "standard"
    DEEP = "deep"


CYCLE_CEILING: dict[str, int] = {Depth.QUICK: 1, Depth.STANDARD: 2, Depth.DEEP: 3}


class ClaimType(StrEnum):
    FACTUAL = "factual"
    QUANTITATIVE = "quantitative"
    REGULATORY = "regulatory"
    COMPETITIVE = "competitive"
    TECHNICAL = "technical"


class Angle(StrEnum):
    """The four search angles a sub-question is searched from (DESIGN.md section 2)."""

    ENTITY = "entity"
    TIME = "time"
    SOURCE_TYPE = "source-type"
    COUNTER = "counter"


class Reproducibility(StrEnum):
    """What the brief asks for and a deliverable is labelled: free to re-check, or re-checkable when named."""

    REPRODUCIBLE = "reproducible"
    CHECKABLE = "checkable"


# A deliverable's label when the run retrieved no source: nothing to re-check (never a brief's request).
NO_SOURCES_LABEL = "no-sources"


class RunStatus(StrEnum):
    LOCKED = "locked"
    RUNNING = "running"
    COMPLETE = "complete"
    STOPPED = "stopped"
    FAILED = "failed"


class Budget(StrEnum):
    """The run budgets the governor watches (the brief's `budget` keys that bound a whole run)."""

    PROVIDER_CALLS = "provider_calls"
    FETCHED_BYTES = "fetched_bytes"
    MODEL_TOKENS = "model_tokens"
    WALL_CLOCK_SECONDS = "wall_clock_seconds"


class Action(StrEnum):
    """The controller's decisions: stop, then the ladder's rungs in priority order."""

    STOP = "stop"
    RE_RESEARCH = "re-research"
    SUPPLEMENT_GAP = "supplement-gap"
    GO_DEEPER = "go-deeper"
    RE_RETRIEVE = "re-retrieve"


class StopReason(StrEnum):
    """Why a run stopped. A spent budget stops with `budget:<name>` (`budget_stop`)."""

    CRITERION_MET = "criterion-met"
    GOVERNOR = "governor"
    STALLED = "stalled"
    DRY_RUN = "dry-run"


BUDGET_STOP_PREFIX = "budget:"


def budget_stop(name: str) -> str:
    """The stop reason for a spent budget: `budget:provider_calls`."""
    return f"{BUDGET_STOP_PREFIX}{Budget(name)}"


FAILURE_STOP_PREFIX = "failed:"


def failure_stop(code: str) -> str:
    """run.json's stop reason when a headless run ended on an error (status `failed`, resumable):
    `failed:<error code>`, e.g. `failed:upstream-failed`, `failed:interrupted` (Ctrl-C)."""
    return f"{FAILURE_STOP_PREFIX}{code}"


class Verdict(StrEnum):
    """The verifier's verdicts, strictest first (a verdict may be stricter than the floor, never looser)."""

    REFUSE = "refuse"
    PARTIAL = "partial"
    SUPPORTED = "supported"


VERDICT_STRICTNESS: dict[str, int] = {v: i for i, v in enumerate(Verdict)}


def stricter_or_equal(verdict: str, floor: str) -> bool:
    """True when `verdict` is at least as strict as `floor`."""
    return VERDICT_STRICTNESS[verdict] <= VERDICT_STRICTNESS[floor]


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class ClaimStatus(StrEnum):
    ACTIVE = "active"
    RETIRED = "retired"


class TensionStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


class LedgerEvent(StrEnum):
    """The kinds of record in the claims ledger's log (`consolidate/claims.jsonl`), in no order."""

    CLAIM_ADDED = "claim-added"
    CLAIM_RETIRED = "claim-retired"
    TENSION_ADDED = "tension-added"
    TENSION_RESOLVED = "tension-resolved"


class QuoteMatch(StrEnum):
    """How the grounding gate found a quote: verbatim, or after `grounding.normalize`."""

    EXACT = "exact"
    NORMALIZED = "normalized"


class GapSeverity(StrEnum):
    MATERIAL = "material"
    COSMETIC = "cosmetic"


class GapStatus(StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class SourceKind(StrEnum):
    """What a recorded source is: a web page, an API answer, a search result page, a local file."""

    WEB = "web"
    OPENALEX = "openalex"
    WORLDBANK = "worldbank"
    SEARCH = "search"
    FILE = "file"
    ARXIV = "arxiv"
    CROSSREF = "crossref"
    EUROPEPMC = "europepmc"
    WIKIPEDIA = "wikipedia"


class CandidateKind(StrEnum):
    """What a selection candidate is retrieved as (the source kinds a gather yields)."""

    WEB = "web"
    OPENALEX = "openalex"
    WORLDBANK = "worldbank"
    ARXIV = "arxiv"
    CROSSREF = "crossref"
    EUROPEPMC = "europepmc"
    WIKIPEDIA = "wikipedia"


API_KINDS: tuple[str, ...] = (
    CandidateKind.OPENALEX,
    CandidateKind.WORLDBANK,
    CandidateKind.ARXIV,
    CandidateKind.CROSSREF,
    CandidateKind.EUROPEPMC,
    CandidateKind.WIKIPEDIA,
)
# The keyless scholarly and reference sources (issue 27): searched per sub-question, routed by claim type
# and angle (`engine.apigather.route`).
KEYLESS_KINDS: tuple[str, ...] = API_KINDS[2:]


class AccessTier(StrEnum):
    OPEN = "open"
    FREE_KEY = "free-key"
    PAID = "paid"
    GATED = "gated"


class SourceType(StrEnum):
    PEER = "peer"
    PRIMARY = "primary"
    PRESS = "press"
    PRACTITIONER = "practitioner"
    DATA = "data"


class Backend(StrEnum):
    """Where candidates come from: the four web search backends and the two data APIs."""

    SEARXNG = "searxng"
    BRAVE = "brave"
    TAVILY = "tavily"
    DUCKDUCKGO = "duckduckgo"
    OPENALEX = "openalex"
    WORLDBANK = "worldbank"
    CORPUS = "corpus"  # a `run --corpus DIR` folder's own search
    ARXIV = "arxiv"
    CROSSREF = "crossref"
    EUROPEPMC = "europepmc"
    WIKIPEDIA = "wikipedia"


WEB_BACKENDS: tuple[str, ...] = (Backend.SEARXNG, Backend.BRAVE, Backend.TAVILY, Backend.DUCKDUCKGO)


class Modality(StrEnum):
    """What a headless run gathers from (`run --sources`)."""

    WEB = "web"
    OPENALEX = "openalex"
    WORLDBANK = "worldbank"
    ARXIV = "arxiv"
    CROSSREF = "crossref"
    EUROPEPMC = "europepmc"
    WIKIPEDIA = "wikipedia"


class GatherCommand(StrEnum):
    """The commands whose answers a candidates file records."""

    SEARCH = "search"
    OPENALEX_SEARCH = "openalex search"
    WORLDBANK_INDICATORS = "worldbank indicators"
    CORPUS_SEARCH = "corpus search"
    ARXIV_SEARCH = "arxiv search"
    CROSSREF_SEARCH = "crossref search"
    EUROPEPMC_SEARCH = "europepmc search"
    WIKIPEDIA_SEARCH = "wikipedia search"


class ChainOutcome(StrEnum):
    """One search backend's outcome in the fallback chain."""

    OK = "ok"
    EMPTY = "empty"
    FAILED = "failed"


class SelectionHint(StrEnum):
    """A judge's (agent's or model's) hint on a candidate; the score decides."""

    CHOOSE = "choose"
    REJECT = "reject"


class SelectionVerdict(StrEnum):
    CHOSEN = "chosen"
    REJECTED = "rejected"


class FetchError(StrEnum):
    """Why a fetch failed: the one error code a failed `net.FetchResult` carries."""

    REFUSED_SSRF = "refused-ssrf"
    REFUSED_SCHEME = "refused-scheme"
    REFUSED_ROBOTS = "refused-robots"
    UNRESOLVED = "unresolved"
    HTTP_STATUS = "http-status"
    TIMEOUT = "timeout"
    TOO_LARGE = "too-large"
    UNSUPPORTED_TYPE = "unsupported-type"
    DECODE_ERROR = "decode-error"
    NETWORK = "network"
    TOO_MANY_REDIRECTS = "too-many-redirects"
    REDIRECT_LOOP = "redirect-loop"
    EMPTY = "empty"


class ModelStage(StrEnum):
    """The judgement steps a headless run asks a model for (run.json `model.use` is keyed by them)."""

    DECOMPOSE = "decompose"
    QUERIES = "queries"
    SELECT = "select"
    CONSOLIDATE = "consolidate"
    VERIFY = "verify"
    CRITIC = "critic"
    WRITE = "write"


class ModelFailure(StrEnum):
    """Why a model call failed, classified from the server's answer (each has its own reaction)."""

    CONTEXT_LENGTH = "context-length"  # the prompt and the answer room exceed the context: trim and re-ask
    UNSUPPORTED_PARAMETER = "unsupported-parameter"  # e.g. response_format: step down the output ladder
    TIMEOUT = "timeout"  # never resent blindly: a single-slot server is still working on it
    RATE_LIMITED = "rate-limited"  # 429: retried once after Retry-After
    SERVER_ERROR = "server-error"  # 5xx
    BAD_REQUEST = "bad-request"  # another 4xx
    NETWORK = "network"  # connection refused or reset
    BAD_REPLY = "bad-reply"  # a 200 that is not a chat completion


class ModelRejection(StrEnum):
    """Why a model's reply was not used (counted per stage, an event each)."""

    NOT_JSON = "not-json"
    TRUNCATED = "truncated"  # finish_reason "length": the reply was cut off
    SCHEMA = "schema"  # valid JSON of the wrong shape
    PLACEHOLDER = "placeholder"  # "...", "<source id>", "reject" as a reason: the template echoed back
    EMPTY = "empty"
    QUOTE_NOT_IN_SOURCE = "quote-not-in-source"  # a claim whose quote is not in the cited source
    UNKNOWN_PICK = "unknown-pick"  # picks naming no numbered candidate
    UNCITED = "uncited"  # a deliverable with no claim citation
    PROSE_CHECK = "prose-check"  # a deliverable `report check` refused


# The verifier agent's names in Claude Code: as a project agent, and namespaced by the plugin.
VERIFIER_AGENT = "research-verifier"
VERIFIER_NAMES = frozenset({VERIFIER_AGENT, "research-engine:" + VERIFIER_AGENT})
