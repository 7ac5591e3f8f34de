"""Extraction benchmark: the project's reader beside the libraries, in one run.

    .venv/bin/python bench/extraction.py [--shared ../shared] [--half tune|report|all] [--repeat 3]
                                         [--libraries NAME ...] [--code DIR] [--json OUT] [--cpu]

Scores `research_engine.extract` (the text the eval sees is the page's passages joined by newlines,
exactly what a run stores) and the shared adapters (`trafilatura_precision`, `readability_htmltext`,
`readability_lxml_partial` by default) on the shared DEV corpus with the shared scorer
(`shared/bench/extraction_eval.py`): F1, precision, recall, pages/s and crashed/empty pages side by side.
The scorer and corpus are used in place, never copied. `readability_htmltext` needs html_text: install the
`bench` extra (`pip install -e .[bench]`).

The two halves (issue 24), fixed before any tuning on them: a page belongs to the `tune` half when the last
hex digit of the sha256 of its file name (`<id>.html.gz`, UTF-8) is even, else to the `report` half (49 and
42 of the 91 pages). Rules of the reader are tuned on `tune` only; `report` is measured, never read for
ideas. `--code DIR` imports `research_engine` from DIR instead of this checkout (an older commit's
`tools/`, to measure before and after beside the same libraries).

`--cpu` measures speed only, for a shared machine where wall-clock pages/s swing with the load: each page is
read by trafilatura (the `trafilatura_precision` configuration) and by the reader in turn, `--repeat` times,
each keeping its least CPU time (`time.process_time`), and the ratio of the sums is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("trafilatura_precision", "readability_htmltext", "readability_lxml_partial")
HALVES = ("tune", "report", "all")


def half_of(file_name: str) -> str:
    """`tune` or `report`: the half a corpus page belongs to, by the sha256 of its file name."""
    return "tune" if int(hashlib.sha256(file_name.encode("utf-8")).hexdigest()[-1], 16) % 2 == 0 else "report"


def page_ids(corpus: Path, half: str) -> list[str]:
    """The ids of the corpus pages in `half` (all of them for `all`), sorted."""
    names = sorted(p.name for p in (corpus / "html").glob("*.html.gz"))
    return [n[: -len(".html.gz")] for n in names if half == "all" or half_of(n) == half]


def research_engine_extract(html: str, url: str | None = None) -> str:
    """The project's extractor as the scorer sees it: passages joined by newlines."""
    from research_engine.extract import extract_html

    return "\n".join(p.text for p in extract_html(html, url=url).passages)


def cpu_ratio(corpus: Path, ids: list[str], repeat: int) -> dict[str, float]:
    """CPU ms per page of trafilatura and of the reader, pages interleaved, and the ratio of their speeds."""
    import gzip
    import time

    import trafilatura

    pages = [
        gzip.decompress((corpus / "html" / f"{pid}.html.gz").read_bytes()).decode("utf-8", "replace")
        for pid in ids
    ]

    def library(html: str) -> object:
        return trafilatura.extract(html, include_comments=False, favor_precision=True)

    research_engine_extract(pages[0])
    library(pages[0])
    best = {"trafilatura": [float("inf")] * len(pages), "research_engine": [float("inf")] * len(pages)}
    for _ in range(repeat):
        for i, html in enumerate(pages):
            for name, read in (("trafilatura", library), ("research_engine", research_engine_extract)):
                started = time.process_time()
                read(html)
                best[name][i] = min(best[name][i], time.process_time() - started)
    ms = {f"{name}_cpu_ms": 1000 * sum(times) / len(pages) for name, times in best.items()}
    return {**ms, "ratio": ms["trafilatura_cpu_ms"] / ms["research_engine_cpu_ms"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared/ folder")
    parser.add_argument("--half", choices=HALVES, default="all", help="which half of the corpus to score")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; each page keeps its fastest")
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument("--libraries", nargs="*", default=list(LIBRARIES), help="shared adapters beside it")
    parser.add_argument("--code", type=Path, help="import research_engine from this folder (default: tools/)")
    parser.add_argument("--ids", type=Path, help="score only these page ids (one a line); overrides --half")
    parser.add_argument("--json", type=Path, help="write per-page results here")
    parser.add_argument("--cpu", action="store_true", help="CPU-time speed ratio only (see above)")
    args = parser.parse_args(argv)

    bench_dir = args.shared / "bench"
    corpus = args.shared / "corpora" / "extraction"
    if not (bench_dir / "extraction_eval.py").is_file() or not corpus.is_dir():
        print(f"no shared scorer/corpus under {args.shared}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(bench_dir))
    sys.path.insert(0, str((args.code or ROOT / "tools").resolve()))
    import extraction_eval

    if args.cpu:
        figures = cpu_ratio(corpus, page_ids(corpus, args.half), args.repeat)
        print(f"half {args.half}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
        return 0
    adapters = bench_dir / "extraction_adapters.py"
    eval_args = [
        "--corpus",
        str(corpus),
        "--repeat",
        str(args.repeat),
        "--n-bootstrap",
        str(args.n_bootstrap),
        "--extractor",
        f"research_engine={Path(__file__).resolve()}:research_engine_extract",
    ]
    for name in args.libraries:
        eval_args += ["--extractor", f"{name}={adapters}:{name}"]
    if args.json:
        eval_args += ["--json", str(args.json)]
    with tempfile.TemporaryDirectory() as scratch:
        ids = args.ids
        if ids is None and args.half != "all":
            ids = Path(scratch) / f"{args.half}.txt"
            ids.write_text("".join(f"{pid}\n" for pid in page_ids(corpus, args.half)), encoding="utf-8")
        if ids is not None:
            eval_args += ["--ids", str(ids)]
        print(f"half: {args.half if args.ids is None else args.ids}", file=sys.stderr)
        return int(extraction_eval.main(eval_args))


if __name__ == "__main__":
    sys.exit(main())
