"""The document readers (PDF, Word, Markdown, plain text) on real files: structure kept, stable passages.

The files in fixtures/documents/ are sections of the SQLite documentation (public domain), each written
in its format by that format's own tools; make_documents.py there says exactly how.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from research_engine.errors import BadInput, Refused
from research_engine.extract import extract_document
from research_engine.extract.formats import kind_of
from research_engine.extract.markdown import read_markdown
from research_engine.extract.text import read_text

DOCUMENTS = Path(__file__).parent / "fixtures" / "documents"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def read(name: str, content_type: str, **kw):
    return extract_document((DOCUMENTS / name).read_bytes(), content_type=content_type, allow_pdf=True, **kw)


def kinds_of(page, start: str) -> str:
    return next(p.kind for p in page.passages if p.text.startswith(start))


def test_a_pdf_keeps_its_headings_paragraphs_and_list_items_apart():
    page = read("wal.pdf", "application/pdf")
    assert page.title == "Write-Ahead Logging" and page.extractor.endswith("+layout")
    headings = [p.text for p in page.passages if p.kind == "heading"]
    assert headings[:5] == [
        "Write-Ahead Logging",
        "1. Overview",
        "2. How WAL Works",
        "2.1. Checkpointing",
        "2.2. Concurrency",
    ]
    # A paragraph is one passage, whole, and no heading runs into the sentence after it.
    (para,) = [p for p in page.passages if p.text.startswith("When a read operation begins on a WAL-mode")]
    assert para.kind == "paragraph" and para.text.endswith(".") and len(para.text) > 300
    assert not any(p.text.startswith(("2.2. Concurrency When", "1. Overview The")) for p in page.passages)
    assert kinds_of(page, "2. WAL provides more concurrency") == "list-item"
    items = [p.text for p in page.passages if p.kind == "list-item"]
    joined = (
        "2. WAL provides more concurrency as readers do not block writers and a writer does not block "
        "readers. Reading and writing can proceed concurrently."
    )
    assert joined in items  # the wrapped line joined
    assert len(page.passages) > 4 * 9  # paragraphs, not one passage per page


def test_a_pdf_reads_the_same_way_twice():
    first, second = read("wal.pdf", "application/pdf"), read("wal.pdf", "application/pdf")
    assert [p.to_dict() for p in first.passages] == [p.to_dict() for p in second.passages]


def test_a_scanned_pdf_says_it_has_no_text_layer():
    with pytest.raises(BadInput, match="no text layer") as caught:
        read("scanned.pdf", "application/pdf")
    assert caught.value.code == "no-text-layer"


def test_a_pdf_behind_a_password_is_bad_input_and_one_without_is_read():
    pypdf = pytest.importorskip("pypdf")

    def encrypted(user: str) -> bytes:
        writer = pypdf.PdfWriter(clone_from=io.BytesIO((DOCUMENTS / "wal.pdf").read_bytes()))
        writer.encrypt(user_password=user, owner_password="owner-secret", algorithm="RC4-128")
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    with pytest.raises(BadInput, match="password") as caught:
        extract_document(encrypted("secret"), content_type="application/pdf", allow_pdf=True)
    assert caught.value.code == "encrypted-pdf"
    page = extract_document(encrypted(""), content_type="application/pdf", allow_pdf=True)
    assert any(p.text == "2.2. Concurrency" for p in page.passages)


def test_a_web_pdf_or_word_file_still_needs_the_opt_in():
    for name, ctype in (("wal.pdf", "application/pdf"), ("locking.docx", DOCX)):
        with pytest.raises(Refused):
            extract_document((DOCUMENTS / name).read_bytes(), content_type=ctype)


def test_a_word_file_gives_headings_by_style_list_items_and_table_rows():
    page = read("locking.docx", DOCX)
    assert page.title == "File Locking And Concurrency In SQLite Version 3"
    assert page.published == "2022-12-28T00:00:00+00:00" and page.extractor.startswith("python-docx")
    assert kinds_of(page, "4.1 Dealing with hot journals") == "heading"
    assert kinds_of(page, "Read the journal file and roll back the changes.") == "list-item"
    assert kinds_of(page, "When a process wants to read from a database file") == "paragraph"
    rows = [p.text for p in page.passages if p.kind == "table-row"]
    assert rows[0] == "Lock | Meaning" and rows[3].startswith("RESERVED | A RESERVED lock means")


def test_a_damaged_word_file_is_bad_input():
    body = (DOCUMENTS / "locking.docx").read_bytes()
    with pytest.raises(BadInput, match="unreadable Word document"):
        extract_document(body[: len(body) // 2], content_type=DOCX, allow_pdf=True)


def test_markdown_front_matter_is_metadata_and_structure_is_rendered():
    page = read("isolation.md", "text/markdown")
    assert page.title == "Isolation In SQLite" and page.published == "2022-11-16"
    assert not any(p.text.startswith(("title:", "---")) for p in page.passages)
    assert kinds_of(page, "No Isolation Between Operations") == "heading"
    assert kinds_of(page, "Transactions in SQLite are SERIALIZABLE.") == "list-item"
    para = next(p.text for p in page.passages if p.text.startswith("If the same database is being read"))
    assert "two different database connections (two different sqlite3 objects" in para  # wrapped lines joined


def test_markdown_code_blocks_tables_and_inline_markup():
    reading = read_markdown(
        "Setext title\n============\n\nUse `PRAGMA journal_mode=WAL;` *once*, see [the docs](wal.html).\n\n"
        "```sql\nPRAGMA journal_mode=WAL;\n```\n\n| mode | readers |\n|---|---|\n| WAL | concurrent |\n\n"
        "1. first\n2. second\n"
    )
    assert reading.chunks == [
        ("heading", "Setext title"),
        ("paragraph", "Use PRAGMA journal_mode=WAL; once, see the docs."),
        ("code", "PRAGMA journal_mode=WAL;"),
        ("table-row", "mode | readers"),
        ("table-row", "WAL | concurrent"),
        ("list-item", "first"),
        ("list-item", "second"),
    ]


def test_plain_text_paragraphs_at_blank_lines_with_underlined_headings():
    page = read("corruption.txt", "text/plain; charset=utf-8")
    assert page.passages[0].kind == "heading" and page.passages[0].text.startswith("How To Corrupt")
    assert kinds_of(page, "1.2. Backup or restore while a transaction is active") == "heading"
    para = next(p.text for p in page.passages if p.text.startswith("We have seen multiple cases"))
    assert "database file descriptor" not in para and "was closed and reopened on an SQLite database" in para
    assert read_text("INTRODUCTION\n\n- one\n  wrapped\n- two\n").chunks == [
        ("heading", "INTRODUCTION"),
        ("list-item", "- one wrapped"),
        ("list-item", "- two"),
    ]


def test_the_reader_is_chosen_by_type_then_by_name_then_by_bytes():
    pdf = (DOCUMENTS / "wal.pdf").read_bytes()
    docx = (DOCUMENTS / "locking.docx").read_bytes()
    assert kind_of(pdf, "application/octet-stream") == "pdf"
    assert kind_of(docx, None) == "docx"
    assert kind_of(b"# x", "text/plain", "http://127.0.0.1:1/notes/a.md") == "markdown"
    assert kind_of(b"x", "text/plain", "http://127.0.0.1:1/a.txt") == "text"
    assert kind_of(b"<p>x</p>", "text/html") is None


def test_a_word_file_keeps_content_controls_text_boxes_and_footnotes(tmp_path):
    """The fixture rewritten the way Word writes these parts: a paragraph inside a content control
    (`w:sdt`), a text box (`w:txbxContent`) and a footnotes part with one footnote."""
    import zipfile

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    sdt = (
        f"<w:sdt {w}><w:sdtContent><w:p><w:r><w:t>A paragraph inside a content control.</w:t></w:r></w:p>"
        "</w:sdtContent></w:sdt>"
    )
    box = (
        f"<w:p {w}><w:r><w:pict><w:txbxContent><w:p><w:r><w:t>Text in a text box.</w:t></w:r></w:p>"
        "</w:txbxContent></w:pict></w:r></w:p>"
    )
    footnotes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes {w}>'
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
        '<w:footnote w:id="1"><w:p><w:r><w:t>A footnote saying where the lock states come from.</w:t></w:r>'
        "</w:p></w:footnote></w:footnotes>"
    )
    source = zipfile.ZipFile(DOCUMENTS / "locking.docx")
    target = tmp_path / "notes.docx"
    with zipfile.ZipFile(target, "w") as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + sdt.encode() + box.encode(), 1)
            elif item.filename == "word/_rels/document.xml.rels":
                rel = (
                    '<Relationship Id="rIdNotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                    'relationships/footnotes" Target="footnotes.xml"/>'
                )
                data = data.replace(b"</Relationships>", rel.encode() + b"</Relationships>")
            elif item.filename == "[Content_Types].xml":
                override = (
                    '<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-'
                    'officedocument.wordprocessingml.footnotes+xml"/>'
                )
                data = data.replace(b"</Types>", override.encode() + b"</Types>")
            out.writestr(item, data)
        out.writestr("word/footnotes.xml", footnotes)
    page = extract_document(target.read_bytes(), content_type=DOCX, allow_pdf=True)
    texts = [p.text for p in page.passages]
    assert texts[0] == "A paragraph inside a content control." and "Text in a text box." in texts
    assert texts[-2:] == ["Notes", "A footnote saying where the lock states come from."]


def test_an_outline_in_plain_text_keeps_its_starred_headings():
    # GNU's NEWS files are Emacs outlines: each release a "*" heading, its parts "**" headings, dashed items.
    import gzip

    news = gzip.decompress(
        (Path(__file__).parent / "fixtures" / "docs" / "libtool-2.4.7-NEWS.gz").read_bytes()
    )
    page = extract_document(news, content_type="text/plain")
    assert kinds_of(page, "Noteworthy changes in release 2.4.7 (2022-03-16) [stable]") == "heading"
    assert kinds_of(page, "New features:") == "heading"
    assert kinds_of(page, "- Add MidnightBSD support.") == "list-item"
    item = next(p for p in page.passages if p.text == "- Add MidnightBSD support.")
    release = "Noteworthy changes in release 2.4.7 (2022-03-16) [stable]"
    assert item.heading_path[:2] == (release, "New features:")
    # without a "**" heading, a starred line at the margin is a bullet
    assert read_text("* one\n* two\n").chunks == [("list-item", "* one"), ("list-item", "* two")]
