"""The fitted sentence ranking: a linear score over `features.FEATURES`, its weights shipped as data.

`sentence_ranker.json` beside this module holds one weight per feature and the keep margin, fitted by
`bench/fit_ranking.py` on the labelled dev set (which sentences hold must-find facts on answer pages) and
validated leave-one-set-out; `sentence_ranker.md` is its card (what it was fitted on, when, how it scored on
the sets it was not fitted on). A sentence's score is the sum of weight x value; a claim is kept while its
score stays within `keep_margin` of the sub-question's best chosen claim.

RESEARCH_ENGINE_RANKING names another weights file (the benchmark's leave-one-set-out runs use it); a file
that does not fit the features is refused with one line. Deterministic: no randomness, no network, plain
float sums in a fixed order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from research_engine.engine.extractive.features import FEATURE_NAMES
from research_engine.errors import BadInput
from research_engine.settings import Settings

WEIGHTS_FILE = Path(__file__).with_name("sentence_ranker.json")
WEIGHTS_ENV = "RESEARCH_ENGINE_RANKING"
SCHEMA = "sentence-ranker/1"


@dataclass(frozen=True)
class Ranker:
    """Weights in `FEATURE_NAMES` order and the keep margin (in score units)."""

    weights: tuple[float, ...]
    keep_margin: float
    source: str = ""

    def score(self, values: list[float]) -> float:
        return sum(w * v for w, v in zip(self.weights, values, strict=True))

    @classmethod
    def from_dict(cls, data: dict[str, object], source: str = "") -> Ranker:
        weights = data.get("weights")
        if data.get("schema") != SCHEMA or not isinstance(weights, dict):
            raise BadInput(f"{source or 'ranking weights'}: not a {SCHEMA} file", code="bad-ranking")
        unknown = sorted(set(weights) - set(FEATURE_NAMES))
        if unknown:
            raise BadInput(
                f"{source or 'ranking weights'}: weights for unknown features {', '.join(unknown)}",
                code="bad-ranking",
            )
        margin = data.get("keep_margin")
        return cls(
            tuple(float(weights.get(name, 0.0)) for name in FEATURE_NAMES),
            float(margin) if isinstance(margin, int | float) else float("inf"),
            source,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "schema": SCHEMA,
            "weights": {n: round(w, 6) for n, w in zip(FEATURE_NAMES, self.weights, strict=True)},
            "keep_margin": round(self.keep_margin, 6),
        }


def default_ranker() -> Ranker:
    """The shipped weights, or those RESEARCH_ENGINE_RANKING names (`settings.Settings.ranking`)."""
    return _load(str(Settings.from_env().ranking or WEIGHTS_FILE))


@cache
def _load(path: str) -> Ranker:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(
            f"cannot read ranking weights {path}: {exc.strerror or exc}", code="bad-ranking"
        ) from None
    except ValueError:
        raise BadInput(f"ranking weights {path} are not JSON", code="bad-ranking") from None
    if not isinstance(data, dict):
        raise BadInput(f"ranking weights {path}: not a {SCHEMA} file", code="bad-ranking")
    return Ranker.from_dict(data, path)
