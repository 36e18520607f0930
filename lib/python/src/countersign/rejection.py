"""What a model reads when its tool call did not run: one wording for ``gate`` and every
adapter (the TypeScript SDK's wording), so an agent hears the same sentences in any framework."""

from __future__ import annotations

import re
from typing import Any

_NOT_RUN = " The tool was not run."


def _sentence(text: str) -> str:
    return re.sub(r"[.\s]+$", "", text.strip()) + "."


def rejection_message(
    source: str | None,
    *,
    blocked: bool = False,
    reason: str | None = None,
    reviewer_name: str | None = None,
) -> str:
    why = (reason or "").strip() or None
    because = f": {_sentence(why)}" if why else "."
    # The server words policy refusals for the model already ("Blocked by policy rule …").
    if blocked or source == "policy":
        return f"{why or 'A policy blocked this call.'}{_NOT_RUN}"
    if source == "timeout":
        return f"No reviewer approved this call before its deadline, so it was rejected.{_NOT_RUN}"
    if source == "cancelled":
        return f"The approval request was withdrawn before a decision{because}{_NOT_RUN}"
    if source == "reviewer":
        who = f"The reviewer, {reviewer_name}," if reviewer_name else "The reviewer"
        if why:
            return f"{who} rejected this call{because}{_NOT_RUN}"
        return f"{who} rejected this call without giving a reason.{_NOT_RUN}"
    return f"This call was rejected{because}{_NOT_RUN}"


def call_rejection_message(call: Any, batch: Any, *, name_reviewer: bool = False) -> str:
    """rejection_message for a settled call as the API answers it (a missing call: withdrawn)."""
    decision = (call or {}).get("decision")
    if call is not None and (
        call.get("status") == "expired" or (decision or {}).get("source") == "timeout"
    ):
        return rejection_message("timeout")
    if (
        call is None
        or decision is None
        or call.get("status") == "cancelled"
        or (batch or {}).get("status") == "cancelled"
    ):
        return rejection_message("cancelled", reason=(batch or {}).get("cancelReason"))
    by = decision.get("by") or {}
    return rejection_message(
        decision.get("source"),
        blocked=bool((decision.get("policy") or {}).get("blocked")),
        reason=decision.get("reason"),
        reviewer_name=by.get("name") if name_reviewer else None,
    )


def approved_args(call: Any) -> dict[str, Any]:
    """The args to run for an approved call: the reviewer's edit when there is one."""
    edited = ((call or {}).get("decision") or {}).get("editedArgs")
    args: dict[str, Any] = edited if isinstance(edited, dict) else call["args"]
    return args
