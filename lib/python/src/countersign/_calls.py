"""The calls a claim (``claim.py``) and a wait (``_wait.py``) make on a client, as protocols the
clients (``client.py``) fulfil. The claim and the wait depend on these, not on the clients, so
``client.py`` can build claims and run waits without an import circle."""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from ._http import Transport
from ._types import Batch, BatchInput, Run, RunEvent


class ClaimCalls(Protocol):
    """What a ``Claim`` calls on the sync client."""

    def heartbeat(
        self, run_id: str, claim_token: str, lease_secs: int | None = None
    ) -> dict[str, str]: ...

    def report_event(self, run_id: str, event: dict[str, Any]) -> RunEvent: ...

    def pause(
        self, run_id: str, batch: BatchInput, *, idempotency_key: str | None = None
    ) -> Batch: ...

    def _complete(self, run_id: str, body: dict[str, Any]) -> Run: ...


class AsyncClaimCalls(Protocol):
    """What an ``AsyncClaim`` calls on the async client."""

    async def heartbeat(
        self, run_id: str, claim_token: str, lease_secs: int | None = None
    ) -> dict[str, str]: ...

    async def report_event(self, run_id: str, event: dict[str, Any]) -> RunEvent: ...

    async def pause(
        self, run_id: str, batch: BatchInput, *, idempotency_key: str | None = None
    ) -> Batch: ...

    async def _complete(self, run_id: str, body: dict[str, Any]) -> Run: ...


class WaitCalls(Protocol):
    """What a wait for a decision uses of the sync client: the batch read and the stream."""

    transport: Transport
    http: httpx.Client

    def get_batch(self, batch_id: str, *, wait: int | None = None) -> Batch: ...


class AsyncWaitCalls(Protocol):
    """What a wait for a decision uses of the async client."""

    transport: Transport
    http: httpx.AsyncClient

    async def get_batch(self, batch_id: str, *, wait: int | None = None) -> Batch: ...
