"""The claim cards and the source cards, the two things every link of the deliverable points to.

A claim card (`id="CLM-NN"`): the claim's text and verdict, the verifier's reason, each verbatim quote
with its source (linked to the source card and to the quote highlighted in the source's passage), and
the deliverable's sentences that cite it with their support verdicts when that record exists.

A source card (`id="src-SQ-NN-SRC-NN"`): title, URL (a link only for http(s)), when and how it was
retrieved, its digest, the verifier's own copy, and only the passages a claim quotes, with the quotes
marked. Every string is escaped by `esc`; nothing from a source is ever markup.
"""

from __future__ import annotations

import html
from typing import Any

from research_engine import escaping
from research_engine.grounding import find_quote
from research_engine.view.deliverable import source_anchor
from research_engine.vocabulary import Verdict

VERDICT_LABELS: dict[str | None, str] = {
    Verdict.SUPPORTED: "supported",
    Verdict.PARTIAL: "partial",
    Verdict.REFUSE: "REFUSED",
    None: "unverified",
}


def esc(value: Any) -> str:
    """HTML-escape anything (the only way text reaches the page)."""
    return html.escape("" if value is None else str(value), quote=True)


def web_link(url: Any) -> str:
    """`url` as a link when it is a web URL, else as escaped text."""
    href = escaping.web_url(url)
    return f'<a href="{esc(href)}" rel="noreferrer">{esc(url)}</a>' if href else esc(url)


def quote_anchor(claim: str, index: int) -> str:
    return f"q-{claim}-{index}"


def verdict_badge(verdict: str | None) -> str:
    label = VERDICT_LABELS.get(verdict, verdict)
    return f'<span class="verdict {esc(verdict or "none")}">{esc(label)}</span>'


def dl(pairs: list[tuple[str, str]]) -> str:
    """A definition list; values are HTML already."""
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def link_claim(clm: str) -> str:
    return f'<a href="#{esc(clm)}">{esc(clm)}</a>'


# ---------------------------------------------------------------------------------------------- claims


def claim_card(
    claim: dict[str, Any],
    challenge: dict[str, Any] | None,
    data: dict[str, Any],
    placed: set[str],
) -> str:
    verdict = challenge.get("verdict") if challenge else None
    retired = claim.get("status") == "retired"
    classes = " ".join(filter(None, ["claim", verdict or "unverified", "retired" if retired else ""]))
    meta = [f"{esc(claim.get('sub_question'))}", f"confidence {esc(claim.get('confidence'))}"]
    meta.append(f"cycle {esc(claim.get('cycle'))}")
    if retired:
        meta.append(f"retired: {esc(claim.get('retired_why'))}")
    out = [
        f'<article class="{classes}" id="{esc(claim["id"])}">',
        f"<p>{verdict_badge(verdict)}<b>{esc(claim['id'])}</b> {esc(claim.get('text'))}"
        f' <span class="muted">({"; ".join(meta)})</span></p>',
    ]
    if verdict == Verdict.REFUSE:
        out.append('<p class="refused-note">Refused by the verifier: not established.</p>')
    if challenge:
        forced = " (forced by the floor)" if challenge.get("forced") else ""
        out.append(
            f'<p class="verifier"><b>Verifier</b> {esc(challenge.get("id"))}, cycle '
            f"{esc(challenge.get('cycle'))}: {esc(VERDICT_LABELS.get(verdict, verdict))}{forced}; floor "
            f"{esc(challenge.get('floor'))}. {esc(challenge.get('reason'))}</p>"
        )
    else:
        out.append('<p class="verifier muted">Not judged by the verifier yet.</p>')
    for i, ev in enumerate(claim.get("evidence") or [], 1):
        out.append(_evidence(claim["id"], i, ev, data, placed))
    support = data.get("support", {}).get(claim["id"]) or []
    if support:
        out.append('<p class="muted">Sentences of the deliverable that cite it:</p><ul class="support">')
        for entry in support:
            kind = f" ({esc(entry['kind'])})" if entry.get("kind") else ""
            why = f" {esc(entry['why'])}" if entry.get("why") else ""
            out.append(
                f"<li>{verdict_badge(entry['verdict'] or None)}{kind} {esc(entry['sentence'])}"
                f'<span class="muted">{why}</span></li>'
            )
        out.append("</ul>")
    out.append("</article>")
    return "".join(out)


