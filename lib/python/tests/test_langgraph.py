"""LangGraph end to end: ``interrupt()`` approvals become one Countersign batch; the thread is
resumed from a SQLite checkpointer by a graph built anew over a new connection (as another
process would), with approvals, edits and rejections; and the in-process loop."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

from countersign.adapters.langgraph import (  # noqa: E402
    PauseOptions,
    invoke_with_approval,
    pause_on_interrupts,
    request_approval,
    resume_from_decision,
)

from .conftest import Team  # noqa: E402


class State(TypedDict):
    order: str
    log: Annotated[list[str], operator.add]


def build(checkpointer: Any, ledger: list[Any]) -> Any:
    """Two tools asked for in parallel branches: one interrupt each, one card with two calls."""

    def refund(state: State) -> dict[str, Any]:
        approval = request_approval(
            "refund",
            {"order_id": state["order"], "amount": 40},
            summary=f"Refund 40 on {state['order']}",
            input_schema={"type": "object", "required": ["order_id", "amount"]},
        )
        if not approval["approved"]:
            return {"log": [f"refund refused: {approval['message']}"]}
        ledger.append(("refund", approval["args"]))
        return {"log": [f"refunded {approval['args']['amount']}"]}

    def close(state: State) -> dict[str, Any]:
        approval = request_approval(
            "close_ticket", {"order_id": state["order"]}, risks=["customer not told"]
        )
        if not approval["approved"]:
            return {"log": [f"close refused: {approval['message']}"]}
        ledger.append(("close_ticket", approval["args"]))
        return {"log": ["closed"]}

    graph = StateGraph(State)
    graph.add_node("refund", refund)
    graph.add_node("close", close)
    graph.add_edge(START, "refund")
    graph.add_edge(START, "close")
    graph.add_edge("refund", END)
    graph.add_edge("close", END)
    return graph.compile(checkpointer=checkpointer)


async def test_a_thread_paused_in_one_graph_is_resumed_by_another(
    team: Team, tmp_path: Path
) -> None:
    database = str(tmp_path / "checkpoints.db")
    config = {"configurable": {"thread_id": "ticket-42"}}
    ledger: list[Any] = []
    async with team.async_client() as client:
        async with AsyncSqliteSaver.from_conn_string(database) as saver:
            state = await build(saver, ledger).ainvoke({"order": "A-1", "log": []}, config)
            paused = await pause_on_interrupts(
                client, state, config, PauseOptions(queue=team.queue_name)
            )
        assert paused is not None and ledger == []

        card = team.reviewer.batch(lambda b: b["id"] == paused.batch["id"])
        calls = {call["toolName"]: call for call in card["calls"]}
        assert calls["refund"]["args"] == {"order_id": "A-1", "amount": 40}
        assert calls["refund"]["summary"] == "Refund 40 on A-1"
        assert calls["close_ticket"]["risks"] == ["customer not told"]
        team.reviewer.decide(calls["refund"], "edit", editedArgs={"order_id": "A-1", "amount": 25})
        team.reviewer.decide(calls["close_ticket"], "reject", reason="customer still waiting")

        # Nothing of the first graph is reused: a new connection, a new compiled graph.
        async with AsyncSqliteSaver.from_conn_string(database) as saver:
            resumed = await resume_from_decision(
                client, build(saver, ledger), paused.run_id, worker_id="graph-worker"
            )

        assert ledger == [("refund", {"order_id": "A-1", "amount": 25})]
        assert sorted(resumed.state["log"]) == [
            "close refused: The reviewer rejected this call: customer still waiting. The tool was not run.",
            "refunded 25",
        ]
        assert resumed.status == "completed"
        run = await client.get_run(paused.run_id)
        assert run["status"] == "completed"
        assert run["externalId"] == "ticket-42"
        assert sorted(run["result"]["log"]) == sorted(resumed.state["log"])


async def test_invoke_with_approval_asks_again_for_the_next_interrupt(team: Team) -> None:
    ledger: list[Any] = []

    def two_steps(state: State) -> dict[str, Any]:
        first = request_approval("refund", {"order_id": state["order"], "amount": 5})
        second = request_approval("notify", {"order_id": state["order"]})
        ledger.append((first["approved"], second["approved"]))
        return {"log": [f"refund {first['approved']}, notify {second['approved']}"]}

    graph = StateGraph(State)
    graph.add_node("work", two_steps)
    graph.add_edge(START, "work")
    graph.add_edge("work", END)
    compiled = graph.compile(checkpointer=InMemorySaver())

    team.reviewer.decide_later("approve", delay=0.3)

    def decide_second() -> None:
        card = team.reviewer.batch(lambda b: b["calls"][0]["toolName"] == "notify", timeout=30)
        team.reviewer.decide_batch(card, "reject")

    second = asyncio.get_running_loop().run_in_executor(None, decide_second)
    async with team.async_client() as client:
        resumed = await invoke_with_approval(
            client,
            compiled,
            {"order": "B-2", "log": []},
            {"configurable": {"thread_id": "b2"}},
            worker_id="loop",
            output=lambda state: state["log"],
        )
        await second
        assert resumed.state["log"] == ["refund True, notify False"]
        # The node ran again from its start on each resume; only the last run got past both asks.
        assert ledger == [(True, False)]
        run = await client.get_run(resumed.run_id)
        assert [b["calls"][0]["toolName"] for b in run["batches"]] == ["refund", "notify"]
        assert run["result"] == ["refund True, notify False"]
