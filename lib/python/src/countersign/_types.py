"""The API's resources and request bodies as TypedDicts (mirroring ../shared/API.md).

Answers are plain dicts parsed from JSON: these types describe them for type checkers, nothing
is validated or converted at run time, so fields the server adds later pass through untouched.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from typing_extensions import NotRequired

RunStatus = Literal[
    "running", "waiting_approval", "ready", "resuming", "completed", "failed", "cancelled"
]
BatchStatus = Literal["pending", "decided", "expired", "cancelled"]
BatchOutcome = Literal["approved", "rejected", "mixed"]
CallStatus = Literal["pending", "approved", "rejected", "expired", "cancelled"]
DecisionSource = Literal["reviewer", "policy", "memory", "timeout"]
TimeoutAction = Literal["reject", "approve", "escalate"]


class Ref(TypedDict):
    id: str
    name: str


class Decision(TypedDict):
    outcome: Literal["approved", "rejected"]
    source: DecisionSource
    by: Ref | None
    at: str
    reason: str | None
    #: when a reviewer edited the call: the args the agent must run instead of ``args``
    editedArgs: Any
    scope: Literal["once", "run", "conversation"] | None
    #: when ``source`` is ``policy``: what decided it (``blocked``: a deny rule stopped the call)
    policy: dict[str, Any] | None


class Call(TypedDict):
    id: str
    batchId: str
    toolCallId: str
    toolName: str
    args: dict[str, Any]
    inputSchema: dict[str, Any] | None
    summary: str | None
    risks: list[str]
    costEstimate: float | None
    metadata: dict[str, Any] | None
    status: CallStatus
    revision: int
    actionHash: str
    requiredApprovals: int
    votes: list[dict[str, Any]]
    decision: Decision | None


class Batch(TypedDict):
    id: str
    runId: str
    kind: Literal["action", "plan"]
    status: BatchStatus
    outcome: BatchOutcome | None
    queue: Ref
    agent: Ref
    plan: dict[str, Any] | None
    calls: list[Call]
    createdAt: str
    expiresAt: str
    onTimeout: TimeoutAction
    decidedAt: str | None
    cancelReason: str | None
    reviewUrl: str


class Run(TypedDict):
    id: str
    agent: Ref
    externalId: str | None
    conversationId: str | None
    status: RunStatus
    metadata: dict[str, Any] | None
    claim: dict[str, Any] | None
    result: Any
    error: Any
    createdAt: str
    updatedAt: str
    batches: NotRequired[list[Batch]]


class RunEvent(TypedDict):
    """One row of the event log, as streams and ``POST /runs/{id}/events`` show it."""

    seq: int
    type: str
    at: str
    runId: str | None
    batchId: str | None
    callId: str | None
    queueId: str | None
    actor: dict[str, Any]
    data: dict[str, Any]


class ClaimGrant(TypedDict):
    """``POST /runs/{id}/claim``'s answer."""

    claimToken: str
    leaseExpiresAt: str
    run: Run
    #: what the run was paused with (the ``checkpoint`` of its last batch)
    checkpoint: Any
    #: the run's latest batch, settled: what the worker resumes with
    batch: Batch | None
    #: None unless a rollback was requested: the reported actions to revert, newest first
    rollback: list[dict[str, Any]] | None


class CallInput(TypedDict):
    toolCallId: str
    toolName: str
    args: dict[str, Any]
    inputSchema: NotRequired[dict[str, Any]]
    summary: NotRequired[str]
    risks: NotRequired[list[str]]
    costEstimate: NotRequired[float]
    metadata: NotRequired[dict[str, Any]]


class BatchInput(TypedDict, total=False):
    kind: Literal["action", "plan"]
    calls: list[CallInput]
    plan: dict[str, Any]
    #: a queue id or name the agent key may target; its default queue otherwise
    queue: str
    timeoutSecs: int
    onTimeout: TimeoutAction
    #: stored as given, handed back only to the worker that claims the run after the decision
    checkpoint: Any
    #: a signed webhook is POSTed here once the batch is settled (see ``verify_webhook``)
    callbackUrl: str
    #: set by ``Claim.pause``; pass it yourself only when pausing with a raw token
    claimToken: str


class CreateRunInput(TypedDict, total=False):
    externalId: str
    conversationId: str
    metadata: dict[str, Any]
    #: the run's first pause, created in the same request
    batch: BatchInput
