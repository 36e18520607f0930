import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTransaction } from "@/db/client";
import { queueMembers } from "@/db/schema";
import { appendEvent, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import { openSse } from "@/test/support/sse";

// A reviewer's stream follows their membership: when they join or leave a queue the stream ends
// at that event, and the reconnect (Last-Event-ID) is answered under the new visibility — so a
// removed reviewer stops receiving the queue's events, live and on replay.

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("membership-stream");
}, 60_000);
afterAll(() => server?.stop());

/** A membership change as the queue-management verbs make it: the row and its event, together. */
async function membership(
  change: "member.added" | "member.removed",
  queueId: string,
  userId: string,
) {
  await writeTransaction(async (tx) => {
    if (change === "member.added") {
      await tx
        .insert(queueMembers)
        .values({ queueId, userId, role: "reviewer", createdAt: Date.now() });
    } else {
      await tx
        .delete(queueMembers)
        .where(and(eq(queueMembers.queueId, queueId), eq(queueMembers.userId, userId)));
    }
    await appendEvent(tx, {
      type: change,
      queueId,
      actor: SYSTEM_ACTOR,
      data: { userId, role: "reviewer" },
    });
  });
}

describe("a reviewer's stream and their membership", () => {
  it("ends at a join or a leave; the reconnect sees exactly the new queues", async () => {
    const home = await makeQueue();
    const other = await makeQueue();
    const dana = await makeReviewer({ queues: [{ name: home.name }] });
    const agentHome = apiClient(server.baseUrl, (await makeAgentKey({ queues: [home.name] })).key);
    const agentOther = apiClient(
      server.baseUrl,
      (await makeAgentKey({ queues: [other.name] })).key,
    );
    const url = `${server.baseUrl}/api/v1/stream`;

    const first = await openSse(url, { token: dana.token, lastEventId: 0 });
    const inHome = await pausedRun(agentHome, refundBatch());
    const seen = await first.waitFor((m) => m.data?.batchId === inHome.batch.id);
    const beforeJoin = await pausedRun(agentOther, refundBatch());

    await membership("member.added", other.id, dana.id);
    await first.ended; // the server ended it at the join
    expect(first.messages.some((m) => m.data?.batchId === beforeJoin.batch.id)).toBe(false);

    // Reconnecting from the last event it saw, the other queue's earlier pause is now replayed.
    const second = await openSse(url, { token: dana.token, lastEventId: seen.id! });
    await second.waitFor((m) => m.data?.batchId === beforeJoin.batch.id);

    await membership("member.removed", other.id, dana.id);
    await second.ended;
    const lastSeen = second.messages.filter((m) => m.id !== null).at(-1)!.id!;
    const third = await openSse(url, { token: dana.token, lastEventId: lastSeen });
    const afterLeave = await pausedRun(agentOther, refundBatch());
    const homeAgain = await pausedRun(agentHome, refundBatch());
    await third.waitFor((m) => m.data?.batchId === homeAgain.batch.id);
    expect(third.messages.some((m) => m.data?.batchId === afterLeave.batch.id)).toBe(false);
    expect(third.messages.some((m) => m.data?.queueId === other.id)).toBe(false);
    third.close();
  });
});
