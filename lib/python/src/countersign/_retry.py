"""When and how long to wait before trying a request again.

Transient failures only: no answer at all, 408, 429, 502, 503, 504. Any other 4xx is the
caller's to fix and is never retried.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES = frozenset({408, 429, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of transient failures. ``RetryPolicy(retries=0)`` turns them off."""

    #: tries after the first
    retries: float = 4
    #: the first backoff in seconds; each next one doubles, with full jitter
    min_delay: float = 0.25
    #: the longest backoff; a Retry-After longer than this is not waited for (the error is raised)
    max_delay: float = 10.0

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait before retry number ``attempt`` (1 for the first retry), in seconds: exponential
        with jitter (so many clients cut off at once do not come back at once), or the server's
        Retry-After."""
        if retry_after is not None:
            return min(retry_after, self.max_delay)
        ceiling = min(self.max_delay, self.min_delay * 2.0 ** (attempt - 1))
        floor = self.min_delay / 2
        return floor + random.random() * max(0.0, ceiling - floor)


NO_RETRIES = RetryPolicy(retries=0, min_delay=0, max_delay=0)
#: the pause before reconnecting a stream or polling again after a failure: these never give up
RECONNECT = RetryPolicy(retries=float("inf"), min_delay=0.2, max_delay=5.0)


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """A Retry-After header (seconds, or an HTTP date) in seconds; None when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    try:
        at = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))
