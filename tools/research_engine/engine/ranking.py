"""Ranking utilities both models use: Okapi BM25 over tokenized texts (k1 1.5, b 0.75, IDF over the pool).

A small own implementation rather than rank-bm25: it is twenty lines, needs no dependency, and this way the
tokenizer, stop words and tie-breaking stay the caller's. Pure.
"""

from __future__ import annotations

import math
from collections import Counter

BM25_K1 = 1.5
BM25_B = 0.75


def idf_table(documents: list[list[str]]) -> dict[str, float]:
    """BM25's IDF of every term of the pool (log(1 + (N - df + 0.5) / (df + 0.5)), never negative)."""
    n = len(documents)
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc))
    return {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}


def bm25_scores(query: list[str], documents: list[list[str]]) -> list[float]:
    """Okapi BM25 score of each tokenized document for the tokenized query (IDF over `documents`)."""
    n = len(documents)
    if not n or not query:
        return [0.0] * n
    avgdl = sum(len(d) for d in documents) / n or 1.0
    idf = idf_table(documents)
    scores = []
    for doc in documents:
        tf = Counter(doc)
        score = 0.0
        for term in query:
            if term not in tf:
                continue
            freq = tf[term]
            score += (
                idf[term] * freq * (BM25_K1 + 1) / (freq + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
            )
        scores.append(score)
    return scores
