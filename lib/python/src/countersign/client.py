"""The agent's clients for the Countersign API (agent key auth): ``Countersign`` (sync) and
``AsyncCountersign``, with the same methods. One method per endpoint, plus ``wait_for_decision``
and claims with heartbeats; ``gate`` and the framework adapters build on them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal, cast

import httpx

from ._http import (
    DEFAULT_TIMEOUT,
    Request,
    Transport,
    enc,
    new_idempotency_key,
    send_async,
    send_sync,
)
from ._retry import RetryPolicy
from ._types import Batch, BatchInput, ClaimGrant, CreateRunInput, Run, RunEvent
from ._wait import OnEvent, WaitMode, wait_async, wait_sync
from .claim import AsyncClaim, Claim, describe_error
from .errors import CountersignError

DEFAULT_LEASE_SECS = 60


def _recover_cancel(error: CountersignError) -> Any:
    # A retry that finds the batch cancelled found the first attempt's work.
    current = error.current
    if (
        error.code == "not_pending"
        and isinstance(current, dict)
        and current.get("status") == "cancelled"
    ):
        return current
    return None


def _recover_complete(outcome: str) -> Any:
    def recover(error: CountersignError) -> Any:
        # A retry that finds the run already ended as asked found the first attempt's work.
        current = error.current
        if (
            error.code == "run_terminal"
            and isinstance(current, dict)
            and current.get("status") == outcome
        ):
            return current
        return None

    return recover


def _recover_claim(worker_id: str) -> Any:
    def recover(error: CountersignError) -> Any:
        if error.code == "already_claimed" and error.details.get("holder") == worker_id:
            # The first attempt took the run, but its token was lost with the answer.
            raise CountersignError(
                status=error.status,
                code=error.code,
                message=(
                    f"{error.message} An earlier attempt of this claim by '{worker_id}' probably "
                    f"succeeded but its answer was lost; the lease lapses at "
                    f"{error.details.get('leaseExpiresAt')}, then claim again."
                ),
                current=error.current,
                details=error.details,
            )
        return None

    return recover


def _wait_timeout(wait: int | None) -> float | None:
    # A long-poll is held by the server for up to `wait` s: the attempt may take that much longer.
    return None if not wait else wait + 15.0


def _complete_body(
    outcome: Literal["completed", "failed"], claim_token: str | None, result: Any, error: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"outcome": outcome}
    if claim_token is not None:
        body["claimToken"] = claim_token
    if result is not None:
        body["result"] = result
    if error is not None:
        body["error"] = describe_error(error)
    return body


class Countersign:
    """The sync client.

    ``base_url`` is the app's address (an ``/api/v1`` suffix is fine too), ``api_key`` an agent
    key (``cs_agent_…``). ``retry`` governs retries of transient failures (no answer, 408, 429,
    502, 503, 504); ``timeout`` is one attempt's limit in seconds. Pass ``http_client`` to reuse
    your own ``httpx.Client`` (proxies, tests); otherwise close the client (or use ``with``).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.transport = Transport(base_url, api_key, retry or RetryPolicy(), timeout)
        self.http = http_client or httpx.Client()
        self._owns_http = http_client is None

    def close(self) -> None:
        if self._owns_http:
            self.http.close()

    def __enter__(self) -> Countersign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, request: Request) -> Any:
        return send_sync(self.http, self.transport, request)

    def create_run(
        self, run: CreateRunInput | None = None, *, idempotency_key: str | None = None
    ) -> Run:
        """``POST /runs``: starts a run, optionally paused at once with its first ``batch``.
        The Idempotency-Key defaults to a fresh one, reused by this call's retries."""
        return cast(
            Run,
            self._send(
                Request(
                    "POST",
                    "/runs",
                    body=run or {},
                    idempotency_key=idempotency_key or new_idempotency_key(),
                )
            ),
        )

    def pause(self, run_id: str, batch: BatchInput, *, idempotency_key: str | None = None) -> Batch:
        """``POST /runs/{id}/batches``: pauses a running run (a claimed one: use ``Claim.pause``)."""
        return cast(
            Batch,
            self._send(
                Request(
                    "POST",
                    f"/runs/{enc(run_id)}/batches",
                    body=batch,
                    idempotency_key=idempotency_key or new_idempotency_key(),
                )
            ),
        )

    def get_batch(self, batch_id: str, *, wait: int | None = None) -> Batch:
        """``GET /batches/{id}``; with ``wait`` (0–60 s) a pending batch is held until it settles."""
        return cast(
            Batch,
            self._send(
                Request(
                    "GET",
                    f"/batches/{enc(batch_id)}",
                    query={"wait": wait},
                    timeout=_wait_timeout(wait),
                )
            ),
        )

    def cancel_batch(self, batch_id: str, *, reason: str | None = None) -> Batch:
        """``POST /batches/{id}/cancel``: withdraws a pending batch."""
        body = {} if reason is None else {"reason": reason}
        return cast(
            Batch,
            self._send(
                Request(
                    "POST",
                    f"/batches/{enc(batch_id)}/cancel",
                    body=body,
                    recover=_recover_cancel,
                )
            ),
        )

    def get_run(self, run_id: str) -> Run:
        """``GET /runs/{id}``: the run with its batches."""
        return cast(Run, self._send(Request("GET", f"/runs/{enc(run_id)}")))

    def wait_for_decision(
        self,
        batch_id: str,
        *,
        timeout: float | None = None,
        run_id: str | None = None,
        mode: WaitMode = "auto",
        on_event: OnEvent | None = None,
    ) -> Batch:
        """Returns the batch once it is no longer pending.

        Follows the run's event stream (resuming with Last-Event-ID after a cut), falling back
        to long-polls when streaming does not work (``mode``: ``auto``, ``stream`` or ``poll``).
        ``timeout`` (seconds) raises CountersignError ``wait_timeout`` with ``current``, the batch
        as last seen; the batch stays pending. ``on_event`` sees every event of the run.
        """
        return wait_sync(
            self, batch_id, timeout=timeout, run_id=run_id, mode=mode, on_event=on_event
        )

    def claim(
        self,
        run_id: str,
        *,
        worker_id: str,
        lease_secs: int = DEFAULT_LEASE_SECS,
        heartbeat: bool = True,
        on_lost: Callable[[CountersignError], None] | None = None,
    ) -> Claim:
        """``POST /runs/{id}/claim``: takes a ``ready`` run (or one whose lease ran out). Heartbeats
        go every ``lease_secs / 3`` until the claim ends. Raises ``already_claimed`` when another
        worker holds it, ``not_ready`` while it waits for a decision."""
        sent_at = time.monotonic()
        grant = cast(
            ClaimGrant,
            self._send(
                Request(
                    "POST",
                    f"/runs/{enc(run_id)}/claim",
                    body={"workerId": worker_id, "leaseSecs": lease_secs},
                    recover=_recover_claim(worker_id),
                )
            ),
        )
        return Claim(
            self,
            grant,
            worker_id=worker_id,
            lease_secs=lease_secs,
            heartbeat=heartbeat,
            on_lost=on_lost,
            sent_at=sent_at,
        )

    def heartbeat(
        self, run_id: str, claim_token: str, lease_secs: int | None = None
    ) -> dict[str, str]:
        """``POST /runs/{id}/heartbeat``: extends a lease (a Claim does this by itself)."""
        body: dict[str, Any] = {"claimToken": claim_token}
        if lease_secs is not None:
            body["leaseSecs"] = lease_secs
        return cast(
            dict[str, str], self._send(Request("POST", f"/runs/{enc(run_id)}/heartbeat", body=body))
        )

    def report_event(self, run_id: str, event: dict[str, Any]) -> RunEvent:
        """``POST /runs/{id}/events``. Retried like the rest, so after a dropped answer an event may
        be recorded twice (the API has no idempotency for events)."""
        return cast(
            RunEvent, self._send(Request("POST", f"/runs/{enc(run_id)}/events", body=event))
        )

    def complete_run(
        self,
        run_id: str,
        *,
        outcome: Literal["completed", "failed"] = "completed",
        claim_token: str | None = None,
        result: Any = None,
        error: Any = None,
    ) -> Run:
        """``POST /runs/{id}/complete``: ends the run (``Claim.complete`` and ``fail`` call this)."""
        return self._complete(run_id, _complete_body(outcome, claim_token, result, error))

    def _complete(self, run_id: str, body: dict[str, Any]) -> Run:
        return cast(
            Run,
            self._send(
                Request(
                    "POST",
                    f"/runs/{enc(run_id)}/complete",
                    body=body,
                    recover=_recover_complete(body["outcome"]),
                )
            ),
        )

    def request_rollback(self, run_id: str, *, reason: str | None = None) -> Any:
        """``POST /runs/{id}/rollback``: the next claim's ``rollback`` lists the actions to revert."""
        body = {} if reason is None else {"reason": reason}
        return self._send(Request("POST", f"/runs/{enc(run_id)}/rollback", body=body))


