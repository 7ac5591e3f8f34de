"""Page metadata read from the parsed tree: title, canonical URL, language, dates, robots meta.

Cheap XPath over the tree the content walk also uses (no htmldate): og/twitter/`<title>`/h1
for the title, `<link rel=canonical>` resolved against the page URL, `<html lang>` then
content-language/og:locale, published and modified dates from article/og/Dublin Core/
citation meta, JSON-LD, `itemprop` and `<time>`, as ISO 8601; robots meta is recorded,
never acted on.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from research_engine.extract.blocks import clean

if TYPE_CHECKING:
    from research_engine.extract.page import ExtractedPage


_TITLE_XPATHS = (
    '//meta[@property="og:title"]/@content',
    '//meta[@name="twitter:title"]/@content',
    "//title/text()",
    "//h1//text()",
)
_PUBLISHED_META = (
    "article:published_time",
    "og:published_time",
    "og:article:published_time",
    "datepublished",
    "citation_publication_date",
    "citation_date",
    "citation_online_date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "dc.date.created",
    "date",
    "pubdate",
    "publishdate",
    "publish-date",
    "publication_date",
    "sailthru.date",
    "parsely-pub-date",
)
_MODIFIED_META = (
    "article:modified_time",
    "og:updated_time",
    "og:article:modified_time",
    "datemodified",
    "dcterms.modified",
    "dc.date.modified",
    "last-modified",
    "lastmod",
    "revised",
    "dateupdated",
)


def read_metadata(tree: Any, url: str | None, page: ExtractedPage) -> None:
    page.title = _first_text(tree, _TITLE_XPATHS)
    canonical = tree.xpath(
        '//link[contains(concat(" ", normalize-space(translate(@rel, '
        '"CANONICAL", "canonical")), " "), " canonical ")]/@href'
    )
    if canonical and canonical[0].strip():
        href = canonical[0].strip()
        page.canonical_url = urljoin(url, href) if url else href
    page.language = _language(tree)
    metas = _meta_map(tree)
    ld = _json_ld_dates(tree)
    page.published = (
        _first_date(metas.get(name) for name in _PUBLISHED_META)
        or _first_date(ld.get("datePublished", []) + ld.get("dateCreated", []))
        or _first_date(
            tree.xpath(
                '//*[@itemprop="datePublished"]/@content | '
                '//*[@itemprop="datePublished"]/@datetime | //time[@pubdate]/@datetime'
            )
        )
        or _first_date(tree.xpath("//time/@datetime")[:1])
    )
    page.modified = (
        _first_date(metas.get(name) for name in _MODIFIED_META)
        or _first_date(ld.get("dateModified", []))
        or _first_date(
            tree.xpath('//*[@itemprop="dateModified"]/@content | //*[@itemprop="dateModified"]/@datetime')
        )
    )
    robots = " ".join(
        content.lower()
        for name, content in _meta_pairs(tree)
        if name in ("robots", "googlebot", "research-engine")
    )
    tokens = {t.strip() for t in robots.replace(";", ",").split(",")}
    page.robots_meta = {
        "noindex": "noindex" in tokens or "none" in tokens,
        "nofollow": "nofollow" in tokens or "none" in tokens,
    }


def _meta_pairs(tree: Any) -> list[tuple[str, str]]:
    pairs = []
    for meta in tree.iter("meta"):
        name = meta.get("property") or meta.get("name") or meta.get("itemprop") or meta.get("http-equiv")
        content = meta.get("content")
        if name and content is not None:
            pairs.append((name.strip().lower(), content.strip()))
    return pairs


def _meta_map(tree: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, content in _meta_pairs(tree):
        if content and name not in out:
            out[name] = content
    return out


def _first_text(tree: Any, xpaths: tuple[str, ...]) -> str | None:
    for xpath in xpaths:
        for value in tree.xpath(xpath):
            text = clean(str(value))
            if text:
                return text
    return None


def _language(tree: Any) -> str | None:
    candidates = tree.xpath(
        "/html/@lang | //html/@lang | //html/@xml:lang",
        namespaces={"xml": "http://www.w3.org/XML/1998/namespace"},
    )
    candidates += [
        c for n, c in _meta_pairs(tree) if n in ("content-language", "og:locale", "language", "dc.language")
    ]
    for value in candidates:
        tag = value.strip().replace("_", "-").split(",")[0].strip()
        if re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", tag):
            primary, *rest = tag.split("-")
            return "-".join([primary.lower(), *[r.upper() if len(r) == 2 else r for r in rest]])
    return None


def _json_ld_dates(tree: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("datePublished", "dateCreated", "dateModified"):
                value = node.get(key)
                if isinstance(value, str):
                    found.setdefault(key, []).append(value)
            for value in node.values():
                if isinstance(value, (dict, list)):
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    for script in tree.xpath('//script[@type="application/ld+json"]'):
        try:
            visit(json.loads(script.text or ""))
        except ValueError:
            continue  # broken JSON-LD is common; dates from it are a bonus
    return found


_DATE_RE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")


def normalize_date(value: str | None) -> str | None:
    """A stated date -> ISO 8601 (date-time with its offset, or YYYY-MM-DD); None if not a date."""
    if not value:
        return None
    value = value.strip()
    iso = (
        value.replace("Z", "+00:00").replace(" ", "T", 1)
        if re.match(r"\d{4}-\d\d-\d\d[T ]\d", value)
        else value
    )
    try:
        parsed = datetime.fromisoformat(iso)
    except ValueError:
        parsed = None
    if parsed is not None and re.match(r"\d{4}-\d\d-\d\d[T ]", value):
        return parsed.isoformat()
    match = _DATE_RE.search(value)
    if match:
        year, month, day = (int(g) for g in match.groups())
        try:
            return datetime(year, month, day).date().isoformat()
        except ValueError:
            return None
    if re.fullmatch(r"\d{4}", value):
        return value
    return None


def _first_date(values: Any) -> str | None:
    for value in values:
        date = normalize_date(value)
        if date and 1900 <= int(date[:4]) <= 2200:
            return date
    return None
