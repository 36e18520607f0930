"""Waits for a batch to leave ``pending``.

The run's event stream is the fast path: it resumes with Last-Event-ID after any cut, so an
event that happened while disconnected is replayed, not lost. When streaming does not work here
(a proxy that refuses it or buffers it away, repeated failed connects) it falls back to
long-polling ``GET /batches/{id}?wait=N``. Either way the answer is the agent's own GET of the
batch: reviewers' events omit calls a policy blocked.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import httpx

from ._calls import AsyncWaitCalls, WaitCalls
from ._http import enc, is_transient
from ._retry import RECONNECT, is_retryable_status
from ._sse import SseMessage, SseParser
from ._types import Batch, RunEvent
from .errors import CountersignError, error_from_response

WaitMode = Literal["auto", "stream", "poll"]
OnEvent = Callable[[RunEvent], None]

SETTLING_EVENTS = frozenset({"batch.decided", "batch.expired", "batch.cancelled"})
#: failed connects in a row (no byte received) after which ``auto`` gives up on streaming
STREAM_FAILURES_BEFORE_FALLBACK = 4
#: the server sends a comment every 15 s: three missed ones mean the connection is dead
STREAM_IDLE = 45.0
LONG_POLL_SECS = 25


class _Progress:
    """What one wait knows so far: the latest batch seen and the stream position."""

    def __init__(self, batch_id: str) -> None:
        self.batch_id = batch_id
        self.latest: Batch | None = None
        self.last_event_id: str | None = None

    def timeout_error(self, timeout: float | None) -> CountersignError:
        return CountersignError(
            status=0,
            code="wait_timeout",
            message=f"Batch {self.batch_id} was still pending after {timeout} s.",
            current=self.latest,
        )

    def settling(self, message: SseMessage, on_event: OnEvent | None) -> bool:
        """Takes one stream message; True when it says our batch may have settled."""
        if message.id is not None:
            self.last_event_id = message.id
        event = _parse_event(message.data)
        if event is None:
            return False
        if on_event is not None:
            on_event(event)
        return bool(event.get("batchId") == self.batch_id and event["type"] in SETTLING_EVENTS)


def stream_headers(last_event_id: str | None) -> dict[str, str]:
    headers = {"accept": "text/event-stream"}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    return headers


def _is_event_stream(response: httpx.Response) -> bool:
    return bool(response.headers.get("content-type", "").startswith("text/event-stream"))


def _refusal(response: httpx.Response, text: str) -> CountersignError | None:
    """The error of a refused stream that a GET would meet as well (401, 403, 404…), else None."""
    if is_retryable_status(response.status_code) or response.status_code >= 500:
        return None
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = None
    return error_from_response(response.status_code, body, None)


def _parse_event(data: str) -> RunEvent | None:
    try:
        event = json.loads(data)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("type"), str) else None  # type: ignore[return-value]


def _stream_unavailable(run_id: str) -> CountersignError:
    return CountersignError(
        status=0,
        code="network_error",
        message=f"The event stream of run {run_id} is not available from here.",
    )


# --- sync ---------------------------------------------------------------------------------------


def wait_sync(
    client: WaitCalls,
    batch_id: str,
    *,
    timeout: float | None,
    run_id: str | None,
    mode: WaitMode,
    on_event: OnEvent | None,
) -> Batch:
    progress = _Progress(batch_id)
    deadline = None if timeout is None else time.monotonic() + timeout

    def remaining() -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise progress.timeout_error(timeout)
        return left

    def get(wait: int | None = None) -> Batch:
        left = remaining()
        if wait is not None and left is not None:
            # At least 1 s: a wait of 0 answers at once, and the loop would spin until the deadline.
            wait = min(wait, math.ceil(left))
        progress.latest = client.get_batch(batch_id, wait=wait)
        return progress.latest

    if run_id is None:
        batch = get()
        if batch["status"] != "pending":
            return batch
        run_id = batch["runId"]
    if mode != "poll":
        settled = _follow_stream_sync(client, run_id, progress, get, remaining, mode, on_event)
        if settled is not None:
            return settled
        if mode == "stream":
            raise _stream_unavailable(run_id)
    failures = 0
    while True:
        try:
            batch = get(LONG_POLL_SECS)
            if batch["status"] != "pending":
                return batch
            failures = 0
        except CountersignError as error:
            if error.code == "wait_timeout" or not is_transient(error):
                raise
            failures += 1
            _sleep_within(RECONNECT.backoff(failures), remaining)


def _follow_stream_sync(
    client: WaitCalls,
    run_id: str,
    progress: _Progress,
    get: Callable[[], Batch],
    remaining: Callable[[], float | None],
    mode: WaitMode,
    on_event: OnEvent | None,
) -> Batch | None:
    def check() -> Batch | None:
        batch = get()
        return None if batch["status"] == "pending" else batch

    failures = 0
    while True:
        received_bytes = False
        left = remaining()
        # A blocking read cannot be interrupted: its timeout is what bounds the wait's deadline.
        read_timeout = STREAM_IDLE if left is None else min(STREAM_IDLE, max(left, 0.05))
        try:
            with client.http.stream(
                "GET",
                client.transport.url(f"/runs/{enc(run_id)}/stream"),
                headers={
                    "authorization": f"Bearer {client.transport.api_key}",
                    **stream_headers(progress.last_event_id),
                },
                timeout=httpx.Timeout(10.0, read=read_timeout),
            ) as response:
                if not response.is_success:
                    refused = _refusal(response, response.read().decode(errors="replace"))
                    if refused is not None:
                        raise refused
                elif not _is_event_stream(response):
                    return None
                else:
                    # Without a Last-Event-ID the stream only carries what happens after it
                    # opened: the first bytes say it listens, and a GET covers what came before.
                    confirmed = progress.last_event_id is not None
                    parser = SseParser()
                    for chunk in response.iter_text():
                        received_bytes = True
                        if not confirmed:
                            confirmed = True
                            settled = check()
                            if settled is not None:
                                return settled
                        for message in parser.push(chunk):
                            if message.event == "resync":
                                # The server no longer knows our id (a reset database): start over.
                                progress.last_event_id = None
                                settled = check()
                            elif progress.settling(message, on_event):
                                settled = check()
                            else:
                                continue
                            if settled is not None:
                                return settled
                        left = remaining()
                        if left is not None and left < read_timeout - 1:
                            break  # reconnect (Last-Event-ID: nothing lost) with a shorter read timeout
        except httpx.TransportError:
            pass  # a cut connection, a refused connect or a stalled stream: reconnect below
        except CountersignError as error:
            if error.code == "wait_timeout" or not is_transient(error):
                raise
        failures = 0 if received_bytes else failures + 1
        if mode != "stream" and failures >= STREAM_FAILURES_BEFORE_FALLBACK:
            return None
        if not received_bytes:
            _sleep_within(RECONNECT.backoff(max(failures, 1)), remaining)


def _sleep_within(seconds: float, remaining: Callable[[], float | None]) -> None:
    left = remaining()
    time.sleep(seconds if left is None else min(seconds, left))
    remaining()


# --- async --------------------------------------------------------------------------------------


async def wait_async(
    client: AsyncWaitCalls,
    batch_id: str,
    *,
    timeout: float | None,
    run_id: str | None,
    mode: WaitMode,
    on_event: OnEvent | None,
) -> Batch:
    progress = _Progress(batch_id)
    try:
        return await asyncio.wait_for(
            _wait_async(client, progress, run_id, mode, on_event), timeout
        )
    except asyncio.TimeoutError:
        raise progress.timeout_error(timeout) from None


async def _wait_async(
    client: AsyncWaitCalls,
    progress: _Progress,
    run_id: str | None,
    mode: WaitMode,
    on_event: OnEvent | None,
) -> Batch:
    async def get(wait: int | None = None) -> Batch:
        progress.latest = await client.get_batch(progress.batch_id, wait=wait)
        return progress.latest

    if run_id is None:
        batch = await get()
        if batch["status"] != "pending":
            return batch
        run_id = batch["runId"]
    if mode != "poll":
        settled = await _follow_stream_async(client, run_id, progress, get, mode, on_event)
        if settled is not None:
            return settled
        if mode == "stream":
            raise _stream_unavailable(run_id)
    failures = 0
    while True:
        try:
            batch = await get(LONG_POLL_SECS)
            if batch["status"] != "pending":
                return batch
            failures = 0
        except CountersignError as error:
            if not is_transient(error):
                raise
            failures += 1
            await asyncio.sleep(RECONNECT.backoff(failures))


async def _follow_stream_async(
    client: AsyncWaitCalls,
    run_id: str,
    progress: _Progress,
    get: Callable[[], Awaitable[Batch]],
    mode: WaitMode,
    on_event: OnEvent | None,
) -> Batch | None:
    async def check() -> Batch | None:
        batch = await get()
        return None if batch["status"] == "pending" else batch

    failures = 0
    while True:
        received_bytes = False
        try:
            async with client.http.stream(
                "GET",
                client.transport.url(f"/runs/{enc(run_id)}/stream"),
                headers={
                    "authorization": f"Bearer {client.transport.api_key}",
                    **stream_headers(progress.last_event_id),
                },
                timeout=httpx.Timeout(10.0, read=STREAM_IDLE),
            ) as response:
                if not response.is_success:
                    refused = _refusal(response, (await response.aread()).decode(errors="replace"))
                    if refused is not None:
                        raise refused
                elif not _is_event_stream(response):
                    return None
                else:
                    confirmed = progress.last_event_id is not None
                    parser = SseParser()
                    async for chunk in response.aiter_text():
                        received_bytes = True
                        if not confirmed:
                            confirmed = True
                            settled = await check()
                            if settled is not None:
                                return settled
                        for message in parser.push(chunk):
                            if message.event == "resync":
                                progress.last_event_id = None
                                settled = await check()
                            elif progress.settling(message, on_event):
                                settled = await check()
                            else:
                                continue
                            if settled is not None:
                                return settled
        except httpx.TransportError:
            pass  # a cut connection, a refused connect or a stalled stream: reconnect below
        except CountersignError as error:
            if not is_transient(error):
                raise
        failures = 0 if received_bytes else failures + 1
        if mode != "stream" and failures >= STREAM_FAILURES_BEFORE_FALLBACK:
            return None
        if not received_bytes:
            await asyncio.sleep(RECONNECT.backoff(max(failures, 1)))
