"""The trace viewer: one static, self-contained HTML page for a run (`research-engine view RUN`).

The page shows, in reading order: the brief; run facts and budgets (set and
spent); every claim grouped by sub-question with its verdict (supported, partial,
REFUSED, unverified) and each piece of evidence linked to its quote, highlighted
inside the source's stored passages; tensions and gaps; the selection-and-trust
logs; the controller's loop log (signals, governor, decision, why); the sources
(title, URL, digest, retrieved-at, passages); and the deliverable if written.

It is read-only over the trace (it writes only the page, by default `view.html`
in the run) and tolerates a run in any state: a missing artifact is shown as
"not written yet". Inline CSS, no script, no external asset: it reads offline
and without JavaScript. Everything that came from a fetched page, a model or a
brief is HTML-escaped (`_e`); links to sources are emitted only for http(s) URLs.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from research_engine import bounded, brief, claims, critic, decompose, retrieve, runrecord, selection
from research_engine.errors import BadInput
from research_engine.grounding import find_quote
from research_engine.runstate import latest_verdicts, load_loop_log
from research_engine.trace import Run, atomic_write_text
from research_engine.vocabulary import Verdict

VERDICT_LABELS: dict[str | None, str] = {
    Verdict.SUPPORTED: "supported",
    Verdict.PARTIAL: "partial",
    Verdict.REFUSE: "REFUSED",
    None: "unverified",
}

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;margin:0;background:#f6f6f4}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px;background:#fff}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:20px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}
h3{font-size:16px;margin:22px 0 8px}nav a{margin-right:12px}
code,.mono{font-family:ui-monospace,monospace;font-size:13px}
table{border-collapse:collapse;width:100%;margin:8px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f0f0ec}dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}
dt{font-weight:600}dd{margin:0}.muted{color:#666}.claim{border:1px solid #ddd;border-left:6px solid #999;
padding:8px 12px;margin:10px 0;border-radius:4px}.claim.supported{border-left-color:#2e7d32}
.claim.partial{border-left-color:#ed8b00}.claim.refuse{border-left-color:#c62828;background:#fff4f4}
.claim.retired{opacity:.7}.verdict{display:inline-block;font-weight:700;font-size:12px;padding:1px 8px;
border-radius:10px;color:#fff;background:#777;margin-right:6px}.verdict.supported{background:#2e7d32}
.verdict.partial{background:#ed8b00}.verdict.refuse{background:#c62828}blockquote{margin:6px 0 6px 12px;
padding:2px 10px;border-left:3px solid #bbb;color:#333}mark{background:#fff176;padding:0 1px}
.passage{margin:4px 0;padding:2px 6px}.pid{color:#888;font-family:ui-monospace,monospace;font-size:12px;
margin-right:6px}.source{border-top:1px solid #eee;padding-top:6px}.chosen{color:#2e7d32;font-weight:600}
.rejected{color:#777}.refused-note{color:#c62828;font-weight:700}pre{white-space:pre-wrap;background:#f7f7f7;
padding:12px;border:1px solid #ddd}
"""


def _e(value: Any) -> str:
    """HTML-escape anything (the only way text reaches the page)."""
    return html.escape("" if value is None else str(value), quote=True)


def _anchor(*parts: str) -> str:
    return "-".join(p.replace("/", "-") for p in parts)


def _href(url: Any) -> str | None:
    text = str(url or "")
    return text if text.lower().startswith(("http://", "https://")) else None


def _safe(load: Any, default: Any) -> Any:
    """An artifact, or `default` when it is not written yet (the viewer works on runs in any state)."""
    try:
        value = load()
    except Exception:  # a missing or half-written artifact must not stop the page
        return default
    return default if value is None else value


# ---------------------------------------------------------------------------- gathering


def gather(run: Run) -> dict[str, Any]:
    """Everything the page shows, read from the trace."""

    def verdicts() -> dict[str, Any]:
        return latest_verdicts(run)

    def loop_cycles() -> list[dict[str, Any]]:
        return load_loop_log(run).get("cycles", [])

    sub_questions = _safe(lambda: decompose.load(run), [])
    sources = {}
    for ref in _safe(lambda: retrieve.list_sources(run), []):
        meta, passages = _safe(lambda ref=ref: retrieve.load_source(run, ref), ({}, []))
        sources[ref] = {"meta": meta, "passages": passages}
    result_path = run.path("result")
    return {
        "run_id": run.run_id,
        "brief": _safe(lambda: brief.load_locked(run.root), {}),
        "record": _safe(lambda: runrecord.read(run), {}),
        "sub_questions": sub_questions,
        "ledger": _safe(lambda: claims.load(run), {"claims": [], "tensions": []}),
        "verdicts": _safe(verdicts, {}),
        "gaps": _safe(lambda: critic.load(run).get("gaps", []), []),
        "selections": {
            sq["id"]: _safe(lambda sq=sq: selection.load(run, sq["id"]), None) for sq in sub_questions
        },
        "cycles": _safe(loop_cycles, []),
        "sources": sources,
        "result": _safe(lambda: bounded.read_text(result_path), None) if result_path.is_file() else None,
    }


