"""LangGraph (https://pypi.org/project/langgraph/): ``interrupt()`` approvals.

Inside a node, ``request_approval(tool_name, args)`` calls LangGraph's ``interrupt()`` with the
call for the review card and returns the reviewer's answer once the graph is resumed:

    def refund_node(state):
        approval = request_approval("refund", {"order_id": state["order"], "amount": 40})
        if not approval["approved"]:
            return {"messages": [approval["message"]]}   # what the model should read
        return {"messages": [refund(**approval["args"])]}  # the reviewer's edit, if any

Outside, with a checkpointer (a persistent one, e.g. SQLite, to resume from another process):

1. ``pause_on_interrupts(client, result, config)`` sends the graph's pending approval interrupts
   to Countersign as one batch, with the thread as checkpoint. This process may exit now.
2. ``resume_from_decision(client, graph, run_id, worker_id=…)`` waits for the decision, claims
   the run and resumes the thread with ``Command(resume={interrupt_id: approval})``; then it
   completes the Countersign run, or pauses it again on the graph's next approvals.

``invoke_with_approval`` runs that whole loop in one process. Interrupts not made by
``request_approval`` are left to the caller: the adapter never answers them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from langgraph.types import Command, Interrupt, interrupt

from .._types import Batch, BatchInput, CallInput, CreateRunInput, Ref, Run, TimeoutAction
from ..claim import AsyncClaim
from ..client import AsyncCountersign
from ..errors import CountersignError
from ..rejection import call_rejection_message
from ._common import claim_when_decided, edited_args, require_async

CHECKPOINT_FORMAT = "langgraph/thread"
#: the key of an interrupt value made by request_approval
MARK = "countersign"


class Approval(TypedDict):
    """What ``request_approval`` returns once the graph is resumed with the decision."""

    approved: bool
    #: the arguments to run: the reviewer's edit when there is one, else the ones asked for
    args: dict[str, Any]
    edited: bool
    #: for a refused call: one sentence for the model ("The reviewer rejected this call: …")
    message: str | None
    reason: str | None
    #: ``reviewer``, ``policy``, ``memory``, ``timeout`` or ``cancelled``
    source: str | None
    decided_by: Ref | None


def request_approval(
    tool_name: str,
    args: dict[str, Any],
    *,
    summary: str | None = None,
    risks: list[str] | None = None,
    cost_estimate: float | None = None,
    input_schema: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    tool_call_id: str | None = None,
) -> Approval:
    """Pauses the graph (LangGraph ``interrupt()``) until a person decided on this call.

    Call it inside a node, before the side effect: LangGraph runs the node again from its start
    when resuming, and this call then returns the decision instead of pausing. ``input_schema``
    validates a reviewer's edit; ``tool_call_id`` defaults to the interrupt's id.
    """
    call: dict[str, Any] = {"toolName": tool_name, "args": args}
    optional = {
        "summary": summary,
        "risks": risks,
        "costEstimate": cost_estimate,
        "inputSchema": input_schema,
        "metadata": metadata,
        "toolCallId": tool_call_id,
    }
    call.update({name: value for name, value in optional.items() if value is not None})
    answer: Approval = interrupt({MARK: call})
    return answer


@dataclass
class PauseOptions:
    queue: str | None = None
    timeout_secs: int | None = None
    on_timeout: TimeoutAction | None = None
    callback_url: str | None = None
    #: for the Countersign run created at the first pause
    new_run: CreateRunInput | None = None


@dataclass(frozen=True)
class Paused:
    run_id: str
    batch: Batch


@dataclass(frozen=True)
class Resumed:
    #: ``completed`` or ``paused`` (the graph asked again)
    status: str
    run_id: str
    #: what the graph's invoke returned
    state: Any
    #: the approvals the graph was resumed with, by tool call id
    approvals: dict[str, Approval]
    run: Run | None = None
    batch: Batch | None = None


def approval_interrupts(result: Any) -> list[Interrupt]:
    """The interrupts of an invoke's result (or a list of them) that ``request_approval`` made."""
    interrupts = result.get("__interrupt__", []) if isinstance(result, Mapping) else result
    return [
        item for item in interrupts or [] if isinstance(item.value, dict) and MARK in item.value
    ]


async def pause_on_interrupts(
    client: AsyncCountersign,
    result: Any,
    config: Mapping[str, Any],
    options: PauseOptions | None = None,
    *,
    claim: AsyncClaim | None = None,
) -> Paused | None:
    """Sends the approval interrupts of ``result`` (what ``invoke`` returned) to Countersign as
    one batch; None when there are none. ``config`` is the invoke's: its ``thread_id`` is saved
    as checkpoint. With ``claim`` (a resumed run pausing again) the batch goes to that run."""
    require_async(client, claim)
    interrupts = approval_interrupts(result)
    if not interrupts:
        return None
    options = options or PauseOptions()
    configurable = {
        name: value
        for name, value in (config.get("configurable") or {}).items()
        if isinstance(value, (str, int, float, bool))
    }
    if "thread_id" not in configurable:
        raise ValueError(
            "LangGraph config has no configurable.thread_id: the graph cannot be resumed."
        )
    calls = [_call_input(item) for item in interrupts]
    batch: BatchInput = {
        "calls": calls,
        "checkpoint": {
            "format": CHECKPOINT_FORMAT,
            "configurable": configurable,
            "interrupts": {
                call["toolCallId"]: item.id for call, item in zip(calls, interrupts, strict=True)
            },
        },
    }
    if options.queue is not None:
        batch["queue"] = options.queue
    if options.timeout_secs is not None:
        batch["timeoutSecs"] = options.timeout_secs
    if options.on_timeout is not None:
        batch["onTimeout"] = options.on_timeout
    if options.callback_url is not None:
        batch["callbackUrl"] = options.callback_url
    if claim is not None:
        return Paused(claim.run_id, await claim.pause(batch))
    new_run: CreateRunInput = {
        "externalId": str(configurable["thread_id"]),
        **(options.new_run or {}),
        "batch": batch,
    }
    run = await client.create_run(new_run)
    return Paused(run["id"], run["batches"][0])


