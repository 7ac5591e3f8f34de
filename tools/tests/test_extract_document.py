"""extract_document: content types, plain text, PDF behind its switch."""

from __future__ import annotations

import pytest

from research_engine.errors import BadInput, Refused
from research_engine.extract import extract_document


def make_pdf(lines: list[str], title: str = "Grid report") -> bytes:
    """A minimal one-page PDF with a real text layer (Helvetica, one line per entry)."""
    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({escaped}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title (%s) /CreationDate (D:20230115120000Z) >>" % title.encode("latin-1"),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


PDF_LINES = ["Grid storage grew by 40 percent in 2023.", "", "Battery prices fell for the third year."]


def test_pdf_is_refused_unless_explicitly_allowed():
    with pytest.raises(Refused) as info:
        extract_document(make_pdf(PDF_LINES), content_type="application/pdf")
    assert info.value.code == "pdf-not-allowed"


def test_pdf_sniffed_from_bytes_is_refused_too():
    with pytest.raises(Refused):
        extract_document(make_pdf(PDF_LINES), content_type=None)


def test_allowed_pdf_gives_its_text_title_and_date():
    page = extract_document(make_pdf(PDF_LINES), content_type="application/pdf", allow_pdf=True)
    assert "Grid storage grew by 40 percent in 2023." in page.text
    assert page.title == "Grid report"
    assert page.published is not None and page.published.startswith("2023-01-15")
    assert page.extractor.startswith("pypdf-")
    assert page.passages[0].id == "p01"


def test_broken_pdf_is_bad_input_not_a_crash():
    with pytest.raises(BadInput):
        extract_document(b"%PDF-1.4\nthis is not a pdf", content_type="application/pdf", allow_pdf=True)


def test_plain_text_splits_into_paragraphs_at_blank_lines():
    body = "First paragraph\nwraps here.\n\nSecond paragraph.\r\n\r\nThird."
    page = extract_document(body.encode(), content_type="text/plain; charset=utf-8")
    assert [p.text for p in page.passages] == ["First paragraph wraps here.", "Second paragraph.", "Third."]
    assert page.extractor == "plain-text"


def test_decoded_text_from_the_fetcher_wins_over_the_bytes():
    page = extract_document(b"\xe9t\xe9", content_type="text/plain", text="été")
    assert page.text == "été"


def test_html_content_type_goes_to_the_html_reader():
    html = b"<html><head><title>T</title><link rel='canonical' href='https://a.example/x'></head><body><p>hi</p></body></html>"
    page = extract_document(html, content_type="text/html; charset=utf-8")
    assert page.canonical_url == "https://a.example/x"
    assert page.text == "hi"


def test_unsupported_content_type_is_bad_input():
    with pytest.raises(BadInput) as info:
        extract_document(b"\x89PNG\r\n", content_type="image/png")
    assert info.value.code == "unsupported-type"
