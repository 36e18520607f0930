"""OpenAI Agents SDK end to end: ``needs_approval`` tool calls become one Countersign batch; a
worker that knows nothing but the run id (a new agent object, a new client: the state comes back
from the server's checkpoint) applies the reviewer's decisions and runs the agent on."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, function_tool, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from countersign.adapters.openai_agents import (  # noqa: E402
    PauseOptions,
    pause_on_interruptions,
    resume_from_decision,
)

from .conftest import Team  # noqa: E402

set_tracing_disabled(True)  # offline: no trace export to OpenAI


def support_agent(model: ScriptedModel, ledger: list[dict[str, Any]]) -> Agent[Any]:
    @function_tool(needs_approval=True)
    def refund(order_id: str, amount: float) -> str:
        """Refund part of an order."""
        ledger.append({"order_id": order_id, "amount": amount})
        return json.dumps({"refunded": amount})

    @function_tool(needs_approval=True)
    def close_account(customer: str) -> str:
        """Close a customer's account."""
        ledger.append({"closed": customer})
        return "closed"

    return Agent(name="support", model=model, tools=[refund, close_account])


async def paused_run(team: Team, *calls: Any) -> tuple[str, dict[str, Any]]:
    ledger: list[dict[str, Any]] = []
    agent = support_agent(ScriptedModel([list(calls)]), ledger)
    result = await Runner.run(agent, "Refund order A-1")
    assert len(result.interruptions) == len(calls)
    async with team.async_client() as client:
        paused = await pause_on_interruptions(
            client,
            result,
            PauseOptions(summary=lambda call: f"{call.tool_name} asked by {call.agent_name}"),
        )
    assert paused is not None and ledger == []
    return paused.run_id, dict(paused.batch)


async def resume(
    team: Team, run_id: str, model: ScriptedModel, ledger: list[dict[str, Any]]
) -> Any:
    async with team.async_client() as client:
        return await resume_from_decision(
            client, support_agent(model, ledger), run_id, worker_id="agents-worker"
        )


async def test_an_approved_call_runs_and_the_run_completes(team: Team) -> None:
    run_id, batch = await paused_run(
        team, function_call("refund", {"order_id": "A-1", "amount": 40}, call_id="call_refund")
    )
    [call] = team.reviewer.batch(lambda b: b["id"] == batch["id"])["calls"]
    assert (call["toolCallId"], call["toolName"], call["args"]) == (
        "call_refund",
        "refund",
        {"order_id": "A-1", "amount": 40},
    )
    assert call["summary"] == "refund asked by support"
    team.reviewer.decide(call, "approve")

    ledger: list[dict[str, Any]] = []
    resumed = await resume(
        team, run_id, ScriptedModel([[assistant_message("Refunded 40.")]]), ledger
    )
    assert resumed.status == "completed"
    assert ledger == [{"order_id": "A-1", "amount": 40}]
    assert resumed.result.final_output == "Refunded 40."
    assert resumed.run["status"] == "completed"
    assert resumed.run["result"] == {"finalOutput": "Refunded 40."}


async def test_an_edited_call_runs_with_the_reviewers_arguments(team: Team) -> None:
    run_id, batch = await paused_run(
        team, function_call("refund", {"order_id": "A-1", "amount": 40}, call_id="call_refund")
    )
    [call] = team.reviewer.batch(lambda b: b["id"] == batch["id"])["calls"]
    team.reviewer.decide(call, "edit", editedArgs={"order_id": "A-1", "amount": 25})

    ledger: list[dict[str, Any]] = []
    model = ScriptedModel([[assistant_message("Refunded 25.")]])
    resumed = await resume(team, run_id, model, ledger)
    assert ledger == [{"order_id": "A-1", "amount": 25}]
    assert resumed.decisions[0].outcome == "edited"
    # The model's history shows the call that ran, not the one it first asked for.
    calls = [
        item
        for item in model.last_call.input
        if isinstance(item, dict) and item.get("type") == "function_call"
    ]
    assert json.loads(calls[-1]["arguments"]) == {"order_id": "A-1", "amount": 25}


async def test_a_rejected_call_does_not_run_and_the_model_reads_why(team: Team) -> None:
    run_id, batch = await paused_run(
        team,
        function_call("refund", {"order_id": "A-1", "amount": 40}, call_id="call_refund"),
        function_call("close_account", {"customer": "cus_1"}, call_id="call_close"),
    )
    card = team.reviewer.batch(lambda b: b["id"] == batch["id"])
    by_tool = {call["toolName"]: call for call in card["calls"]}
    team.reviewer.decide(by_tool["refund"], "approve")
    team.reviewer.decide(by_tool["close_account"], "reject", reason="customer did not ask")

    ledger: list[dict[str, Any]] = []
    model = ScriptedModel([[assistant_message("Refunded; account kept.")]])
    resumed = await resume(team, run_id, model, ledger)
    assert ledger == [{"order_id": "A-1", "amount": 40}]
    outputs = {
        item["call_id"]: item["output"]
        for item in model.last_call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }
    assert (
        outputs["call_close"]
        == "The reviewer rejected this call: customer did not ask. The tool was not run."
    )
    assert resumed.status == "completed"


async def test_the_worker_waits_for_a_decision_still_to_come(team: Team) -> None:
    run_id, _ = await paused_run(
        team, function_call("refund", {"order_id": "A-9", "amount": 1}, call_id="call_later")
    )
    team.reviewer.decide_later("approve", delay=0.5)
    ledger: list[dict[str, Any]] = []
    resumed = await resume(team, run_id, ScriptedModel([[assistant_message("ok")]]), ledger)
    assert resumed.status == "completed" and ledger == [{"order_id": "A-9", "amount": 1}]