# ---------------------------------------------------------------------------- rendering


def _quote_marks(data: dict[str, Any]) -> dict[str, list[tuple[str, str, str | None]]]:
    """source ref -> [(anchor id, quote, passage id)] for every piece of evidence citing it."""
    marks: dict[str, list[tuple[str, str, str | None]]] = {}
    for claim in data["ledger"].get("claims", []):
        for i, ev in enumerate(claim.get("evidence") or [], 1):
            marks.setdefault(ev.get("source", ""), []).append(
                (_anchor("q", claim["id"], str(i)), str(ev.get("quote") or ""), ev.get("passage"))
            )
    return marks


def _highlight(text: str, quotes: list[tuple[str, str]]) -> tuple[str, set[str]]:
    """Escaped `text` with each found quote in <mark id=anchor>; returns (html, anchors placed)."""

    spans: list[tuple[int, int, str]] = []
    for anchor, quote in quotes:
        found = find_quote(quote, text) if quote.strip() else None
        if found is not None and found.found and found.start is not None and found.end is not None:
            spans.append((found.start, found.end, anchor))
    spans.sort()
    out, at, placed = [], 0, set()
    for start, end, anchor in spans:
        if start < at:  # overlaps an earlier mark: anchor it at the earlier mark
            out.append(f'<span id="{_e(anchor)}"></span>')
            placed.add(anchor)
            continue
        out.append(_e(text[at:start]))
        out.append(f'<mark id="{_e(anchor)}">{_e(text[start:end])}</mark>')
        placed.add(anchor)
        at = end
    out.append(_e(text[at:]))
    return "".join(out), placed


def _verdict_badge(verdict: str | None) -> str:
    return f'<span class="verdict {_e(verdict or "none")}">{_e(VERDICT_LABELS.get(verdict, verdict))}</span>'


def _dl(pairs: list[tuple[str, Any]]) -> str:
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in pairs)
    return f"<dl>{rows}</dl>"


def _json_cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return f'<span class="mono">{_e(json.dumps(value, ensure_ascii=False, sort_keys=True))}</span>'
    return _e(value)


def render(data: dict[str, Any]) -> str:
    """The page for `gather(run)`'s data."""
    brief, record = data["brief"], data["record"]
    verdicts = data["verdicts"]
    placed_anchors: set[str] = set()
    sources_html = _render_sources(data, placed_anchors)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Run {_e(data['run_id'])}</title><style>{CSS}</style></head><body><main>",
        f"<h1>{_e(brief.get('objective') or data['run_id'])}</h1>",
        f'<p class="muted">Run <code>{_e(data["run_id"])}</code> &middot; status {_e(record.get("status"))}'
        f" &middot; stop reason {_e(record.get('stop_reason') or 'none yet')}</p>",
        '<nav><a href="#deliverable">Deliverable</a><a href="#brief">Brief</a><a href="#budgets">Budgets</a>'
        '<a href="#claims">Claims</a><a href="#selection">Selection</a><a href="#loop">Loop log</a>'
        '<a href="#sources">Sources</a></nav>',
        _render_result(data),
        _render_brief(brief),
        _render_budgets(record),
        _render_claims(data, verdicts, placed_anchors),
        _render_selection(data),
        _render_loop(data),
        sources_html,
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _render_brief(brief: dict[str, Any]) -> str:
    keys = (
        "objective",
        "deliverable",
        "scope",
        "depth",
        "recency",
        "claim_types",
        "reproducibility",
        "language",
        "known_sources",
        "avoid_sources",
        "prior_context",
        "format_constraints",
    )
    pairs = [(k, _json_cell(brief[k])) for k in keys if brief.get(k) not in (None, "", [])]
    return '<h2 id="brief">Brief</h2>' + (_dl(pairs) if pairs else '<p class="muted">no locked brief</p>')


