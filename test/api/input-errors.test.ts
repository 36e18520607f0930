import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  makeQuickTeam,
  makeReviewers,
  pausedRun,
  startApiServer,
  writeSnapshot,
} from "../support/api-fixtures";
import { apiClient, refundBatch } from "../support/http";
import { openSse } from "../support/sse";
import type { TestServer } from "../support/server";

// The edges every endpoint shares: 401, 403, 404 (unknown and not-yours), 413, 415, invalid_json —
// each answered in the contract's error shape, and none of them writing anything.

const LIMIT = 16 * 1024;
let server: TestServer;

type Team = Awaited<ReturnType<typeof makeQuickTeam>>;
type Ids = { run: string; batch: string; call: string; queue: string };
let mine: Team;
let theirs: Team;
let myIds: Ids;
let theirIds: Ids;

type Endpoint = {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  auth: "agent" | "reviewer" | "either";
  stream?: boolean;
};

/** Every endpoint of the contract, aimed at the given resources, each with a body valid for it. */
function endpoints(ids: Ids): Endpoint[] {
  return [
    { method: "POST", path: "/runs", body: {}, auth: "agent" },
    { method: "GET", path: `/runs/${ids.run}`, auth: "either" },
    { method: "POST", path: `/runs/${ids.run}/batches`, body: refundBatch(), auth: "agent" },
    { method: "GET", path: `/batches/${ids.batch}`, auth: "either" },
    { method: "POST", path: `/batches/${ids.batch}/cancel`, body: {}, auth: "agent" },
    { method: "POST", path: `/runs/${ids.run}/claim`, body: { workerId: "w" }, auth: "agent" },
    {
      method: "POST",
      path: `/runs/${ids.run}/heartbeat`,
      body: { claimToken: "cs_claim_x" },
      auth: "agent",
    },
    {
      method: "POST",
      path: `/runs/${ids.run}/events`,
      body: { claimToken: "cs_claim_x", type: "tool.completed", toolCallId: "t" },
      auth: "agent",
    },
    {
      method: "POST",
      path: `/runs/${ids.run}/complete`,
      body: { claimToken: "cs_claim_x", outcome: "completed" },
      auth: "agent",
    },
    { method: "POST", path: `/runs/${ids.run}/rollback`, body: {}, auth: "either" },
    { method: "GET", path: `/runs/${ids.run}/stream`, auth: "either", stream: true },
    { method: "GET", path: `/queue?queue=${ids.queue}`, auth: "reviewer" },
    {
      method: "POST",
      path: `/calls/${ids.call}/decision`,
      body: { outcome: "approve", expectedRevision: 1 },
      auth: "reviewer",
    },
    {
      method: "POST",
      path: `/batches/${ids.batch}/decision`,
      body: { outcome: "approve", expectedRevisions: { [ids.call]: 1 } },
      auth: "reviewer",
    },
    { method: "GET", path: `/stream?queue=${ids.queue}`, auth: "reviewer", stream: true },
  ];
}

/**
 * Calls an endpoint and reads its answer — but never waits on an event stream: if a stream opens
 * where an error was expected, the status (200) is enough to fail the test.
 */
