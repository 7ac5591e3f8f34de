"""The view of finished runs, read in headless Chromium: the committed example and a no-finding run, each a
report whose answer is on the first screen and whose every claim and source id leads to its card; and the
same page printed to PDF, its text and links read back with pypdf."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from chromium_page import assert_reads_cleanly, open_page
from core_testkit import fast_verifier, grounded_claim, locked_private_run, verify_all

from research_engine import controller, decompose, libraries, report, trace
from research_engine.runrecord import human_bytes
from research_engine.view import write_pdf, write_view
from research_engine.view.pdf import chromium_binary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FACT = "The Freedonia grid operator counted 42 gigawatts of solar capacity in 2023."


@pytest.fixture(scope="module")
def example_run(tmp_path_factory) -> trace.Run:
    """A copy of the committed example (its cassette and snapshots are not needed to view it)."""
    recorded = next(p for p in sorted(EXAMPLES.iterdir()) if (p / "run.json").is_file())
    copy = tmp_path_factory.mktemp("example") / recorded.name
    shutil.copytree(recorded, copy, ignore=shutil.ignore_patterns("cassette", "snapshots"))
    return trace.open_run(copy)


@pytest.fixture
def no_finding_run(brief_file, httpserver, tmp_path, monkeypatch):
    fast_verifier(monkeypatch)
    run = locked_private_run(
        brief_file, depth="quick", objective="How much solar capacity does Freedonia have?"
    )
    sq = decompose.add(run, "How much solar capacity does Freedonia have?", "quantitative")
    clm = grounded_claim(run, httpserver, sq, "/solar", FACT)
    verify_all(run, {clm: "refuse"})
    assert controller.control(run)["action"] == "stop"
    memo = tmp_path / "memo.md"
    memo.write_text(
        f"# Freedonia's solar capacity\n\n> **Gap:** the one figure found ({clm}) was refused by the "
        "verifier; "
        "nothing could be established.\n",
        encoding="utf-8",
    )
    assert report.finish(run, memo)["no_finding"] is True
    return run, clm


def _cited(run: trace.Run) -> list[str]:
    text = run.path("result").read_text(encoding="utf-8").split("\n---", 1)[1]
    return sorted(set(re.findall(r"\bCLM-\d{2,}\b", text)))


def test_the_committed_example_reads_as_a_report_in_chromium(example_run, tmp_path):
    page = write_view(example_run, tmp_path / "example.html")
    seen = open_page(page, tmp_path, "committed-example")
    assert_reads_cleanly(seen)
    dom, visible = seen.dom, seen.dom.visible
    assert visible.index("Answer") < visible.index("Key findings") < visible.index("Sub-questions and claims")
    assert not visible.startswith("---") and "cited_claims:" not in visible.split("Front matter")[0]
    for clm in _cited(example_run):
        assert clm in dom.ids and clm in dom.links, clm  # every cited claim has a card, linked
    for ref in re.findall(r"\*\*(SQ-\d{2}/SRC-\d{2})\*\*", example_run.path("result").read_text()):
        assert "src-" + ref.replace("/", "-") in dom.links
    assert "Verifier CHL-01" in visible and "verifier's copy" in visible
    fetched = json.loads(example_run.path("run").read_text())["budgets"]["spent"]["fetched_bytes"]
    assert str(fetched) not in visible and "52428800" not in visible  # sizes read as sizes: KB of 50 MB
    assert human_bytes(fetched) in visible and "50 MB" in visible


def test_a_no_finding_run_says_so_on_its_first_screen_in_chromium(no_finding_run, tmp_path):
    run, clm = no_finding_run
    seen = open_page(write_view(run), tmp_path, "no-finding")
    assert_reads_cleanly(seen)
    visible = seen.dom.visible
    assert visible.index("No finding could be supported") < visible.index("Method: what was searched")
    assert f"REFUSED {clm}" in visible and clm in seen.dom.links
    assert "Open questions" in visible


def _pdf_text_and_links(path: Path) -> tuple[str, list[str], int]:
    pypdf = libraries.pypdf()
    reader = pypdf.PdfReader(str(path))
    text = " ".join(" ".join((page.extract_text() or "").split()) for page in reader.pages)
    uris, internal = [], 0
    for page in reader.pages:
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            action = annot.get("/A") or {}
            if action.get("/URI"):
                uris.append(str(action["/URI"]))
            elif annot.get("/Dest") is not None or action.get("/S") == "/GoTo":
                internal += 1
    return text, uris, internal


PRINTERS = [
    pytest.param("chromium", id="chromium"),
    pytest.param("weasyprint", id="weasyprint"),
]


@pytest.mark.parametrize("printer", PRINTERS)
def test_the_example_prints_to_a_pdf_with_its_text_links_and_references(example_run, tmp_path, printer):
    if printer == "chromium" and chromium_binary() is None:
        pytest.skip("chromium is not installed")
    if printer == "weasyprint" and libraries.weasyprint() is None:
        pytest.skip("WeasyPrint is not installed (pip install 'research-engine[pdf]')")
    path, used = write_pdf(example_run, tmp_path / f"example-{printer}.pdf", printer=printer)
    assert used == printer and path.read_bytes().startswith(b"%PDF")
    text, uris, internal = _pdf_text_and_links(path)
    assert "There can only be a single writer at a time to an SQLite database." in text
    assert "References" in text and "Isolation In SQLite" in text
    assert "http://127.0.0.1:8377/isolation.html" in uris  # a source's URL stays a link
    assert internal >= len(_cited(example_run))  # claim ids lead to their cards inside the PDF


def test_view_pdf_without_any_printer_names_the_install(example_run, cli, monkeypatch, tmp_path):
    monkeypatch.setattr(libraries, "weasyprint", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium on it
    code, _, err, _ = cli("view", str(example_run.root), "--pdf")
    assert code == 5
    assert err.strip().splitlines() == [
        "error: PDF export needs WeasyPrint or Chromium: pip install 'research-engine[pdf]' "
        "(or apt-get install chromium)"
    ]
    assert not example_run.path("view_pdf").exists()


def test_view_pdf_writes_view_pdf_in_the_run(example_run, cli):
    if libraries.weasyprint() is None and chromium_binary() is None:
        pytest.skip("no PDF printer here")
    code, out, _, env = cli("view", str(example_run.root), "--pdf", "--json")
    assert code == 0 and env["data"]["path"] == str(example_run.root / "view.pdf")
    assert (example_run.root / "view.pdf").read_bytes().startswith(b"%PDF")
