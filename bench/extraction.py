"""Extraction benchmark: the project's reader beside the libraries, in one run.

    .venv/bin/python bench/extraction.py [--shared ../shared] [--repeat 3] [--json OUT]

Scores `research_engine.extract` (the text the eval sees is the page's
passages joined by newlines, exactly what a run stores) and the shared
adapters `trafilatura_precision`, `readability_htmltext` and
`readability_lxml_partial` on the shared DEV corpus with the shared scorer
(`shared/bench/extraction_eval.py`): F1, precision, recall, pages/s and
crashed/empty pages side by side. The scorer and corpus are used in place,
never copied. `readability_htmltext` needs html_text: install the `bench`
extra (`pip install -e .[bench]`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("trafilatura_precision", "readability_htmltext", "readability_lxml_partial")


def research_engine_extract(html: str, url: str | None = None) -> str:
    """The project's extractor as the scorer sees it: passages joined by newlines."""
    from research_engine.extract import extract_html

    return "\n".join(p.text for p in extract_html(html, url=url).passages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared/ folder")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; each page keeps its fastest")
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument("--ids", type=Path, help="score only these page ids (one a line)")
    parser.add_argument("--json", type=Path, help="write per-page results here")
    args = parser.parse_args(argv)

    bench_dir = args.shared / "bench"
    corpus = args.shared / "corpora" / "extraction"
    if not (bench_dir / "extraction_eval.py").is_file() or not corpus.is_dir():
        print(f"no shared scorer/corpus under {args.shared}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(bench_dir))
    sys.path.insert(0, str(ROOT / "tools"))
    import extraction_eval

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
    for name in LIBRARIES:
        eval_args += ["--extractor", f"{name}={adapters}:{name}"]
    if args.ids:
        eval_args += ["--ids", str(args.ids)]
    if args.json:
        eval_args += ["--json", str(args.json)]
    return extraction_eval.main(eval_args)


if __name__ == "__main__":
    sys.exit(main())
