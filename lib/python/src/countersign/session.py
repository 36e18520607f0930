"""One run driven by this process across many pauses, as an agent loop sees it.

The run's lifecycle decides what each step needs: a fresh run is ``running`` and held by its
creator (no token); after a decision it is ``ready``, and only a claim may pause it again or
report on it. So ``ask`` claims the run as soon as its batch settles, and the next pause hands
that claim back.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import TYPE_CHECKING, Any

from ._http import new_idempotency_key
from ._types import Batch, BatchInput, Run, RunEvent
from .claim import AsyncClaim, Claim, describe_error
from .errors import CountersignError

if TYPE_CHECKING:
    from .client import AsyncCountersign, Countersign

WITHDRAWN_REASON = "The agent stopped waiting for a decision."


def _worker_id() -> str:
    return f"py-{uuid.uuid4().hex[:8]}"


def _ready_unheld(error: CountersignError) -> bool:
    current = error.current
    return (
        error.code == "not_ready" and isinstance(current, dict) and current.get("status") == "ready"
    )


def _withdrawn(refused: CountersignError) -> Batch | None:
    current: Batch | None = refused.current if refused.code == "not_pending" else None
    return current


class RunSession:
    """A run driven by the sync client. Thread-safe: ``ask`` calls of one session take turns,
    since a run takes one pause at a time."""

    def __init__(
        self,
        client: Countersign,
        run_id: str,
        *,
        worker_id: str | None = None,
        lease_secs: int = 60,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.worker_id = worker_id or _worker_id()
        self.lease_secs = lease_secs
        #: the claim held between a decision and the next pause (None while the run is unclaimed)
        self.claim: Claim | None = None
        self.lock = threading.RLock()

    def ask(
        self, batch: BatchInput, *, timeout: float | None = None, idempotency_key: str | None = None
    ) -> Batch:
        """Pauses the run with ``batch``, waits for the decision, and takes the run back (claims
        it, unless the batch was cancelled, which hands the run back by itself). A ``timeout``
        withdraws the batch and raises ``wait_timeout`` (unless a decision came first)."""
        with self.lock:
            paused = self.pause(batch, idempotency_key=idempotency_key)
            settled = (
                paused if paused["status"] != "pending" else self._wait_or_withdraw(paused, timeout)
            )
            if settled["status"] != "cancelled":
                self.take_back()
            return settled

    def _wait_or_withdraw(self, paused: Batch, timeout: float | None) -> Batch:
        try:
            return self.client.wait_for_decision(paused["id"], timeout=timeout, run_id=self.run_id)
        except CountersignError as error:
            if error.code != "wait_timeout":
                raise
            # No one should decide what no one will act on; a decision that came first stands.
            try:
                withdrawn: Batch | None = self.client.cancel_batch(
                    paused["id"], reason=WITHDRAWN_REASON
                )
            except CountersignError as refused:
                withdrawn = _withdrawn(refused)
            if withdrawn is not None and withdrawn["status"] != "cancelled":
                return withdrawn
            raise CountersignError(
                status=0,
                code="wait_timeout",
                message=f"{error.message} It was withdrawn.",
                current=withdrawn or error.current,
            ) from None

    def pause(self, batch: BatchInput, *, idempotency_key: str | None = None) -> Batch:
        """Pauses the run (with the claim when holding one) without waiting."""
        key = idempotency_key or new_idempotency_key()
        if self.claim is not None and self.claim.state == "held":
            return self.claim.pause(batch, idempotency_key=key)
        # Another worker may own the run now: say so rather than try without the claim.
        if self.claim is not None and self.claim.lost_error is not None:
            raise self.claim.lost_error
        try:
            return self.client.pause(self.run_id, batch, idempotency_key=key)
        except CountersignError as error:
            if not _ready_unheld(error):
                raise
            # Ready and held by nobody (its last batch settled while no session held it): take it.
            # Another body (it carries the token) needs another key.
            return self.take_back().pause(batch, idempotency_key=new_idempotency_key())

    def take_back(self) -> Claim:
        """Claims the run for this session (after a decision)."""
        self.claim = self.client.claim(
            self.run_id, worker_id=self.worker_id, lease_secs=self.lease_secs
        )
        return self.claim

    def report_tool_result(
        self, tool_call_id: str, result: Any = None, *, revert: Any = None
    ) -> RunEvent:
        if self.claim is not None and self.claim.state == "held":
            return self.claim.report_tool_result(tool_call_id, result, revert=revert)
        event = {
            "type": "tool.completed",
            "toolCallId": tool_call_id,
            "result": result,
            "revert": revert,
        }
        return self.client.report_event(
            self.run_id, {k: v for k, v in event.items() if v is not None}
        )

    def report_tool_failure(self, tool_call_id: str, error: object) -> RunEvent:
        if self.claim is not None and self.claim.state == "held":
            return self.claim.report_tool_failure(tool_call_id, error)
        event = {"type": "tool.failed", "toolCallId": tool_call_id, "error": describe_error(error)}
        return self.client.report_event(self.run_id, event)

    def complete(self, result: Any = None) -> Run:
        """Ends the run as ``completed`` (with the claim when holding one)."""
        if self.claim is not None and self.claim.state == "held":
            return self.claim.complete(result)
        return self.client.complete_run(self.run_id, outcome="completed", result=result)

    def fail(self, error: object = None) -> Run:
        """Ends the run as ``failed``."""
        if self.claim is not None and self.claim.state == "held":
            return self.claim.fail(error)
        return self.client.complete_run(self.run_id, outcome="failed", error=error)

    def release(self) -> None:
        """Stops heartbeating; the lease runs out and another worker may claim the run."""
        if self.claim is not None:
            self.claim.release()


class AsyncRunSession:
    """``RunSession`` for the async client; ``ask`` calls of one session take turns."""

    def __init__(
        self,
        client: AsyncCountersign,
        run_id: str,
        *,
        worker_id: str | None = None,
        lease_secs: int = 60,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.worker_id = worker_id or _worker_id()
        self.lease_secs = lease_secs
        self.claim: AsyncClaim | None = None
        self.lock = asyncio.Lock()

    async def ask(
        self, batch: BatchInput, *, timeout: float | None = None, idempotency_key: str | None = None
    ) -> Batch:
        async with self.lock:
            return await self.ask_unlocked(batch, timeout=timeout, idempotency_key=idempotency_key)

    async def ask_unlocked(
        self, batch: BatchInput, *, timeout: float | None = None, idempotency_key: str | None = None
    ) -> Batch:
        """``ask`` for a caller that already holds ``lock`` (the gate runs its tool under it)."""
        paused = await self.pause(batch, idempotency_key=idempotency_key)
        settled = (
            paused
            if paused["status"] != "pending"
            else await self._wait_or_withdraw(paused, timeout)
        )
        if settled["status"] != "cancelled":
            await self.take_back()
        return settled

    async def _wait_or_withdraw(self, paused: Batch, timeout: float | None) -> Batch:
        try:
            return await self.client.wait_for_decision(
                paused["id"], timeout=timeout, run_id=self.run_id
            )
        except CountersignError as error:
            if error.code != "wait_timeout":
                raise
            try:
                withdrawn: Batch | None = await self.client.cancel_batch(
                    paused["id"], reason=WITHDRAWN_REASON
                )
            except CountersignError as refused:
                withdrawn = _withdrawn(refused)
            if withdrawn is not None and withdrawn["status"] != "cancelled":
                return withdrawn
            raise CountersignError(
                status=0,
                code="wait_timeout",
                message=f"{error.message} It was withdrawn.",
                current=withdrawn or error.current,
            ) from None

    async def pause(self, batch: BatchInput, *, idempotency_key: str | None = None) -> Batch:
        key = idempotency_key or new_idempotency_key()
        if self.claim is not None and self.claim.state == "held":
            return await self.claim.pause(batch, idempotency_key=key)
        if self.claim is not None and self.claim.lost_error is not None:
            raise self.claim.lost_error
        try:
            return await self.client.pause(self.run_id, batch, idempotency_key=key)
        except CountersignError as error:
            if not _ready_unheld(error):
                raise
            claim = await self.take_back()
            return await claim.pause(batch, idempotency_key=new_idempotency_key())

    async def take_back(self) -> AsyncClaim:
        self.claim = await self.client.claim(
            self.run_id, worker_id=self.worker_id, lease_secs=self.lease_secs
        )
        return self.claim

    async def report_tool_result(
        self, tool_call_id: str, result: Any = None, *, revert: Any = None
    ) -> RunEvent:
        if self.claim is not None and self.claim.state == "held":
            return await self.claim.report_tool_result(tool_call_id, result, revert=revert)
        event = {
            "type": "tool.completed",
            "toolCallId": tool_call_id,
            "result": result,
            "revert": revert,
        }
        return await self.client.report_event(
            self.run_id, {k: v for k, v in event.items() if v is not None}
        )

    async def report_tool_failure(self, tool_call_id: str, error: object) -> RunEvent:
        if self.claim is not None and self.claim.state == "held":
            return await self.claim.report_tool_failure(tool_call_id, error)
        event = {"type": "tool.failed", "toolCallId": tool_call_id, "error": describe_error(error)}
        return await self.client.report_event(self.run_id, event)

    async def complete(self, result: Any = None) -> Run:
        if self.claim is not None and self.claim.state == "held":
            return await self.claim.complete(result)
        return await self.client.complete_run(self.run_id, outcome="completed", result=result)

    async def fail(self, error: object = None) -> Run:
        if self.claim is not None and self.claim.state == "held":
            return await self.claim.fail(error)
        return await self.client.complete_run(self.run_id, outcome="failed", error=error)

    def release(self) -> None:
        if self.claim is not None:
            self.claim.release()
