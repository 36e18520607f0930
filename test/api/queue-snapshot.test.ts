import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveBatch, pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// GET /queue/snapshot: what the queue page renders first, then pages through in the background.

let server: TestServer;
let agent: ApiClient;
let reviewer: ApiClient;

beforeAll(async () => {
  server = await startApiServer("snapshot");
  const team = await makeTeam();
  agent = apiClient(server.baseUrl, team.agent.key);
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
}, 60_000);
afterAll(() => server?.stop());

describe("GET /queue/snapshot", () => {
  it("pages the pending batches soonest deadline first, with the stream position", async () => {
    const made = [];
    for (const timeoutSecs of [900, 300, 600, 1200]) {
      made.push((await pausedRun(agent, refundBatch({ timeoutSecs }))).batch);
    }
    await approveBatch(reviewer, made[3]!); // settled: not in the snapshot
    const [late, soon, middle] = made;

    const first = await reviewer.get("/queue/snapshot?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.batches.map((b: { id: string }) => b.id)).toEqual([soon.id, middle.id]);
    expect(first.body.pendingTotal).toBe(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const { body: all } = await reviewer.get("/queue?status=all");
    expect(all.batches).toHaveLength(4);
    expect(first.body.lastEventId).toBeGreaterThan(0);

    const second = await reviewer.get(
      `/queue/snapshot?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );
    expect(second.body.batches.map((b: { id: string }) => b.id)).toEqual([late.id]);
    expect(second.body.nextCursor).toBeNull();
  });

  it("refuses a bad cursor or limit, and agents", async () => {
    const bad = await reviewer.get("/queue/snapshot?cursor=bm90LWEtY3Vyc29y");
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe("cursor");
    expect((await reviewer.get("/queue/snapshot?limit=0")).status).toBe(400);
    expect((await agent.get("/queue/snapshot")).status).toBe(403);
  });
});
