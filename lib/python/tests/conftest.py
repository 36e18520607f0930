"""The real Countersign server for the whole pytest session, and a fresh team per test.

test/support/python-server.ts (run with the repository's tsx) starts the production server over
a new database and makes teams on request; it stops the server when its stdin closes, so it ends
with this session even if pytest is killed. Needs `npm run build` (npm test does it first).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from countersign import AsyncCountersign, Countersign, RetryPolicy

REPO = Path(__file__).resolve().parents[3]
#: short backoffs: the tests check that retries happen, not how long they take
FAST_RETRY = RetryPolicy(retries=4, min_delay=0.02, max_delay=0.2)


class Server:
    def __init__(self) -> None:
        tsx = REPO / "node_modules" / ".bin" / "tsx"
        if not (REPO / "dist" / "server.js").exists():
            raise RuntimeError("No production build: run `npm run build` first (npm test does).")
        self.process = subprocess.Popen(
            [str(tsx), "test/support/python-server.ts"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lock = threading.Lock()
        self.base_url: str = self._read()["baseUrl"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"The test server exited (code {self.process.poll()}).")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer

    def team(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        with self.lock:
            self.process.stdin.write("team\n")
            self.process.stdin.flush()
            return self._read()

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    started = Server()
    yield started
    started.stop()


class Reviewer:
    """A reviewer deciding over the API with a personal token, as the web app would."""

    def __init__(self, base_url: str, token: str, queue_id: str) -> None:
        self.http = httpx.Client(
            base_url=f"{base_url}/api/v1", headers={"authorization": f"Bearer {token}"}, timeout=30
        )
        self.queue_id = queue_id
        self.threads: list[threading.Thread] = []
        self.failures: list[BaseException] = []

    def pending(self, timeout: float = 15) -> list[dict[str, Any]]:
        """The queue's pending batches, once there is at least one."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.http.get("/queue", params={"queue": self.queue_id, "status": "pending"})
            answer.raise_for_status()
            batches: list[dict[str, Any]] = answer.json()["batches"]
            if batches or time.monotonic() > deadline:
                return batches
            time.sleep(0.05)

    def batch(self, predicate: Any = None, timeout: float = 15) -> dict[str, Any]:
        """The first pending batch ``predicate`` accepts (waits for it)."""
        deadline = time.monotonic() + timeout
        while True:
            for batch in self.pending(timeout=max(0.0, deadline - time.monotonic())):
                if predicate is None or predicate(batch):
                    return batch
            if time.monotonic() > deadline:
                raise AssertionError("No such pending batch in the queue.")
            time.sleep(0.05)

    def decide(self, call: dict[str, Any], outcome: str, **fields: Any) -> dict[str, Any]:
        body = {"outcome": outcome, "expectedRevision": call["revision"], **fields}
        answer = self.http.post(f"/calls/{call['id']}/decision", json=body)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def decide_batch(self, batch: dict[str, Any], outcome: str, **fields: Any) -> dict[str, Any]:
        """Decides every call of a batch (one by one, as a reviewer clicking through)."""
        answer: dict[str, Any] = {}
        for call in batch["calls"]:
            answer = self.decide(call, outcome, **fields)
        return answer

    def decide_later(self, outcome: str, delay: float = 0.3, **fields: Any) -> threading.Thread:
        """Decides the next pending batch from a thread after ``delay`` s (the agent is waiting).
        The team fixture joins these threads and raises what failed in them."""

        def decide() -> None:
            try:
                time.sleep(delay)
                self.decide_batch(self.batch(), outcome, **fields)
            except BaseException as error:
                self.failures.append(error)

        thread = threading.Thread(target=decide, daemon=True)
        thread.start()
        self.threads.append(thread)
        return thread

    def close(self) -> None:
        for thread in self.threads:
            thread.join(timeout=30)
        self.http.close()
        if self.failures:
            raise self.failures[0]


@dataclass
class Team:
    base_url: str
    agent_key: str
    webhook_secret: str
    queue_id: str
    queue_name: str
    reviewer_name: str
    reviewer: Reviewer

    def client(self, **options: Any) -> Countersign:
        return Countersign(self.base_url, self.agent_key, **{"retry": FAST_RETRY, **options})

    def async_client(self, **options: Any) -> AsyncCountersign:
        return AsyncCountersign(self.base_url, self.agent_key, **{"retry": FAST_RETRY, **options})


@pytest.fixture
def team(server: Server) -> Iterator[Team]:
    made = server.team()
    reviewer = Reviewer(server.base_url, made["reviewerToken"], made["queueId"])
    yield Team(
        base_url=server.base_url,
        agent_key=made["agentKey"],
        webhook_secret=made["webhookSecret"],
        queue_id=made["queueId"],
        queue_name=made["queueName"],
        reviewer_name=made["reviewerName"],
        reviewer=reviewer,
    )
    reviewer.close()


def one_call(
    tool_call_id: str = "call-1", tool_name: str = "refund", **args: Any
) -> dict[str, Any]:
    return {"toolCallId": tool_call_id, "toolName": tool_name, "args": args or {"orderId": "A-1"}}


def receiver() -> tuple[ThreadingHTTPServer, queue.Queue[tuple[bytes, dict[str, str]]]]:
    """A webhook receiver on loopback: every POST's raw body and headers go to the queue."""
    received: queue.Queue[tuple[bytes, dict[str, str]]] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            received.put((body, dict(self.headers.items())))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received
