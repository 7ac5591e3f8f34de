"""URL canonicalization: the dedup key of a source, its DOI, its domain.

Owns three pure functions and the rules behind them; it never fetches, never
resolves names and never decides whether a URL may be fetched (that is `net`).

`canonical_key(url)` is what `select` dedups on and what `url canonical`
prints:

- `doi:<lowercased DOI>` when the URL carries a DOI: doi.org / dx.doi.org
  links, `/doi/` paths and any path or query value holding a `10.NNNN/...`
  DOI (percent-encoded ones too). DOIs are case-insensitive, so the key is
  lower-cased; a publisher landing page and its doi.org link dedup.
- else `url:<normalized URL without its scheme, userinfo and a leading "www.">`.
  **http vs https and www vs bare host are treated as the same page in the
  key** (`http://www.example.com/a` and `https://example.com/a` both give
  `url:example.com/a`), because the same article is routinely linked both
  ways and fetching it twice wastes budget and double-counts a source. Only
  the key merges them: the stored URL of a source keeps exactly what was
  requested and where it ended up.

`normalize_url(url)` is the RFC 3986 section 6 normalization the key builds on
(the semantics of url-normalize, plus tracking-parameter removal):
lower-case scheme and host, IDN host to punycode (UTS 46), trailing host dot
dropped, default port (80 for http, 443 for https) dropped, empty userinfo
dropped, dot segments resolved, an empty path becomes `/`, percent-encoding
normalized (escapes of unreserved characters decoded, other escapes upper-
cased, raw spaces and non-ASCII encoded as UTF-8), the fragment dropped, and
tracking parameters (utm_*, fbclid, gclid, mc_cid, mc_eid, ... see
`TRACKING_PARAMS`) removed while the remaining query keeps its order.
Deliberately NOT done: sorting the query (order can matter to the server),
collapsing `//` in the path (it breaks archive URLs such as
`web.archive.org/web/2020/https://x`), rewriting `#!` fragments. Only http
and https are accepted; input without a scheme is read as https.

`registrable_domain(url)` gives the domain per-domain caps count against:
the registrable domain from the Public Suffix List (via `tld`, e.g.
`news.bbc.co.uk` -> `bbc.co.uk`), or, for IP literals and hosts the list does
not know, the host without a leading `www.`.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote, urlsplit

import idna

from research_engine import libraries
from research_engine.errors import BadInput

DEFAULT_PORTS = {"http": 80, "https": 443}

# Exact query keys (lower-cased) that only track the click, never select content.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "igshid",
        "igsh",
        "mc_cid",
        "mc_eid",
        "mkt_tok",
        "_ga",
        "_gl",
        "s_cid",
        "clickid",
        "rb_clickid",
        "ck_subscriber_id",
        "wickedid",
        "__s",
        "_hsenc",
        "_hsmi",
        "hsctatracking",
        "ref_src",
        "ref_url",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        "spm",
        "sc_cid",
        "fb_ref",
        "fb_source",
        "fb_action_ids",
        "fb_action_types",
        "icid",
        "ncid",
        "cmpid",
    }
)
# Query-key prefixes (lower-cased) of whole tracking families.
TRACKING_PREFIXES = ("utm_", "mtm_", "pk_", "hsa_", "piwik_", "matomo_")

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = frozenset("!$&'()*+,;=")
_PATH_SAFE = _UNRESERVED | _SUB_DELIMS | frozenset(":@/")
_QUERY_SAFE = _PATH_SAFE | frozenset("?")
_HEX = frozenset("0123456789abcdefABCDEF")


# ---------------------------------------------------------------- canonical key


def canonical_key(url: str) -> str:
    """`doi:<lowercased DOI>` when the URL carries one, else `url:<normalized, scheme-less, www-less>`."""
    doi = doi_in_url(url)
    if doi:
        return f"doi:{doi.lower()}"
    normalized = normalize_url(url)
    netloc = urlsplit(normalized).netloc
    rest = normalized.split(netloc, 1)[1]
    return f"url:{_strip_www(netloc.rpartition('@')[2])}{rest}"


def doi_in_url(url: str) -> str | None:
    """The DOI a URL carries (doi.org links, /doi/ paths, DOI-valued query parameters), or None."""
    doi = _find_prefixed_doi(_decode_for_doi(url))
    if doi:
        # Publisher paths often append a view after the DOI (/doi/full/10.x/y/abstract).
        doi = re.sub(
            r"/(abstract|full|fulltext|pdf|epdf|pdfdirect|html|references|summary|meta)$",
            "",
            doi,
            flags=re.IGNORECASE,
        )
    return doi


# ---------------------------------------------------------------- DOIs

# 10.<registrant: 4-9 digits, optional .subdivisions>/<suffix>
_DOI_START = re.compile(r"10\.\d{4,9}(?:\.\d+)*/")
# A DOI labelled as such but without the 10. prefix (python-doi finds these in scripts: `doi = "12345/6.7"`).
_LABELLED_DOI = re.compile(r"\bdoi\s*[:=]\s*[\"']?(\d[\w.]*/[^\s\"';,)]+)", re.IGNORECASE)
_DOI_STOP = frozenset(" \t\r\n\"'?#&")
_OPENERS = {")": "(", "]": "[", "}": "{"}
_TRAILING = ".,;:"


def extract_doi(text_or_url: str) -> str | None:
    """The first DOI in free text or a URL (bare `10.x/y`, case kept), or None.

    Handles doi.org links, `doi:` prefixes, percent-encoded slashes, DOIs in
    parentheses or PDF link annotations, and a `doi = "..."` label. Whitespace,
    quotes, `?`, `#`, `&`, `</` and an unbalanced closing bracket end a DOI;
    trailing `.,;:` are dropped as bycatch from the surrounding text.
    """
    if not text_or_url:
        return None
    text = _decode_for_doi(text_or_url)
    doi = _find_prefixed_doi(text)
    if doi:
        return doi
    match = _LABELLED_DOI.search(text)
    if match:
        return match.group(1).rstrip(_TRAILING) or None
    return None


def is_doi(value: str) -> bool:
    """True when the whole value is one DOI (`10.NNNN/suffix`)."""
    value = value.strip()
    return bool(_DOI_START.match(value)) and extract_doi(value) == value


def _decode_for_doi(text: str) -> str:
    return unquote(text) if "%" in text else text


def _find_prefixed_doi(text: str) -> str | None:
    for match in _DOI_START.finditer(text):
        if match.start() > 0 and (text[match.start() - 1].isdigit() or text[match.start() - 1] == "."):
            continue  # inside a longer number such as 110.1234/...
        end = match.end()
        depth: list[str] = []
        i = end
        while i < len(text):
            ch = text[i]
            if ch in _DOI_STOP or text.startswith("</", i):
                break
            if ch in "([{":
                depth.append(ch)
            elif ch in _OPENERS:
                if not depth or depth[-1] != _OPENERS[ch]:
                    break
                depth.pop()
            i += 1
        doi = text[match.start() : i].rstrip(_TRAILING)
        if len(doi) > match.end() - match.start():  # a suffix is required
            return doi
    return None


# ---------------------------------------------------------------- normalization


def normalize_url(url: str) -> str:
    """RFC 3986 normalization plus tracking-parameter removal (see the module docstring)."""
    raw = re.sub(
        r"[\x00-\x20\x7f]+", lambda m: "" if m.start() == 0 or m.end() == len(url) else m.group(), url
    )
    raw = raw.strip()
    if not raw:
        raise BadInput("empty URL", code="bad-url")
    if raw.startswith("//"):
        raw = "https:" + raw
    elif not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", raw) or re.match(r"^[^:/?#]+:\d+(/|$)", raw):
        raw = "https://" + raw
    scheme, _, rest = raw.partition(":")
    scheme = scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise BadInput(f"only http and https URLs can be canonicalized, not {scheme}:", code="bad-url")
    if not rest.startswith("//"):  # "http:example.com/path"
        rest = "//" + rest.lstrip("/")
    try:
        parts = urlsplit(f"{scheme}:{rest}")
    except ValueError as exc:  # "Invalid IPv6 URL" and friends
        raise BadInput(f"not a valid URL: {url[:200]!r} ({exc})", code="bad-url") from exc
    userinfo, host, port = _split_netloc(parts.netloc, url)
    if not host:
        raise BadInput(f"URL has no host: {url!r}", code="bad-url")
    netloc = _host_ascii(host, url)
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    if userinfo:
        netloc = f"{_normalize_percent(userinfo, _UNRESERVED | _SUB_DELIMS | frozenset(':'))}@{netloc}"
    path = _remove_dot_segments(_normalize_percent(parts.path, _PATH_SAFE)) or "/"
    query = _clean_query(parts.query)
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def registrable_domain(url: str) -> str:
    """The domain per-domain caps count against (Public Suffix List; host without www. as the fallback)."""
    normalized = normalize_url(url)
    host = urlsplit(normalized).hostname or ""
    if not _is_ip_literal(host):
        try:
            domain = libraries.tld().get_fld(normalized, fail_silently=True)
        except Exception:  # tld's list is a convenience; the fallback is documented
            domain = None
        if domain:
            return str(domain)
    return _strip_www(host)


def _split_netloc(netloc: str, original: str) -> tuple[str, str, int | None]:
    userinfo, _, hostport = netloc.rpartition("@")
    if userinfo in (":", ""):
        userinfo = ""
    if hostport.startswith("["):
        host, _, after = hostport[1:].partition("]")
        host = f"[{host.lower()}]"
        port_text = after[1:] if after.startswith(":") else ""
    else:
        host, _, port_text = hostport.partition(":")
    port: int | None = None
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            raise BadInput(f"bad port {port_text!r} in {original!r}", code="bad-url")
        port = int(port_text)
    return userinfo, host, port


def _host_ascii(host: str, original: str) -> str:
    if host.startswith("["):
        return host
    host = unquote(host).rstrip(".").lower()
    if host.isascii():
        return host

    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise BadInput(
            f"host of {original!r} is not a valid internationalized name: {exc}", code="bad-url"
        ) from exc


def _normalize_percent(text: str, safe: frozenset[str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%" and i + 2 < len(text) and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if ch == "%":
            out.append("%25")
        elif ch in safe:
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4."""
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    result = "/".join(output)
    if path.startswith("/") and not result.startswith("/"):
        result = "/" + result
    return result


def _clean_query(query: str) -> str:
    kept = []
    for pair in query.split("&"):
        if not pair:
            continue
        key = unquote(pair.split("=", 1)[0]).strip().lower()
        if key in TRACKING_PARAMS or key.startswith(TRACKING_PREFIXES):
            continue
        kept.append(_normalize_percent(pair, _QUERY_SAFE))
    return "&".join(kept)


def _strip_www(host: str) -> str:
    return host[4:] if host.startswith("www.") and host.count(".") >= 2 else host


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
