"""`research-engine extract FILE`."""

from __future__ import annotations

from test_extract_document import PDF_LINES, make_pdf
from test_extract_html import ARTICLE


def test_extract_prints_the_text(cli, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(ARTICLE, encoding="utf-8")
    code, out, _, _ = cli("extract", page)
    assert code == 0
    assert "Asyncio scaled best to many thousands of idle connections." in out


def test_extract_json_gives_the_document_with_passages(cli, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(ARTICLE, encoding="utf-8")
    code, _, _, env = cli("extract", page, "--url", "https://news.example.com/a/b", "--json")
    assert code == 0 and env["ok"] is True and env["command"] == "extract"
    data = env["data"]
    assert data["canonical_url"] == "https://news.example.com/articles/concurrency"
    assert data["passages"][0]["id"] == "p01"
    assert {"id", "text", "kind"} <= set(data["passages"][0])
    assert data["extraction"]["passages"] == len(data["passages"])
    assert data["robots_meta"]["noindex"] is True


def test_missing_file_is_bad_input(cli, tmp_path):
    code, _, err, env = cli("extract", tmp_path / "nope.html", "--json")
    assert code == 2
    assert env["errors"][0]["code"] == "unreadable-file"


def test_pdf_needs_the_pdf_switch(cli, tmp_path):
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(make_pdf(PDF_LINES))
    code, _, _, env = cli("extract", pdf, "--json")
    assert code == 3 and env["errors"][0]["code"] == "pdf-not-allowed"
    code, out, _, _ = cli("extract", pdf, "--pdf")
    assert code == 0 and "Battery prices fell for the third year." in out
