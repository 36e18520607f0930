"""The sync client against a real server: runs, idempotency, waiting (stream, fallback, poll,
timeout), claims with heartbeats, completion, errors."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from countersign import Countersign, CountersignError, RetryPolicy
from countersign._sse import SseParser

from .conftest import FAST_RETRY, Team, one_call


def paused_run(client: Countersign, **batch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    run = client.create_run({"batch": {"calls": [one_call()], **batch}})
    return dict(run), dict(run["batches"][0])


def test_create_run_with_a_batch_shows_a_card_and_replays_an_idempotent_repeat(team: Team) -> None:
    client = team.client()
    body = {"externalId": "ticket-7", "batch": {"calls": [one_call(amount=40)]}}
    first = client.create_run(body, idempotency_key="same-key")  # type: ignore[arg-type]
    again = client.create_run(body, idempotency_key="same-key")  # type: ignore[arg-type]
    assert first["status"] == "waiting_approval"
    assert again["id"] == first["id"]
    assert again["batches"][0]["id"] == first["batches"][0]["id"]
    assert team.reviewer.batch()["id"] == first["batches"][0]["id"]

    with pytest.raises(CountersignError) as conflict:
        client.create_run({"externalId": "another"}, idempotency_key="same-key")
    assert conflict.value.status == 409
    assert conflict.value.code == "idempotency_conflict"


def test_wait_follows_the_run_stream_and_sees_the_decision(team: Team) -> None:
    client = team.client()
    run, batch = paused_run(client)
    seen: list[str] = []
    team.reviewer.decide_later("approve")
    settled = client.wait_for_decision(
        batch["id"], mode="stream", on_event=lambda e: seen.append(e["type"])
    )
    assert settled["status"] == "decided"
    assert settled["outcome"] == "approved"
    assert settled["calls"][0]["decision"]["by"]["name"] == team.reviewer_name
    assert "batch.decided" in seen


def test_wait_by_long_poll(team: Team) -> None:
    client = team.client()
    _, batch = paused_run(client)
    team.reviewer.decide_later("reject", reason="wrong customer")
    settled = client.wait_for_decision(batch["id"], mode="poll")
    assert settled["outcome"] == "rejected"
    assert settled["calls"][0]["decision"]["reason"] == "wrong customer"


@pytest.mark.parametrize("mode", ["auto", "poll"])
def test_wait_timeout_raises_with_the_batch_still_pending(team: Team, mode: Any) -> None:
    client = team.client()
    _, batch = paused_run(client)
    started = time.monotonic()
    with pytest.raises(CountersignError) as waited:
        client.wait_for_decision(batch["id"], timeout=0.8, mode=mode)
    assert waited.value.code == "wait_timeout"
    assert waited.value.current["status"] == "pending"
    assert time.monotonic() - started < 3


def proxy(team: Team, intercept: Any) -> httpx.Client:
    """An httpx client whose requests go to ``intercept`` first; None from it forwards them."""
    upstream = httpx.Client(timeout=60)

    def handle(request: httpx.Request) -> httpx.Response:
        answer = intercept(request)
        if answer is not None:
            return answer  # type: ignore[no-any-return]
        forwarded = upstream.send(
            upstream.build_request(
                request.method, request.url, headers=request.headers, content=request.content
            ),
            stream=True,
        )
        return httpx.Response(
            forwarded.status_code,
            headers=forwarded.headers,
            stream=forwarded.stream,
            request=request,
        )

    return httpx.Client(transport=httpx.MockTransport(handle))


def test_a_stream_a_proxy_turns_into_html_falls_back_to_long_polls(team: Team) -> None:
    def html_stream(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/stream"):
            return httpx.Response(
                200, headers={"content-type": "text/html"}, text="<p>buffered</p>"
            )
        return None

    client = team.client(http_client=proxy(team, html_stream))
    _, batch = paused_run(client)
    team.reviewer.decide_later("approve")
    assert client.wait_for_decision(batch["id"])["outcome"] == "approved"


def test_a_cut_stream_reconnects_with_last_event_id(team: Team) -> None:
    connects: list[str | None] = []

    def cut_first(request: httpx.Request) -> httpx.Response | None:
        if not request.url.path.endswith("/stream"):
            return None
        connects.append(request.headers.get("last-event-id"))
        if len(connects) == 1:
            # One event, then the connection ends: the next connect must resume after it.
            body = 'retry: 100\n\nid: 1\nevent: run.created\ndata: {"type":"run.created"}\n\n'
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)
        return None

    client = team.client(http_client=proxy(team, cut_first))
    _, batch = paused_run(client)
    team.reviewer.decide_later("approve", delay=0.6)
    assert client.wait_for_decision(batch["id"], mode="stream")["outcome"] == "approved"
    assert connects[:2] == [None, "1"]


def test_claim_heartbeats_reports_and_completes(team: Team) -> None:
    client = team.client()
    run, batch = paused_run(client)

    with pytest.raises(CountersignError) as early:
        client.claim(run["id"], worker_id="worker-a")
    assert early.value.code == "not_ready"

    team.reviewer.decide_batch(team.reviewer.batch(), "approve")
    claim = client.claim(run["id"], worker_id="worker-a", lease_secs=6)
    assert claim.batch is not None and claim.batch["id"] == batch["id"]
    first_lease = claim.lease_expires_at
    time.sleep(2.6)  # one beat (every lease/3 = 2 s) has extended the lease
    assert claim.lease_expires_at > first_lease

    with pytest.raises(CountersignError) as taken:
        client.claim(run["id"], worker_id="worker-b")
    assert taken.value.code == "already_claimed"
    assert taken.value.details["holder"] == "worker-a"

    event = claim.report_tool_result("call-1", {"refunded": 40})
    assert event["type"] == "tool.completed"
    done = claim.complete({"answer": "refunded"})
    assert done["status"] == "completed"
    assert claim.state == "ended"
    assert client.get_run(run["id"])["result"] == {"answer": "refunded"}


def test_a_claim_taken_over_is_lost(team: Team) -> None:
    client = team.client()
    run, _ = paused_run(client)
    team.reviewer.decide_batch(team.reviewer.batch(), "approve")
    lost: list[str] = []
    claim = client.claim(
        run["id"],
        worker_id="slow",
        lease_secs=5,
        heartbeat=False,
        on_lost=lambda e: lost.append(e.code),
    )
    time.sleep(5.3)  # the lease ran out: another worker may take the run
    client.claim(run["id"], worker_id="fast").release()
    with pytest.raises(CountersignError) as refused:
        claim.report_tool_result("call-1", "late")
    assert refused.value.code == "claim_lost"
    assert claim.state == "lost"
    assert lost == ["claim_lost"]


def test_transient_failures_are_retried_with_the_same_idempotency_key(team: Team) -> None:
    keys: list[str | None] = []

    def flaky(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/runs") and request.method == "POST":
            keys.append(request.headers.get("idempotency-key"))
            if len(keys) == 1:
                raise httpx.ConnectError("connection refused")
            if len(keys) == 2:
                return httpx.Response(
                    503,
                    headers={"retry-after": "0"},
                    json={"error": {"code": "unavailable", "message": "busy"}},
                )
        return None

    client = team.client(http_client=proxy(team, flaky))
    run = client.create_run({"externalId": "retried"})
    assert run["status"] == "running"
    assert len(keys) == 3 and keys[0] is not None and len(set(keys)) == 1


def test_errors_carry_the_contract_code_and_are_not_retried(team: Team) -> None:
    attempts = 0

    def count(request: httpx.Request) -> None:
        nonlocal attempts
        attempts += 1

    client = team.client(http_client=proxy(team, count))
    with pytest.raises(CountersignError) as invalid:
        client.create_run({"batch": {"calls": [{"toolName": "refund"}]}})  # type: ignore[typeddict-item]
    assert invalid.value.status == 400
    assert invalid.value.code == "invalid_request"
    assert invalid.value.issues
    assert attempts == 1

    with pytest.raises(CountersignError) as unknown:
        Countersign(team.base_url, "cs_agent_wrong", retry=FAST_RETRY).get_run("nope")
    assert unknown.value.code == "unauthenticated"


def test_no_server_is_a_network_error_after_the_retries() -> None:
    client = Countersign(
        "http://127.0.0.1:9",
        "cs_agent_x",
        retry=RetryPolicy(retries=2, min_delay=0.01, max_delay=0.02),
    )
    with pytest.raises(CountersignError) as failed:
        client.get_run("r")
    assert failed.value.status == 0
    assert failed.value.code == "network_error"
    assert "127.0.0.1:9" in failed.value.message


def test_completion_retried_after_a_lost_answer_is_the_first_attempts_success(team: Team) -> None:
    dropped = False

    def drop_first_answer(request: httpx.Request) -> httpx.Response | None:
        nonlocal dropped
        if request.url.path.endswith("/complete") and not dropped:
            dropped = True
            # The server did complete the run; only the answer is lost on the way back.
            httpx.post(str(request.url), headers=request.headers, content=request.content)
            raise httpx.ReadError("connection reset")
        return None

    client = team.client(http_client=proxy(team, drop_first_answer))
    run = client.create_run()
    assert client.complete_run(run["id"], result={"ok": True})["status"] == "completed"


def test_sse_parser_reads_split_chunks_crlf_and_comments() -> None:
    parser = SseParser()
    messages = parser.push(": keep-alive\r\nid: 7\r\nevent: batch.decided\r")
    assert messages == []
    messages = parser.push('\ndata: {"a":\ndata: 1}\r\n\r\nretry: 500\n\ndata: x\n\n')
    assert [(m.id, m.event, m.data) for m in messages] == [
        ("7", "batch.decided", '{"a":\n1}'),
        (None, "message", "x"),
    ]
    assert parser.retry_ms == 500
