"""Sources: web search backends, OpenAlex and the World Bank, all yielding one Candidate shape.

- `candidate`: the Candidate every search-like adapter yields (the selection step scores them).
- `search`: SearXNG, Brave, Tavily and DuckDuckGo HTML behind one interface, tried in a
  configurable order with the chain of attempts kept.
- `openalex`: works search (cursor paging), one work by id or DOI, abstract reconstruction.
- `worldbank`: country-by-indicator series, indicator metadata, local indicator discovery.
- `record`: API answers as `documents.Document`s recorded with `retrieve.record`; search
  results kept in `select/SQ-NN.candidates.json`.
- `endpoints`: base URLs (overridable by environment for tests and replays), secret-free
  request URLs, transport failures as domain errors.

All HTTP goes through `research_engine.net.HttpClient`; nothing here opens a socket itself.
"""

from __future__ import annotations

from research_engine.sources.candidate import Candidate

__all__ = ["Candidate"]
