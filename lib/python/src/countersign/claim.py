"""A worker's hold on a run (``POST /runs/{id}/claim``), kept alive by heartbeats every third of
the lease until the claim ends: by pause, complete, fail, release, or being lost.

Losing it (``claim_lost``: the lease ran out, or another worker took the run over) shows as
``state == "lost"`` and ``lost_error``, and calls ``on_lost``, so the worker stops before doing
anything more for the run. ``Claim`` beats from a daemon thread, ``AsyncClaim`` from a task.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from ._calls import AsyncClaimCalls, ClaimCalls
from ._types import Batch, BatchInput, ClaimGrant, RollbackAction, Run, RunEvent
from .errors import CountersignError

ClaimState = Literal["held", "ended", "lost"]
T = TypeVar("T")


def describe_error(error: object) -> object:
    """An error as JSON the server can store: its type and message, not an empty ``{}``."""
    if isinstance(error, BaseException):
        return {"name": type(error).__name__, "message": str(error)}
    return error


def _loses_claim(error: BaseException) -> bool:
    return isinstance(error, CountersignError) and error.code in ("claim_lost", "run_terminal")


class _ClaimBase:
    def __init__(
        self,
        grant: ClaimGrant,
        *,
        worker_id: str,
        lease_secs: int,
        on_lost: Callable[[CountersignError], None] | None,
        sent_at: float,
    ) -> None:
        self.run_id: str = grant["run"]["id"]
        self.worker_id = worker_id
        self.lease_secs = lease_secs
        self.token: str = grant["claimToken"]
        self.lease_expires_at: str = grant["leaseExpiresAt"]
        self.run: Run = grant["run"]
        #: what the run was paused with (the ``checkpoint`` of its last batch)
        self.checkpoint: Any = grant["checkpoint"]
        #: the run's latest batch, settled: what the worker resumes with
        self.batch: Batch | None = grant["batch"]
        #: None unless a rollback was requested: the reported actions to revert, newest first
        self.rollback: list[RollbackAction] | None = grant["rollback"]
        self.state: ClaimState = "held"
        #: the claim_lost (or run_terminal) error, once the claim is lost
        self.lost_error: CountersignError | None = None
        self._on_lost = on_lost
        #: a pause or completion is in flight: a heartbeat refused meanwhile says nothing about loss
        self._ending = False
        self._last_beat_sent_at = sent_at

    @property
    def interval(self) -> float:
        return self.lease_secs / 3

    def _mark_lost(self, error: CountersignError) -> None:
        if self.state != "held":
            return
        self.state = "lost"
        self.lost_error = error
        if self._on_lost is not None:
            try:
                self._on_lost(error)
            except Exception:  # noqa: BLE001 — a listener's failure is its own
                pass

    def _lease_surely_over(self) -> bool:
        return time.monotonic() - self._last_beat_sent_at > self.lease_secs

    def _ran_out(self, error: BaseException) -> CountersignError:
        lost = CountersignError(
            status=0,
            code="claim_lost",
            message=(
                f"No heartbeat reached the server for the whole lease ({self.lease_secs} s): "
                f"the claim has run out. Last error: {error}"
            ),
        )
        lost.__cause__ = error
        return lost

    def _complete_body(self, outcome: str, result: Any, error: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"claimToken": self.token, "outcome": outcome}
        if result is not None:
            body["result"] = result
        if error is not None:
            body["error"] = describe_error(error)
        return body

    def _event(self, kind: str, tool_call_id: str, **fields: Any) -> dict[str, Any]:
        event = {"claimToken": self.token, "type": kind, "toolCallId": tool_call_id}
        event.update({name: value for name, value in fields.items() if value is not None})
        return event


class Claim(_ClaimBase):
    """A claim taken by the sync client; heartbeats run on a daemon thread."""

    def __init__(
        self,
        client: ClaimCalls,
        grant: ClaimGrant,
        *,
        worker_id: str,
        lease_secs: int,
        heartbeat: bool = True,
        on_lost: Callable[[CountersignError], None] | None = None,
        sent_at: float,
    ) -> None:
        super().__init__(
            grant, worker_id=worker_id, lease_secs=lease_secs, on_lost=on_lost, sent_at=sent_at
        )
        self.client = client
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if heartbeat:
            # Daemon: the beats keep a lease, not the process; a worker that is done may exit.
            self._thread = threading.Thread(
                target=self._beat_loop, name=f"countersign-heartbeat-{self.run_id}", daemon=True
            )
            self._thread.start()

    def heartbeat(self) -> str:
        """Extends the lease now (the automatic beats call this); returns the new expiry."""
        sent_at = time.monotonic()
        answer = self._held(lambda: self.client.heartbeat(self.run_id, self.token, self.lease_secs))
        self._last_beat_sent_at = sent_at
        self.lease_expires_at = answer["leaseExpiresAt"]
        return self.lease_expires_at

    def report_tool_result(
        self, tool_call_id: str, result: Any = None, *, revert: Any = None
    ) -> RunEvent:
        """Reports a tool call's result; ``revert`` is kept for a rollback."""
        event = self._event("tool.completed", tool_call_id, result=result, revert=revert)
        return self._held(lambda: self.client.report_event(self.run_id, event))

    def report_tool_failure(self, tool_call_id: str, error: object) -> RunEvent:
        event = self._event("tool.failed", tool_call_id, error=describe_error(error))
        return self._held(lambda: self.client.report_event(self.run_id, event))

    def pause(self, batch: BatchInput, *, idempotency_key: str | None = None) -> Batch:
        """Pauses the run again with a new batch; the claim ends (the run waits for a decision)."""
        body: BatchInput = {**batch, "claimToken": self.token}
        return self._ends(
            lambda: self.client.pause(self.run_id, body, idempotency_key=idempotency_key)
        )

    def complete(self, result: Any = None) -> Run:
        """Ends the run as ``completed``; the claim ends with it."""
        body = self._complete_body("completed", result, None)
        return self._ends(lambda: self.client._complete(self.run_id, body))

    def fail(self, error: object = None) -> Run:
        """Ends the run as ``failed``; the claim ends with it."""
        body = self._complete_body("failed", None, error)
        return self._ends(lambda: self.client._complete(self.run_id, body))

    def release(self) -> None:
        """Stops the heartbeats without telling the server (the API has no release): the lease
        runs out after at most ``lease_secs``, and then another worker may claim the run."""
        if self.state == "held":
            self.state = "ended"
        self._stop.set()

    def _beat_loop(self) -> None:
        while not self._stop.wait(self.interval):
            if self.state != "held":
                return
            if self._ending:
                continue
            try:
                self.heartbeat()
            except CountersignError as error:
                if _loses_claim(error):
                    return  # _held marked it lost
                # The server unreachable: tried again next beat, unless the lease is surely over.
                if self.state == "held" and not self._ending and self._lease_surely_over():
                    self._mark_lost(self._ran_out(error))
                    return
            except Exception as error:  # noqa: BLE001 — a beat must never kill its thread silently
                if self._lease_surely_over():
                    self._mark_lost(self._ran_out(error))
                    return

    def _held(self, request: Callable[[], T]) -> T:
        if self.state == "lost" and self.lost_error is not None:
            raise self.lost_error
        try:
            return request()
        except CountersignError as error:
            if not self._ending and _loses_claim(error):
                self._mark_lost(error)
                self._stop.set()
            raise

    def _ends(self, request: Callable[[], T]) -> T:
        if self.state == "lost" and self.lost_error is not None:
            raise self.lost_error
        self._ending = True
        try:
            answer = request()
            self.state = "ended"
            self._stop.set()
            return answer
        except CountersignError as error:
            if _loses_claim(error):
                self._mark_lost(error)
                self._stop.set()
            raise
        finally:
            self._ending = False


