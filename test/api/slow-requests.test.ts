import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeQuickTeam, pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { apiClient, refundBatch } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import { openSse, type SseClient } from "@/test/support/sse";

// Issue 14, finding 8d: a client trickling a request held its connection for 300 s, and one
// credential could hold any number of event streams. Deadlines here are short (set by env) so
// the test is quick; long-polls and streams must outlive them.

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const STREAMS = 3;

let server: TestServer;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;

beforeAll(async () => {
  server = await startApiServer("slow-requests", {
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    STREAMS_PER_CALLER: String(STREAMS),
  });
  team = await makeQuickTeam();
}, 60_000);
afterAll(() => server?.stop());

/**
 * Sends `head` (and whatever `trickle` adds, a byte at a time every 200 ms) on a raw socket and
 * resolves with what the server answered and how long until it closed the connection, or
 * `closed: false` if it still held it after `giveUpMs`.
 */
function slowClient(head: string, trickle: string, giveUpMs: number) {
  return new Promise<{ closed: boolean; ms: number; answer: string }>((resolve) => {
    const started = Date.now();
    const socket = connect(server.port, "127.0.0.1");
    let answer = "";
    let at = 0;
    const dribble = setInterval(() => {
      if (at < trickle.length && !socket.destroyed) socket.write(trickle[at++]!);
    }, 200);
    const finish = (closed: boolean) => {
      clearInterval(dribble);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closed, ms: Date.now() - started, answer });
    };
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
    socket.write(head);
  });
}

describe("slow requests", () => {
  it("a body trickled in is cut at the request deadline with a 408", async () => {
    const head = [
      "POST /api/v1/runs HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${team.agent.key}`,
      "Content-Type: application/json",
      "Content-Length: 1000",
      "",
      "",
    ].join("\r\n");
    const result = await slowClient(head, `{"metadata":{"x":"${"a".repeat(900)}`, 8_000);
    expect(result.closed, "the server still held the connection").toBe(true);
    expect(result.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(result.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500);
    expect(result.answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it("headers trickled in are cut at the headers deadline", async () => {
    const result = await slowClient(
      "GET /api/health HTTP/1.1\r\n",
      "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      8_000,
    );
    expect(result.closed, "the server still held the connection").toBe(true);
    expect(result.ms).toBeLessThan(HEADERS_TIMEOUT_MS + 2_500);
  });

  it("a long-poll and an event stream outlive the request deadline", async () => {
    const agent = apiClient(server.baseUrl, team.agent.key);
    const { batch } = await pausedRun(agent, refundBatch());
    const stream = await openSse(`${server.baseUrl}/api/v1/stream`, { token: team.reviewer.token });
    try {
      expect(stream.status).toBe(200);
      const started = Date.now();
      const polled = await agent.get(`/batches/${batch.id}?wait=4`);
      expect(polled.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThan(REQUEST_TIMEOUT_MS + 1_000);
      // Still open and still live: a new pause reaches it.
      const { batch: later } = await pausedRun(agent, refundBatch());
      await stream.waitFor((m) => m.event === "batch.created" && m.data.batchId === later.id);
    } finally {
      stream.close();
    }
  }, 20_000);
});

describe("streams per caller", () => {
  it(`allows ${STREAMS} open streams per reviewer, then answers 429 until one closes`, async () => {
    const url = `${server.baseUrl}/api/v1/stream`;
    const open: SseClient[] = [];
    try {
      for (let i = 0; i < STREAMS; i++) {
        open.push(await openSse(url, { token: team.reviewer.token }));
        expect(open[i]!.status).toBe(200);
      }
      const refused = await fetch(url, {
        headers: { authorization: `Bearer ${team.reviewer.token}` },
      });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("rate_limited");
      expect(error.message).toMatch(/3 event streams open/);

      // Another caller is not affected; the run stream counts against the same caller.
      const agentStream = await openSse(url.replace("/stream", "/runs/x/stream"), {
        token: team.agent.key,
      });
      expect(agentStream.status).toBe(404);
      agentStream.close();

      open.pop()!.close();
      // The server notices the closed socket within moments.
      let again: SseClient | null = null;
      for (let attempt = 0; attempt < 40 && again?.status !== 200; attempt++) {
        again?.close();
        await new Promise((r) => setTimeout(r, 50));
        again = await openSse(url, { token: team.reviewer.token });
      }
      expect(again!.status).toBe(200);
      open.push(again!);
    } finally {
      for (const s of open) s.close();
    }
  });
});
