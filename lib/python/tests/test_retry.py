"""The retry policy on its own: which answers are retried, how long it waits, Retry-After."""

from __future__ import annotations

import time
from email.utils import formatdate

import httpx
import pytest

from countersign import Countersign, CountersignError, RetryPolicy
from countersign._retry import is_retryable_status, parse_retry_after


def test_only_transient_statuses_are_retryable() -> None:
    assert [
        s for s in (400, 401, 404, 408, 409, 429, 500, 502, 503, 504) if is_retryable_status(s)
    ] == [
        408,
        429,
        502,
        503,
        504,
    ]


def test_backoff_doubles_with_jitter_up_to_the_ceiling() -> None:
    policy = RetryPolicy(retries=10, min_delay=0.1, max_delay=1.0)
    for attempt, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (6, 1.0)]:
        waits = [policy.backoff(attempt) for _ in range(200)]
        assert min(waits) >= 0.05 and max(waits) <= ceiling
    assert policy.backoff(1, retry_after=0.7) == 0.7
    assert policy.backoff(1, retry_after=30) == 1.0


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    in_a_minute = parse_retry_after(formatdate(time.time() + 60, usegmt=True))
    assert in_a_minute is not None and 55 < in_a_minute <= 60


def test_a_retry_after_longer_than_the_policy_waits_is_raised_with_it() -> None:
    attempts = 0

    def busy(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        body = {"error": {"code": "rate_limited", "message": "slow down"}}
        return httpx.Response(429, headers={"retry-after": "120"}, json=body)

    client = Countersign(
        "http://countersign.test",
        "cs_agent_x",
        retry=RetryPolicy(retries=3, min_delay=0.01, max_delay=1),
        http_client=httpx.Client(transport=httpx.MockTransport(busy)),
    )
    with pytest.raises(CountersignError) as limited:
        client.get_run("r")
    assert limited.value.code == "rate_limited"
    assert limited.value.retry_after == 120
    assert attempts == 1


def test_an_answer_that_is_not_json_is_an_invalid_response() -> None:
    def proxy_page(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502 if request.method == "POST" else 200, text="<html>gateway</html>")

    client = Countersign(
        "http://countersign.test/api/v1/",
        "cs_agent_x",
        retry=RetryPolicy(retries=1, min_delay=0.01, max_delay=0.01),
        http_client=httpx.Client(transport=httpx.MockTransport(proxy_page)),
    )
    with pytest.raises(CountersignError) as bad:
        client.get_run("r")
    assert (bad.value.status, bad.value.code) == (200, "invalid_response")
    with pytest.raises(CountersignError) as gateway:
        client.create_run()
    assert (gateway.value.status, gateway.value.code) == (502, "invalid_response")
