"""One side of the dendrux cross-process test, run as its own process by test_dendrux.py.

``pause``: a dendrux agent (scripted model, SQLite persistence) asks to refund an order; its
``require_approval`` pause becomes a Countersign card; the process prints the ids and exits.
``resume``: a new process with the same agent definition waits for the reviewer's decision (or,
with ``no-wait``, expects it made: a webhook started it), resumes the persisted dendrux run
through ``submit_approval`` and prints what happened.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from dendrux import Agent, tool
from dendrux.llm.mock import MockLLM
from dendrux.types import LLMResponse, ToolCall

from countersign import AsyncCountersign
from countersign.adapters.dendrux import PauseOptions, pause_on_approval, resume_from_decision


def build_agent(
    database_url: str, ledger: str, responses: list[LLMResponse]
) -> tuple[Agent, MockLLM]:
    @tool()
    async def refund(order_id: str, amount: float) -> str:
        """Refund part of an order."""
        with open(ledger, "a") as file:
            file.write(json.dumps({"order_id": order_id, "amount": amount}) + "\n")
        return f"Refunded {amount} on {order_id}."

    llm = MockLLM(responses)
    agent = Agent(
        name="support",
        provider=llm,
        tools=[refund],
        prompt="You help customers.",
        require_approval=["refund"],
        database_url=database_url,
    )
    return agent, llm


async def pause(
    base_url: str, key: str, database_url: str, ledger: str, callback_url: str | None = None
) -> dict[str, Any]:
    ask = LLMResponse(text=None, tool_calls=[ToolCall("refund", {"order_id": "A-1", "amount": 40})])
    agent, _ = build_agent(database_url, ledger, [ask])
    result = await agent.run("Please refund 40 on order A-1.")
    async with AsyncCountersign(base_url, key) as client:
        paused = await pause_on_approval(
            client,
            result,
            PauseOptions(
                summary=lambda call: f"Refund {call.params['amount']} on {call.params['order_id']}",
                callback_url=callback_url,
            ),
        )
    assert paused is not None
    return {"runId": paused.run_id, "batchId": paused.batch["id"], "dendruxRunId": result.run_id}


async def resume(
    base_url: str, key: str, database_url: str, ledger: str, run_id: str, wait: str = "wait"
) -> dict[str, Any]:
    agent, llm = build_agent(database_url, ledger, [LLMResponse(text="All done.")])
    print(json.dumps({"resuming": run_id}), flush=True)  # tells the test this process is up
    async with AsyncCountersign(base_url, key) as client:
        resumed = await resume_from_decision(
            client, agent, run_id, worker_id="dendrux-worker", wait=wait == "wait", wait_timeout=60
        )
    seen = [m.content for m in llm.call_history[-1]["messages"]] if llm.call_history else []
    return {
        "status": resumed.status,
        "answer": resumed.result.answer,
        "dendruxStatus": str(resumed.result.status),
        "decisions": [d.__dict__ for d in resumed.decisions],
        "modelSaw": seen,
    }


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    work = pause(*args) if command == "pause" else resume(*args)
    print(json.dumps(asyncio.run(work)), flush=True)
