"""OpenAI Agents SDK for Python (https://pypi.org/project/openai-agents/): tool approvals.

A ``function_tool(needs_approval=True)`` call stops the run with ``result.interruptions``. Then:

1. ``pause_on_interruptions(client, result)`` sends those calls to Countersign as one batch, with
   the serialized ``RunState`` as checkpoint. This process may exit now.
2. Any process with the same agent definition calls
   ``resume_from_decision(client, agent, run_id, worker_id=…)``: it waits for the decision,
   claims the run, restores the state, approves or rejects each call (a rejection's message is
   what the model reads), runs the agent on, reports each approved call's result, and completes
   the Countersign run with the final output, or pauses it again on new approvals.

A reviewer's edit runs as edited: the SDK approves a call only as the model made it, so the
adapter rewrites the call's arguments in the serialized state before restoring it; the tool then
runs with exactly the approved arguments, and the model's history shows the call that ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, RunHooks, Runner, RunResult, RunState
from agents.items import ToolApprovalItem

from .._types import Batch, BatchInput, CallInput, CreateRunInput, Run, TimeoutAction
from ..claim import AsyncClaim
from ..client import AsyncCountersign
from ..errors import CountersignError
from ..rejection import call_rejection_message
from ._common import claim_when_decided, edited_args, require_async, same_json

CHECKPOINT_FORMAT = "openai-agents/run-state"
#: the API refuses bodies over 4 MiB; the state must fit with the rest of the batch
MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024 - 256 * 1024


@dataclass(frozen=True)
class InterruptedCall:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    agent_name: str


@dataclass
class PauseOptions:
    queue: str | None = None
    timeout_secs: int | None = None
    on_timeout: TimeoutAction | None = None
    callback_url: str | None = None
    summary: Callable[[InterruptedCall], str | None] | None = None
    risks: Callable[[InterruptedCall], list[str] | None] | None = None
    #: for the Countersign run created at the first pause
    new_run: CreateRunInput = field(default_factory=dict)  # type: ignore[assignment]


@dataclass(frozen=True)
class Paused:
    run_id: str
    batch: Batch


@dataclass(frozen=True)
class AppliedDecision:
    tool_call_id: str
    tool_name: str
    #: ``approved``, ``edited`` (approved with the reviewer's arguments) or ``rejected``
    outcome: str
    args: dict[str, Any]
    #: what the model reads for a rejected call
    message: str | None = None


@dataclass(frozen=True)
class Resumed:
    #: ``completed`` or ``paused`` (new approvals)
    status: str
    run_id: str
    result: RunResult
    decisions: list[AppliedDecision]
    run: Run | None = None
    batch: Batch | None = None


def interrupted_call(item: ToolApprovalItem) -> InterruptedCall:
    raw = item.raw_item
    call_id = getattr(raw, "call_id", None) or (
        raw.get("call_id") if isinstance(raw, dict) else None
    )
    arguments = item.arguments or "{}"
    try:
        args = json.loads(arguments)
    except ValueError:
        args = {"arguments": arguments}
    return InterruptedCall(
        tool_call_id=str(call_id),
        tool_name=item.tool_name or item.name or "tool",
        args=args if isinstance(args, dict) else {"arguments": args},
        agent_name=item.agent.name,
    )


async def pause_on_interruptions(
    client: AsyncCountersign,
    result: RunResult,
    options: PauseOptions | None = None,
    *,
    claim: AsyncClaim | None = None,
) -> Paused | None:
    """Sends a run's pending tool approvals to Countersign as one batch; None when there are none.
    With ``claim`` (a resumed run stopping again) the batch goes to that run."""
    require_async(client, claim)
    if not result.interruptions:
        return None
    options = options or PauseOptions()
    calls = [interrupted_call(item) for item in result.interruptions]
    state = result.to_state().to_json()
    size = len(json.dumps(state).encode())
    if size > MAX_CHECKPOINT_BYTES:
        raise ValueError(
            f"The run state is {size} bytes, over the {MAX_CHECKPOINT_BYTES} a checkpoint may take; "
            "trim the conversation (a session) before pausing."
        )
    batch: BatchInput = {
        "calls": [_call_input(call, options) for call in calls],
        "checkpoint": {
            "format": CHECKPOINT_FORMAT,
            "state": state,
            "toolCallIds": [call.tool_call_id for call in calls],
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
    run = await client.create_run({**options.new_run, "batch": batch})
    return Paused(run["id"], run["batches"][0])


async def resume_from_decision(
    client: AsyncCountersign,
    agent: Agent[Any],
    run_id: str,
    *,
    worker_id: str,
    lease_secs: int = 60,
    wait: bool = True,
    wait_timeout: float | None = None,
    pause: PauseOptions | None = None,
    run_options: dict[str, Any] | None = None,
) -> Resumed:
    """Claims the run once its batch is decided, applies the decisions to the restored state and
    runs the agent on (``run_options`` go to ``Runner.run``: ``max_turns``, ``run_config``…).

    If restoring or running fails before any tool started, the error is raised and the claim is
    left to lapse, so the run can be resumed again; once a tool started, the Countersign run is
    failed instead, since resuming from the checkpoint would run its tools again.
    """
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
        state, decisions = await _restore(agent, claim)
    except Exception:
        claim.release()
        raise

    hooks = _Reporter(claim, {d.tool_call_id for d in decisions if d.outcome != "rejected"})
    try:
        result = await Runner.run(agent, state, hooks=hooks, **(run_options or {}))
    except Exception as error:
        if hooks.tools_started == 0:
            claim.release()
        else:
            try:
                await claim.fail(error)
            except CountersignError:
                pass
        raise

    if result.interruptions:
        paused = await pause_on_interruptions(client, result, pause, claim=claim)
        assert paused is not None
        return Resumed("paused", claim.run_id, result, decisions, batch=paused.batch)
    run = await claim.complete({"finalOutput": _as_json(result.final_output)})
    return Resumed("completed", claim.run_id, result, decisions, run=run)


async def _restore(
    agent: Agent[Any], claim: AsyncClaim
) -> tuple[RunState[Any, Any], list[AppliedDecision]]:
    checkpoint = claim.checkpoint
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"Run {claim.run_id} was not paused by the openai-agents adapter.")
    batch = claim.batch
    calls = {call["toolCallId"]: call for call in (batch["calls"] if batch is not None else [])}
    if not all(tool_call_id in calls for tool_call_id in checkpoint["toolCallIds"]):
        raise ValueError(
            f"Run {claim.run_id}'s latest batch is not the one its checkpoint was paused with."
        )

    edits = {
        tool_call_id: edit for tool_call_id, call in calls.items() if (edit := edited_args(call))
    }
    state = await RunState.from_json(agent, _with_edited_arguments(checkpoint["state"], edits))

    decisions: list[AppliedDecision] = []
    for item in state.get_interruptions():
        interrupted = interrupted_call(item)
        asked = calls.get(interrupted.tool_call_id)
        edited = edits.get(interrupted.tool_call_id)
        if asked is not None and asked["status"] == "approved":
            # Run the reviewer's arguments or nothing: an edit the restored state does not show
            # (a tool that is not a function, a future SDK's format) is refused, never run as asked.
            if edited is None or same_json(interrupted.args, edited):
                state.approve(item)
                outcome = "approved" if edited is None else "edited"
                decisions.append(
                    AppliedDecision(
                        interrupted.tool_call_id, interrupted.tool_name, outcome, interrupted.args
                    )
                )
                continue
            message = (
                f"The reviewer approved this call only with other arguments ({json.dumps(edited)}), "
                "which could not be applied. The tool was not run."
            )
        else:
            message = call_rejection_message(asked, batch)
        state.reject(item, rejection_message=message)
        decisions.append(
            AppliedDecision(
                interrupted.tool_call_id,
                interrupted.tool_name,
                "rejected",
                edited or interrupted.args,
                message,
            )
        )
    return state, decisions


def _with_edited_arguments(
    state: dict[str, Any], edits: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The serialized state with every copy of each edited call (model response, generated items,
    the pending interruption) carrying the reviewer's arguments."""
    if not edits:
        return state
    edited: dict[str, Any] = _replace_arguments(state, edits)
    # The context's invocation ledger fingerprints each call's arguments, so that a tampered state
    # cannot run a call other than the one the model made. An edit is exactly such a change, made
    # on purpose: its entry goes, and the SDK records the call anew as it runs.
    invocations = (edited.get("context") or {}).get("tool_invocations")
    if isinstance(invocations, dict):
        for call_id in edits:
            invocations.pop(call_id, None)
    return edited


