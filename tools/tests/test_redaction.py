"""The one secret rule (research_engine.redaction): what is secret, and how it leaves URLs and bodies."""

from __future__ import annotations

from research_engine.redaction import (
    REDACTED,
    drop_secret_fields,
    redact_headers,
    redact_text,
    redact_url,
    scrub,
    scrub_bytes,
)
from research_engine.settings import Settings

KEY = "sk-live-0123456789abcdef"


def test_secret_query_parameters_leave_urls_and_others_stay_in_order():
    url = "https://api.example.org/works?search=gdp&api_key=abc&per_page=5&access_token=t&keyword=x"
    assert redact_url(url) == "https://api.example.org/works?search=gdp&per_page=5&keyword=x"


def test_userinfo_never_survives_in_a_url():
    assert redact_url("https://user:pw@example.org/a?q=1") == "https://example.org/a?q=1"


def test_a_url_without_secrets_is_returned_unchanged_byte_for_byte():
    url = "https://example.org/search?q=a%20b&format=json&pageno=2"
    assert redact_url(url) == url


def test_known_secret_values_are_scrubbed_wherever_they_appear_also_url_encoded():
    assert redact_url(f"https://example.org/p/{KEY}?q=1", [KEY]) == f"https://example.org/p/{REDACTED}?q=1"
    assert scrub(f"echo {KEY} and sk-live-0123456789abcdef%2F", [KEY, KEY + "/"]) == (
        f"echo {REDACTED} and {REDACTED}"
    )
    assert scrub_bytes(f'{{"echo": "{KEY}"}}'.encode(), [KEY]) == f'{{"echo": "{REDACTED}"}}'.encode()


def test_log_lines_keep_their_shape_with_secret_values_replaced():
    assert (
        redact_text("GET https://a/b?q=gdp&api_key=abc&token=t1 failed")
        == f"GET https://a/b?q=gdp&api_key={REDACTED}&token={REDACTED} failed"
    )
    assert redact_text("https://a/b?keyword=x&monkey=y") == "https://a/b?keyword=x&monkey=y"


def test_secret_headers_are_redacted_and_values_elsewhere_scrubbed():
    headers = {
        "Authorization": "Bearer x",
        "X-Subscription-Token": "t",
        "X-Api-Key": "k",
        "Cookie": "a=b",
        "Content-Type": f"text/plain; note={KEY}",
        "Accept": "application/json",
    }
    assert redact_headers(headers, [KEY]) == {
        "authorization": REDACTED,
        "x-subscription-token": REDACTED,
        "x-api-key": REDACTED,
        "cookie": REDACTED,
        "content-type": f"text/plain; note={REDACTED}",
        "accept": "application/json",
    }


def test_credential_fields_leave_a_json_request_body():
    assert drop_secret_fields({"api_key": "k", "query": "q", "client_secret": "s"}) == {"query": "q"}


def test_settings_know_every_configured_key_and_credential_looking_variable():
    settings = Settings.from_env(
        {"BRAVE_API_KEY": KEY, "SOME_SERVICE_TOKEN": "tok-123456", "SHORT_TOKEN": "abc", "PATH": "/usr/bin"}
    )
    assert KEY in settings.secrets and "tok-123456" in settings.secrets
    assert "abc" not in settings.secrets and "/usr/bin" not in settings.secrets
    assert KEY not in repr(settings) and KEY not in str(settings.public())
