"""Okapi BM25 over short texts, with the project's tokenizer (`terms`): which passages of a source best
match a question.

The readers' copy of the ranking the extractive model and the corpus server each keep (k1 1.2, b 0.75,
IDF log(1 + (N - df + 0.5) / (df + 0.5)), never negative), here for the tools that show a source to a
model within a bound (`excerpts`). Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections import Counter

from research_engine.terms import STOP_WORDS, fold, words

K1 = 1.2
B = 0.75


def tokens(text: str) -> list[str]:
    """Folded content words (stop words and one-letter words dropped), in order."""
    return [fold(w) for w in words(text) if w not in STOP_WORDS and len(w) > 1]


def idf_table(documents: list[list[str]]) -> dict[str, float]:
    n = len(documents)
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc))
    return {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}


def bm25_scores(query: list[str], documents: list[list[str]]) -> list[float]:
    """The BM25 score of each tokenized document for the tokenized query (IDF over `documents`)."""
    if not documents or not query:
        return [0.0] * len(documents)
    avgdl = sum(len(d) for d in documents) / len(documents) or 1.0
    idf = idf_table(documents)
    wanted = set(query)
    scores = []
    for doc in documents:
        tf = Counter(t for t in doc if t in wanted)
        norm = K1 * (1 - B + B * len(doc) / avgdl)
        scores.append(sum(idf[t] * n * (K1 + 1) / (n + norm) for t, n in tf.items()))
    return scores
