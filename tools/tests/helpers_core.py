"""Small, stable helpers for tests of the deterministic core (claims, verify, controller).

Sources are recorded through the real `retrieve.record`, from Documents built in
memory, so tests need no network. Keep this file small: other test modules
depend on these signatures.
"""

from __future__ import annotations

import json
from typing import Any

from research_engine import decompose, retrieve
from research_engine.documents import Document, number_passages, sha256_hex
from research_engine.trace import Run, iso
from research_engine.urls import canonical_key


def add_sq(run: Run, text: str = "What does the evidence say?", claim_type: str = "factual") -> str:
    """Record a sub-question; returns SQ-NN."""
    return decompose.add(run, text, claim_type)


def make_document(
    text: str,
    url: str = "https://example.org/page",
    *,
    title: str | None = None,
    kind: str = "web",
    access_tier: str = "open",
) -> Document:
    """A Document whose passages are `text`'s blank-line separated paragraphs."""
    chunks = [("paragraph", block) for block in text.split("\n\n")]
    body = text.encode("utf-8")
    return Document(
        kind=kind,
        requested_url=url,
        final_url=url,
        status=200,
        retrieved_at=iso(),
        body=body,
        passages=number_passages(chunks),
        content_type="text/html",
        title=title or url,
        canonical_key=canonical_key(url),
        access_tier=access_tier,
        extraction={"extractor": "test", "sha256": sha256_hex(body)},
    )


def add_source(run: Run, sq: str, text: str, url: str = "https://example.org/page", **kwargs) -> str:
    """Record a source under `sq` with `text` as its stored text; returns SQ-NN/SRC-NN."""
    return retrieve.record(run, sq, make_document(text, url, **kwargs))


def hand_edit_claim(run: Run, clm: str, **changes: Any) -> None:
    """Change fields of `clm`'s claim-added record in consolidate/claims.jsonl, as a hand edit would: the
    grounding gate never sees the change (tests use it to plant claims the gate would refuse)."""
    path = run.path("claims_log")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    (record,) = [r for r in records if r["event"] == "claim-added" and r["id"] == clm]
    record.update(changes)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
