"""The retry policy: when a failed call is tried again, and how long to wait first.

`RetryPolicy` is the one implementation of the waiting rules, shared by the HTTP
client (two retries by default) and the model adapter (its own instance, one retry):

- at most `attempts` retries after the first try; only `transient_statuses` (and the
  transport failures the caller calls transient) are retried;
- a Retry-After the server sent is honoured as is, up to `retry_after_cap`; a longer one
  ends the retries (the caller returns the failure with the value, and the caller's
  caller decides whether to come back later);
- without Retry-After: exponential backoff, `backoff_base * 2**attempt`, at most
  `backoff_cap`, shortened at random by up to `jitter` of itself so clients that failed
  together do not retry together;
- a wait that would run past the time the call has left ends the retries.

Waiting goes through the policy's `sleep`, and jitter draws from its `random_unit`: a test
injects both, so it never sleeps for real and knows every wait that was asked for. This
module decides waits; it never sends a request. `parse_retry_after` reads the header.
"""

from __future__ import annotations

import dataclasses
import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
# The statuses whose Retry-After means "come back later" and that say the server did not act.
RETRY_AFTER_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 2  # retries after the first try; 0 never retries
    backoff_base: float = 0.5  # seconds before the first retry, doubled for each one after
    backoff_cap: float = 10.0  # the longest backoff, before jitter
    jitter: float = 0.5  # the largest fraction of a backoff taken off at random
    retry_after_cap: float = 60.0  # the longest Retry-After honoured inside one call
    transient_statuses: frozenset[int] = TRANSIENT_STATUSES
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    random_unit: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 0:
            object.__setattr__(self, "attempts", 0)
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter is a fraction of the backoff, 0 to 1; got {self.jitter}")

    def replace(self, **changes: Any) -> RetryPolicy:
        return dataclasses.replace(self, **changes)

    def backoff(self, attempt: int) -> float:
        """The pause before retry number `attempt + 1` when the server named none (jitter applied)."""
        full = min(self.backoff_cap, self.backoff_base * (2**attempt))
        return full * (1.0 - self.jitter * self.random_unit())

    def delay(
        self, attempt: int, retry_after: float | None = None, *, time_left: float | None = None
    ) -> float | None:
        """Seconds to wait before retry number `attempt + 1` (counting from 0), or None for "do not retry".

        None when the retries are used up, when the server's Retry-After is over the cap, or when
        the wait would not end within `time_left` seconds (None: no limit).
        """
        if attempt >= self.attempts:
            return None
        if retry_after is not None:
            if retry_after > self.retry_after_cap:
                return None
            wait = max(0.0, retry_after)
        else:
            wait = self.backoff(attempt)
        if time_left is not None and wait > time_left:
            return None
        return wait


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """A Retry-After header (delay-seconds or an HTTP date) as seconds from `now`; None when unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