class AsyncCountersign:
    """The asyncio client: ``Countersign``'s methods as coroutines (claims beat from a task)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.transport = Transport(base_url, api_key, retry or RetryPolicy(), timeout)
        self.http = http_client or httpx.AsyncClient()
        self._owns_http = http_client is None

    async def aclose(self) -> None:
        if self._owns_http:
            await self.http.aclose()

    async def __aenter__(self) -> AsyncCountersign:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, request: Request) -> Any:
        return await send_async(self.http, self.transport, request)

    async def create_run(
        self, run: CreateRunInput | None = None, *, idempotency_key: str | None = None
    ) -> Run:
        return cast(
            Run,
            await self._send(
                Request(
                    "POST",
                    "/runs",
                    body=run or {},
                    idempotency_key=idempotency_key or new_idempotency_key(),
                )
            ),
        )

    async def pause(
        self, run_id: str, batch: BatchInput, *, idempotency_key: str | None = None
    ) -> Batch:
        return cast(
            Batch,
            await self._send(
                Request(
                    "POST",
                    f"/runs/{enc(run_id)}/batches",
                    body=batch,
                    idempotency_key=idempotency_key or new_idempotency_key(),
                )
            ),
        )

    async def get_batch(self, batch_id: str, *, wait: int | None = None) -> Batch:
        return cast(
            Batch,
            await self._send(
                Request(
                    "GET",
                    f"/batches/{enc(batch_id)}",
                    query={"wait": wait},
                    timeout=_wait_timeout(wait),
                )
            ),
        )

    async def cancel_batch(self, batch_id: str, *, reason: str | None = None) -> Batch:
        body = {} if reason is None else {"reason": reason}
        return cast(
            Batch,
            await self._send(
                Request(
                    "POST",
                    f"/batches/{enc(batch_id)}/cancel",
                    body=body,
                    recover=_recover_cancel,
                )
            ),
        )

    async def get_run(self, run_id: str) -> Run:
        return cast(Run, await self._send(Request("GET", f"/runs/{enc(run_id)}")))

    async def wait_for_decision(
        self,
        batch_id: str,
        *,
        timeout: float | None = None,
        run_id: str | None = None,
        mode: WaitMode = "auto",
        on_event: OnEvent | None = None,
    ) -> Batch:
        """See ``Countersign.wait_for_decision``; cancelling the task stops the wait."""
        return await wait_async(
            self, batch_id, timeout=timeout, run_id=run_id, mode=mode, on_event=on_event
        )

    async def claim(
        self,
        run_id: str,
        *,
        worker_id: str,
        lease_secs: int = DEFAULT_LEASE_SECS,
        heartbeat: bool = True,
        on_lost: Callable[[CountersignError], None] | None = None,
    ) -> AsyncClaim:
        sent_at = time.monotonic()
        grant = cast(
            ClaimGrant,
            await self._send(
                Request(
                    "POST",
                    f"/runs/{enc(run_id)}/claim",
                    body={"workerId": worker_id, "leaseSecs": lease_secs},
                    recover=_recover_claim(worker_id),
                )
            ),
        )
        return AsyncClaim(
            self,
            grant,
            worker_id=worker_id,
            lease_secs=lease_secs,
            heartbeat=heartbeat,
            on_lost=on_lost,
            sent_at=sent_at,
        )

    async def heartbeat(
        self, run_id: str, claim_token: str, lease_secs: int | None = None
    ) -> dict[str, str]:
        body: dict[str, Any] = {"claimToken": claim_token}
        if lease_secs is not None:
            body["leaseSecs"] = lease_secs
        return cast(
            dict[str, str],
            await self._send(Request("POST", f"/runs/{enc(run_id)}/heartbeat", body=body)),
        )

    async def report_event(self, run_id: str, event: dict[str, Any]) -> RunEvent:
        return cast(
            RunEvent, await self._send(Request("POST", f"/runs/{enc(run_id)}/events", body=event))
        )

    async def complete_run(
        self,
        run_id: str,
        *,
        outcome: Literal["completed", "failed"] = "completed",
        claim_token: str | None = None,
        result: Any = None,
        error: Any = None,
    ) -> Run:
        return await self._complete(run_id, _complete_body(outcome, claim_token, result, error))

    async def _complete(self, run_id: str, body: dict[str, Any]) -> Run:
        return cast(
            Run,
            await self._send(
                Request(
                    "POST",
                    f"/runs/{enc(run_id)}/complete",
                    body=body,
                    recover=_recover_complete(body["outcome"]),
                )
            ),
        )

    async def request_rollback(self, run_id: str, *, reason: str | None = None) -> Any:
        body = {} if reason is None else {"reason": reason}
        return await self._send(Request("POST", f"/runs/{enc(run_id)}/rollback", body=body))