def _evidence(clm: str, index: int, ev: dict[str, Any], data: dict[str, Any], placed: set[str]) -> str:
    ref = str(ev.get("source") or "")
    anchor = quote_anchor(clm, index)
    title = (data["sources"].get(ref, {}).get("meta") or {}).get("title")
    where = f'<a href="#{esc(source_anchor(ref))}">{esc(ref)}</a>' if ref in data["sources"] else esc(ref)
    quote_link = (
        f'<a href="#{esc(anchor)}">quote in source</a>'
        if anchor in placed
        else '<span class="refused-note">quote not found in the stored text</span>'
    )
    return (
        f"<blockquote>{esc(ev.get('quote'))}</blockquote>"
        f'<p class="muted">source {where}{" &middot; " + esc(title) if title else ""} &middot; '
        f"passage {esc(ev.get('passage'))} &middot; match {esc(ev.get('match'))} &middot; {quote_link}</p>"
    )


# --------------------------------------------------------------------------------------------- sources


def _quote_marks(data: dict[str, Any]) -> dict[str, list[tuple[str, str, str | None]]]:
    """source ref -> [(anchor id, quote, passage id)] for every piece of evidence citing it."""
    marks: dict[str, list[tuple[str, str, str | None]]] = {}
    for claim in data["ledger"].get("claims", []):
        for i, ev in enumerate(claim.get("evidence") or [], 1):
            marks.setdefault(ev.get("source", ""), []).append(
                (quote_anchor(claim["id"], i), str(ev.get("quote") or ""), ev.get("passage"))
            )
    return marks


def highlight(text: str, quotes: list[tuple[str, str]]) -> tuple[str, set[str]]:
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
            out.append(f'<span id="{esc(anchor)}"></span>')
            placed.add(anchor)
            continue
        out.append(esc(text[at:start]))
        out.append(f'<mark id="{esc(anchor)}">{esc(text[start:end])}</mark>')
        placed.add(anchor)
        at = end
    out.append(esc(text[at:]))
    return "".join(out), placed


def _passage_holding(quote: str, passages: list[Any]) -> str | None:
    for passage in passages:
        if quote.strip() and find_quote(quote, passage.text).found:
            return passage.id
    return None


def _verifier_copy(evidence: dict[str, Any] | None) -> str:
    if not evidence:
        return "not re-fetched"
    if not evidence.get("reachable"):
        return esc(f"unreachable ({evidence.get('error')})")
    changed = " (changed since retrieval)" if evidence.get("changed") else " (same bytes)"
    return f'<span class="mono">{esc(str(evidence.get("sha256"))[:16])}</span>{esc(changed)}'


def source_cards(data: dict[str, Any], placed: set[str]) -> str:
    """Every source's card; `placed` collects the quote anchors marked in the passages."""
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
        facts = [
            ("URL", f'<span class="mono">{web_link(url)}</span>'),
            (
                "retrieved",
                esc(f"{meta.get('retrieved_at')} (HTTP {meta.get('status')}, {meta.get('content_type')})"),
            ),
            ("sha256", f'<span class="mono">{esc(meta.get("sha256"))}</span>'),
            ("verifier's copy", _verifier_copy(data.get("evidence", {}).get(ref))),
            ("kind / access", esc(f"{meta.get('kind')} / {meta.get('access_tier')}")),
            ("query", esc(meta.get("query"))),
        ]
        if same != ref:
            facts.append(("same page as", f'<a href="#{esc(source_anchor(same))}">{esc(same)}</a>'))
        out.append(
            f'<article class="source" id="{esc(source_anchor(ref))}"><h3>{esc(ref)}: '
            f"{esc(meta.get('title') or url)}</h3>{dl(facts)}"
        )
        by_passage: dict[str, list[tuple[str, str]]] = {}
        for anchor, quote, pid in marks.get(ref, []):
            target = pid if any(p.id == pid for p in passages) else _passage_holding(quote, passages)
            if target:
                by_passage.setdefault(target, []).append((anchor, quote))
        # Only the passages a claim quotes: the rest of the page is in retrieve/ (the view stays small).
        for passage in passages:
            if passage.id not in by_passage:
                continue
            text_html, anchors = highlight(passage.text, by_passage[passage.id])
            placed |= anchors
            out.append(
                f'<p class="passage" id="{esc(source_anchor(ref) + "-" + passage.id)}">'
                f'<span class="pid">[{esc(passage.id)}]</span>{text_html}</p>'
            )
        hidden = len(passages) - len(by_passage)
        if hidden:
            out.append(f'<p class="muted">{hidden} other passage(s) in retrieve/{esc(ref)}.md</p>')
        out.append("</article>")
    return "\n".join(out)
