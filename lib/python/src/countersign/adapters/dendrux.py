"""dendrux (https://pypi.org/project/dendrux/): a ``require_approval`` pause becomes a
Countersign card, and the reviewers' decisions drive ``Agent.submit_approval``, from any process.

A dendrux agent with ``require_approval=[…]`` and persistence (``database_url``) returns a
``RunResult`` with status ``waiting_approval`` and keeps the paused run in its own store. Then:

1. ``pause_on_approval(client, result)`` sends the gated calls to Countersign as one batch (the
   card), with the dendrux run id as checkpoint. This process may exit now.
2. Any process with the same agent definition and database calls
   ``resume_from_decision(client, agent, run_id, worker_id=…)``: it waits for the decision (or
   is started by the batch's webhook), claims the Countersign run, hands the decisions to
   ``agent.submit_approval(…, decisions=…)``, reports each approved call's result, and completes
   the Countersign run with the agent's answer, or pauses it again on the next approval.

dendrux approves a call only as the model made it, so a reviewer's edit cannot be run as such:
an edited call is denied, and the model is told the arguments the reviewer approved, to call the
tool again with them (that new call asks again, and the reviewer sees exactly what will run).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dendrux import Agent, ApprovalDecision
from dendrux.loops.base import BaseNotifier
from dendrux.types import RunResult, RunStatus, ToolCall, ToolResult

from .._types import Batch, BatchInput, CallInput, CreateRunInput, Run, TimeoutAction
from ..claim import AsyncClaim
from ..client import AsyncCountersign
from ..errors import CountersignError
from ..rejection import call_rejection_message
from ._common import claim_when_decided, edited_args, require_async

CHECKPOINT_FORMAT = "dendrux/run"


@dataclass
class PauseOptions:
    """What the card shows and where it goes (all optional)."""

    #: a queue id or name the agent key may target; its default queue otherwise
    queue: str | None = None
    #: the server-side deadline of the decision, and what it does (default reject: fail closed)
    timeout_secs: int | None = None
    on_timeout: TimeoutAction | None = None
    #: a signed webhook is POSTed here when the batch is settled: a way to start the resuming process
    callback_url: str | None = None
    #: the card's summary / risks for one call (its tool name and arguments)
    summary: Callable[[ToolCall], str | None] | None = None
    risks: Callable[[ToolCall], list[str] | None] | None = None
    #: JSON Schemas of tools' arguments by tool name, to validate reviewers' edits
    input_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: for the Countersign run created at the first pause (externalId defaults to the dendrux run id)
    new_run: CreateRunInput | None = None


@dataclass(frozen=True)
class Paused:
    run_id: str
    batch: Batch


@dataclass(frozen=True)
class AppliedDecision:
    tool_call_id: str
    tool_name: str
    #: ``approved``, or ``denied`` (rejected, expired, withdrawn, or edited: see the module doc)
    outcome: str
    #: what the model reads for a denied call
    message: str | None = None


@dataclass(frozen=True)
class Resumed:
    #: ``completed``, ``failed`` (the agent ended in error) or ``paused`` (a new approval pause)
    status: str
    run_id: str
    result: RunResult
    decisions: list[AppliedDecision]
    run: Run | None = None
    batch: Batch | None = None


def gated_calls(result: RunResult) -> list[ToolCall]:
    """The calls a ``waiting_approval`` result waits on (its approval gates)."""
    state = result.meta.get("pause_state")
    if state is None:
        raise ValueError(f"dendrux run {result.run_id} has no pause state; was it persisted?")
    pending: list[ToolCall] = list(state.pending_tool_calls)
    gates = state.approval_gates
    return pending if gates is None else [call for call in pending if call.id in gates]


async def pause_on_approval(
    client: AsyncCountersign,
    result: RunResult,
    options: PauseOptions | None = None,
    *,
    claim: AsyncClaim | None = None,
) -> Paused | None:
    """Sends a ``waiting_approval`` result's gated calls to Countersign as one batch; None when the
    run is not waiting for approval. With ``claim`` (a resumed run pausing again) the batch goes to
    that run; otherwise a new Countersign run is created with it.

    Safe to repeat after a crash: the Idempotency-Key is derived from the dendrux pause, so the
    same pause answers the same run and batch.
    """
    require_async(client, claim)
    if result.status != RunStatus.WAITING_APPROVAL:
        return None
    options = options or PauseOptions()
    calls = gated_calls(result)
    iteration = result.meta["pause_state"].iteration
    batch: BatchInput = {
        "calls": [_call_input(call, result, options) for call in calls],
        "checkpoint": {
            "format": CHECKPOINT_FORMAT,
            "dendruxRunId": result.run_id,
            "toolCallIds": [call.id for call in calls],
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
    key = f"dendrux-{result.run_id}-{iteration}-{calls[0].id if calls else ''}"
    if claim is not None:
        return Paused(claim.run_id, await claim.pause(batch, idempotency_key=key))
    new_run: CreateRunInput = {
        "externalId": result.run_id,
        **(options.new_run or {}),
        "batch": batch,
    }
    run = await client.create_run(new_run, idempotency_key=key)
    return Paused(run["id"], run["batches"][0])


async def resume_from_decision(
    client: AsyncCountersign,
    agent: Agent,
    run_id: str,
    *,
    worker_id: str,
    lease_secs: int = 60,
    wait: bool = True,
    wait_timeout: float | None = None,
    pause: PauseOptions | None = None,
) -> Resumed:
    """Claims the Countersign run once its batch is decided (waiting for the decision unless
    ``wait`` is False), submits the decisions to the dendrux run and drives it to its next stop.

    Raises the claim's ``already_claimed`` / ``not_ready`` / ``run_terminal`` as
    CountersignErrors. If dendrux refuses the decisions before resuming (a checkpoint this agent
    cannot resume), the error is raised and the claim is left to lapse, so the run can be resumed
    again; if the resumed agent raises, the Countersign run is failed.
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
        dendrux_run_id, decisions = _decisions(claim)
    except Exception:
        claim.release()
        raise

    approved = {d.tool_call_id for d in decisions if d.outcome == "approved"}
    reporter = _ResultReporter(claim, approved)
    try:
        result = await agent.submit_approval(
            dendrux_run_id,
            decisions={
                d.tool_call_id: ApprovalDecision.approve()
                if d.outcome == "approved"
                else ApprovalDecision.deny(d.message)
                for d in decisions
            },
            notifier=reporter,
        )
    except (ValueError, LookupError) as error:
        # Refused before anything ran (unknown run, wrong pause): the checkpoint is still good.
        claim.release()
        raise error
    except Exception as error:
        await _quietly(claim.fail(error))
        raise

    if result.status == RunStatus.WAITING_APPROVAL:
        paused = await pause_on_approval(client, result, pause, claim=claim)
        assert paused is not None
        return Resumed("paused", claim.run_id, result, decisions, batch=paused.batch)
    if result.status == RunStatus.SUCCESS:
        run = await claim.complete({"answer": result.answer, "dendruxRunId": result.run_id})
        return Resumed("completed", claim.run_id, result, decisions, run=run)
    run = await claim.fail(
        {"status": str(result.status), "error": result.error, "dendruxRunId": result.run_id}
    )
    return Resumed("failed", claim.run_id, result, decisions, run=run)