def _render_budgets(record: dict[str, Any]) -> str:
    budgets = record.get("budgets") or {}
    spent_all = budgets.get("spent") or {}
    set_all = budgets.get("set") or {}
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td>{_e(limit)}</td><td>{_e(spent_all.get(name, '-'))}</td></tr>"
        for name, limit in set_all.items()
    )
    extra = "".join(
        f"<tr><td>{_e(name)}</td><td>-</td><td>{_e(value)}</td></tr>"
        for name, value in spent_all.items()
        if name not in set_all
    )
    grounding = record.get("grounding") or {}
    facts = _dl(
        [
            ("model", _e(_model_label(record.get("model")))),
            ("depth / cycle ceiling", _e(f"{record.get('depth', '?')} / {record.get('cycle_ceiling', '?')}")),
            ("cycles run", _e(record.get("cycles"))),
            ("grounding", _e(", ".join(f"{k} {v}" for k, v in grounding.items()))),
            ("refused during the run", _e(", ".join(record.get("refused_claims") or []) or "none")),
            ("reproducibility", _e((record.get("reproducibility") or {}).get("label"))),
        ]
    )
    table = (
        "<table><tr><th>budget</th><th>set</th><th>spent</th></tr>" + rows + extra + "</table>"
        if rows or extra
        else '<p class="muted">no budgets recorded</p>'
    )
    return f'<h2 id="budgets">Run facts and budgets</h2>{facts}{table}'


def _render_claims(data: dict[str, Any], verdicts: dict[str, Any], placed: set[str]) -> str:
    claims = data["ledger"].get("claims", [])
    out = ['<h2 id="claims">Sub-questions and claims</h2>']
    known = {sq["id"] for sq in data["sub_questions"]}
    groups = [(sq, [c for c in claims if c.get("sub_question") == sq["id"]]) for sq in data["sub_questions"]]
    orphans = [c for c in claims if c.get("sub_question") not in known]
    if orphans:
        groups.append(({"id": "?", "text": "claims of unknown sub-questions"}, orphans))
    if not groups:
        out.append('<p class="muted">no sub-questions yet</p>')
    for sq, items in groups:
        angle = f" &middot; angle {_e(sq.get('angle'))}" if sq.get("angle") else ""
        out.append(
            f'<h3 id="{_e(sq["id"])}">{_e(sq["id"])}: {_e(sq["text"])}</h3>'
            f'<p class="muted">{_e(sq.get("claim_type", ""))}{angle}</p>'
        )
        if not items:
            out.append('<p class="muted">no claims for this sub-question</p>')
        for claim in items:
            out.append(_render_claim(claim, verdicts.get(claim["id"]), data, placed))
    tensions = data["ledger"].get("tensions", [])
    if tensions:
        out.append("<h3>Tensions</h3><ul>")
        for t in tensions:
            out.append(
                f"<li><b>{_e(t.get('id'))}</b> ({_e(t.get('status'))}) between "
                f"{', '.join(_link_claim(c) for c in t.get('claims', []))}: {_e(t.get('about'))}"
                + (f" &mdash; resolved: {_e(t['resolution'])}" if t.get("resolution") else "")
                + "</li>"
            )
        out.append("</ul>")
    if data["gaps"]:
        out.append("<h3>Gaps named by the completeness critic</h3><ul>")
        for g in data["gaps"]:
            out.append(
                f"<li><b>{_e(g.get('id'))}</b> ({_e(g.get('severity'))}, {_e(g.get('status'))}"
                f"{', ' + _e(g['sub_question']) if g.get('sub_question') else ''}): {_e(g.get('about'))} "
                f'<span class="muted">query: {_e(g.get("query"))}</span></li>'
            )
        out.append("</ul>")
    return "\n".join(out)


def _link_claim(clm: str) -> str:
    return f'<a href="#{_e(clm)}">{_e(clm)}</a>'


