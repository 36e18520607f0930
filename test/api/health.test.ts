import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../support/database";
import { startServer, type TestServer } from "../support/server";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ databaseUrl: await freshDatabase("health") });
});
afterAll(() => server?.stop());

describe("GET /api/health", () => {
  it("answers ok when the database answers", async () => {
    const response = await fetch(`${server.baseUrl}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document describing every endpoint of the contract and its extensions", async () => {
    const doc = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/agents",
        "/agents/{agentId}",
        "/batches/{batchId}",
        "/batches/{batchId}/cancel",
        "/batches/{batchId}/decision",
        "/batches/{batchId}/review-claim",
        "/calls/{callId}/decision",
        "/history",
        "/history/export",
        "/queue",
        "/queue/snapshot",
        "/routing-rules",
        "/routing-rules/{ruleId}",
        "/routing-rules/{ruleId}/move",
        "/policy-rules",
        "/policy-rules/{ruleId}",
        "/policy-rules/{ruleId}/move",
        "/policy-rules/try",
        "/queues",
        "/queues/{queueId}",
        "/queues/{queueId}/archive",
        "/queues/{queueId}/members",
        "/queues/{queueId}/members/{userId}",
        "/runs",
        "/runs/{runId}",
        "/runs/{runId}/batches",
        "/runs/{runId}/claim",
        "/runs/{runId}/complete",
        "/runs/{runId}/events",
        "/runs/{runId}/heartbeat",
        "/runs/{runId}/rollback",
        "/runs/{runId}/stream",
        "/stream",
        "/views",
        "/views/{viewId}",
      ].sort(),
    );
    // request bodies come from the zod schemas that validate them
    const createBatch =
      doc.paths["/runs/{runId}/batches"].post.requestBody.content["application/json"].schema;
    expect(createBatch.properties.calls.items.required).toEqual(
      expect.arrayContaining(["toolCallId", "toolName", "args"]),
    );
  });

  it("lets no other site frame the app (only /embed, for configured origins, and sign-in)", async () => {
    for (const path of [
      "/queue",
      "/sign-in?next=/queue",
      "/api/v1/openapi.json",
      "/embed/batches/x",
    ]) {
      const response = await fetch(`${server.baseUrl}${path}`, { redirect: "manual" });
      const framing = response.headers.get("content-security-policy") ?? "";
      if (path.startsWith("/sign-in")) expect(framing, path).not.toContain("frame-ancestors");
      else if (path.startsWith("/embed")) expect(framing, path).toContain("frame-ancestors 'self'");
      else {
        expect(framing, path).toBe("frame-ancestors 'self'");
        expect(response.headers.get("x-frame-options"), path).toBe("SAMEORIGIN");
      }
    }
  });

  it("answers unknown API paths with the contract's error shape", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/nope`);
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe("not_found");
  });
});
