"""robots.txt conformance: Google's RFC cases and the RFC 9309 spec-test cases via the Protego wrapper."""

from __future__ import annotations

import json

import pytest
from conftest import SHARED

from research_engine.net.robots import RobotsPolicy, is_allowed, product_token


def _cases(name: str, *, standard_only: bool) -> list:
    path = SHARED / "corpora" / "robots" / name
    if not path.exists():
        return []
    params = []
    for case in json.loads(path.read_text(encoding="utf-8")):
        if case.get("google_specific") or (standard_only and case.get("test_type") != "STANDARD"):
            continue
        # Where Google's expectation contradicts RFC 9309 we follow the RFC (the opposite answer).
        rfc = bool(case.get("rfc9309_note"))
        expected = (not case["allowed"]) if rfc else case["allowed"]
        case_id = ("rfc9309-" if rfc else "") + case["name"]
        params.append(pytest.param(case, expected, id=case_id))
    return params


def _body(case: dict):
    return case["robots_txt"] if case["robots_txt"] is not None else bytes.fromhex(case["robots_txt_hex"])


@pytest.mark.shared
@pytest.mark.parametrize("case, expected", _cases("google_robotstxt_cases.json", standard_only=False))
def test_google_robotstxt_case(case, expected):
    assert is_allowed(_body(case), case["url"], case["user_agent"]) is expected


@pytest.mark.shared
@pytest.mark.parametrize(
    "case, expected", _cases("google_robotstxt_spec_test_cases.json", standard_only=True)
)
def test_robotstxt_spec_test_standard_case(case, expected):
    assert is_allowed(_body(case), case["url"], case["user_agent"]) is expected


def test_the_corpora_are_present_for_the_conformance_runs():
    pytest.importorskip("protego")
    assert len(_cases("google_robotstxt_cases.json", standard_only=False)) == 118 or not SHARED.exists()


def test_product_token_is_the_name_before_the_version():
    assert product_token("research-engine/0.1.0 (+https://example.org)") == "research-engine"


def test_unknown_line_does_not_split_a_user_agent_group():
    text = "User-agent: research-engine\nX-Unknown: 1\nUser-agent: other\nDisallow: /\n"
    assert not is_allowed(text, "https://example.org/a", "research-engine/1.0")


def test_group_match_is_exact_not_a_prefix():
    text = "User-agent: research\nDisallow: /\n"
    assert is_allowed(text, "https://example.org/a", "research-engine/1.0")


def test_unreachable_policy_disallows_and_4xx_policy_allows():
    assert not RobotsPolicy("disallow-all").allowed("https://example.org/", "research-engine")
    assert RobotsPolicy("allow-all").allowed("https://example.org/", "research-engine")


def test_crawl_delay_is_read_for_our_group():
    policy = RobotsPolicy.parse("User-agent: research-engine\nCrawl-delay: 3\n")
    assert policy.crawl_delay("research-engine/0.1") == 3.0
