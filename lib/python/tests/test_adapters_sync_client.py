"""The adapters await the client, so they need ``AsyncCountersign``. Given the sync
``Countersign`` they used to create the run (the card) and only then fail on awaiting its answer,
leaving an orphan card in the queue; now they refuse with a TypeError before any request."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from .conftest import Team


def assert_nothing_written(team: Team) -> None:
    assert team.reviewer.pending(timeout=0.5) == []


async def test_langgraph_refuses_the_sync_client_before_writing(team: Team) -> None:
    pytest.importorskip("langgraph")
    from langgraph.types import Interrupt

    from countersign.adapters.langgraph import pause_on_interrupts, resume_from_decision

    result = {
        "__interrupt__": [
            Interrupt(value={"countersign": {"toolName": "refund", "args": {"a": 1}}}, id="i-1")
        ]
    }
    with team.client() as client, pytest.raises(TypeError, match="AsyncCountersign"):
        await pause_on_interrupts(client, result, {"configurable": {"thread_id": "t-1"}})  # type: ignore[arg-type]
    with team.client() as client, pytest.raises(TypeError, match="AsyncCountersign"):
        # no such run: had it asked the server, this would be a CountersignError (not_found)
        await resume_from_decision(client, object(), "no-such-run", worker_id="w")  # type: ignore[arg-type]
    assert_nothing_written(team)


async def test_openai_agents_refuses_the_sync_client_before_writing(team: Team) -> None:
    pytest.importorskip("agents")
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, function_call

    from countersign.adapters.openai_agents import pause_on_interruptions, resume_from_decision

    set_tracing_disabled(True)

    @function_tool(needs_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    model = ScriptedModel([[function_call("refund", {"order_id": "A-1"}, call_id="c-1")]])
    agent: Agent[Any] = Agent(name="support", model=model, tools=[refund])
    result = await Runner.run(agent, "Refund order A-1")
    assert result.interruptions
    with team.client() as client, pytest.raises(TypeError, match="AsyncCountersign"):
        await pause_on_interruptions(client, result)  # type: ignore[arg-type]
    with team.client() as client, pytest.raises(TypeError, match="AsyncCountersign"):
        await resume_from_decision(client, agent, "no-such-run", worker_id="w")  # type: ignore[arg-type]
    assert_nothing_written(team)


async def test_dendrux_refuses_the_sync_client_before_writing(team: Team) -> None:
    pytest.importorskip("dendrux")
    from dendrux.types import RunResult, RunStatus, ToolCall

    from countersign.adapters.dendrux import pause_on_approval, resume_from_decision

    # a paused dendrux result as the adapter reads it (what Agent.run returns at an approval gate)
    call = ToolCall(name="refund", params={"order_id": "A-1"}, id="tc-1")
    state = SimpleNamespace(
        pending_tool_calls=[call], approval_gates=None, iteration=1, agent_name="support"
    )
    result = RunResult(
        run_id="dx-1", status=RunStatus.WAITING_APPROVAL, meta={"pause_state": state}
    )
    with team.client() as client, pytest.raises(TypeError, match="AsyncCountersign"):
        await pause_on_approval(client, result)  # type: ignore[arg-type]
    with team.client() as client, pytest.raises(TypeError, match="AsyncCountersign"):
        await resume_from_decision(client, object(), "no-such-run", worker_id="w")  # type: ignore[arg-type]
    assert_nothing_written(team)
