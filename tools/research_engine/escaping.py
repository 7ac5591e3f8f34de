"""Markdown that text from a source cannot take over: escaping for what the tools write, and a sanitizer for
what a model or an agent wrote.

Fetched pages are untrusted, and their titles, sentences and URLs end up in Markdown files that people open
in viewers that render HTML and links (GitHub, VS Code, Obsidian). A title such as
`<img src=x onerror=alert(1)>` or a link to `javascript:alert(1)` must arrive as text.

- `text(value)`: a string from a source, safe inline: one line, and no character that could open raw HTML,
  an autolink, a link or image, or a code span (`\\`, `` ` ``, `[`, `]`, `<`, `>` escaped).
- `cell(value)`: `text` for a table cell (`|` escaped too).
- `link(url, label)`: a link only when the URL is http or https (`doi:` becomes its https://doi.org/ form);
  any other URL is written as escaped text, never as a link.
- `web_url(url)`: that decision alone: the https/http target, or None.
- `document(markdown)`: a whole Markdown text (a deliverable written by a model or an agent) with raw HTML
  written as text (`<` as `&lt;`) and every link, image, autolink or link definition whose target is not
  http, https, doi: or a `#fragment` turned into text. Code blocks and code spans are left alone: they are
  shown verbatim.

Pure; no I/O.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

_INLINE = str.maketrans({"\\": "\\\\", "`": "\\`", "[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;"})
_SPACE_RE = re.compile(r"\s+")
_SCHEME_RE = re.compile(r"^([a-z][a-z0-9+.-]*):", re.I)


def text(value: Any) -> str:
    """`value` as inline Markdown text: each run of whitespace (newlines too) one space, markup escaped."""
    return _SPACE_RE.sub(" ", str(value if value is not None else "")).translate(_INLINE)


def cell(value: Any) -> str:
    """`text` for a table cell: a `|` would end the cell."""
    return text(value).replace("|", "\\|")


def web_url(url: Any) -> str | None:
    """The link target for `url` when it may be a link: http(s) as given, doi:X as https://doi.org/X."""
    raw = str(url or "").strip()
    if not raw or any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return None
    match = _SCHEME_RE.match(raw)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme in ("http", "https") and raw[len(scheme) + 1 :].startswith("//"):
        target = raw
    elif scheme == "doi" and len(raw) > 4:
        target = "https://doi.org/" + raw[4:].lstrip("/")
    else:
        return None
    # Inside <...> a destination may hold anything but <, > and whitespace: those are percent-encoded.
    return quote(target, safe="".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "<>"))


def link(url: Any, label: Any = None) -> str:
    """A Markdown link to `url` when it is a web URL (`<url>`, or `[label](<url>)`), else escaped text."""
    target = web_url(url)
    if target is None:
        shown = text(url)
        return f"{text(label)} ({shown})" if label not in (None, "") and str(label) != str(url) else shown
    if label in (None, "") or str(label) == str(url):
        return f"<{target}>"
    destination = target if not any(c in target for c in "()") else f"<{target}>"
    return f"[{text(label)}]({destination})"


# ------------------------------------------------------------------------------------------ whole documents

_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN_RE = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")
_AUTOLINK_RE = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
_LINK_OPEN_RE = re.compile(r"\]\(")
_DEFINITION_RE = re.compile(r"^( {0,3})\[((?:[^\]\\]|\\.)+)\]:[ \t]*(<[^>\n]*>|\S+)")
_RAW_HTML_RE = re.compile(r"<(?=[A-Za-z/!?])")


def _safe_destination(dest: str) -> str | None:
    """The destination to keep (doi: rewritten), or None when it must not be a link. Entities and
    control characters are resolved first, so `jav&#x61;script:` and `java\\tscript:` are seen for what
    they are."""
    seen = html.unescape(dest.strip().strip("<>"))
    seen = "".join(c for c in seen if ord(c) > 0x20 and ord(c) != 0x7F)
    if seen.startswith("#"):
        return dest
    target = web_url(seen)
    if target is None:
        return None
    return dest if not seen.lower().startswith("doi:") else f"<{target}>"


def _links(segment: str) -> str:
    """Inline links and images whose destination must not be a link lose their `](` (becomes `]\\(`)."""
    out: list[str] = []
    at = 0
    for match in _LINK_OPEN_RE.finditer(segment):
        rest = segment[match.end() :]
        dest = re.match(r"[ \t]*(<[^>\n]*>|[^\s)]*)", rest)
        destination = dest.group(1) if dest else ""
        keep = _safe_destination(destination) if destination else None
        out.append(segment[at : match.start()])
        if keep is None:
            out.append("]\\(")
            at = match.end()
        elif keep != destination:
            out.append("](" + rest[: dest.start(1)] + keep)  # type: ignore[union-attr]
            at = match.end() + dest.end(1)  # type: ignore[union-attr]
        else:
            out.append("](")
            at = match.end()
    out.append(segment[at:])
    return "".join(out)


def _autolinks_and_html(segment: str) -> str:
    pieces: list[str] = []
    at = 0
    for match in _AUTOLINK_RE.finditer(segment):
        pieces.append(_RAW_HTML_RE.sub("&lt;", segment[at : match.start()]))
        target = web_url(match.group(1))
        pieces.append(f"<{target}>" if target is not None else "&lt;" + match.group(0)[1:])
        at = match.end()
    pieces.append(_RAW_HTML_RE.sub("&lt;", segment[at:]))
    return "".join(pieces)


def _line(line: str) -> str:
    definition = _DEFINITION_RE.match(line)
    if definition and _safe_destination(definition.group(3)) is None:
        line = definition.group(1) + "\\" + line[len(definition.group(1)) :]
    out: list[str] = []
    at = 0
    for span in _CODE_SPAN_RE.finditer(line):
        out.append(_autolinks_and_html(_links(line[at : span.start()])))
        out.append(span.group(0))  # a code span is shown verbatim
        at = span.end()
    out.append(_autolinks_and_html(_links(line[at:])))
    return "".join(out)


def document(markdown: str) -> str:
    """`markdown` with raw HTML as text and only web links left as links (see the module docstring)."""
    lines = markdown.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines):
        opened = _FENCE_RE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines[i] = _line(line)
    return "\n".join(lines)
