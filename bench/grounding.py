#!/usr/bin/env python3
"""How long the grounding gate takes to find (or fail to find) a quote in a long stored text.

The gate runs on every `claims add` and every verifier check: a quote that is not in the source
makes it search for the closest window, which must stay fast on long pages. Prints the median
of N runs for a found quote and a missing one at several document sizes, side by side.

    .venv/bin/python bench/grounding.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from research_engine.grounding import find_quote


def median_ms(quote: str, text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        find_quote(quote, text)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'document':>12} {'found ms':>10} {'missing ms':>11}")
    for sentences in (1_000, 5_000, 20_000):
        text = " ".join(f"word{i % 997} filler text number {i}." for i in range(sentences))
        found = median_ms(f"word5 filler text number {sentences // 2}.", text, args.runs)
        missing = median_ms("word5 filler text number 99999999.", text, args.runs)
        print(f"{len(text) // 1000:>9} kB {found:10.1f} {missing:11.1f}")


if __name__ == "__main__":
    main()
