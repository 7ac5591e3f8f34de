"""The claims ledger (consolidate): claims CLM-NN, each grounded in verbatim quotes of recorded sources,
their retirement, and tensions T-NN between them.

- `log`: the machine truth, `consolidate/claims.jsonl`, an append-only log of ledger events (one JSON
  object a line, schema `claim-record`), and `load`, which folds it into the ledger callers use
  (`{"schema_version", "claims", "tensions"}`, schema `claims`);
- `gate`: the grounding gate every claim passes before it is recorded;
- `spans`: evidence by reference (`SQ-01/SRC-02#p05.s2`): `resolve_span` copies the verbatim words a span
  names from the recorded source (public: the headless models use it too);
- `ledger`: the writes (add, retire, tension add and resolve), each one record appended under the run
  lock, and the questions callers ask (active claims, open tensions);
- `draft`: `consolidate/synthesis.draft.md`, the ledger rendered for people at stage boundaries, saying
  how many records it shows; and the one-off migration of runs made before the log;
- `check`: `validate`'s checker.

Adding a claim appends one record and reads nothing of the ledger, so it costs the same at 0 and at
1,000 claims (`bench/claims.py`). This package never judges whether a claim is true (the verifier does,
against its own fresh copy) and never deletes a claim: retired claims stay.
"""

from __future__ import annotations

from research_engine.claims.check import check_claims
from research_engine.claims.draft import migrate, questions, refresh, render
from research_engine.claims.gate import MIN_QUOTE_CHARS, check_claim, source_text
from research_engine.claims.ledger import (
    CONFIDENCE,
    active_claims,
    add_claim,
    add_tension,
    get_claim,
    open_tensions,
    record_claim,
    resolve_tension,
    retire,
)
from research_engine.claims.listing import bound_listing
from research_engine.claims.log import RECORD_SCHEMA, SCHEMA, SCHEMA_VERSION, fold, load
from research_engine.claims.spans import ResolvedSpan, resolve_span

__all__ = [
    "CONFIDENCE",
    "MIN_QUOTE_CHARS",
    "RECORD_SCHEMA",
    "ResolvedSpan",
    "SCHEMA",
    "SCHEMA_VERSION",
    "active_claims",
    "add_claim",
    "add_tension",
    "bound_listing",
    "check_claim",
    "check_claims",
    "fold",
    "get_claim",
    "load",
    "migrate",
    "open_tensions",
    "questions",
    "record_claim",
    "refresh",
    "render",
    "resolve_span",
    "resolve_tension",
    "retire",
    "source_text",
]
