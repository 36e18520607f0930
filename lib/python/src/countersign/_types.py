"""The API's resources and request bodies as TypedDicts.

They are generated into ``_contract.py`` from the server's own schemas (``npm run
generate:clients`` in the repository); this module names the ones the package uses. Answers are
plain dicts parsed from JSON: these types describe them for type checkers, nothing is validated or
converted at run time, so fields the server adds later pass through untouched.
"""

from __future__ import annotations

from ._contract import (
    AgentMode,
    Batch,
    BatchInput,
    BatchKind,
    BatchOutcome,
    BatchStatus,
    Call,
    CallInput,
    CallStatus,
    ClaimGrant,
    CreateRunInput,
    Decision,
    DecisionSource,
    ErrorResponse,
    Lease,
    Plan,
    PolicyEffect,
    Ref,
    RememberScope,
    RollbackAction,
    Run,
    RunEvent,
    RunStatus,
    TimeoutAction,
    Vote,
)

__all__ = [
    "AgentMode",
    "Batch",
    "BatchInput",
    "BatchKind",
    "BatchOutcome",
    "BatchStatus",
    "Call",
    "CallInput",
    "CallStatus",
    "ClaimGrant",
    "CreateRunInput",
    "Decision",
    "DecisionSource",
    "ErrorResponse",
    "Lease",
    "Plan",
    "PolicyEffect",
    "Ref",
    "RememberScope",
    "RollbackAction",
    "Run",
    "RunEvent",
    "RunStatus",
    "TimeoutAction",
    "Vote",
]
