"""The async client and the ``gate`` decorator (sync and async tools) against a real server."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from countersign import AsyncRunSession, CountersignError, GateRejection, RunSession, gate

from .conftest import Team, one_call


async def test_async_client_waits_by_stream_then_claims_with_a_heartbeat_task(team: Team) -> None:
    async with team.async_client() as client:
        run = await client.create_run({"batch": {"calls": [one_call()]}})
        batch = run["batches"][0]
        decided = asyncio.get_running_loop().run_in_executor(
            None,
            lambda: (time.sleep(0.3), team.reviewer.decide_batch(team.reviewer.batch(), "approve")),
        )
        settled = await client.wait_for_decision(batch["id"], run_id=run["id"], mode="stream")
        await decided
        assert settled["outcome"] == "approved"

        claim = await client.claim(run["id"], worker_id="async-worker", lease_secs=6)
        first_lease = claim.lease_expires_at
        await asyncio.sleep(2.5)
        assert claim.lease_expires_at > first_lease
        await claim.report_tool_result("call-1", {"ok": True})
        assert (await claim.complete("done"))["status"] == "completed"
        assert claim.state == "ended"


async def test_async_wait_timeout(team: Team) -> None:
    async with team.async_client() as client:
        run = await client.create_run({"batch": {"calls": [one_call()]}})
        with pytest.raises(CountersignError) as waited:
            await client.wait_for_decision(run["batches"][0]["id"], timeout=0.5)
        assert waited.value.code == "wait_timeout"
        assert waited.value.current is None or waited.value.current["status"] == "pending"


def test_gate_runs_the_tool_with_the_reviewers_edited_args(team: Team) -> None:
    client = team.client()
    refunds: list[tuple[str, float]] = []

    @gate(
        client,
        summary=lambda args: f"Refund {args['amount']} on {args['order_id']}",
        risks=["money leaves"],
    )
    def refund(order_id: str, amount: float = 10.0) -> dict[str, Any]:
        refunds.append((order_id, amount))
        return {"refunded": amount}

    def edit_it() -> None:
        card = team.reviewer.batch()
        call = card["calls"][0]
        assert call["args"] == {"order_id": "A-1", "amount": 10.0}
        assert call["summary"] == "Refund 10.0 on A-1"
        team.reviewer.decide(call, "edit", editedArgs={"order_id": "A-1", "amount": 7.5})

    threading.Thread(target=edit_it, daemon=True).start()
    assert refund("A-1") == {"refunded": 7.5}
    assert refunds == [("A-1", 7.5)]


def test_gate_answers_a_rejection_without_running_the_tool(team: Team) -> None:
    client = team.client()
    ran: list[str] = []

    @gate(client, tool_name="delete_files")
    def delete(path: str) -> str:
        ran.append(path)
        return "deleted"

    team.reviewer.decide_later("reject", reason="not that folder")
    answer = delete("/srv")
    assert isinstance(answer, GateRejection)
    assert answer.source == "reviewer"
    assert answer.reason == "not that folder"
    assert answer.decided_by is not None and answer.decided_by["name"] == team.reviewer_name
    assert (
        answer.message == "The reviewer rejected this call: not that folder. The tool was not run."
    )
    assert ran == []
    run = client.get_run(answer.run_id)
    assert run["status"] == "completed"
    assert run["result"] == {"rejected": True, "source": "reviewer"}


def test_gate_withdraws_the_request_when_the_wait_times_out(team: Team) -> None:
    client = team.client()

    @gate(client, wait_timeout=0.6)
    def send_email(to: str) -> str:
        raise AssertionError("must not run")

    answer = send_email("ceo@example.com")
    assert isinstance(answer, GateRejection)
    assert answer.source == "cancelled"
    assert team.reviewer.pending(timeout=0) == []


def test_gate_lets_calls_through_when_no_approval_is_needed(team: Team) -> None:
    client = team.client()

    @gate(client, needs_approval=lambda args: args["amount"] > 100)
    def refund(amount: int) -> int:
        return amount

    assert refund(5) == 5
    assert team.reviewer.pending(timeout=0) == []


def test_gated_calls_of_one_session_share_its_run(team: Team) -> None:
    client = team.client()
    session = RunSession(client, client.create_run({"externalId": "shared"})["id"])

    @gate(client, run=session)
    def step(n: int) -> int:
        return n * 2

    team.reviewer.decide_later("approve")
    assert step(1) == 2
    team.reviewer.decide_later("approve")
    assert step(2) == 4
    run = client.get_run(session.run_id)
    assert len(run["batches"]) == 2
    assert session.complete()["status"] == "completed"


async def test_async_gate(team: Team) -> None:
    client = team.async_client()
    session = AsyncRunSession(client, (await client.create_run())["id"])

    @gate(client, run=session, tool_name="charge")
    async def charge(customer: str, cents: int) -> str:
        return f"charged {customer} {cents}"

    team.reviewer.decide_later("approve")
    assert await charge("cus_1", 500) == "charged cus_1 500"
    team.reviewer.decide_later("reject")
    rejected = await charge("cus_1", 900)
    assert isinstance(rejected, GateRejection)
    assert (
        rejected.message
        == "The reviewer rejected this call without giving a reason. The tool was not run."
    )
    await session.complete()
    await client.aclose()


def test_gate_refuses_a_client_of_the_other_kind(team: Team) -> None:
    with pytest.raises(TypeError):

        @gate(team.async_client())  # type: ignore[call-overload]
        def tool() -> None: ...
