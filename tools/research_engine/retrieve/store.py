"""Recording retrieved material into a run: `retrieve/SQ-NN/SRC-NN.md` plus `snapshots/`.

A source record's front matter is the machine truth (schema/source.schema.json);
its body is the extracted material, one passage per block, each prefixed with
its passage marker (`[p01]`) and, unless it is a paragraph, its kind with the
kind's figures: `{heading level=2}`, `{entry term=12}` (the term is the first
12 characters of the text), `{code}`. A passage's heading path is rebuilt from
the headings' levels (`documents.with_heading_paths`); a heading written
before levels were recorded (`{heading}`) has level 0. `stored_text` gives
back exactly the passages' text, which is what the grounding gate searches
for quotes.

Snapshots are content-addressed: the raw bytes of every response the run used
are stored once under their sha256, whoever stores them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from research_engine import bounded, escaping, ids, runrecord
from research_engine.artifacts import read_markdown, write_markdown
from research_engine.documents import Document, Passage, with_heading_paths
from research_engine.errors import BadInput, CheckFailed
from research_engine.trace import Run, atomic_write_bytes

DUPLICATE_SOURCE = "duplicate-source"  # the error code of a second copy of a source in one sub-question
PASSAGE_RE = re.compile(r"^\[(p\d{2,})\]\s?(?:\{([a-z-]+)((?: [a-z]+=\d+)*)\}\s)?(.*)$")


def store_snapshot(run: Run, body: bytes, digest: str) -> Path:
    """Store raw bytes under snapshots/<sha256> once; returns the path. A file already there that no longer
    has its digest (altered) is replaced by the bytes just fetched, which do."""
    path = run.path("snapshot", digest=digest)
    if not path.exists() or not bounded.holds_digest(path, digest):
        atomic_write_bytes(path, body)
    return path


def render_passages(passages: list[Passage]) -> str:
    return "\n\n".join(f"[{p.id}] {_marker(p)}{p.text}" for p in passages)


def _marker(p: Passage) -> str:
    if p.kind == "paragraph":
        return ""
    figures = f" level={p.level}" if p.kind == "heading" and p.level else ""
    figures += f" term={len(p.term)}" if p.kind == "entry" and p.term else ""
    return f"{{{p.kind}{figures}}} "


def parse_passages(body: str) -> list[Passage]:
    """The passages of a source record's body, with their heading paths; old records read the same way."""
    passages: list[Passage] = []
    for block in re.split(r"\n\s*\n", body):
        block = block.strip()
        match = PASSAGE_RE.match(block.replace("\n", " "))
        if match:
            text = match.group(4).strip()
            figures = dict(pair.split("=") for pair in (match.group(3) or "").split())
            term = text[: int(figures.get("term", 0))]
            passages.append(
                Passage(
                    id=match.group(1),
                    text=text,
                    kind=match.group(2) or "paragraph",
                    level=int(figures.get("level", 0)),
                    term=term,
                )
            )
    return with_heading_paths(passages)


def source_meta(
    run: Run, ref: str, sq: str, doc: Document, *, query: str | None, digest: str
) -> dict[str, Any]:
    text = doc.text
    return {
        "id": ref,
        "sub_question": sq,
        "kind": doc.kind,
        "query": query,
        "requested_url": doc.requested_url,
        "final_url": doc.final_url,
        "canonical_key": doc.canonical_key,
        "status": doc.status,
        "content_type": doc.content_type,
        "retrieved_at": doc.retrieved_at,
        "etag": doc.etag,
        "last_modified": doc.last_modified,
        "sha256": digest,
        "snapshot": f"snapshots/{digest}",
        "title": doc.title,
        "language": doc.language,
        "published": doc.published,
        "modified": doc.modified,
        "canonical_url": doc.canonical_url,
        "access_tier": doc.access_tier,
        "from_cache": doc.from_cache,
        "robots_meta": dict(doc.robots_meta),
        "extraction": {**doc.extraction, "chars": len(text), "passages": len(doc.passages)},
        "metadata": doc.metadata,
    }


def record(run: Run, sq: str, doc: Document, *, query: str | None = None) -> str:
    """Record `doc` as the next SRC under `sq`; returns the reference `SQ-NN/SRC-NN`."""
    if not re.fullmatch(r"SQ-[0-9]{2,}", sq or ""):
        raise BadInput(f"not a sub-question id: {sq!r}", code="bad-id", field="sq")
    digest = doc.sha256
    store_snapshot(run, doc.body, digest)
    with run.lock():
        existing = source_with_key(run, sq, doc.canonical_key)
        if existing is not None:
            # One work, one source per sub-question: a second copy would count one source as two.
            raise CheckFailed(
                f"{doc.final_url or doc.requested_url} is already {existing} "
                f"(canonical key {doc.canonical_key}); not recorded twice",
                code=DUPLICATE_SOURCE,
                field="url",
                data={"existing": existing},
            )
        src = ids.next_id(run, "src", sq=sq)
        ref = f"{sq}/{src}"
        meta = source_meta(run, ref, sq, doc, query=query, digest=digest)
        title = escaping.text(doc.title or doc.final_url or doc.requested_url)
        body = "\n".join(
            [
                f"# {ref}: {title}",
                "",
                f"- URL: {escaping.text(doc.final_url or doc.requested_url)}",
                f"- Retrieved: {doc.retrieved_at} (HTTP {doc.status}, {doc.content_type or 'unknown type'})",
                f"- sha256: `{digest}`",
                "",
                "## Extracted material",
                "",
                render_passages(doc.passages) or "(no text)",
            ]
        )
        write_markdown(run.path("source", sq=sq, src=src), meta, body, schema="source")
        _note_source(run, meta)
    return ref


def _note_source(run: Run, meta: dict[str, Any]) -> None:
    def change(rec: dict[str, Any]) -> None:
        rec.setdefault("sources", []).append(
            {
                "id": meta["id"],
                "url": meta["final_url"] or meta["requested_url"],
                "kind": meta["kind"],
                "canonical_key": meta["canonical_key"],
                "access_tier": meta["access_tier"],
                "sha256": meta["sha256"],
            }
        )

    runrecord.update(run, change)


def source_path(run: Run, ref: str) -> Path:
    sq, src = ids.parse_source_ref(ref)
    return run.path("source", sq=sq, src=src)


def load_source(run: Run, ref: str) -> tuple[dict[str, Any], list[Passage]]:
    """(front matter, passages) of a recorded source; BadInput if it does not exist."""
    path = source_path(run, ref)
    if not path.is_file():
        raise BadInput(f"source {ref} does not exist in this run", code="unknown-source", field="source")
    meta, body = read_markdown(path)
    return meta, parse_passages(body)


def stored_text(run: Run, ref: str) -> str:
    _, passages = load_source(run, ref)
    return "\n\n".join(p.text for p in passages)


def source_with_key(run: Run, sq: str, key: str | None) -> str | None:
    """The source of `sq` already recorded under canonical key `key`, if any."""
    if not key:
        return None
    folder = run.path("retrieve_dir", sq=sq)
    for path in (
        sorted(folder.glob("SRC-*.md"), key=lambda p: ids.sort_key(p.stem)) if folder.is_dir() else []
    ):
        meta, _ = read_markdown(path)
        if meta.get("canonical_key") == key:
            return f"{sq}/{path.stem}"
    return None


def list_sources(run: Run) -> list[str]:
    refs = []
    base = run.root / "retrieve"
    for path in sorted(base.glob("SQ-*/SRC-*.md")):
        refs.append(f"{path.parent.name}/{path.stem}")
    return sorted(refs, key=ids.sort_key)
