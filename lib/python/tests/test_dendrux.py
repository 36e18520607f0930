"""dendrux end to end, across processes: the agent's process pauses on ``require_approval`` and
exits; another process, started before anyone decides, waits for the reviewer's decision and
resumes the persisted dendrux run through ``submit_approval``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dendrux")

from countersign import verify_webhook  # noqa: E402

from .conftest import Team, receiver  # noqa: E402

WORKER = Path(__file__).with_name("dendrux_worker.py")


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_up(process: subprocess.Popen[str]) -> None:
    """Reads the resuming process's first line: it is up, about to claim and then wait."""
    assert process.stdout is not None
    assert "resuming" in json.loads(process.stdout.readline())
    time.sleep(0.5)  # past its first claim attempt (not_ready): now it waits for the decision


def finish(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=90)
    assert process.returncode == 0, err
    answer: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return answer


@pytest.fixture
def places(team: Team, tmp_path: Path) -> tuple[str, str, str, str]:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'dendrux.db'}"
    return team.base_url, team.agent_key, database_url, str(tmp_path / "ledger.jsonl")


def test_an_approved_pause_is_resumed_by_another_process(
    team: Team, places: tuple[str, ...], tmp_path: Path
) -> None:
    paused = finish(start("pause", *places))  # the agent's process has exited

    card = team.reviewer.batch(lambda b: b["id"] == paused["batchId"])
    [call] = card["calls"]
    assert call["toolName"] == "refund"
    assert call["args"] == {"order_id": "A-1", "amount": 40}
    assert call["summary"] == "Refund 40 on A-1"
    assert call["metadata"]["dendruxRunId"] == paused["dendruxRunId"]
    assert not (tmp_path / "ledger.jsonl").exists()

    resumer = start("resume", *places, paused["runId"])
    wait_until_up(resumer)
    team.reviewer.decide(call, "approve")
    resumed = finish(resumer)

    assert resumed["status"] == "completed"
    assert resumed["dendruxStatus"] == "success"
    assert resumed["answer"] == "All done."
    assert json.loads((tmp_path / "ledger.jsonl").read_text()) == {"order_id": "A-1", "amount": 40}

    client = team.client()
    run = client.get_run(paused["runId"])
    assert run["status"] == "completed"
    assert run["result"] == {"answer": "All done.", "dendruxRunId": paused["dendruxRunId"]}


def test_a_rejection_reaches_the_model_and_the_tool_never_runs(
    team: Team, places: tuple[str, ...], tmp_path: Path
) -> None:
    paused = finish(start("pause", *places))
    resumer = start("resume", *places, paused["runId"])
    [call] = team.reviewer.batch(lambda b: b["id"] == paused["batchId"])["calls"]
    wait_until_up(resumer)
    team.reviewer.decide(call, "reject", reason="order already refunded")
    resumed = finish(resumer)

    assert resumed["decisions"][0]["outcome"] == "denied"
    reason = "The reviewer rejected this call: order already refunded. The tool was not run."
    assert resumed["decisions"][0]["message"] == reason
    assert any(reason in str(content) for content in resumed["modelSaw"])
    assert not (tmp_path / "ledger.jsonl").exists()
    assert team.client().get_run(paused["runId"])["status"] == "completed"


def test_an_edited_call_is_not_run_and_the_model_hears_the_approved_arguments(
    team: Team, places: tuple[str, ...], tmp_path: Path
) -> None:
    paused = finish(start("pause", *places))
    [call] = team.reviewer.batch(lambda b: b["id"] == paused["batchId"])["calls"]
    team.reviewer.decide(call, "edit", editedArgs={"order_id": "A-1", "amount": 25})
    resumed = finish(start("resume", *places, paused["runId"]))  # decided already: no wait

    assert resumed["decisions"][0]["outcome"] == "denied"
    assert '{"order_id": "A-1", "amount": 25}' in resumed["decisions"][0]["message"]
    assert not (tmp_path / "ledger.jsonl").exists()


def test_the_batch_webhook_starts_the_process_that_resumes(
    team: Team, places: tuple[str, ...], tmp_path: Path
) -> None:
    hooks, received = receiver()
    try:
        url = f"http://127.0.0.1:{hooks.server_address[1]}/countersign"
        paused = finish(start("pause", *places, url))
        [call] = team.reviewer.batch(lambda b: b["id"] == paused["batchId"])["calls"]
        team.reviewer.decide(call, "approve")
        body, headers = received.get(timeout=15)
    finally:
        hooks.shutdown()

    # Only a delivery signed with this agent's secret may start work.
    event = verify_webhook(body, headers, team.webhook_secret)
    assert event["type"] == "batch.decided"
    run_id = event["data"]["runId"]
    assert run_id == paused["runId"]
    resumed = finish(start("resume", *places, run_id, "no-wait"))

    assert resumed["status"] == "completed"
    assert json.loads((tmp_path / "ledger.jsonl").read_text()) == {"order_id": "A-1", "amount": 40}
