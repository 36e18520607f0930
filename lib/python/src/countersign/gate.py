"""``@gate(client, …)`` wraps a tool function so that, when a call needs approval, it runs only
after a person approved it (with their edited arguments, if they edited), and a rejection comes
back as a ``GateRejection`` value the model can read instead of an exception.

A sync function needs a ``Countersign`` client, an ``async def`` an ``AsyncCountersign``.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, TypeAlias, TypeVar, overload

from typing_extensions import ParamSpec

from ._types import Batch, BatchInput, CallInput, CreateRunInput, Ref, TimeoutAction
from .client import AsyncCountersign, Countersign
from .errors import CountersignError
from .rejection import approved_args, rejection_message
from .session import AsyncRunSession, RunSession

P = ParamSpec("P")
R = TypeVar("R")
logger = logging.getLogger("countersign")

RejectionSource = Literal["reviewer", "policy", "memory", "timeout", "cancelled"]


@dataclass(frozen=True)
class GateRejection:
    """What a gated tool returns instead of running, when its call was not approved."""

    #: the reviewer's or the policy's reason, the deadline's explanation, or None
    reason: str | None
    #: the reviewer who rejected, or None (a policy, the deadline, a withdrawal)
    decided_by: Ref | None
    #: ``reviewer``, ``policy`` (blocked by a rule), ``timeout`` (no decision by the deadline),
    #: ``memory``, or ``cancelled`` (the request was withdrawn)
    source: RejectionSource
    #: a deny rule blocked the call before any reviewer saw it
    blocked: bool
    tool_name: str
    tool_call_id: str
    run_id: str
    batch_id: str
    #: one sentence for the model, e.g. "The reviewer rejected this call: wrong customer. The tool was not run."
    message: str
    rejected: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _GateOptions:
    tool_name: str | None
    run: Any
    needs_approval: bool | Callable[[dict[str, Any]], bool]
    summary: Callable[[dict[str, Any]], str] | None
    risks: list[str] | Callable[[dict[str, Any]], list[str]] | None
    cost_estimate: Callable[[dict[str, Any]], float | None] | None
    input_schema: dict[str, Any] | None
    metadata: dict[str, Any] | None
    queue: str | None
    timeout_secs: int | None
    on_timeout: TimeoutAction | None
    wait_timeout: float | None
    revert: Callable[[dict[str, Any], Any], Any] | None
    new_run: CreateRunInput | None

    def batch(self, tool_name: str, tool_call_id: str, args: dict[str, Any]) -> BatchInput:
        call: CallInput = {"toolCallId": tool_call_id, "toolName": tool_name, "args": args}
        if self.summary is not None:
            call["summary"] = self.summary(args)
        risks = self.risks(args) if callable(self.risks) else self.risks
        if risks is not None:
            call["risks"] = risks
        cost = self.cost_estimate(args) if self.cost_estimate is not None else None
        if cost is not None:
            call["costEstimate"] = cost
        if self.input_schema is not None:
            call["inputSchema"] = self.input_schema
        if self.metadata is not None:
            call["metadata"] = self.metadata
        batch: BatchInput = {"calls": [call]}
        if self.queue is not None:
            batch["queue"] = self.queue
        if self.timeout_secs is not None:
            batch["timeoutSecs"] = self.timeout_secs
        if self.on_timeout is not None:
            batch["onTimeout"] = self.on_timeout
        return batch

    def needed(self, args: dict[str, Any]) -> bool:
        return self.needs_approval(args) if callable(self.needs_approval) else self.needs_approval


#: the run gated calls belong to: a session, a function giving one per call, or None (a run per call)
SyncRun: TypeAlias = RunSession | Callable[[], RunSession | None] | None
AsyncRun: TypeAlias = AsyncRunSession | Callable[[], AsyncRunSession | None] | None


@overload
def gate(
    client: AsyncCountersign,
    *,
    tool_name: str | None = ...,
    run: AsyncRun = ...,
    needs_approval: bool | Callable[[dict[str, Any]], bool] = ...,
    summary: Callable[[dict[str, Any]], str] | None = ...,
    risks: list[str] | Callable[[dict[str, Any]], list[str]] | None = ...,
    cost_estimate: Callable[[dict[str, Any]], float | None] | None = ...,
    input_schema: dict[str, Any] | None = ...,
    metadata: dict[str, Any] | None = ...,
    queue: str | None = ...,
    timeout_secs: int | None = ...,
    on_timeout: TimeoutAction | None = ...,
    wait_timeout: float | None = ...,
    revert: Callable[[dict[str, Any], Any], Any] | None = ...,
    new_run: CreateRunInput | None = ...,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R | GateRejection]]]: ...


@overload
def gate(
    client: Countersign,
    *,
    tool_name: str | None = ...,
    run: SyncRun = ...,
    needs_approval: bool | Callable[[dict[str, Any]], bool] = ...,
    summary: Callable[[dict[str, Any]], str] | None = ...,
    risks: list[str] | Callable[[dict[str, Any]], list[str]] | None = ...,
    cost_estimate: Callable[[dict[str, Any]], float | None] | None = ...,
    input_schema: dict[str, Any] | None = ...,
    metadata: dict[str, Any] | None = ...,
    queue: str | None = ...,
    timeout_secs: int | None = ...,
    on_timeout: TimeoutAction | None = ...,
    wait_timeout: float | None = ...,
    revert: Callable[[dict[str, Any], Any], Any] | None = ...,
    new_run: CreateRunInput | None = ...,
) -> Callable[[Callable[P, R]], Callable[P, R | GateRejection]]: ...


def gate(
    client: Countersign | AsyncCountersign,
    *,
    tool_name: str | None = None,
    run: Any = None,
    needs_approval: bool | Callable[[dict[str, Any]], bool] = True,
    summary: Callable[[dict[str, Any]], str] | None = None,
    risks: list[str] | Callable[[dict[str, Any]], list[str]] | None = None,
    cost_estimate: Callable[[dict[str, Any]], float | None] | None = None,
    input_schema: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    queue: str | None = None,
    timeout_secs: int | None = None,
    on_timeout: TimeoutAction | None = None,
    wait_timeout: float | None = None,
    revert: Callable[[dict[str, Any], Any], Any] | None = None,
    new_run: CreateRunInput | None = None,
) -> Any:
    """Decorates a tool so that each call waits for a person's approval before it runs.

    - ``run``: the run the calls belong to (a ``RunSession``, or a function giving one per call).
      None: every gated call gets a run of its own, completed (or failed) once the call is done.
    - ``needs_approval``: False, or a function of the call's arguments, lets calls through unasked.
    - ``summary``, ``risks``, ``cost_estimate``, ``input_schema`` (reviewers' edits are validated
      against it), ``metadata``, ``queue``: what the review card shows and where it goes.
    - ``timeout_secs`` / ``on_timeout``: the server-side deadline and what it does (default reject).
    - ``wait_timeout``: how long this process waits; then the request is withdrawn and the call
      answers a ``GateRejection`` with source ``cancelled``.
    - ``revert``: data to undo the call later, reported with its result.

    The call's arguments (bound to the function's parameters, defaults applied) are what the
    reviewer sees; a reviewer's edit replaces them when the tool runs.
    """
    options = _GateOptions(
        tool_name,
        run,
        needs_approval,
        summary,
        risks,
        cost_estimate,
        input_schema,
        metadata,
        queue,
        timeout_secs,
        on_timeout,
        wait_timeout,
        revert,
        new_run,
    )

    def decorate(tool: Callable[..., Any]) -> Callable[..., Any]:
        name = tool_name or tool.__name__
        signature = inspect.signature(tool)
        if inspect.iscoroutinefunction(tool):
            if not isinstance(client, AsyncCountersign):
                raise TypeError(f"gate: async tool {name} needs an AsyncCountersign client.")
            return _async_gate(client, tool, name, signature, options)
        if not isinstance(client, Countersign):
            raise TypeError(
                f"gate: sync tool {name} needs a Countersign client (not AsyncCountersign)."
            )
        return _sync_gate(client, tool, name, signature, options)

    return decorate


def _sync_gate(
    client: Countersign,
    tool: Callable[..., Any],
    name: str,
    signature: inspect.Signature,
    options: _GateOptions,
) -> Callable[..., Any]:
    @functools.wraps(tool)
    def gated(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        if not options.needed(arguments):
            return tool(*args, **kwargs)
        given = options.run() if callable(options.run) else options.run
        session: RunSession = given or RunSession(client, client.create_run(options.new_run)["id"])
        owned = given is None
        with session.lock:
            tool_call_id = _tool_call_id(name)
            try:
                settled = session.ask(
                    options.batch(name, tool_call_id, arguments), timeout=options.wait_timeout
                )
            except CountersignError as error:
                if error.code != "wait_timeout":
                    if owned:
                        _quietly(session.fail, error)
                    raise
                if owned:
                    _report(name, session.complete, {"rejected": True, "source": "cancelled"})
                return _waited_out(name, tool_call_id, session.run_id, error.current)

            call = _call_of(settled, tool_call_id)
            if call["status"] != "approved":
                rejection = _rejection(call, settled, session.run_id)
                if owned:
                    _report(name, session.complete, {"rejected": True, "source": rejection.source})
                return rejection

            bound.arguments.update(approved_args(call))
            try:
                result = tool(*bound.args, **bound.kwargs)
            except Exception as error:
                _report(name, session.report_tool_failure, tool_call_id, error)
                if owned:
                    _report(name, session.fail, error)
                raise
            revert = options.revert(dict(bound.arguments), result) if options.revert else None
            _report(name, session.report_tool_result, tool_call_id, _as_json(result), revert=revert)
            if owned:
                _report(name, session.complete)
            return result

    return gated


def _async_gate(
    client: AsyncCountersign,
    tool: Callable[..., Awaitable[Any]],
    name: str,
    signature: inspect.Signature,
    options: _GateOptions,
) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(tool)
    async def gated(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        if not options.needed(arguments):
            return await tool(*args, **kwargs)
        given = options.run() if callable(options.run) else options.run
        session: AsyncRunSession = given or AsyncRunSession(
            client, (await client.create_run(options.new_run))["id"]
        )
        owned = given is None
        async with session.lock:
            tool_call_id = _tool_call_id(name)
            try:
                settled = await session.ask_unlocked(
                    options.batch(name, tool_call_id, arguments), timeout=options.wait_timeout
                )
            except CountersignError as error:
                if error.code != "wait_timeout":
                    if owned:
                        await _aquietly(session.fail(error))
                    raise
                if owned:
                    await _areport(
                        name, session.complete({"rejected": True, "source": "cancelled"})
                    )
                return _waited_out(name, tool_call_id, session.run_id, error.current)

            call = _call_of(settled, tool_call_id)
            if call["status"] != "approved":
                rejection = _rejection(call, settled, session.run_id)
                if owned:
                    await _areport(
                        name, session.complete({"rejected": True, "source": rejection.source})
                    )
                return rejection

            bound.arguments.update(approved_args(call))
            try:
                result = await tool(*bound.args, **bound.kwargs)
            except Exception as error:
                await _areport(name, session.report_tool_failure(tool_call_id, error))
                if owned:
                    await _areport(name, session.fail(error))
                raise
            revert = options.revert(dict(bound.arguments), result) if options.revert else None
            await _areport(
                name, session.report_tool_result(tool_call_id, _as_json(result), revert=revert)
            )
            if owned:
                await _areport(name, session.complete())
            return result

    return gated


def _tool_call_id(tool_name: str) -> str:
    return f"{tool_name[:100]}-{uuid.uuid4().hex[:12]}"


def _call_of(batch: Batch, tool_call_id: str) -> Any:
    for call in batch["calls"]:
        if call["toolCallId"] == tool_call_id:
            return call
    raise CountersignError(
        status=0, code="invalid_response", message=f"Call {tool_call_id} is missing from its batch."
    )


def _rejection(call: Any, batch: Batch, run_id: str) -> GateRejection:
    decision = call.get("decision")
    blocked = bool(((decision or {}).get("policy") or {}).get("blocked"))
    source: RejectionSource = (
        "cancelled" if call["status"] == "cancelled" or decision is None else decision["source"]
    )
    if call["status"] == "expired":
        source = "timeout"
    reason = batch.get("cancelReason") if source == "cancelled" else (decision or {}).get("reason")
    return GateRejection(
        reason=reason,
        decided_by=(decision or {}).get("by"),
        source=source,
        blocked=blocked,
        tool_name=call["toolName"],
        tool_call_id=call["toolCallId"],
        run_id=run_id,
        batch_id=batch["id"],
        message=rejection_message(source, blocked=blocked, reason=reason),
    )


def _waited_out(tool_name: str, tool_call_id: str, run_id: str, current: Any) -> GateRejection:
    return GateRejection(
        reason="No decision came in time; the request was withdrawn.",
        decided_by=None,
        source="cancelled",
        blocked=False,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        run_id=run_id,
        batch_id=current.get("id", "") if isinstance(current, dict) else "",
        message="No reviewer decided in time, so the approval request was withdrawn. The tool was not run.",
    )


def _as_json(value: Any) -> Any:
    """The result as JSON the server can store (what json cannot encode becomes its str)."""
    return json.loads(json.dumps(value, default=str))


def _report(tool_name: str, request: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    # The tool already ran (or was refused): failing to tell the server must not change its answer.
    try:
        request(*args, **kwargs)
    except Exception:
        logger.warning("Countersign: could not report on %s", tool_name, exc_info=True)


async def _areport(tool_name: str, request: Awaitable[Any]) -> None:
    try:
        await request
    except Exception:
        logger.warning("Countersign: could not report on %s", tool_name, exc_info=True)


def _quietly(request: Callable[..., Any], *args: Any) -> None:
    try:
        request(*args)
    except Exception:  # noqa: BLE001 — the original error is the one to raise
        pass


async def _aquietly(request: Awaitable[Any]) -> None:
    try:
        await request
    except Exception:  # noqa: BLE001
        pass
