"""Helpers for the core tests (controller, verify, report, end to end): a mini-web and run building.

Pages are served by pytest-httpserver on 127.0.0.1; runs opt in to private addresses
(`brief lock --allow-private`), as a user testing against a local server would.
"""

from __future__ import annotations

import html
import signal
from typing import Any

from research_engine import brief, claims, retrieve, trace, verify
from research_engine.documents import Document
from research_engine.extract import extract_document
from research_engine.net import HttpClient
from research_engine.verify import refetch

FAST = {"per_host_interval": 0.0, "max_retries": 0, "timeout": 5.0, "deadline": 10.0}


def page(title: str, *paragraphs: str) -> str:
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"</head><body><article><h1>{html.escape(title)}</h1>\n{body}\n</article></body></html>"
    )


def serve(
    httpserver: Any,
    path: str,
    text: str,
    *,
    content_type: str = "text/html; charset=utf-8",
    status: int = 200,
) -> str:
    httpserver.expect_request(path).respond_with_data(text, status=status, content_type=content_type)
    return httpserver.url_for(path)


def allow_robots(httpserver: Any) -> None:
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nAllow: /\n", content_type="text/plain"
    )


def locked_private_run(brief_file: Any, **fields: Any):
    locked = brief.lock(brief_file(**fields), allow_private=True)
    return trace.open_run(locked.run_root)


def fetch_into_run(run: Any, sq: str, url: str, *, access_tier: str = "open") -> str:
    """Retrieve one page the way the retrieve stage does: fetch, extract, record. Returns SQ-NN/SRC-NN."""
    with HttpClient(allow_private=True, use_cache=False, **FAST) as client:
        result = client.get(url)
    assert result.ok, f"{url}: {result.error} {result.error_detail}"
    extracted = extract_document(
        result.body, content_type=result.content_type, url=result.final_url, text=result.text
    )
    doc = Document(
        kind="web",
        requested_url=url,
        final_url=result.final_url,
        status=result.status,
        retrieved_at=result.retrieved_at,
        body=result.body,
        passages=extracted.passages,
        content_type=result.content_type,
        title=extracted.title,
        extraction=extracted.extraction_figures(),
        access_tier=access_tier,
    )
    return retrieve.record(run, sq, doc, query="test query")


def fast_verifier(monkeypatch: Any) -> None:
    """The verifier's real HttpClient, without the one-second politeness pause between local requests."""
    monkeypatch.setattr(refetch, "CLIENT_OPTIONS", dict(FAST))


def grounded_claim(
    run: Any,
    httpserver: Any,
    sq: str,
    path: str,
    sentence: str,
    claim: str | None = None,
    *,
    access_tier: str = "open",
) -> str:
    """Serve a page holding `sentence`, retrieve it under `sq`, add a claim quoting it; returns CLM-NN."""
    allow_robots(httpserver)
    url = serve(
        httpserver,
        path,
        page(
            f"Page {path}",
            sentence,
            "A second paragraph keeps the page from being thin "
            "and says nothing else of note about the subject at hand.",
        ),
    )
    ref = fetch_into_run(run, sq, url, access_tier=access_tier)
    return claims.add_claim(run, sq, claim or sentence, [ref], [sentence])


def verify_all(run: Any, verdicts: dict[str, str] | None = None) -> dict[str, Any]:
    """prepare, record each claim's floor (or the verdict given), close."""
    out = verify.prepare(run)
    for row in out["claims"]:
        wanted = (verdicts or {}).get(row["claim"], row["floor"])
        if wanted != "refuse" or row["floor"] != "refuse":
            verify.record(run, row["claim"], wanted, f"test verdict {wanted}")
    return verify.close(run)


def interactive_sigint() -> None:
    """`preexec_fn` for a child that a test interrupts with SIGINT: Ctrl-C's default disposition, as an
    interactive terminal gives it. A suite started in the background (`cmd &` in a non-interactive shell)
    inherits SIGINT ignored, and so would every child, which then could not be interrupted at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