def _render_claim(
    claim: dict[str, Any], challenge: dict[str, Any] | None, data: dict[str, Any], placed: set[str]
) -> str:
    verdict = challenge.get("verdict") if challenge else None
    retired = claim.get("status") == "retired"
    classes = " ".join(filter(None, ["claim", verdict or "unverified", "retired" if retired else ""]))
    head = [
        f'<div class="{classes}" id="{_e(claim["id"])}">',
        "<p>",
        _verdict_badge(verdict),
        f"<b>{_e(claim['id'])}</b> {_e(claim.get('text'))}",
    ]
    meta = [f"confidence {_e(claim.get('confidence'))}", f"cycle {_e(claim.get('cycle'))}"]
    if retired:
        meta.append(f"retired: {_e(claim.get('retired_why'))}")
    head.append(f' <span class="muted">({"; ".join(meta)})</span></p>')
    if verdict == "refuse":
        head.append('<p class="refused-note">Refused by the verifier: not established.</p>')
    if challenge:
        forced = " (forced by the floor)" if challenge.get("forced") else ""
        head.append(
            f'<p class="muted">{_e(challenge.get("id"))}, cycle {_e(challenge.get("cycle"))}: floor '
            f"{_e(challenge.get('floor'))}{forced}. {_e(challenge.get('reason'))}</p>"
        )
    for i, ev in enumerate(claim.get("evidence") or [], 1):
        ref = ev.get("source", "")
        anchor = _anchor("q", claim["id"], str(i))
        title = (data["sources"].get(ref, {}).get("meta") or {}).get("title")
        where = f'<a href="#{_e(_anchor("src", ref))}">{_e(ref)}</a>' if ref in data["sources"] else _e(ref)
        quote_link = (
            f'<a href="#{_e(anchor)}">quote in source</a>'
            if anchor in placed
            else '<span class="refused-note">quote not found in the stored text</span>'
        )
        head.append(
            f"<blockquote>{_e(ev.get('quote'))}</blockquote>"
            f'<p class="muted">source {where}{" &middot; " + _e(title) if title else ""} &middot; '
            f"passage {_e(ev.get('passage'))} &middot; match {_e(ev.get('match'))} &middot; {quote_link}</p>"
        )
    head.append("</div>")
    return "".join(head)


def _render_selection(data: dict[str, Any]) -> str:
    out = ['<h2 id="selection">Selection and trust logs</h2>']
    any_log = False
    for sq_id, meta in data["selections"].items():
        if not meta:
            continue
        any_log = True
        for rnd_index, rnd in enumerate(meta.get("rounds", []), 1):
            out.append(
                f"<h3>{_e(sq_id)}, round {rnd_index}"
                f"{' (cycle ' + _e(rnd.get('cycle')) + ')' if rnd.get('cycle') else ''}</h3>"
            )
            out.append(
                "<table><tr><th>candidate</th><th>score</th><th>verdict</th><th>why / reason</th></tr>"
            )
            for cand in rnd.get("candidates", []):
                url = cand.get("url")
                href = _href(url)
                link = f'<a href="{_e(href)}" rel="noreferrer">{_e(url)}</a>' if href else _e(url)
                scores = cand.get("scores") or {}
                total = scores.get("total", cand.get("total"))
                verdict = cand.get("verdict")
                why = "; ".join(
                    filter(
                        None,
                        [
                            str(cand.get("why") or ""),
                            f"stated reason: {cand['reason']}" if cand.get("reason") else "",
                        ],
                    )
                )
                out.append(
                    f"<tr><td>{_e(cand.get('title'))}<br><span class='mono'>{link}</span></td>"
                    f"<td>{_e(total)}</td><td class='{_e(verdict)}'>{_e(verdict)}</td><td>{_e(why)}</td></tr>"
                )
            out.append("</table>")
    if not any_log:
        out.append('<p class="muted">no selection log written yet</p>')
    return "\n".join(out)


def _render_loop(data: dict[str, Any]) -> str:
    out = ['<h2 id="loop">Controller loop log</h2>']
    if not data["cycles"]:
        out.append('<p class="muted">no controller cycle yet</p>')
    for block in data["cycles"]:
        signals = block.get("signals") or {}
        decision = block.get("decision") or {}
        readings = signals.get("readings") or {}
        rows = "".join(
            f"<tr><td>{_e(name)}</td><td>{_e(signals.get(name))}</td><td>{_e(readings.get(name))}</td></tr>"
            for name in ("coverage", "confidence", "gap", "contradiction")
        )
        targets = ", ".join(
            _link_claim(t) if str(t).startswith("CLM-") else _e(t) for t in decision.get("targets") or []
        )
        out.append(
            f"<h3>Cycle {_e(block.get('cycle'))}</h3>"
            "<table><tr><th>signal</th><th>value</th><th>how it was read</th></tr>"
            + rows
            + "</table>"
            + _dl(
                [
                    ("decision", f"<b>{_e(decision.get('action'))}</b>"),
                    ("targets", targets or "none"),
                    ("stop reason", _e(decision.get("stop_reason") or "none")),
                    ("governor", _json_cell(block.get("governor"))),
                    ("why", _e(block.get("why"))),
                ]
            )
        )
    return "\n".join(out)


