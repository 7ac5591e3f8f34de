"""Mixed-format corpus folders: each format indexed and served, unreadable files skipped with a reason."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import httpx
import pytest

from research_engine.corpus import Corpus, CorpusServer
from research_engine.corpus import files as corpus_files

DOCUMENTS = Path(__file__).parent / "fixtures" / "documents"
MIXED = ("wal.pdf", "locking.docx", "isolation.md", "corruption.txt", "tempfiles.html")


def mixed_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in MIXED:
        shutil.copy(DOCUMENTS / name, root / name)
    return root


def test_every_format_is_indexed_and_found_by_its_own_words(tmp_path):
    corpus = Corpus(mixed_folder(tmp_path / "docs"))
    assert sorted(p.path for p in corpus.index.pages) == sorted(MIXED)
    assert corpus.skipped == []
    top = {
        "checkpointer progress long-running read transaction": "wal.pdf",
        "hot journal super-journal RESERVED lock": "locking.docx",
        "read_uncommitted shared cache isolation": "isolation.md",
        "file descriptor closed reopened rogue thread": "corruption.txt",
        "temporary files statement journal": "tempfiles.html",
    }
    for query, name in top.items():
        assert corpus.index.search(query)[0][1].path == name, query
    titles = {p.path: p.title for p in corpus.index.pages}
    assert titles["wal.pdf"] == "Write-Ahead Logging" and titles["isolation.md"] == "Isolation In SQLite"


def test_documents_are_served_with_their_media_types(tmp_path):
    with CorpusServer(mixed_folder(tmp_path / "docs")) as server:
        types = {name: httpx.get(f"{server.url}/{name}").headers["content-type"] for name in MIXED}
        found = httpx.get(f"{server.url}/search", params={"q": "WAL checkpoint", "format": "json"}).json()
    assert types["wal.pdf"] == "application/pdf"
    assert types["locking.docx"].startswith("application/vnd.openxmlformats-officedocument.wordprocessingml")
    assert types["isolation.md"] == "text/markdown; charset=utf-8"
    assert types["corruption.txt"] == "text/plain; charset=utf-8"
    assert found["results"][0]["url"].endswith("/wal.pdf")


def test_unreadable_files_are_skipped_with_a_reason_never_a_crash(tmp_path, monkeypatch, caplog):
    pypdf = pytest.importorskip("pypdf")
    root = mixed_folder(tmp_path / "docs")
    shutil.copy(DOCUMENTS / "scanned.pdf", root / "scanned.pdf")
    writer = pypdf.PdfWriter(clone_from=io.BytesIO((DOCUMENTS / "wal.pdf").read_bytes()))
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    with (root / "locked.pdf").open("wb") as out:
        writer.write(out)
    docx = (DOCUMENTS / "locking.docx").read_bytes()
    (root / "broken.docx").write_bytes(docx[: len(docx) // 2])
    (root / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nNot part of the corpus.\n")
    (root / "link.md").symlink_to(outside)
    (root / "big.md").write_text("# Big\n\n" + "word " * 20_000)
    (root / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512))
    (root / ".git").mkdir()
    (root / ".git" / "notes.md").write_text("# not a document")
    monkeypatch.setattr(corpus_files, "SIZE_CAP", 70_000)
    before = sorted(p.name for p in root.rglob("*"))

    corpus = Corpus(root)
    reasons = {s.rel: s.reason for s in corpus.skipped}
    assert set(reasons) == {
        "scanned.pdf",
        "locked.pdf",
        "broken.docx",
        "image.txt",
        "link.md",
        "big.md",
        "old.doc",
    }
    assert "save it as .docx" in reasons["old.doc"]
    assert "no text layer" in reasons["scanned.pdf"]
    assert "password" in reasons["locked.pdf"]
    assert "unreadable Word document" in reasons["broken.docx"]
    assert "binary data" in reasons["image.txt"]
    assert "outside the folder" in reasons["link.md"]
    assert "size cap" in reasons["big.md"]
    assert sorted(p.path for p in corpus.index.pages) == sorted(MIXED)
    assert all(name in caplog.text for name in reasons)  # each one logged
    with CorpusServer(root, corpus=corpus) as server:
        for name in ("link.md", "big.md", ".git/notes.md", "broken.docx"):
            assert httpx.get(f"{server.url}/{name}").status_code == 404, name  # only documents are served
    assert sorted(p.name for p in root.rglob("*")) == before  # the folder is never written to


def test_the_digest_names_the_folder_content(tmp_path):
    root = mixed_folder(tmp_path / "docs")
    first = Corpus(root).digest
    assert Corpus(root).digest == first
    (root / "notes.md").write_text("# Notes\n\nA new file about WAL.\n")
    assert Corpus(root).digest != first


def test_the_index_is_built_once_per_folder_content_and_follows_changes(tmp_path):
    root = mixed_folder(tmp_path / "docs")
    cache_root = tmp_path / "cache"
    first = Corpus(root, cache_root=cache_root)
    assert first.cache_hits == 0 and list((cache_root / "corpus").glob("*/shard-*.json"))
    again = Corpus(root, cache_root=cache_root)
    assert again.cache_hits == len(MIXED)  # nothing read again
    query = "WAL checkpoint readers writers"
    ranked = [(round(s, 6), p.path, p.title) for s, p in first.index.search(query)]
    assert [(round(s, 6), p.path, p.title) for s, p in again.index.search(query)] == ranked

    (root / "corruption.txt").unlink()
    (root / "notes.md").write_text("# Checkpoint notes\n\nA checkpoint copies WAL frames to the database.\n")
    with (root / "isolation.md").open("a", encoding="utf-8") as more:
        more.write("\nAn added paragraph about snapshot isolation.\n")
    changed = Corpus(root, cache_root=cache_root)
    assert changed.cache_hits == len(MIXED) - 2  # the unchanged three
    paths = sorted(p.path for p in changed.index.pages)
    assert paths == sorted({*MIXED, "notes.md"} - {"corruption.txt"})
    assert changed.index.search("checkpoint notes frames")[0][1].path == "notes.md"
    assert changed.index.search("snapshot isolation added")[0][1].path == "isolation.md"
    assert all(p.path != "corruption.txt" for _, p in changed.index.search("rogue thread file descriptor"))
    assert changed.digest != first.digest
    assert not (root / ".research-engine").exists() and not list(root.glob("*.json"))


def test_a_damaged_cache_is_rebuilt(tmp_path):
    root = mixed_folder(tmp_path / "docs")
    cache_root = tmp_path / "cache"
    Corpus(root, cache_root=cache_root)
    shards = list((cache_root / "corpus").glob("*/shard-*.json"))
    for path in shards:
        path.write_text("{not json")
    rebuilt = Corpus(root, cache_root=cache_root)
    assert rebuilt.cache_hits == 0 and len(rebuilt.index.pages) == len(MIXED)
    assert Corpus(root, cache_root=cache_root).cache_hits == len(MIXED)


def test_file_names_with_spaces_and_any_letters_are_searched_fetched_and_read(tmp_path):
    from research_engine.net import HttpClient
    from research_engine.retrieve.pages import fetch_document

    root = tmp_path / "docs"
    (root / "Q3 notes").mkdir(parents=True)
    shutil.copy(DOCUMENTS / "wal.pdf", root / "Q3 notes" / "Write-Ahead Logging (résumé) #2.pdf")
    shutil.copy(DOCUMENTS / "isolation.md", root / "isolation.md")
    with CorpusServer(root) as server:
        found = httpx.get(f"{server.url}/search", params={"q": "checkpoint WAL", "format": "json"}).json()
        url = found["results"][0]["url"]
        assert url.endswith("/Q3%20notes/Write-Ahead%20Logging%20%28r%C3%A9sum%C3%A9%29%20%232.pdf")
        host = server.url.removeprefix("http://")
        with HttpClient(allow_hosts=[host], use_cache=False) as client:
            doc, result = fetch_document(client, url, allow_pdf=True, check_robots=False)
    assert result.ok and doc is not None and any(p.text == "2.2. Concurrency" for p in doc.passages)


def test_gzip_compressed_text_documents_are_indexed_served_decompressed_and_capped(tmp_path, monkeypatch):
    # Debian ships larger documentation compressed ("changelog.html.gz"); gzip -9n, as dh_compress does.
    import gzip

    root = tmp_path / "docs"
    root.mkdir()
    page = (DOCUMENTS / "tempfiles.html").read_bytes()
    (root / "tempfiles.html.gz").write_bytes(gzip.compress(page, compresslevel=9, mtime=0))
    (root / "corruption.txt.gz").write_bytes(gzip.compress((DOCUMENTS / "corruption.txt").read_bytes()))
    (root / "bundle.tar.gz").write_bytes(gzip.compress(b"not a document"))  # an archive is no document
    corpus = Corpus(root)
    assert sorted(p.path for p in corpus.index.pages) == ["corruption.txt.gz", "tempfiles.html.gz"]
    assert corpus.index.search("temporary files statement journal")[0][1].path == "tempfiles.html.gz"
    with CorpusServer(root, corpus=corpus) as server:
        served = httpx.get(f"{server.url}/tempfiles.html.gz")
    assert served.headers["content-type"] == "text/html; charset=utf-8" and served.content == page
    monkeypatch.setattr(corpus_files, "SIZE_CAP", 50_000)  # a small file that decompresses past the cap
    (root / "bomb.txt.gz").write_bytes(gzip.compress(b"word " * 40_000))
    reasons = {s.rel: s.reason for s in Corpus(root).skipped}
    assert set(reasons) == {"bomb.txt.gz"} and "exceeds 50000 bytes" in reasons["bomb.txt.gz"]


def test_a_file_named_without_a_suffix_is_plain_text_compressed_or_not(tmp_path):
    # Debian's documentation folders keep their release notes and readme as NEWS.gz, README.gz and
    # changelog.gz: they were neither indexed nor listed as skipped, so "what changed in 2.4.7" could not be
    # answered from the package's own notes.
    import gzip

    root = tmp_path / "docs"
    root.mkdir()
    notes = (DOCUMENTS / "corruption.txt").read_bytes()
    (root / "NEWS.gz").write_bytes(gzip.compress(notes, compresslevel=9, mtime=0))
    (root / "examples").mkdir()
    (root / "examples" / "README").write_bytes(b"Read INSTALL first; the build needs a C compiler.\n")
    (root / "INSTALL").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8)  # a program, by its bytes
    (root / "Makefile").write_text("all:\n\ttrue\n")  # a build file: no document
    corpus = Corpus(root)
    assert sorted(p.path for p in corpus.index.pages) == ["NEWS.gz", "examples/README"]
    first = corpus.index.search(" ".join(notes.decode().split()[:8]))[0][1]
    assert first.path == "NEWS.gz"
    assert {s.rel: s.reason for s in corpus.skipped}["INSTALL"].startswith("binary data")
    with CorpusServer(root, corpus=corpus) as server:
        served = httpx.get(f"{server.url}/NEWS.gz")
    assert served.headers["content-type"] == "text/plain; charset=utf-8" and served.content == notes
