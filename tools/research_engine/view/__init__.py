"""The trace viewer: one static, self-contained page for a run (`research-engine view RUN [--pdf]`).

The page reads as a report: the deliverable first, rendered from its Markdown (`deliverable`), every
`CLM-NN` a link to its claim card and every source id to its source card (`cards`), then how the run
went (`sections`: the brief, run facts and budgets, the selection logs, the controller's loop log).
`gather` reads the trace, `page` assembles and writes the page, `pdf` prints the same page to PDF.

It is read-only over the trace (it writes only the page, by default `view.html` in the run, or
`view.pdf`) and tolerates a run in any state: a missing artifact is shown as "not written yet". Inline
CSS, no script, no external asset: it reads offline and without JavaScript. Everything that came from a
fetched page, a model or a brief is HTML-escaped; the deliverable's Markdown keeps the escaping rules of
`research_engine.escaping` (raw HTML is text; only http(s), doi: and #fragment links).
"""

from __future__ import annotations

from research_engine.view.gather import gather
from research_engine.view.page import render, write_view
from research_engine.view.pdf import write_pdf
from research_engine.view.sections import model_label

__all__ = ["gather", "model_label", "render", "write_pdf", "write_view"]
