"""RetryPolicy: how many retries, how long each wait, when not to wait; Retry-After parsing. No clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from research_engine.net import RetryPolicy
from research_engine.net.retry import parse_retry_after


def no_jitter(**kw) -> RetryPolicy:
    return RetryPolicy(random_unit=lambda: 0.0, **kw)


def test_the_backoff_doubles_from_the_base():
    policy = no_jitter(attempts=3, backoff_base=0.5)
    assert [policy.delay(attempt) for attempt in range(3)] == [0.5, 1.0, 2.0]


def test_the_backoff_stops_growing_at_its_cap():
    policy = no_jitter(attempts=5, backoff_base=4.0, backoff_cap=10.0)
    assert [policy.delay(attempt) for attempt in range(5)] == [4.0, 8.0, 10.0, 10.0, 10.0]


def test_jitter_shortens_a_backoff_by_up_to_its_fraction():
    draws = iter([0.5, 0.999])
    policy = RetryPolicy(attempts=2, backoff_base=2.0, jitter=0.5, random_unit=lambda: next(draws))
    assert policy.delay(0) == 1.5  # 2 s less half of the 0.5 fraction
    assert policy.delay(1) == pytest.approx(2.002)  # 4 s less almost all of half


def test_no_retry_once_the_attempts_are_used():
    policy = no_jitter(attempts=2)
    assert policy.delay(2) is None and no_jitter(attempts=0).delay(0) is None


def test_a_negative_attempt_count_means_no_retries():
    assert RetryPolicy(attempts=-3).attempts == 0


def test_retry_after_is_waited_as_given_up_to_the_cap():
    policy = no_jitter(retry_after_cap=60.0)
    assert policy.delay(0, 7.0) == 7.0
    assert policy.delay(0, 60.0) == 60.0
    assert policy.delay(0, 61.0) is None
    assert policy.delay(0, 0.0) == 0.0


def test_a_wait_past_the_time_left_is_not_taken():
    policy = no_jitter(backoff_base=2.0)
    assert policy.delay(0, time_left=1.0) is None
    assert policy.delay(0, 5.0, time_left=4.0) is None
    assert policy.delay(0, 3.0, time_left=4.0) == 3.0


def test_the_transient_statuses_are_the_documented_ones():
    assert RetryPolicy().transient_statuses == {429, 500, 502, 503, 504}


def test_jitter_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="jitter"):
        RetryPolicy(jitter=1.5)


def test_replace_keeps_the_injected_sleep():
    asked: list[float] = []
    policy = RetryPolicy(sleep=asked.append).replace(attempts=0)
    policy.sleep(2.0)
    assert policy.attempts == 0 and asked == [2.0]


NOW = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "header, seconds",
    [
        ("120", 120.0),
        (" 5 ", 5.0),
        ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # a date in the past: come back now
        ("soon", None),
        ("-1", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after_reads_seconds_and_http_dates(header, seconds):
    assert parse_retry_after(header, now=NOW) == seconds