def _call_input(call: ToolCall, result: RunResult, options: PauseOptions) -> CallInput:
    state = result.meta["pause_state"]
    gate = (state.approval_gates or {}).get(call.id) or {}
    payload: CallInput = {
        "toolCallId": call.id,
        "toolName": call.name,
        "args": dict(call.params),
        "metadata": {
            "framework": "dendrux",
            "agent": state.agent_name,
            "dendruxRunId": result.run_id,
            "gate": gate.get("reason"),
        },
    }
    summary = options.summary(call) if options.summary else None
    if summary:
        payload["summary"] = summary
    risks = options.risks(call) if options.risks else None
    if risks:
        payload["risks"] = risks
    schema = options.input_schemas.get(call.name)
    if schema is not None:
        payload["inputSchema"] = schema
    return payload


def _decisions(claim: AsyncClaim) -> tuple[str, list[AppliedDecision]]:
    checkpoint = claim.checkpoint
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"Run {claim.run_id} was not paused by the dendrux adapter.")
    batch = claim.batch
    calls = {call["toolCallId"]: call for call in (batch["calls"] if batch is not None else [])}
    ids: list[str] = checkpoint["toolCallIds"]
    if not all(tool_call_id in calls for tool_call_id in ids):
        raise ValueError(
            f"Run {claim.run_id}'s latest batch is not the one its checkpoint was paused with."
        )
    decisions = []
    for tool_call_id in ids:
        call = calls[tool_call_id]
        edited = edited_args(call)
        if call["status"] == "approved" and edited is None:
            decisions.append(AppliedDecision(tool_call_id, call["toolName"], "approved"))
            continue
        message = (
            _edit_not_applied(call["toolName"], edited)
            if call["status"] == "approved"
            else call_rejection_message(call, batch)
        )
        decisions.append(AppliedDecision(tool_call_id, call["toolName"], "denied", message))
    return checkpoint["dendruxRunId"], decisions


def _edit_not_applied(tool_name: str, edited: Any) -> str:
    return (
        f"The reviewer approved this call only with other arguments: {json.dumps(edited)}. "
        f"The tool was not run; call {tool_name} again with exactly these arguments to run it."
    )


class _ResultReporter(BaseNotifier):
    """Reports each approved call's result to Countersign as soon as its tool ends."""

    def __init__(self, claim: AsyncClaim, approved: set[str]) -> None:
        self.claim = claim
        self.approved = set(approved)

    async def on_tool_completed(
        self, run_id: str, tool_call: ToolCall, tool_result: ToolResult, iteration: int
    ) -> None:
        if tool_call.id not in self.approved:
            return
        self.approved.discard(tool_call.id)
        try:
            if tool_result.success:
                await self.claim.report_tool_result(tool_call.id, _parsed(tool_result.payload))
            else:
                await self.claim.report_tool_failure(
                    tool_call.id, tool_result.error or tool_result.payload
                )
        except CountersignError:
            pass  # the run goes on; a lost claim shows at completion


def _parsed(payload: str) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        return payload


async def _quietly(request: Any) -> None:
    try:
        await request
    except Exception:  # noqa: BLE001 — the agent's error is the one to raise
        pass
