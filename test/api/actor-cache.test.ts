import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, events, reviewerTokens } from "@/db/schema";
import { sha256Hex } from "@/lib/ids";
import { pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// The server remembers who a bearer credential belongs to for a second (lib/auth/actor-cache.ts).
// What the app changes itself applies to the very next request; what another process changes
// straight in the database applies within about a second.

/** How long a change made elsewhere may take to be seen: the cache's second, and slack for a busy machine. */
const SEEN_WITHIN_MS = 3000;

let server: TestServer;
let admin: ApiClient;
let queueName: string;

beforeAll(async () => {
  server = await startApiServer("actor-cache");
  queueName = (await makeQueue()).name;
  const person = await makeReviewer({
    name: "Ada Admin",
    queues: [{ name: queueName, role: "admin" }],
  });
  admin = apiClient(server.baseUrl, person.token);
}, 60_000);
afterAll(() => server?.stop());

/** Polls `refused` until it holds; the milliseconds it took, or a failure past SEEN_WITHIN_MS. */
async function msUntil(refused: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await refused())) {
    if (Date.now() - started > SEEN_WITHIN_MS) throw new Error(`not seen in ${SEEN_WITHIN_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

describe("remembered credentials", () => {
  it("applies an agent's mode change through the API to its very next request", async () => {
    const key = await makeAgentKey({ queues: [queueName] });
    const agent = apiClient(server.baseUrl, key.key);
    const setMode = async (mode: string) => {
      const answer = await admin.raw(`/agents/${key.id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ mode }),
      });
      expect(answer.status).toBe(200);
    };
    const statusOfNextCall = async () =>
      (await pausedRun(agent, refundBatch())).batch.calls[0].status as string;

    // Each round trip starts with the agent's actor freshly remembered in its old mode.
    for (let round = 0; round < 3; round++) {
      expect(await statusOfNextCall()).toBe("pending");
      await setMode("allow");
      expect(await statusOfNextCall()).toBe("approved");
      await setMode("ask");
    }
    expect(await statusOfNextCall()).toBe("pending");
  });

  it("names a reviewer renamed by an admin anew on the token's very next request", async () => {
    const person = await makeReviewer({ name: "Rae Before", queues: [{ name: queueName }] });
    const reviewer = apiClient(server.baseUrl, person.token);
    const agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [queueName] })).key);
    const { batch } = await pausedRun(agent, refundBatch());
    expect((await reviewer.get("/queue")).status).toBe(200);

    // Only admins rename (better-auth's self-service update-user is off: issue 14, finding 3).
    const renamed = await admin.raw(`/people/${person.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Rae After" }),
    });
    expect(renamed.status).toBe(200);
    const decided = await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: batch.calls[0].revision,
    });
    expect(decided.status).toBe(200);
    // The audit trail names the reviewer as the request's actor had it (views join users afresh).
    const logged = await getDb()
      .select({ actorName: events.actorName })
      .from(events)
      .where(and(eq(events.callId, batch.calls[0].id), eq(events.actorId, person.id)));
    expect(logged.map((e) => e.actorName)).toEqual(["Rae After"]);
  });

  it("refuses an agent key revoked in the database by another process within about a second", async () => {
    const key = await makeAgentKey({ queues: [queueName] });
    const agent = apiClient(server.baseUrl, key.key);
    const { run } = await pausedRun(agent, refundBatch());
    expect((await agent.get(`/runs/${run.id}`)).status).toBe(200);

    // This test process's own connection: the server hears of it only through the database.
    await getDb()
      .update(agentKeys)
      .set({ revokedAt: Date.now() })
      .where(eq(agentKeys.keyHash, sha256Hex(key.key)));
    const ms = await msUntil(async () => (await agent.get(`/runs/${run.id}`)).status === 401);
    expect(ms).toBeLessThan(SEEN_WITHIN_MS);
    // Refused from then on, not only once.
    expect((await agent.get(`/runs/${run.id}`)).status).toBe(401);
  });

  it("refuses a reviewer token revoked in the database by another process within about a second", async () => {
    const person = await makeReviewer({ queues: [{ name: queueName }] });
    const reviewer = apiClient(server.baseUrl, person.token);
    expect((await reviewer.get("/queue")).status).toBe(200);

    await getDb()
      .update(reviewerTokens)
      .set({ revokedAt: Date.now() })
      .where(eq(reviewerTokens.tokenHash, sha256Hex(person.token)));
    await msUntil(async () => (await reviewer.get("/queue")).status === 401);
    expect((await reviewer.get("/queue")).status).toBe(401);
  });
});
