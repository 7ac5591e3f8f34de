"""URL canonicalization: normalize_url, canonical_key, registrable_domain.

Cases are drawn from ../shared/corpora/urls/ where their source's semantics match ours
(RFC 3986 normalization, default ports dropped, query order kept, fragment dropped,
tracking parameters removed); see the module docstring of research_engine.urls.
"""

from __future__ import annotations

import json

import pytest
from conftest import shared_path
from hypothesis import given
from hypothesis import strategies as st

from research_engine.errors import BadInput
from research_engine.urls import canonical_key, normalize_url, registrable_domain


def _corpus(name: str) -> list[dict]:
    return json.loads(shared_path("corpora", "urls", name).read_text(encoding="utf-8"))["cases"]


# url-normalize whole-URL cases whose semantics we share (their query-filter, path-collapse,
# #! rewrite, non-http and NFC cases are not our rules and are left out).
URL_NORMALIZE_SHARED = [
    "https://example.com/page?",
    "http://127.0.0.1/",
    "http://example.com:8080/",
    "http://example.com/?a&b",
    "http://example.com/?q=%5C",
    "http://example.com/?q=%C3%87",
    "http://example.com/?q=%E2%85%A0",
    "http://example.com/",
    "http://example.com/~jane",
    "http://example.com/a/b",
    "http://example.com/FOO",
    "http://user:password@example.com/",
    "http://www.foo.com:8000/foo",
    "http://www.ietf.org/rfc/rfc2396.txt",
    "http://:@example.com/",
    "http://@example.com/",
    "http://127.0.0.1:80/",
    "http://example.com:081/",
    "http://example.com:80/",
    "http://example.com",
    "http://example.com/?b&a",
    "http://example.com/?q=%5c",
    "http://EXAMPLE.COM/",
    "http://example.com/%7Ejane",
    "http://example.com/a/../a/b",
    "http://example.com/a/./b",
    "http://USER:pass@www.Example.COM/foo/bar",
    "http://www.example.com./",
    "http://www.foo.com:80/foo",
    "http://www.foo.com.:81/foo",
    "http://www.foo.com./foo/bar.html",
    "http://www.foo.com/%7Ebar",
    "http://www.foo.com/%7ebar",
    "http:example.com",
    "http:example.com/path",
    "https:www.example.com",
    "//google.com",
    "пример.испытание/Служебная:Search/Test",
]


def _url_normalize_cases() -> list[dict]:
    cases = [c for c in _corpus("url_normalize_cases.json") if c["function"] == "url_normalize.url_normalize"]
    chosen = [c for c in cases if c["input"] in URL_NORMALIZE_SHARED and "kwargs" not in c]
    chosen += [c for c in cases if c["input"] == "//google.com"]
    return chosen


@pytest.mark.shared
@pytest.mark.parametrize("case", _url_normalize_cases(), ids=lambda c: c["input"])
def test_url_normalize_cases_we_share(case):
    assert normalize_url(case["input"]) == case["expected"]


def test_every_chosen_url_normalize_case_is_in_the_corpus():
    found = {c["input"] for c in _url_normalize_cases()}
    assert set(URL_NORMALIZE_SHARED) <= found


# url-normalize's path cases are relative paths; we normalize whole URLs, so prefix a host.
PATH_CASES = [
    "/../foo",
    "/./../foo",
    "/./foo",
    "/./foo/.",
    "/foo/../bar",
    "/foo/./bar",
    "/foo/bar/..",
    "/foo/bar/../..",
    "/foo/bar/../../../../baz",
    "/foo/bar/../../",
    "/foo/bar/../baz",
    "/foo/bar/.",
    "/foo/bar/./",
    "/..foo",
    "/.foo",
    "/foo..",
    "/foo.",
]


@pytest.mark.shared
@pytest.mark.parametrize("path", PATH_CASES)
def test_dot_segments_are_resolved_as_url_normalize_does(path):
    expected = {c["input"]: c["expected"] for c in _corpus("url_normalize_cases.json")}[path]
    assert normalize_url("http://example.com" + path) == "http://example.com" + expected


# w3lib canonicalize_url cases with sorted-or-single queries and no options: the ones that do not
# depend on w3lib's query sorting, port keeping or '+' encoding.
W3LIB_SHARED = [
    "http://www.example.com/",
    "http://www.example.com",
    "http://www.example.com/do?a=1&b=2&c=3",
    "http://www.example.com:8888/do?a=1&b=2&c=3",
    "http://www.example.com/résumé",
    "http://www.example.com/r%c3%a9sum%c3%a9",
    "http://www.example.com/a%a3do",
    "http://www.example.com/a do?a=1",
    "http://www.example.com/a %20do?a=1",
    "http://user:pass@www.example.com:81/do?now=1",
    "http://user:pass@www.example.com/do?a=1#frag",
    "http://[::1]/do?a=1#frag",
    "http://www.EXAMPLE.com/",
    "http://user@例え.jp/path",
    "http://user:pass@例え.jp:8080/p",
    "http://foo.com/AC%2FDC/",
    "http://www.example.com/dir;x/a%7Eb",
    "http://www.example.com/path/to/%23/foo/bar#frag",
    "http://www.example.com/caf%E9-con-leche.htm",
    " https://example.com ",
]


def _w3lib_cases() -> list[dict]:
    cases = _corpus("w3lib_canonicalize_url.json")
    return [
        c
        for c in cases
        if c["function"] == "w3lib.url.canonicalize_url"
        and c["input"] in W3LIB_SHARED
        and not c.get("kwargs")
    ]