def _render_sources(data: dict[str, Any], placed: set[str]) -> str:
    marks = _quote_marks(data)
    out = [
        '<h2 id="sources">Sources</h2><p class="muted">Each source with the passages its claims quote; the '
        "full text of every source is in the run's <code>retrieve/</code> directory.</p>"
    ]
    if not data["sources"]:
        out.append('<p class="muted">no sources retrieved yet</p>')
    first_with: dict[str, str] = {}  # sha256 -> the first source shown with that content
    for ref, source in data["sources"].items():
        meta, passages = source["meta"], source["passages"]
        same = first_with.setdefault(str(meta.get("sha256")), ref)
        url = meta.get("final_url") or meta.get("requested_url")
        href = _href(url)
        link = f'<a href="{_e(href)}" rel="noreferrer">{_e(url)}</a>' if href else _e(url)
        out.append(
            f'<div class="source" id="{_e(_anchor("src", ref))}"><h3>{_e(ref)}: '
            f"{_e(meta.get('title') or url)}</h3>"
        )
        out.append(
            _dl(
                [
                    ("URL", f'<span class="mono">{link}</span>'),
                    ("sha256", f'<span class="mono">{_e(meta.get("sha256"))}</span>'),
                    (
                        "retrieved",
                        _e(
                            f"{meta.get('retrieved_at')} "
                            f"(HTTP {meta.get('status')}, {meta.get('content_type')})"
                        ),
                    ),
                    ("kind / access", _e(f"{meta.get('kind')} / {meta.get('access_tier')}")),
                    ("query", _e(meta.get("query"))),
                    *(
                        [("same page as", f'<a href="#{_e(_anchor("src", same))}">{_e(same)}</a>')]
                        if same != ref
                        else []
                    ),
                ]
            )
        )
        wanted = marks.get(ref, [])
        by_passage: dict[str, list[tuple[str, str]]] = {}
        for anchor, quote, pid in wanted:
            target = pid if any(p.id == pid for p in passages) else _passage_holding(quote, passages)
            if target:
                by_passage.setdefault(target, []).append((anchor, quote))
        # Only the passages a claim quotes: the rest of the page is in retrieve/ (the view stays small).
        for passage in passages:
            if passage.id not in by_passage:
                continue
            text_html, anchors = _highlight(passage.text, by_passage[passage.id])
            placed |= anchors
            out.append(
                f'<p class="passage" id="{_e(_anchor("src", ref, passage.id))}">'
                f'<span class="pid">[{_e(passage.id)}]</span>{text_html}</p>'
            )
        hidden = len(passages) - len(by_passage)
        if hidden:
            out.append(f'<p class="muted">{hidden} other passage(s) in retrieve/{_e(ref)}.md</p>')
        out.append("</div>")
    return "\n".join(out)


def _passage_holding(quote: str, passages: list[Any]) -> str | None:
    for passage in passages:
        if quote.strip() and find_quote(quote, passage.text).found:
            return passage.id
    return None


def _render_result(data: dict[str, Any]) -> str:
    if data["result"] is None:
        return '<h2 id="deliverable">Deliverable</h2><p class="muted">synthesis/result.md not written yet</p>'
    return f'<h2 id="deliverable">Deliverable (synthesis/result.md)</h2><pre>{_e(data["result"])}</pre>'


def write_view(run: Run, output: str | Path | None = None) -> Path:
    """Render the page for `run` and write it (default: `view.html` in the run); returns its path."""

    target = Path(output) if output else run.path("view")
    resolved = target.expanduser().resolve()
    # The trace tree is the tools' own: the page goes to view.html or outside the run, never over an artifact.
    if resolved != run.path("view").resolve() and resolved.is_relative_to(run.root.resolve()):
        raise BadInput(
            f"--output {target} is inside the run; the page's place there is {run.path('view').name}",
            code="bad-output",
            field="output",
        )
    if resolved.is_dir():
        raise BadInput(
            f"--output {target} is a directory; name the page's file", code="bad-output", field="output"
        )
    page = render(gather(run))
    try:
        atomic_write_text(target, page)
    except OSError as exc:
        raise BadInput(
            f"cannot write {target}: {exc.strerror or exc}", code="bad-output", field="output"
        ) from exc
    return target


def _model_label(model: Any) -> str:
    """run.json's model record as a reader wants it: its name, then any other facts."""
    if not model:
        return "none recorded"
    if not isinstance(model, dict):
        return str(model)
    name = str(model.get("name") or model.get("kind") or "unnamed")
    extra = ", ".join(
        f"{k} {v}" for k, v in model.items() if k not in ("name", "kind") and v not in (None, "")
    )
    return f"{name} ({extra})" if extra else name
