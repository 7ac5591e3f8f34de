"""Retrieve: turning fetched pages and API answers into a run's sources.

- `store`: `retrieve/SQ-NN/SRC-NN.md` plus `snapshots/` (record, load, list);
- `pages`: web pages fetched through the guarded client, read, recorded (`retrieve_pages`, the one
  entry point the `fetch` command and the headless engine share);
- `api`: OpenAlex works and World Bank series as Documents, recorded the same way.
"""

from __future__ import annotations

from research_engine.retrieve.store import (
    list_sources,
    load_source,
    parse_passages,
    record,
    render_passages,
    source_path,
    store_snapshot,
    stored_text,
)

__all__ = [
    "list_sources",
    "load_source",
    "parse_passages",
    "record",
    "render_passages",
    "source_path",
    "store_snapshot",
    "stored_text",
]