def _replace_arguments(value: Any, edits: dict[str, dict[str, Any]]) -> Any:
    if isinstance(value, list):
        return [_replace_arguments(item, edits) for item in value]
    if not isinstance(value, dict):
        return value
    copy = {key: _replace_arguments(item, edits) for key, item in value.items()}
    args = edits.get(str(copy.get("call_id"))) if copy.get("type") == "function_call" else None
    if args is not None and isinstance(copy.get("arguments"), str):
        copy["arguments"] = json.dumps(args, separators=(",", ":"))
    return copy


class _Reporter(RunHooks[Any]):
    """Reports each approved call's result as soon as its tool ends, not after the whole run."""

    def __init__(self, claim: AsyncClaim, to_report: set[str]) -> None:
        self.claim = claim
        self.to_report = to_report
        self.tools_started = 0

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        self.tools_started += 1

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
        call_id = getattr(context, "tool_call_id", None)
        if call_id not in self.to_report:
            return
        self.to_report.discard(call_id)
        try:
            await self.claim.report_tool_result(call_id, _as_json(result))
        except CountersignError:
            pass  # the run goes on; a lost claim shows at completion


def _call_input(call: InterruptedCall, options: PauseOptions) -> CallInput:
    payload: CallInput = {
        "toolCallId": call.tool_call_id,
        "toolName": call.tool_name,
        "args": call.args,
        "metadata": {"framework": "openai-agents", "agent": call.agent_name},
    }
    summary = options.summary(call) if options.summary else None
    if summary:
        payload["summary"] = summary
    risks = options.risks(call) if options.risks else None
    if risks:
        payload["risks"] = risks
    return payload


def _as_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return json.loads(json.dumps(value, default=str))
