"""The page: the answer first, then the claims and sources it cites, then how the run went.

Reading order: the deliverable (result.md rendered, its own title as the page's title, its front matter
folded into a details block at its end), the claim cards, the source cards, then the brief, run facts and
budgets, the selection-and-trust logs and the controller's loop log. One static file: inline CSS, no
script, no external asset, readable offline and printable (`printable=True` opens the folded blocks and
drops the navigation, for the PDF).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from research_engine.errors import BadInput
from research_engine.trace import Run, atomic_write_text
from research_engine.view.cards import dl, esc, source_cards
from research_engine.view.deliverable import render_markdown
from research_engine.view.gather import gather
from research_engine.view.sections import (
    brief_section,
    budgets_section,
    claims_section,
    json_cell,
    loop_section,
    selection_section,
)

CSS = """
*{box-sizing:border-box}
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;margin:0;
background:#f4f4f1}
main{max-width:980px;margin:0 auto;padding:20px 40px 64px;background:#fff}
h1{font-size:26px;line-height:1.25;margin:4px 0 6px}
h2{font-size:20px;border-bottom:2px solid #e2e2dc;padding-bottom:4px;margin-top:40px}
h3{font-size:16.5px;margin:22px 0 8px}
.deliverable h2{border:0;font-size:19px;margin:26px 0 6px}.deliverable h2:first-child{margin-top:8px}
.facts{color:#555;font-size:14px;margin:0 0 6px}.facts code{font-size:12.5px}
nav{font-size:14px;margin:0 0 8px}nav a{margin-right:14px}
.nofinding{background:#fff4e5;border-left:5px solid #ed8b00;padding:8px 12px;margin:10px 0}
a{color:#0b57d0}a.clm,a.ref{font-family:ui-monospace,monospace;font-size:.88em;text-decoration:none;
background:#eef3fd;border-radius:3px;padding:0 3px}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px}
code{background:#f3f3f0;padding:0 3px;border-radius:3px}
pre{white-space:pre-wrap;background:#f7f7f5;padding:12px;border:1px solid #ddd}pre code{background:none}
table{border-collapse:collapse;width:100%;margin:8px 0;font-size:14px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f0f0ec}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;font-size:14px}dt{font-weight:600}
dd{margin:0}
.muted{color:#666;font-size:14px}
details.front{margin:24px 0 0;border:1px solid #e2e2dc;border-radius:4px;padding:6px 12px;font-size:14px}
details.front summary{cursor:pointer;color:#444}
.claim{border:1px solid #ddd;border-left:6px solid #999;padding:8px 12px;margin:12px 0;border-radius:4px}
.claim.supported{border-left-color:#2e7d32}.claim.partial{border-left-color:#ed8b00}
.claim.refuse{border-left-color:#c62828;background:#fff4f4}.claim.retired{opacity:.7}
.claim:target,.source:target{outline:3px solid #8ab4f8}
.verdict{display:inline-block;font-weight:700;font-size:12px;padding:1px 8px;border-radius:10px;color:#fff;
background:#777;margin-right:6px}.verdict.supported{background:#2e7d32}.verdict.partial{background:#ed8b00}
.verdict.refuse{background:#c62828}.verifier{font-size:14px;margin:4px 0}
blockquote{margin:6px 0 4px 12px;padding:2px 10px;border-left:3px solid #bbb;color:#333}
mark{background:#fff176;padding:0 1px}.passage{margin:4px 0;padding:2px 6px}
.pid{color:#888;font-family:ui-monospace,monospace;font-size:12px;margin-right:6px}
.source{border-top:1px solid #eee;padding-top:6px}.chosen{color:#2e7d32;font-weight:600}.rejected{color:#777}
.refused-note{color:#c62828;font-weight:700}ul.support{font-size:14px;margin:4px 0}
@media print{body{background:#fff}main{max-width:none;padding:0}nav{display:none}
.claim,.source,blockquote,tr{break-inside:avoid}a{color:#0b57d0}}
"""

_TITLE_RE = re.compile(r"\A#[ \t]+(.+?)[ \t#]*(?:\n|\Z)")


def _deliverable(data: dict[str, Any], ids: dict[str, set[str]], printable: bool) -> tuple[str, str | None]:
    """(the deliverable's HTML, its title's HTML when it opens with one)."""
    result = data["result"]
    if result is None:
        return '<p class="muted">synthesis/result.md not written yet</p>', None
    text = result["text"]
    title = None
    found = _TITLE_RE.match(text)
    if found:
        title = render_markdown("# " + found.group(1), **ids).strip()
        text = text[found.end() :]
    body = render_markdown(text + "\n\n" + result["generated"], **ids)
    front = result["front"]
    if front or result["front_text"]:
        rows = (
            dl([(str(k), json_cell(v)) for k, v in front.items()])
            if front
            else (f"<pre>{esc(result['front_text'])}</pre>")
        )
        body += (
            f'<details class="front"{" open" if printable else ""}><summary>Front matter of '
            f"synthesis/result.md (the run's facts for programs)</summary>{rows}</details>"
        )
    return body, title


def render(data: dict[str, Any], *, printable: bool = False) -> str:
    """The page for `gather(run)`'s data."""
    brief, record = data["brief"], data["record"]
    ids = {
        "claims": {c["id"] for c in data["ledger"].get("claims", [])},
        "sources": set(data["sources"]),
        "questions": {sq["id"] for sq in data["sub_questions"]},
    }
    placed: set[str] = set()
    sources_html = source_cards(data, placed)  # first: it learns which quotes it could mark
    claims_html = claims_section(data, data["verdicts"], placed)
    body, title = _deliverable(data, ids, printable)
    heading = brief.get("objective") or data["run_id"]
    label = (record.get("reproducibility") or {}).get("label")
    facts = [f"Run <code>{esc(data['run_id'])}</code>", f"status {esc(record.get('status'))}"]
    facts.append(f"stop reason {esc(record.get('stop_reason') or 'none yet')}")
    if label:
        facts.append(f"reproducibility {esc(label)}")
    no_finding = bool((record.get("result") or {}).get("no_finding")) or bool(
        ((data["result"] or {}).get("front") or {}).get("no_finding")
    )
    banner = (
        '<p class="nofinding"><b>No finding could be supported.</b> Nothing below is stated as established; '
        "what was searched, retrieved and refused, and the open questions, follow.</p>"
        if no_finding
        else ""
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(heading)}</title><style>{CSS}</style></head><body><main>",
        "<header>",
        title or f"<h1>{esc(heading)}</h1>",
        f'<p class="facts">{" &middot; ".join(facts)}</p>',
        ""
        if printable
        else '<nav><a href="#claims">Claims</a><a href="#sources">Sources</a><a href="#brief">Brief</a>'
        '<a href="#budgets">Run facts</a><a href="#selection">Selection</a>'
        '<a href="#loop">Loop log</a></nav>',
        "</header>",
        banner,
        f'<section class="deliverable" id="deliverable">{body}</section>',
        claims_html,
        sources_html,
        brief_section(brief),
        budgets_section(record),
        selection_section(data),
        loop_section(data),
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def checked_output(run: Run, output: str | Path | None, default: str, suffix: str) -> Path:
    """Where a page (or its PDF) goes: `default` in the run, or anywhere outside the run; never over an
    artifact, never a directory."""
    target = Path(output) if output else run.path(default)
    resolved = target.expanduser().resolve()
    # The trace tree is the tools' own: the page goes to its place there or outside the run.
    if resolved != run.path(default).resolve() and resolved.is_relative_to(run.root.resolve()):
        raise BadInput(
            f"--output {target} is inside the run; the {suffix} page's place there is "
            f"{run.path(default).name}",
            code="bad-output",
            field="output",
        )
    if resolved.is_dir():
        raise BadInput(
            f"--output {target} is a directory; name the page's file", code="bad-output", field="output"
        )
    return target


def write_view(run: Run, output: str | Path | None = None) -> Path:
    """Render the page for `run` and write it (default: `view.html` in the run); returns its path."""
    target = checked_output(run, output, "view", "HTML")
    page = render(gather(run))
    try:
        atomic_write_text(target, page)
    except OSError as exc:
        raise BadInput(
            f"cannot write {target}: {exc.strerror or exc}", code="bad-output", field="output"
        ) from exc
    return target
