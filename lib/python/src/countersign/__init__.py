"""Countersign for Python: AI agents ask people for permission.

Quick start::

    from countersign import Countersign

    with Countersign("https://countersign.example.com", "cs_agent_…") as client:
        run = client.create_run({"batch": {"calls": [
            {"toolCallId": "c1", "toolName": "refund", "args": {"orderId": "A-1", "amount": 40}},
        ]}})
        batch = client.wait_for_decision(run["batches"][0]["id"])
"""

from ._http import new_idempotency_key
from ._retry import RetryPolicy
from ._types import (
    Batch,
    BatchInput,
    Call,
    CallInput,
    ClaimGrant,
    CreateRunInput,
    Decision,
    Ref,
    Run,
    RunEvent,
)
from .claim import AsyncClaim, Claim
from .client import AsyncCountersign, Countersign
from .errors import API_ERROR_CODES, ApiErrorCode, CountersignError
from .gate import GateRejection, gate
from .rejection import approved_args, call_rejection_message, rejection_message
from .session import AsyncRunSession, RunSession
from .webhooks import WebhookVerificationError, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "API_ERROR_CODES",
    "ApiErrorCode",
    "AsyncClaim",
    "AsyncCountersign",
    "AsyncRunSession",
    "Batch",
    "BatchInput",
    "Call",
    "CallInput",
    "Claim",
    "ClaimGrant",
    "Countersign",
    "CountersignError",
    "CreateRunInput",
    "Decision",
    "GateRejection",
    "Ref",
    "RetryPolicy",
    "Run",
    "RunEvent",
    "RunSession",
    "WebhookVerificationError",
    "approved_args",
    "call_rejection_message",
    "gate",
    "new_idempotency_key",
    "rejection_message",
    "verify_webhook",
]
