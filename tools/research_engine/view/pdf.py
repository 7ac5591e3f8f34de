"""The page as a PDF (`research-engine view RUN --pdf`): the same page, printed, links and references kept.

Two well-kept printers, whichever is there: WeasyPrint (the `pdf` extra: `pip install
'research-engine[pdf]'`), which lays the page out in-process, else headless Chromium's print-to-PDF
(Debian's `chromium`). Both keep the page's links: internal ones (a claim id to its card) as PDF
destinations, web ones as URI links. With neither, one line names both installs (exit 5, not
configured). The page is rendered `printable` (the folded front matter open, no navigation).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from research_engine import libraries
from research_engine.errors import BadInput, NotConfigured, UpstreamFailed
from research_engine.trace import Run
from research_engine.view.gather import gather
from research_engine.view.page import checked_output, render

PRINTERS = ("weasyprint", "chromium")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
MISSING = (
    "PDF export needs WeasyPrint or Chromium: pip install 'research-engine[pdf]' "
    "(or apt-get install chromium)"
)


def chromium_binary() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def available_printer() -> str | None:
    """The printer `write_pdf` would use: weasyprint, chromium, or None."""
    if libraries.weasyprint() is not None:
        return "weasyprint"
    return "chromium" if chromium_binary() else None


def _print_with_weasyprint(page: str, target: Path) -> None:
    weasyprint = libraries.weasyprint()
    if weasyprint is None:
        raise NotConfigured(MISSING, code="pdf-not-available")
    weasyprint.HTML(string=page).write_pdf(str(target))


def _print_with_chromium(page: str, target: Path) -> None:
    binary = chromium_binary()
    if binary is None:
        raise NotConfigured(MISSING, code="pdf-not-available")
    with tempfile.TemporaryDirectory(prefix="re-pdf-") as scratch:
        html_file = Path(scratch) / "page.html"
        html_file.write_text(page, encoding="utf-8")
        command = [
            binary,
            "--headless",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-pdf-header-footer",
            f"--user-data-dir={Path(scratch) / 'profile'}",
            f"--print-to-pdf={target}",
            html_file.as_uri(),
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(2, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UpstreamFailed(f"Chromium could not print the page: {exc}", code="pdf-failed") from exc
        if done.returncode != 0 or not target.is_file() or target.stat().st_size == 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise UpstreamFailed(f"Chromium could not print the page: {last}", code="pdf-failed")


def write_pdf(run: Run, output: str | Path | None = None, *, printer: str | None = None) -> tuple[Path, str]:
    """Print the run's page to PDF (default: `view.pdf` in the run); returns (its path, the printer used)."""
    if printer is not None and printer not in PRINTERS:
        raise BadInput(f"unknown PDF printer {printer!r}; expected one of {', '.join(PRINTERS)}")
    target = checked_output(run, output, "view_pdf", "PDF")
    chosen = printer or available_printer()
    if chosen is None:
        raise NotConfigured(MISSING, code="pdf-not-available")
    page = render(gather(run), printable=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if chosen == "weasyprint":
            _print_with_weasyprint(page, partial)
        else:
            _print_with_chromium(page, partial)
        os.replace(partial, target)
    except OSError as exc:
        raise BadInput(
            f"cannot write {target}: {exc.strerror or exc}", code="bad-output", field="output"
        ) from exc
    finally:
        partial.unlink(missing_ok=True)
    return target, chosen