@pytest.mark.shared
@pytest.mark.parametrize("case", _w3lib_cases(), ids=lambda c: c["input"])
def test_w3lib_cases_we_share(case):
    assert normalize_url(case["input"]) == case["expected"]


# courlan cases on tracking parameters and default ports (its query sorting and Unicode hosts are not ours).
COURLAN_SHARED = {
    "http://test.org/?s_cid=123&clickid=1": "http://test.org/",
    "http://test.org/?utm_source=rss&utm_medium=rss": "http://test.org/",
    "http://test.net/foo.html?utm_source=twitter": "http://test.net/foo.html",
    "http://test.net/foo.html?testid=1": "http://test.net/foo.html?testid=1",
    "http://www.example.org:80/test.html": "http://www.example.org/test.html",
    "http://www.example.org:80?p=123": "http://www.example.org/?p=123",
    "http://[::1]:8080/": "http://[::1]:8080/",
    "HTTPS://WWW.DWDS.DE/": "https://www.dwds.de/",
    "http://test.net/foo.html#bar": "http://test.net/foo.html",
}


@pytest.mark.shared
@pytest.mark.parametrize("url", sorted(COURLAN_SHARED))
def test_courlan_tracking_and_port_cases(url):
    in_corpus = {c["input"] for c in _corpus("courlan_cases.json")}
    assert url in in_corpus
    assert normalize_url(url) == COURLAN_SHARED[url]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com/p?b=2&a=1&utm_source=x&fbclid=y&gclid=z", "http://example.com/p?b=2&a=1"),
        ("https://example.com/a?mc_cid=1&id=7&mc_eid=2&UTM_Campaign=z", "https://example.com/a?id=7"),
        ("https://example.com/a?id=7&ref=home", "https://example.com/a?id=7&ref=home"),
        ("https://[::1]:443/x", "https://[::1]/x"),
        ("https://example.com/a%2fb%41%zz", "https://example.com/a%2Fb" + "A%25zz"),
        ("https://münchen.de/straße", "https://xn--mnchen-3ya.de/stra%C3%9Fe"),
        ("http://web.archive.org/web/2020/https://x.com/", "http://web.archive.org/web/2020/https://x.com/"),
    ],
)
def test_normalization_rules(url, expected):
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://www.example.com/a", "url:example.com/a"),
        ("https://example.com/a", "url:example.com/a"),
        ("HTTPS://WWW.Example.com:443/a/./b/../a?utm_source=x#top", "url:example.com/a/a"),
        ("https://user:pw@example.com/a", "url:example.com/a"),
        ("http://example.com:8080/a", "url:example.com:8080/a"),
        ("http://www.com/", "url:www.com/"),
        ("https://doi.org/10.1093/ANALYS/anw053", "doi:10.1093/analys/anw053"),
        ("http://dx.doi.org/10.1063%2F1.881498", "doi:10.1063/1.881498"),
        ("https://pubs.acs.org/doi/10.1021/jp003647e", "doi:10.1021/jp003647e"),
        ("https://onlinelibrary.wiley.com/doi/full/10.1002/ABC.123/abstract", "doi:10.1002/abc.123"),
        ("https://search.example.org/record?doi=10.5555%2FXYZ.99&utm_medium=email", "doi:10.5555/xyz.99"),
    ],
)
def test_canonical_key(url, key):
    assert canonical_key(url) == key


def test_http_and_https_www_and_bare_share_one_key():
    variants = ["http://www.example.com/page", "https://example.com/page", "https://www.example.com/page#x"]
    assert len({canonical_key(v) for v in variants}) == 1


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("https://news.bbc.co.uk/a", "bbc.co.uk"),
        ("https://www.example.com/a", "example.com"),
        ("http://sub.deep.example.org/", "example.org"),
        ("http://127.0.0.1:8080/x", "127.0.0.1"),
        ("http://[::1]/x", "::1"),
    ],
)
def test_registrable_domain(url, domain):
    assert registrable_domain(url) == domain


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "mailto:someone@example.com",
        "ftp://example.com/x",
        "http://example.com:99999/",
        "http://exa mple.com:x/",
        "https:///path",
    ],
)
def test_bad_urls_are_bad_input(url):
    with pytest.raises(BadInput):
        normalize_url(url)


_host = st.from_regex(r"[a-z]{1,8}(\.[a-z]{2,5}){1,2}", fullmatch=True)
_path = st.lists(st.sampled_from(["a", "b", ".", "..", "%7E", "%2f", "é", "x y", ""]), max_size=5)
_query = st.lists(st.sampled_from(["a=1", "utm_source=x", "b", "q=%c3%a9", "fbclid=1", "c=d e"]), max_size=4)


@given(
    scheme=st.sampled_from(["http", "https", "HTTP"]),
    host=_host,
    port=st.sampled_from(["", ":80", ":443", ":8080"]),
    path=_path,
    query=_query,
    www=st.booleans(),
)
def test_normalization_is_idempotent_and_keys_are_stable(scheme, host, port, path, query, www):
    url = f"{scheme}://{'www.' if www else ''}{host}{port}/{'/'.join(path)}" + (
        f"?{'&'.join(query)}" if query else ""
    )
    once = normalize_url(url)
    assert normalize_url(once) == once
    assert canonical_key(once) == canonical_key(url)
    assert "utm_source" not in once and "fbclid" not in once and "#" not in once
