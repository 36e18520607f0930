"""The one place the clients talk HTTP: auth, JSON, per-attempt timeouts, retries and error
mapping, for httpx's sync and async clients alike (what differs is only how to send and sleep)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx

from ._retry import RetryPolicy, is_retryable_status, parse_retry_after
from .errors import CountersignError, error_from_response

#: Called with the error a retry got when an earlier attempt may have reached the server: a
#: retried ``complete`` that finds the run completed was the first attempt's success. Returns the
#: answer to use instead, or None to raise the error.
Recover = Callable[[CountersignError], Any]

DEFAULT_TIMEOUT = 30.0


def new_idempotency_key() -> str:
    """A fresh Idempotency-Key: one per logical create, reused by all of its retries."""
    return str(uuid.uuid4())


def enc(segment: str) -> str:
    return quote(segment, safe="")


def api_url(base_url: str) -> str:
    if not base_url:
        raise ValueError("Countersign: base_url is required.")
    base = base_url.rstrip("/")
    return base if base.endswith("/api/v1") else f"{base}/api/v1"


@dataclass
class Request:
    method: Literal["GET", "POST"]
    #: under /api/v1, e.g. ``/runs/abc/claim``
    path: str
    query: Mapping[str, str | int | None] = field(default_factory=dict)
    body: Any = None
    idempotency_key: str | None = None
    #: one attempt's limit in seconds (default: the client's)
    timeout: float | None = None
    recover: Recover | None = None


class Transport:
    """What both clients share: the request as sent, the answer as read, the retry decisions."""

    def __init__(self, base_url: str, api_key: str, retry: RetryPolicy, timeout: float) -> None:
        if not api_key:
            raise ValueError("Countersign: api_key is required.")
        self.api_url = api_url(base_url)
        self.api_key = api_key
        self.retry = retry
        self.timeout = timeout

    def url(self, path: str) -> str:
        return f"{self.api_url}{path}"

    def prepare(self, request: Request) -> tuple[dict[str, str], str | None, dict[str, str]]:
        headers = {"accept": "application/json", "authorization": f"Bearer {self.api_key}"}
        # Serialized once, so every retry sends the very body the Idempotency-Key was first used with.
        content: str | None = None
        if request.method == "POST":
            headers["content-type"] = "application/json"
            content = json.dumps(
                {} if request.body is None else request.body, separators=(",", ":")
            )
        if request.idempotency_key:
            headers["idempotency-key"] = request.idempotency_key
        params = {name: str(value) for name, value in request.query.items() if value is not None}
        return headers, content, params

    def read(self, response: httpx.Response) -> Any:
        """The parsed answer of a 2xx, or raises the CountersignError of anything else."""
        text = response.text
        parsed = _parse_json(text)
        if response.is_success:
            if parsed is _NOT_JSON:
                raise CountersignError(
                    status=response.status_code,
                    code="invalid_response",
                    message=f"The server answered {response.status_code} with a body that is not JSON.",
                )
            return parsed
        raise error_from_response(
            response.status_code,
            None if parsed is _NOT_JSON else parsed,
            parse_retry_after(response.headers.get("retry-after")),
        )

    def next_delay(self, failure: CountersignError, attempt: int) -> float | None:
        """How long to wait before retrying after ``failure`` on try ``attempt`` (0 for the first),
        or None when it must be raised."""
        if not is_retryable(failure) or attempt >= self.retry.retries:
            return None
        # Asked to come back later than we would wait: the caller decides (retry_after says when).
        if failure.retry_after is not None and failure.retry_after > self.retry.max_delay:
            return None
        return self.retry.backoff(attempt + 1, failure.retry_after)

    def network_error(self, cause: Exception, request: Request) -> CountersignError:
        reason = (
            f"no answer within {request.timeout or self.timeout} s"
            if isinstance(cause, httpx.TimeoutException)
            else f"{type(cause).__name__}: {cause}"
        )
        error = CountersignError(
            status=0,
            code="network_error",
            message=f"No answer from Countersign at {self.url(request.path)}: {reason}",
        )
        error.__cause__ = cause
        return error


def is_retryable(error: CountersignError) -> bool:
    return error.status == 0 or is_retryable_status(error.status)


def is_transient(error: CountersignError) -> bool:
    """Worth waiting out in a loop that never gives up (a wait): outages, 5xx, 408, 429."""
    return error.status == 0 or error.status >= 500 or is_retryable_status(error.status)


_NOT_JSON = object()


def _parse_json(text: str) -> Any:
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def send_sync(client: httpx.Client, transport: Transport, request: Request) -> Any:
    """A JSON request, retried on transient failures; returns the parsed answer."""
    headers, content, params = transport.prepare(request)
    may_have_reached_server = False
    attempt = 0
    while True:
        try:
            response = client.request(
                request.method,
                transport.url(request.path),
                headers=headers,
                content=content,
                params=params,
                timeout=request.timeout or transport.timeout,
            )
            return transport.read(response)
        except CountersignError as error:
            failure = error
        except httpx.TransportError as error:
            failure = transport.network_error(error, request)
        if not is_retryable(failure) and may_have_reached_server and request.recover:
            recovered = request.recover(failure)
            if recovered is not None:
                return recovered
        delay = transport.next_delay(failure, attempt)
        if delay is None:
            raise failure
        may_have_reached_server = True
        attempt += 1
        time.sleep(delay)


async def send_async(client: httpx.AsyncClient, transport: Transport, request: Request) -> Any:
    """send_sync for httpx.AsyncClient."""
    headers, content, params = transport.prepare(request)
    may_have_reached_server = False
    attempt = 0
    while True:
        try:
            response = await client.request(
                request.method,
                transport.url(request.path),
                headers=headers,
                content=content,
                params=params,
                timeout=request.timeout or transport.timeout,
            )
            return transport.read(response)
        except CountersignError as error:
            failure = error
        except httpx.TransportError as error:
            failure = transport.network_error(error, request)
        if not is_retryable(failure) and may_have_reached_server and request.recover:
            recovered = request.recover(failure)
            if recovered is not None:
                return recovered
        delay = transport.next_delay(failure, attempt)
        if delay is None:
            raise failure
        may_have_reached_server = True
        attempt += 1
        await asyncio.sleep(delay)
