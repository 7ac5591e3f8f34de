"""Okapi BM25 over short texts, with the project's tokenizer (`terms`): which passages of a source best
match a question.

The one BM25 of the package (IDF log(1 + (N - df + 0.5) / (df + 0.5)), never negative; k1 1.2 and b 0.75
unless the caller sets them: the extractive model ranks sentences with k1 1.5), for the tools that show a
source to a model within a bound (`excerpts`) and for both models' ranking. Pure functions; no I/O.
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


def bm25_scores(query: list[str], documents: list[list[str]], *, k1: float = K1, b: float = B) -> list[float]:
    """The BM25 score of each tokenized document for the tokenized query (IDF over `documents`); a term the
    query holds twice counts twice (a caller weights a term by repeating it)."""
    if not documents or not query:
        return [0.0] * len(documents)
    avgdl = sum(len(d) for d in documents) / len(documents) or 1.0
    idf = idf_table(documents)
    weights = Counter(query)
    scores = []
    for doc in documents:
        tf = Counter(t for t in doc if t in weights)
        norm = k1 * (1 - b + b * len(doc) / avgdl)
        scores.append(sum(weights[t] * idf[t] * n * (k1 + 1) / (n + norm) for t, n in tf.items()))
    return scores
