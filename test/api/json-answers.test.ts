import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { refundBatch } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// The production server writes a JSON answer whole, with its length, rather than streaming it
// back out of the Response (lib/json-response.ts): the same status, headers and body as
// before, successes and errors alike.

let server: TestServer;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;

beforeAll(async () => {
  server = await startApiServer("json-answers");
  team = await makeQuickTeam();
}, 90_000);
afterAll(() => server?.stop());

async function send(method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { response, text };
}

function expectWholeJson(response: Response, text: string) {
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
  expect(response.headers.get("transfer-encoding")).toBeNull();
  // the API's own headers are still there
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  expect(response.headers.get("x-request-id")).toBeTruthy();
  return JSON.parse(text);
}

describe("JSON answers", () => {
  it("a pause and a decision are written whole, with their length", async () => {
    const paused = await send("POST", "/runs", team.agent.key, {
      batch: refundBatch({ summary: "Refund 25 € — ünïcode counts in bytes" }),
    });
    expect(paused.response.status).toBe(201);
    expect(paused.response.headers.get("cache-control")).toBe("no-store");
    const run = expectWholeJson(paused.response, paused.text);
    const call = run.batches[0].calls[0];

    const decided = await send("POST", `/calls/${call.id}/decision`, team.reviewer.token, {
      outcome: "approve",
      expectedRevision: call.revision,
    });
    expect(decided.response.status).toBe(200);
    expect(expectWholeJson(decided.response, decided.text).call.status).toBe("approved");

    const again = await send("POST", `/calls/${call.id}/decision`, team.reviewer.token, {
      outcome: "approve",
      expectedRevision: call.revision,
    });
    expect(again.response.status).toBe(409);
    expect(expectWholeJson(again.response, again.text).error.code).toBe("already_decided");
  });

  it("an error answer is written whole too", async () => {
    const missing = await send("GET", "/runs/no-such-run", team.agent.key);
    expect(missing.response.status).toBe(404);
    expect(expectWholeJson(missing.response, missing.text).error.code).toBe("not_found");
  });
});