async def resume_from_decision(
    client: AsyncCountersign,
    graph: Any,
    run_id: str,
    *,
    worker_id: str,
    lease_secs: int = 60,
    wait: bool = True,
    wait_timeout: float | None = None,
    config: Mapping[str, Any] | None = None,
    pause: PauseOptions | None = None,
    output: Callable[[Any], Any] | None = None,
) -> Resumed:
    """Claims the run once its batch is decided and resumes the graph's thread with the
    decisions (``graph`` is a compiled graph over the same checkpointer; ``config`` adds to the
    saved ``configurable``). ``output`` picks what the completed run stores from the final state
    (default: the state as JSON). If the graph raises, the Countersign run is failed."""
    require_async(client)
    claim = await claim_when_decided(
        client,
        run_id,
        worker_id=worker_id,
        lease_secs=lease_secs,
        wait=wait,
        wait_timeout=wait_timeout,
    )
    try:
        thread_config, resume, approvals = _resume_values(claim, config)
    except Exception:
        claim.release()
        raise
    try:
        state = await graph.ainvoke(Command(resume=resume), thread_config)
    except Exception as error:
        try:
            await claim.fail(error)
        except CountersignError:
            pass
        raise
    if approval_interrupts(state):
        paused = await pause_on_interrupts(client, state, thread_config, pause, claim=claim)
        assert paused is not None
        return Resumed("paused", claim.run_id, state, approvals, batch=paused.batch)
    run = await claim.complete(output(state) if output else _as_json(state))
    return Resumed("completed", claim.run_id, state, approvals, run=run)


async def invoke_with_approval(
    client: AsyncCountersign,
    graph: Any,
    graph_input: Any,
    config: Mapping[str, Any],
    *,
    worker_id: str,
    pause: PauseOptions | None = None,
    wait_timeout: float | None = None,
    output: Callable[[Any], Any] | None = None,
) -> Resumed | Any:
    """Invokes the graph and, while it stops on approvals, asks Countersign, waits and resumes;
    returns the final ``Resumed``, or the graph's plain result when nothing needed approval."""
    require_async(client)
    state = await graph.ainvoke(graph_input, config)
    paused = await pause_on_interrupts(client, state, config, pause)
    if paused is None:
        return state
    while True:
        resumed = await resume_from_decision(
            client,
            graph,
            paused.run_id,
            worker_id=worker_id,
            wait_timeout=wait_timeout,
            config=config,
            pause=pause,
            output=output,
        )
        if resumed.status != "paused":
            return resumed


def _call_input(item: Interrupt) -> CallInput:
    asked: dict[str, Any] = item.value[MARK]
    call: CallInput = {
        "toolCallId": str(asked.get("toolCallId") or item.id),
        "toolName": asked["toolName"],
        "args": asked["args"],
        "metadata": {"framework": "langgraph", **(asked.get("metadata") or {})},
    }
    for name in ("summary", "risks", "costEstimate", "inputSchema"):
        if name in asked:
            call[name] = asked[name]
    return call


def _resume_values(
    claim: AsyncClaim, config: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Approval], dict[str, Approval]]:
    checkpoint = claim.checkpoint
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"Run {claim.run_id} was not paused by the LangGraph adapter.")
    batch = claim.batch
    calls = {call["toolCallId"]: call for call in (batch["calls"] if batch is not None else [])}
    interrupts: dict[str, str] = checkpoint["interrupts"]
    if not all(tool_call_id in calls for tool_call_id in interrupts):
        raise ValueError(
            f"Run {claim.run_id}'s latest batch is not the one its checkpoint was paused with."
        )

    approvals: dict[str, Approval] = {}
    for tool_call_id in interrupts:
        call = calls[tool_call_id]
        decision = call["decision"]
        edited = edited_args(call)
        approved = call["status"] == "approved"
        approvals[tool_call_id] = {
            "approved": approved,
            "args": edited if edited is not None else call["args"],
            "edited": edited is not None,
            "message": None if approved else call_rejection_message(call, batch),
            "reason": decision["reason"]
            if decision is not None
            else (batch or {}).get("cancelReason"),  # type: ignore[call-overload]
            "source": decision["source"] if decision is not None else "cancelled",
            "decided_by": decision["by"] if decision is not None else None,
        }
    given = dict(config or {})
    configurable = {**(given.get("configurable") or {}), **checkpoint["configurable"]}
    thread_config = {**given, "configurable": configurable}
    resume = {interrupts[tool_call_id]: approval for tool_call_id, approval in approvals.items()}
    return thread_config, resume, approvals


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
