"""Select: what every search offered a sub-question, scored, deduplicated and chosen, with the reasons.

- `candidates`: `select/SQ-NN.candidates.json`, every query's candidates with the backend chain;
- `scoring`: the pure part (facts in, scores and verdicts out; the tables are data);
- `log`: `select/SQ-NN.selection.md`, the selection-and-trust log (`log_selection`).
"""

from __future__ import annotations

from research_engine.selection.log import chosen, kinds_of, load, log_selection, to_fetch
from research_engine.selection.scoring import FIT, load_candidates

__all__ = ["FIT", "chosen", "kinds_of", "load", "load_candidates", "log_selection", "to_fetch"]
