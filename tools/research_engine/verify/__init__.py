"""Verification: the independent re-fetch, the mechanical floor, verdicts, the contestation file.

Three steps, each a command:

- `prepare` (`worksheet`): re-fetch every source the chosen claims cite, INDEPENDENTLY
  (`refetch`): a fresh request through `net.HttpClient` with the HTTP cache off (never
  the retrieve/ copy, never a cached body); for API sources (OpenAlex, World Bank) the
  same API request is re-issued. Each fresh copy is kept in verify/evidence/ (and its
  raw bytes in snapshots/). Then the mechanical checks run per claim against that fresh
  copy (`floor`): cited at all, source reachable, changed since retrieval (digest
  differs), quote found (exact or normalized, with its score, else the closest window),
  numbers in the claim carried by its quotes. The checks set each claim's FLOOR, the
  loosest verdict the evidence allows. Written to verify/worksheet.md, with `prepared_by`:
  the Claude Code agent that ran it (`--agent`), carried into the contestation at close;
  `check_verify` flags any name but the research-verifier agent's.
- `record` (`worksheet`): the verifier's verdict for one claim, as CHL-NN in the
  worksheet. A verdict looser than the floor is not accepted: the floor is recorded
  instead (`forced: true`, the requested verdict kept) and the call exits 1. At most one
  corroboration query per claim in the whole run; a second is refused and logged.
- `close` (`contestation`): every prepared claim must have a verdict (claims whose floor
  is refuse get it recorded mechanically); the previous cycle's verify/contestation.md is
  archived to verify/contestation.cycle-NN.md and a new one is written with the
  per-claim blocks and the summary; run.json's grounding, refused_ever and
  refused_claims are updated. `check_verify` is the validate checker of verify/.

The floor (strictest first, `vocabulary.Verdict`):
  refuse   un-cited claim (no evidence, or a cited source that is not in the run);
           every cited source unreachable and no corroboration query;
           a quote absent from its reachable fresh copy;
           a number in the claim that no quote carries.
  partial  some (not all) sources unreachable, or all unreachable with a corroboration
           query (the evidence could not be re-read, so it cannot be `supported`).
  supported otherwise. A changed digest alone does not lower the floor (pages change
           their chrome); it is shown in the worksheet.

Modules, in the order they depend on one another: `refetch` (the only one that touches
the network), `floor` (pure), `worksheet`, `contestation`. Tests tune the verifier's own
client through `refetch.CLIENT_OPTIONS`.

Nothing here judges meaning: the verifier (an agent or a model) does that through
`record`. Fetched text is data; nothing in it is read as an instruction.
"""

from __future__ import annotations

from research_engine.runstate import all_contestations
from research_engine.verify.contestation import check_verify, close, summarize
from research_engine.verify.floor import check_claim, floor_of
from research_engine.verify.refetch import FreshCopy, fetch_fresh
from research_engine.verify.worksheet import load_worksheet, prepare, record

__all__ = [
    "FreshCopy",
    "all_contestations",
    "check_claim",
    "check_verify",
    "close",
    "fetch_fresh",
    "floor_of",
    "load_worksheet",
    "prepare",
    "record",
    "summarize",
]
