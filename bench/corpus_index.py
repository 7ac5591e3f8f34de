#!/usr/bin/env python3
"""The corpus index at the scale of a real folder: build and query time at 1,000 and 10,000 files, and the
`corpus serve` start-up on the committed example's corpus measured side by side with the code before.

Folders are made of real documents: the SQLite documentation's HTML pages (Debian's `sqlite3-doc`, fetched
with `apt-get download` and unpacked with `dpkg-deb -x` into the cache bench/quality.py uses) plus the
mixed-format fixtures (tools/tests/fixtures/documents: PDF, Word, Markdown, text), one in 25 files, hard
linked (or copied) under numbered names until the folder holds N files. For each size:

- cold build: `Corpus(folder, cache_root=empty)` (every file read, the cache written);
- warm start: the same with the cache in place (nothing read again);
- one change: a file added and one removed, then a start (only the new file read);
- query: the median and 95th percentile of `index.search` over a fixed query list.

Start-up side by side (`--startup-runs`, default 7): a fresh `python` process building the index of the
example's corpus (766 SQLite pages) with (a) the corpus module before this change (`--before REF`, default
`main`, read with `git show`), (b) this code without a cache, (c) this code with its cache; round-robin
so machine noise falls on each alike; medians and ratios printed.

    .venv/bin/python bench/corpus_index.py [--sizes 1000 10000] [--startup-runs 7] [--before main]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
from quality import DEFAULT_CACHE, ensure_corpus  # noqa: E402
from quality import Corpus as Package  # noqa: E402

FIXTURES = ROOT / "tools" / "tests" / "fixtures" / "documents"
QUERIES = [
    "write-ahead log checkpoint",
    "readers block writers concurrency",
    "hot journal rollback",
    "temporary files statement journal",
    "foreign key constraints",
    "full text search fts5 tokenizer",
    "isolation between database connections",
    "file descriptor closed reopened corruption",
    "json functions",
    "virtual table xBestIndex",
    "pragma journal_mode wal",
    "busy timeout locking",
    "query planner index",
    "vacuum into",
    "3.35 returning clause",
    "shared cache read_uncommitted",
    "autoincrement rowid",
    "window functions",
    "backup api",
    "date and time functions",
]


def make_folder(target: Path, pages: list[Path], count: int) -> None:
    documents = [FIXTURES / n for n in ("wal.pdf", "locking.docx", "isolation.md", "corruption.txt")]
    for number in range(count):
        every_25th = number % 25 == 24  # a PDF, Word, Markdown or text file; HTML pages otherwise
        source = documents[(number // 25) % len(documents)] if every_25th else pages[number % len(pages)]
        dest = target / f"d{number // 500:03d}" / f"{number:05d}-{source.name}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, dest)
        except OSError:
            shutil.copy(source, dest)


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def scale(pages: list[Path], count: int) -> dict[str, Any]:
    from research_engine.corpus import Corpus

    with tempfile.TemporaryDirectory(prefix="re-corpus-bench-") as scratch:
        folder, cache_root = Path(scratch) / "docs", Path(scratch) / "cache"
        make_folder(folder, pages, count)
        cold, corpus = timed(lambda: Corpus(folder, cache_root=cache_root))
        warm, again = timed(lambda: Corpus(folder, cache_root=cache_root))
        assert again.cache_hits == count - len(again.skipped) or again.cache_hits == count
        first = next(folder.rglob("*.html"))
        first.unlink()
        (folder / "added.md").write_text("# Added\n\nA new note on checkpoints.\n", encoding="utf-8")
        changed, after = timed(lambda: Corpus(folder, cache_root=cache_root))
        query_times = []
        for _ in range(3):
            for query in QUERIES:
                seconds, _ = timed(lambda q=query: corpus.index.search(q))
                query_times.append(seconds)
        cache_bytes = sum(p.stat().st_size for p in (cache_root / "corpus").rglob("*.json"))
        return {
            "files": count,
            "documents": len(corpus.index.pages),
            "skipped": len(corpus.skipped),
            "cold_build_s": round(cold, 3),
            "warm_start_s": round(warm, 3),
            "one_added_one_removed_s": round(changed, 3),
            "reread_after_change": len(after.index.pages) - after.cache_hits,
            "query_median_ms": round(1000 * statistics.median(query_times), 2),
            "query_p95_ms": round(1000 * sorted(query_times)[int(0.95 * len(query_times)) - 1], 2),
            "cache_mb": round(cache_bytes / 1e6, 1),
        }


def startup(root: Path, runs: int, before: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="re-corpus-start-") as scratch:
        old = Path(scratch) / "old_corpus.py"
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{before}:tools/research_engine/corpus.py"],
            capture_output=True,
            text=True,
        )
        if shown.returncode != 0:
            raise SystemExit(f"cannot read the corpus module at {before}: {shown.stderr.strip()}")
        old.write_text(shown.stdout, encoding="utf-8")
        cache_root = Path(scratch) / "cache"
        scripts = {
            "before": (
                "import importlib.util,sys;"
                f"s=importlib.util.spec_from_file_location('old_corpus', {str(old)!r});"
                "m=importlib.util.module_from_spec(s);sys.modules['old_corpus']=m;s.loader.exec_module(m);"
                f"c=m.Corpus({str(root)!r});print(len(c.index.pages))"
            ),
            "now, no cache": (
                f"from research_engine.corpus import Corpus;c=Corpus({str(root)!r});print(len(c.index.pages))"
            ),
            "now, cached": (
                "from research_engine.corpus import Corpus;from pathlib import Path;"
                f"c=Corpus({str(root)!r},cache_root=Path({str(cache_root)!r}));print(len(c.index.pages))"
            ),
        }
        subprocess.run([sys.executable, "-c", scripts["now, cached"]], check=True, capture_output=True)
        times: dict[str, list[float]] = {name: [] for name in scripts}
        pages: dict[str, str] = {}
        for _ in range(runs):
            for name, script in scripts.items():
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-c", script], check=True, capture_output=True, text=True
                )
                times[name].append(time.perf_counter() - start)
                pages[name] = done.stdout.strip()
        medians = {name: statistics.median(values) for name, values in times.items()}
        return {
            "corpus": str(root),
            "runs": runs,
            "before": before,
            "median_s": {name: round(value, 3) for name, value in medians.items()},
            "ratio_to_before": {name: round(value / medians["before"], 3) for name, value in medians.items()},
            "documents": pages,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--startup-runs", type=int, default=7)
    parser.add_argument("--before", default="main", help="git ref of the corpus module to compare with")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    cache = (
        args.cache_dir or Path(os.environ.get("RESEARCH_ENGINE_BENCH_CACHE") or DEFAULT_CACHE)
    ).expanduser()
    root, version = ensure_corpus(Package("sqlite", "sqlite3-doc", "usr/share/doc/sqlite3", 0), cache)
    pages = sorted(p for p in root.rglob("*.html") if not any(part.startswith("_") for part in p.parts))
    results: dict[str, Any] = {"sqlite3-doc": version, "scale": [], "startup": None}
    for count in args.sizes:
        row = scale(pages, count)
        results["scale"].append(row)
        print(json.dumps(row), flush=True)
    if args.startup_runs:
        results["startup"] = startup(root, args.startup_runs, args.before)
        print(json.dumps(results["startup"]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