class AsyncClaim(_ClaimBase):
    """A claim taken by the async client; heartbeats run as an asyncio task."""

    def __init__(
        self,
        client: AsyncClaimCalls,
        grant: ClaimGrant,
        *,
        worker_id: str,
        lease_secs: int,
        heartbeat: bool = True,
        on_lost: Callable[[CountersignError], None] | None = None,
        sent_at: float,
    ) -> None:
        super().__init__(
            grant, worker_id=worker_id, lease_secs=lease_secs, on_lost=on_lost, sent_at=sent_at
        )
        self.client = client
        self._task: asyncio.Task[None] | None = (
            asyncio.get_running_loop().create_task(self._beat_loop()) if heartbeat else None
        )

    async def heartbeat(self) -> str:
        sent_at = time.monotonic()
        answer = await self._held(
            lambda: self.client.heartbeat(self.run_id, self.token, self.lease_secs)
        )
        self._last_beat_sent_at = sent_at
        self.lease_expires_at = answer["leaseExpiresAt"]
        return self.lease_expires_at

    async def report_tool_result(
        self, tool_call_id: str, result: Any = None, *, revert: Any = None
    ) -> RunEvent:
        event = self._event("tool.completed", tool_call_id, result=result, revert=revert)
        return await self._held(lambda: self.client.report_event(self.run_id, event))

    async def report_tool_failure(self, tool_call_id: str, error: object) -> RunEvent:
        event = self._event("tool.failed", tool_call_id, error=describe_error(error))
        return await self._held(lambda: self.client.report_event(self.run_id, event))

    async def pause(self, batch: BatchInput, *, idempotency_key: str | None = None) -> Batch:
        body: BatchInput = {**batch, "claimToken": self.token}
        return await self._ends(
            lambda: self.client.pause(self.run_id, body, idempotency_key=idempotency_key)
        )

    async def complete(self, result: Any = None) -> Run:
        body = self._complete_body("completed", result, None)
        return await self._ends(lambda: self.client._complete(self.run_id, body))

    async def fail(self, error: object = None) -> Run:
        body = self._complete_body("failed", None, error)
        return await self._ends(lambda: self.client._complete(self.run_id, body))

    def release(self) -> None:
        if self.state == "held":
            self.state = "ended"
        self._cancel_beats()

    def _cancel_beats(self) -> None:
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()

    async def _beat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if self.state != "held":
                return
            if self._ending:
                continue
            try:
                await self.heartbeat()
            except CountersignError as error:
                if _loses_claim(error):
                    return
                if self.state == "held" and not self._ending and self._lease_surely_over():
                    self._mark_lost(self._ran_out(error))
                    return
            except Exception as error:  # noqa: BLE001
                if self._lease_surely_over():
                    self._mark_lost(self._ran_out(error))
                    return

    async def _held(self, request: Callable[[], Awaitable[T]]) -> T:
        if self.state == "lost" and self.lost_error is not None:
            raise self.lost_error
        try:
            return await request()
        except CountersignError as error:
            if not self._ending and _loses_claim(error):
                self._mark_lost(error)
                self._cancel_beats()
            raise

    async def _ends(self, request: Callable[[], Awaitable[T]]) -> T:
        if self.state == "lost" and self.lost_error is not None:
            raise self.lost_error
        self._ending = True
        try:
            answer = await request()
            self.state = "ended"
            self._cancel_beats()
            return answer
        except CountersignError as error:
            if _loses_claim(error):
                self._mark_lost(error)
                self._cancel_beats()
            raise
        finally:
            self._ending = False
