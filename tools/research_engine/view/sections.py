"""The page's sections about how the run went: sub-questions and their claims, the brief, run facts and
budgets, the selection-and-trust logs and the controller's loop log. Every string is escaped (`esc`)."""

from __future__ import annotations

import json
from typing import Any

from research_engine.runrecord import describe_spend
from research_engine.view.cards import claim_card, dl, esc, link_claim, web_link


def json_cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return f'<span class="mono">{esc(json.dumps(value, ensure_ascii=False, sort_keys=True))}</span>'
    return esc(value)


def governor_cell(governor: Any) -> str:
    """The governor's reading as a reader wants it: cycle of ceiling, then each budget spent of its limit."""
    if not isinstance(governor, dict) or not isinstance(governor.get("budgets"), dict):
        return json_cell(governor)
    budgets = governor["budgets"]
    limits, spent = budgets.get("set") or {}, budgets.get("spent") or {}
    parts = [f"cycle {governor.get('cycle')} of {governor.get('ceiling')} ({governor.get('depth')})"]
    parts += [describe_spend(name, value, limits.get(name)) for name, value in spent.items()]
    return esc("; ".join(parts))


def brief_section(brief: dict[str, Any]) -> str:
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
    pairs = [(k, json_cell(brief[k])) for k in keys if brief.get(k) not in (None, "", [])]
    return '<h2 id="brief">Brief</h2>' + (dl(pairs) if pairs else '<p class="muted">no locked brief</p>')


def budgets_section(record: dict[str, Any]) -> str:
    budgets = record.get("budgets") or {}
    spent_all = budgets.get("spent") or {}
    set_all = budgets.get("set") or {}

    def shown(name: str, value: Any) -> str:
        return esc(describe_spend(name, value).partition(" ")[2])

    rows = "".join(
        f"<tr><td>{esc(name)}</td><td>{shown(name, limit)}</td><td>{shown(name, spent_all.get(name, '-'))}"
        "</td></tr>"
        for name, limit in set_all.items()
    )
    extra = "".join(
        f"<tr><td>{esc(name)}</td><td>-</td><td>{shown(name, value)}</td></tr>"
        for name, value in spent_all.items()
        if name not in set_all
    )
    grounding = record.get("grounding") or {}
    facts = dl(
        [
            ("model", esc(model_label(record.get("model")))),
            (
                "depth / cycle ceiling",
                esc(f"{record.get('depth', '?')} / {record.get('cycle_ceiling', '?')}"),
            ),
            ("cycles run", esc(record.get("cycles"))),
            ("grounding", esc(", ".join(f"{k} {v}" for k, v in grounding.items()))),
            ("refused during the run", esc(", ".join(record.get("refused_claims") or []) or "none")),
            ("reproducibility", esc((record.get("reproducibility") or {}).get("label"))),
        ]
    )
    table = (
        "<table><tr><th>budget</th><th>set</th><th>spent</th></tr>" + rows + extra + "</table>"
        if rows or extra
        else '<p class="muted">no budgets recorded</p>'
    )
    return f'<h2 id="budgets">Run facts and budgets</h2>{facts}{table}'


def claims_section(data: dict[str, Any], verdicts: dict[str, Any], placed: set[str]) -> str:
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
        angle = f" &middot; angle {esc(sq.get('angle'))}" if sq.get("angle") else ""
        out.append(
            f'<h3 id="{esc(sq["id"])}">{esc(sq["id"])}: {esc(sq["text"])}</h3>'
            f'<p class="muted">{esc(sq.get("claim_type", ""))}{angle}</p>'
        )
        if not items:
            out.append('<p class="muted">no claims for this sub-question</p>')
        for claim in items:
            out.append(claim_card(claim, verdicts.get(claim["id"]), data, placed))
    tensions = data["ledger"].get("tensions", [])
    if tensions:
        out.append("<h3>Tensions</h3><ul>")
        for t in tensions:
            out.append(
                f"<li><b>{esc(t.get('id'))}</b> ({esc(t.get('status'))}) between "
                f"{', '.join(link_claim(c) for c in t.get('claims', []))}: {esc(t.get('about'))}"
                + (f" &mdash; resolved: {esc(t['resolution'])}" if t.get("resolution") else "")
                + "</li>"
            )
        out.append("</ul>")
    if data["gaps"]:
        out.append("<h3>Gaps named by the completeness critic</h3><ul>")
        for g in data["gaps"]:
            out.append(
                f"<li><b>{esc(g.get('id'))}</b> ({esc(g.get('severity'))}, {esc(g.get('status'))}"
                f"{', ' + esc(g['sub_question']) if g.get('sub_question') else ''}): {esc(g.get('about'))} "
                f'<span class="muted">query: {esc(g.get("query"))}</span></li>'
            )
        out.append("</ul>")
    return "\n".join(out)


def selection_section(data: dict[str, Any]) -> str:
    out = ['<h2 id="selection">Selection and trust logs</h2>']
    any_log = False
    for sq_id, meta in data["selections"].items():
        if not meta:
            continue
        any_log = True
        for rnd_index, rnd in enumerate(meta.get("rounds", []), 1):
            out.append(
                f"<h3>{esc(sq_id)}, round {rnd_index}"
                f"{' (cycle ' + esc(rnd.get('cycle')) + ')' if rnd.get('cycle') else ''}</h3>"
            )
            out.append(
                "<table><tr><th>candidate</th><th>score</th><th>verdict</th><th>why / reason</th></tr>"
            )
            for cand in rnd.get("candidates", []):
                url = cand.get("url")
                link = web_link(url)
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
                    f"<tr><td>{esc(cand.get('title'))}<br><span class='mono'>{link}</span></td>"
                    f"<td>{esc(total)}</td><td class='{esc(verdict)}'>{esc(verdict)}</td>"
                    f"<td>{esc(why)}</td></tr>"
                )
            out.append("</table>")
    if not any_log:
        out.append('<p class="muted">no selection log written yet</p>')
    return "\n".join(out)


def loop_section(data: dict[str, Any]) -> str:
    out = ['<h2 id="loop">Controller loop log</h2>']
    if not data["cycles"]:
        out.append('<p class="muted">no controller cycle yet</p>')
    for block in data["cycles"]:
        signals = block.get("signals") or {}
        decision = block.get("decision") or {}
        readings = signals.get("readings") or {}
        rows = "".join(
            f"<tr><td>{esc(name)}</td><td>{esc(signals.get(name))}</td><td>{esc(readings.get(name))}</td></tr>"
            for name in ("coverage", "confidence", "gap", "contradiction")
        )
        targets = ", ".join(
            link_claim(t) if str(t).startswith("CLM-") else esc(t) for t in decision.get("targets") or []
        )
        out.append(
            f"<h3>Cycle {esc(block.get('cycle'))}</h3>"
            "<table><tr><th>signal</th><th>value</th><th>how it was read</th></tr>"
            + rows
            + "</table>"
            + dl(
                [
                    ("decision", f"<b>{esc(decision.get('action'))}</b>"),
                    ("targets", targets or "none"),
                    ("stop reason", esc(decision.get("stop_reason") or "none")),
                    ("governor", governor_cell(block.get("governor"))),
                    ("why", esc(block.get("why"))),
                ]
            )
        )
    return "\n".join(out)


def model_label(model: Any) -> str:
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
