"""The SSRF guard: the shared payload corpus, the allowed contrast list, and the address classes."""

from __future__ import annotations

import ipaddress
import json
import re

import pytest
from conftest import shared_path

from research_engine.net import check_url
from research_engine.net.guard import parse_ipv4


def _payloads() -> list[dict]:
    return json.loads(shared_path("corpora", "ssrf", "payloads.json").read_text(encoding="utf-8"))


def _allowed() -> list[dict]:
    return json.loads(shared_path("corpora", "ssrf", "allowed.json").read_text(encoding="utf-8"))


def _private_address_in(host: str) -> list[str]:
    """The private address a needs_dns payload's name stands for (what its DNS would answer)."""
    found = []
    for groups in re.findall(r"(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})", host):
        text = ".".join(groups)
        try:
            addr = ipaddress.ip_address(text)
        except ValueError:
            continue
        found.append(text)
        if not addr.is_global:
            break
    if not found or ipaddress.ip_address(found[-1]).is_global:
        found.append("169.254.169.254" if ("metadata" in host or "1ynrnhl" in host) else "127.0.0.1")
    return found  # a rebinding name answers a public address first, then the private one


@pytest.mark.shared
def test_every_must_block_payload_is_refused_statically_or_by_resolution():
    failures = []
    for case in _payloads():
        if case["needs_redirect"]:
            continue  # covered by test_net_client (the redirect target is refused at the next hop)
        calls = []

        def resolver(host: str, port: int, _calls=calls) -> list[str]:
            _calls.append(host)
            return _private_address_in(host)

        verdict = check_url(case["url"], resolver=resolver)
        if verdict.allowed or verdict.code not in ("refused-ssrf", "refused-scheme"):
            failures.append((case["url"], verdict.to_dict()))
    assert failures == []


@pytest.mark.shared
def test_needs_dns_payloads_are_refused_through_the_resolver_not_only_by_name():
    refused_after_resolving = 0
    for case in _payloads():
        if not case["needs_dns"] or case["needs_redirect"]:
            continue
        verdict = check_url(case["url"], resolver=lambda host, port: _private_address_in(host))
        assert not verdict.allowed, case["url"]
        if verdict.addresses:
            refused_after_resolving += 1
    assert refused_after_resolving >= 15


@pytest.mark.shared
def test_every_allowed_url_passes_the_static_check_and_userinfo_is_refused():
    for case in _allowed():
        verdict = check_url(case["url"], resolve=False)
        if case["expect"] == "refuse_or_strip_userinfo":
            assert not verdict.allowed and "userinfo" in (verdict.reason or ""), case["url"]
        else:
            assert verdict.allowed, (case["url"], verdict.reason)
            if "canonical" in case:
                assert verdict.url == case["canonical"]


@pytest.mark.shared
def test_allowed_public_hosts_pass_with_a_resolver_answering_public_addresses():
    for case in _allowed():
        if case["expect"] != "allow":
            continue
        verdict = check_url(
            case["url"], resolver=lambda host, port: ["93.184.215.14", "2606:2800:21f:cb07::1"]
        )
        assert verdict.allowed, (case["url"], verdict.reason)


@pytest.mark.parametrize(
    "host, expected",
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("0251.254.169.254", "169.254.169.254"),
        ("0x7f.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
    ],
)
def test_ipv4_spellings_parse_the_whatwg_way(host, expected):
    assert str(parse_ipv4(host)) == expected


@pytest.mark.parametrize(
    "host", ["7147006462", "0x41414141A9FEA9FE", "425.510.425.510", "0o177.0.0.1", "1.2.3.4.5"]
)
def test_numeric_hosts_that_overflow_or_misparse_are_refused(host):
    verdict = check_url(f"http://{host}/", resolve=False)
    assert not verdict.allowed and verdict.code == "refused-ssrf"


@pytest.mark.parametrize(
    "url",
    [
        "http://[::ffff:7f00:1]/",  # IPv4-mapped loopback
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of the metadata address
        "http://[64:ff9b::7f00:1]/",  # NAT64 of loopback
        "http://[2002:7f00:1::]/",  # 6to4 of loopback
        "http://[fe80::1]/",  # link-local
        "http://[fc00::1]/",  # unique local
        "http://[ff02::1]/",  # multicast
        "http://[::]/",  # unspecified
        "http://100.64.0.1/",  # carrier-grade NAT
        "http://224.0.0.1/",  # multicast
        "http://240.0.0.1/",  # reserved
        "http://255.255.255.255/",  # broadcast
        "http://192.168.1.1./",  # private with a trailing dot
        "http://LOCALHOST./",
        "http://foo.localhost/",
        "http://metadata.google.internal/",
    ],
)
def test_forbidden_address_classes_are_refused(url):
    verdict = check_url(url, resolver=lambda host, port: ["127.0.0.1"])
    assert not verdict.allowed, verdict


def test_public_nat64_address_is_allowed():
    assert check_url("http://[64:ff9b::808:808]/", resolve=False).allowed


def test_private_needs_opt_in_but_metadata_and_unspecified_never_pass():
    assert not check_url("http://127.0.0.1:8000/", resolve=False).allowed
    assert check_url("http://127.0.0.1:8000/", resolve=False, allow_private=True).allowed
    assert check_url("http://10.0.0.1/", resolve=False, allow_private=True).private
    assert not check_url("http://169.254.169.254/", resolve=False, allow_private=True).allowed
    assert not check_url("http://[fd00:ec2::254]/", resolve=False, allow_private=True).allowed
    assert not check_url("http://0.0.0.0:8000/", resolve=False, allow_private=True).allowed


def test_allow_addresses_opens_exactly_one_address_and_port():
    listed = {"127.0.0.1:8000"}
    assert check_url("http://127.0.0.1:8000/", resolve=False, allow_addresses=listed).allowed
    assert not check_url("http://127.0.0.1:8001/", resolve=False, allow_addresses=listed).allowed
    assert not check_url("http://127.0.0.2:8000/", resolve=False, allow_addresses=listed).allowed


def test_one_private_answer_among_public_ones_refuses_the_host():
    verdict = check_url("http://rebind.example/", resolver=lambda host, port: ["93.184.215.14", "10.0.0.5"])
    assert not verdict.allowed and "10.0.0.5" in verdict.reason


def test_unresolvable_host_is_reported_as_unresolved():
    def resolver(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    verdict = check_url("https://no-such-host.example/", resolver=resolver)
    assert verdict.code == "unresolved" and not verdict.allowed


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "data:,x"]
)
def test_non_http_schemes_are_refused_as_scheme(url):
    assert check_url(url, resolve=False).code == "refused-scheme"
