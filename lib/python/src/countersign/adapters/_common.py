"""What the pause-and-resume adapters share: claiming a run once its decision is in."""

from __future__ import annotations

import json
from typing import Any

from ..claim import AsyncClaim
from ..client import AsyncCountersign
from ..errors import CountersignError


def require_async(client: object, claim: object | None = None) -> None:
    """Refuses a sync client (or claim) before any request: the adapters await its answers, so a
    sync ``Countersign`` would create the run (a card in the queue) and only then fail."""
    if not isinstance(client, AsyncCountersign):
        raise TypeError(
            f"The adapters need an AsyncCountersign, not {type(client).__name__}: "
            "use `AsyncCountersign(base_url, api_key)` (its methods are coroutines). Nothing was sent."
        )
    if claim is not None and not isinstance(claim, AsyncClaim):
        raise TypeError(
            f"The adapters need an AsyncClaim (from AsyncCountersign.claim), not {type(claim).__name__}."
        )


async def claim_when_decided(
    client: AsyncCountersign,
    run_id: str,
    *,
    worker_id: str,
    lease_secs: int,
    wait: bool,
    wait_timeout: float | None,
) -> AsyncClaim:
    """Claims the run; while it waits for a decision (``not_ready``) and ``wait`` is set, waits for
    its pending batch to settle first (``wait_timeout`` raises ``wait_timeout``)."""
    try:
        return await client.claim(run_id, worker_id=worker_id, lease_secs=lease_secs)
    except CountersignError as error:
        if not wait or error.code != "not_ready":
            raise
    run = await client.get_run(run_id)
    pending = [batch for batch in run.get("batches", []) if batch["status"] == "pending"]
    if pending:
        await client.wait_for_decision(pending[-1]["id"], run_id=run_id, timeout=wait_timeout)
    return await client.claim(run_id, worker_id=worker_id, lease_secs=lease_secs)


def same_json(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same JSON value, whatever the order of their keys."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def edited_args(call: Any) -> dict[str, Any] | None:
    """An approved call's edited arguments when they differ from what the agent asked, else None."""
    decision = call["decision"]
    edited = decision["editedArgs"] if decision is not None else None
    if (
        call["status"] != "approved"
        or not isinstance(edited, dict)
        or same_json(edited, call["args"])
    ):
        return None
    return edited