async function send(
  endpoint: Endpoint,
  init: { token?: string; headers?: Record<string, string>; body?: BodyInit } = {},
) {
  const controller = new AbortController();
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body = init.body;
  if (body === undefined && endpoint.body !== undefined) {
    body = JSON.stringify(endpoint.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${server.baseUrl}/api/v1${endpoint.path}`, {
    method: endpoint.method,
    headers,
    body,
    signal: controller.signal,
  });
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    controller.abort();
    return { status: response.status, body: null as any, contentType: "text/event-stream" };
  }
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    contentType: response.headers.get("content-type"),
  };
}

function label(e: Endpoint) {
  return `${e.method} ${e.path}`;
}

function expectError(
  answer: { status: number; body: any },
  status: number,
  code: string,
  what: string,
) {
  expect(answer.status, what).toBe(status);
  expect(Object.keys(answer.body), what).toEqual(["error"]);
  expect(answer.body.error.code, what).toBe(code);
  expect(answer.body.error.message, what).toEqual(expect.any(String));
}

async function idsOf(team: Team): Promise<Ids> {
  const { batch } = await pausedRun(apiClient(server.baseUrl, team.agent.key), refundBatch());
  return { run: batch.runId, batch: batch.id, call: batch.calls[0].id, queue: team.queue.id };
}

beforeAll(async () => {
  server = await startApiServer("input-errors", {
    MAX_BODY_BYTES: String(LIMIT),
    // this suite sends a wrong key to every endpoint from one address: the guessing limit
    // (test/api/bearer-rate-limit.test.ts) would answer 429 before the errors it checks
    BEARER_FAILURES_PER_WINDOW: "100000",
  });
  mine = await makeQuickTeam();
  theirs = await makeQuickTeam();
  myIds = await idsOf(mine);
  theirIds = await idsOf(theirs);
});
afterAll(() => server?.stop());

describe("401 unauthenticated", () => {
  it("on every endpoint without credentials, or with a wrong key or token, writing nothing", async () => {
    const before = await writeSnapshot();
    const credentials: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: "Bearer cs_agent_not-a-real-key" },
      { authorization: "Bearer cs_rev_not-a-real-token" },
      { authorization: "Bearer something-else" },
      { authorization: `Basic ${Buffer.from("user:pass").toString("base64")}` },
      { authorization: "Bearer" },
      // a real key, sent without the scheme
      { authorization: mine.agent.key },
    ];
    for (const endpoint of endpoints(myIds)) {
      for (const headers of credentials) {
        const answer = await send(endpoint, { headers });
        expectError(
          answer,
          401,
          "unauthenticated",
          `${label(endpoint)} with ${JSON.stringify(headers)}`,
        );
      }
    }
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("403 forbidden", () => {
  it("a reviewer token on agent endpoints, an agent key on reviewer endpoints, writing nothing", async () => {
    const before = await writeSnapshot();
    let checked = 0;
    for (const endpoint of endpoints(myIds)) {
      if (endpoint.auth === "either") continue;
      const token = endpoint.auth === "agent" ? mine.reviewer.token : mine.agent.key;
      expectError(await send(endpoint, { token }), 403, "forbidden", label(endpoint));
      checked++;
    }
    expect(checked).toBe(11);
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("404 not_found", () => {
  it("for unknown ids on every endpoint that takes one", async () => {
    const unknown = "00000000-0000-7000-8000-000000000000";
    const unknownIds: Ids = { run: unknown, batch: unknown, call: unknown, queue: unknown };
    const before = await writeSnapshot();
    for (const endpoint of endpoints(unknownIds)) {
      if (endpoint.path === "/runs") continue;
      const tokens =
        endpoint.auth === "either"
          ? [mine.agent.key, mine.reviewer.token]
          : [endpoint.auth === "agent" ? mine.agent.key : mine.reviewer.token];
      for (const token of tokens)
        expectError(await send(endpoint, { token }), 404, "not_found", label(endpoint));
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("for ids that exist but belong to another agent or queue — answered exactly like unknown ones", async () => {
    const before = await writeSnapshot();
    const unknown = "00000000-0000-7000-8000-000000000000";
    const unknownIds: Ids = { run: unknown, batch: unknown, call: unknown, queue: unknown };
    const foreign = endpoints(theirIds);
    const missing = endpoints(unknownIds);
    for (const [i, endpoint] of foreign.entries()) {
      if (endpoint.path === "/runs") continue;
      const tokens =
        endpoint.auth === "either"
          ? [mine.agent.key, mine.reviewer.token]
          : [endpoint.auth === "agent" ? mine.agent.key : mine.reviewer.token];
      for (const token of tokens) {
        const answer = await send(endpoint, { token });
        expectError(answer, 404, "not_found", label(endpoint));
        // the same answer as for an id that does not exist (bar the echoed id): nothing to probe
        const asUnknown = JSON.stringify(answer.body).replaceAll(theirIds.queue, unknown);
        expect(JSON.parse(asUnknown), label(endpoint)).toEqual(
          (await send(missing[i]!, { token })).body,
        );
      }
    }
    expect(await writeSnapshot()).toEqual(before);
    // and the other team's batch is untouched
    const still = await apiClient(server.baseUrl, theirs.agent.key).get(
      `/batches/${theirIds.batch}`,
    );
    expect(still.body.status).toBe("pending");
  });

  it("for a reviewer of no queue at all", async () => {
    const [loner] = await makeReviewers(1, null);
    for (const endpoint of endpoints(myIds)) {
      if (
        endpoint.auth === "agent" ||
        endpoint.path.startsWith("/queue") ||
        endpoint.path.startsWith("/stream")
      )
        continue;
      expectError(await send(endpoint, { token: loner!.token }), 404, "not_found", label(endpoint));
    }
  });

  it("an agent sending a batch to a queue it may not target, answered like a missing queue", async () => {
    const before = await writeSnapshot();
    const agent = apiClient(server.baseUrl, mine.agent.key);
    const run = await agent.post("/runs", { batch: refundBatch({ queue: theirs.queue.id }) });
    expectError(run, 404, "not_found", "POST /runs");
    const running = await agent.post("/runs", {});
    const afterRun = await writeSnapshot();
    const batch = await agent.post(
      `/runs/${running.body.id}/batches`,
      refundBatch({ queue: theirs.queue.name }),
    );
    expectError(batch, 404, "not_found", "POST /runs/{id}/batches");
    expect(await writeSnapshot()).toEqual(afterRun);
    expect(afterRun.runs).toBe(before.runs! + 1);
  });
});

describe("415 unsupported_media_type", () => {
  it("on every endpoint that takes a body, for anything but JSON, writing nothing", async () => {
    const before = await writeSnapshot();
    const posts = endpoints(myIds).filter((e) => e.method === "POST");
    for (const endpoint of posts) {
      const token = endpoint.auth === "reviewer" ? mine.reviewer.token : mine.agent.key;
      const json = JSON.stringify(endpoint.body);
      for (const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
      ]) {
        const answer = await send(endpoint, {
          token,
          headers: { "content-type": type },
          body: json,
        });
        expectError(answer, 415, "unsupported_media_type", `${label(endpoint)} as ${type}`);
      }
      // no content type at all
      const untyped = await send(endpoint, { token, body: new Blob([json]) });
      expectError(untyped, 415, "unsupported_media_type", `${label(endpoint)} untyped`);
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("accepts application/json with a charset", async () => {
    const answer = await send(endpoints(myIds)[0]!, {
      token: mine.agent.key,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ externalId: "charset" }),
    });
    expect(answer.status).toBe(201);
    expect(answer.body.externalId).toBe("charset");
  });
});

describe("400 invalid_json", () => {
  it("on every endpoint that takes a body, writing nothing", async () => {
    const before = await writeSnapshot();
    for (const endpoint of endpoints(myIds).filter((e) => e.method === "POST")) {
      const token = endpoint.auth === "reviewer" ? mine.reviewer.token : mine.agent.key;
      for (const text of [
        "{not json",
        '{"outcome": "approve",',
        "[1, 2",
        "undefined",
        "{'single': 'quotes'}",
      ]) {
        const answer = await send(endpoint, {
          token,
          headers: { "content-type": "application/json" },
          body: text,
        });
        expectError(answer, 400, "invalid_json", `${label(endpoint)} ${text}`);
      }
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is told apart from valid JSON of the wrong shape (invalid_request with issues)", async () => {
    for (const endpoint of endpoints(myIds).filter((e) => e.method === "POST")) {
      const token = endpoint.auth === "reviewer" ? mine.reviewer.token : mine.agent.key;
      const answer = await send(endpoint, {
        token,
        headers: { "content-type": "application/json" },
        body: "[]",
      });
      expect(answer.status, label(endpoint)).toBe(400);
      expect(answer.body.error.code, label(endpoint)).toBe("invalid_request");
      expect(answer.body.error.issues.length, label(endpoint)).toBeGreaterThan(0);
      for (const issue of answer.body.error.issues)
        expect(Object.keys(issue).sort()).toEqual(["message", "path"]);
    }
  });
});

describe("400 invalid_request on a query", () => {
  it("GET /reviewer-tokens?user= longer than any id", async () => {
    const answer = await apiClient(server.baseUrl, mine.reviewer.token).get(
      `/reviewer-tokens?user=${"x".repeat(201)}`,
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    expect(answer.body.error.issues[0].path).toBe("user");
  });
});

describe("413 payload_too_large", () => {
  /** A POST /runs body of exactly `size` bytes. */
  function runBodyOf(size: number): string {
    const empty = JSON.stringify({ metadata: { pad: "" } });
    return JSON.stringify({ metadata: { pad: "x".repeat(size - empty.length) } });
  }

  it("accepts a body of exactly the limit and refuses one byte more, writing nothing", async () => {
    const agent = { token: mine.agent.key, headers: { "content-type": "application/json" } };
    const endpoint = endpoints(myIds)[0]!;
    const atLimit = runBodyOf(LIMIT);
    expect(Buffer.byteLength(atLimit)).toBe(LIMIT);
    expect((await send(endpoint, { ...agent, body: atLimit })).status).toBe(201);

    const before = await writeSnapshot();
    const over = await send(endpoint, { ...agent, body: runBodyOf(LIMIT + 1) });
    expectError(over, 413, "payload_too_large", "one byte over");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("refuses an oversized body on every endpoint, before authentication, and when sent chunked without a length", async () => {
    const before = await writeSnapshot();
    const big = JSON.stringify({ pad: "x".repeat(4 * LIMIT) });
    for (const endpoint of endpoints(myIds).filter((e) => e.method === "POST")) {
      const token = endpoint.auth === "reviewer" ? mine.reviewer.token : mine.agent.key;
      expectError(
        await send(endpoint, { token, headers: { "content-type": "application/json" }, body: big }),
        413,
        "payload_too_large",
        label(endpoint),
      );
      expectError(
        await send(endpoint, { headers: { "content-type": "application/json" }, body: big }),
        413,
        "payload_too_large",
        `${label(endpoint)} anonymous`,
      );
    }

    // no Content-Length: the server counts as it reads and answers 413 past the limit. Repeated, and
    // each followed by a normal request over the same keep-alive connections: the 413 must reach
    // the client (not a reset) and leave the connection usable.
    for (let round = 0; round < 10; round++) {
      let pulled = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled++ < 8) controller.enqueue(new TextEncoder().encode("x".repeat(LIMIT / 2)));
          else controller.close();
        },
      });
      const response = await fetch(`${server.baseUrl}/api/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${mine.agent.key}`, "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit);
      expect(response.status).toBe(413);
      expect((await response.json()).error.code).toBe("payload_too_large");
      const next = await apiClient(server.baseUrl, mine.agent.key).get(`/runs/${myIds.run}`);
      expect(next.status).toBe(200);
    }
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("event streams", () => {
  it("GET /runs/{id}/stream replays the run's events to its agent and a reviewer of its queue", async () => {
    const agent = apiClient(server.baseUrl, mine.agent.key);
    const { run } = await pausedRun(agent, refundBatch());
    for (const token of [mine.agent.key, mine.reviewer.token]) {
      const stream = await openSse(`${server.baseUrl}/api/v1/runs/${run.id}/stream`, {
        token,
        lastEventId: 0,
      });
      try {
        expect(stream.status).toBe(200);
        const created = await stream.waitFor((m) => m.event === "batch.created");
        expect(created.data).toMatchObject({ type: "batch.created", runId: run.id });
        expect(stream.messages[0]!.event).toBe("run.created");
        expect(stream.messages.every((m) => m.data.runId === run.id)).toBe(true);
      } finally {
        stream.close();
      }
    }
  });

  it("GET /stream follows the reviewer's queues live", async () => {
    const stream = await openSse(`${server.baseUrl}/api/v1/stream`, { token: mine.reviewer.token });
    try {
      expect(stream.status).toBe(200);
      const { batch } = await pausedRun(apiClient(server.baseUrl, mine.agent.key), refundBatch());
      const seen = await stream.waitFor(
        (m) => m.event === "batch.created" && m.data.batchId === batch.id,
      );
      expect(seen.data.queueId).toBe(mine.queue.id);
    } finally {
      stream.close();
    }
  });

  it("refuses a Last-Event-ID that is not an event id", async () => {
    const endpoint = endpoints(myIds).find((e) => e.path.endsWith("/stream"))!;
    const answer = await send(endpoint, {
      token: mine.agent.key,
      headers: { "last-event-id": "yesterday" },
    });
    expectError(answer, 400, "invalid_request", "Last-Event-ID");
  });
});
