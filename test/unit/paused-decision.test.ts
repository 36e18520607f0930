import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getClient } from "@/db/client";
import { decideBatch } from "@/lib/approvals/decide-batch";
import { decideCall } from "@/lib/approvals/decide-call";
import { type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { cancelBatch } from "@/lib/batches/cancel-batch";
import {
  keepPausedBatch,
  pausedBatchesHeld,
  takePausedBatch,
  type PausedBatch,
} from "@/lib/batches/paused-batches";
import { claimReview } from "@/lib/claims/claim-review";
import { ApiError } from "@/lib/errors";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { readsDuring } from "../support/reads";
import { actorFor, makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// The first decision on a batch this process paused plans from the batch as the pause left it
// (lib/batches/paused-batches.ts), with no read. These tests check that it answers and writes
// exactly what the read path does, and that a copy the database has moved past — changed by
// another instance, which this process's copy cannot know of — never decides: each takes the
// copy out, lets "another instance" (the read path) change the batch or its queue, puts the copy
// back, and checks the decision gets the answer the database's state deserves. The
// separation-of-duties and own-claim cases fail without the copy's guard.

let databaseUrl: string;
let other: Client;
let queueId: string;
let queueName: string;
let agent: AgentActor;
let dana: ReviewerActor;
let sam: ReviewerActor;

async function pause(id: string, calls = 1) {
  const { run } = await createRun(agent, {
    conversationId: "conversation-1",
    batch: {
      calls: Array.from({ length: calls }, (_, i) => ({
        toolCallId: `${id}-${i}`,
        toolName: "refund_order",
        args: { orderId: id, line: i },
        summary: `Refund ${id}`,
        inputSchema: {
          type: "object",
          properties: { orderId: { type: "string" }, line: { type: "number" } },
        },
      })),
    },
  });
  return run.batches![0]!;
}

/** Runs `meanwhile` as another instance would (this process's copy set aside), then puts it back. */
async function withCopyBehind(callId: string, meanwhile: () => Promise<unknown>) {
  const copy = takePausedBatch({ callId });
  expect(copy).not.toBeNull();
  await meanwhile();
  keepPausedBatch(copy!);
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected a refusal");
    },
    (error: unknown) => error as ApiError,
  );

const rowsOf = async (sql: string, ...args: string[]) =>
  (await getClient().execute({ sql, args })).rows.map((r) => ({ ...r }));

beforeAll(async () => {
  databaseUrl = await freshDatabase("paused-decision");
  other = createClient({ url: databaseUrl });
  const queue = await makeQueue({});
  queueId = queue.id;
  queueName = queue.name;
  const d = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queue.name }] });
  const s = await makeReviewer({ name: "Sam Reviewer", queues: [{ name: queue.name }] });
  dana = (await actorFor(d.token)) as ReviewerActor;
  sam = (await actorFor(s.token)) as ReviewerActor;
  const key = await makeAgentKey({ queues: [queue.name], ownerEmail: d.email });
  agent = (await actorFor(key.key)) as AgentActor;
});

afterAll(() => {
  other.close();
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

describe("a decision planned from the pause's copy", () => {
  it("reads nothing before its write", async () => {
    const batch = await pause("no-read");
    const reads = await readsDuring(() =>
      decideCall(sam, batch.calls[0]!.id, { outcome: "approve", expectedRevision: 1 }),
    );
    expect(reads).toEqual([]);
  });

  it("answers and writes what the read path does, for every kind of decision", async () => {
    const decisions = [
      { outcome: "approve", expectedRevision: 1, scope: "conversation" },
      { outcome: "reject", expectedRevision: 1, reason: "Not this one" },
      { outcome: "edit", expectedRevision: 1, editedArgs: { orderId: "other", line: 0 } },
    ] as const;
    for (const decision of decisions) {
      const fromCopy = await pause(`copy-${decision.outcome}`, 2);
      const fromRead = await pause(`read-${decision.outcome}`, 2);
      expect(takePausedBatch({ callId: fromRead.calls[0]!.id })).not.toBeNull();
      for (const [batch, position] of [
        [fromCopy, 0],
        [fromRead, 0],
        [fromCopy, 1],
        [fromRead, 1],
      ] as const) {
        await decideCall(sam, batch.calls[position]!.id, { ...decision });
      }
      const [a, b] = await Promise.all([written(fromCopy.id), written(fromRead.id)]);
      expect(a).toEqual(b);
      expect(a.events.map((e) => e.type)).toContain("batch.decided");
    }
  });
});

describe("a whole batch decided at once from the pause's copy", () => {
  it("reads nothing, and answers and writes what the read path does", async () => {
    const fromCopy = await pause("copy-all", 3);
    const fromRead = await pause("read-all", 3);
    expect(takePausedBatch({ batchId: fromRead.id })).not.toBeNull();
    const revisions = (batch: typeof fromCopy) =>
      Object.fromEntries(batch.calls.map((call) => [call.id, call.revision]));
    const reads = await readsDuring(() =>
      decideBatch(sam, fromCopy.id, { outcome: "approve", expectedRevisions: revisions(fromCopy) }),
    );
    expect(reads).toEqual([]);
    await decideBatch(sam, fromRead.id, {
      outcome: "approve",
      expectedRevisions: revisions(fromRead),
    });
    const [a, b] = await Promise.all([written(fromCopy.id), written(fromRead.id)]);
    expect(a).toEqual(b);
    expect(a.batch).toMatchObject([{ status: "decided", outcome: "approved" }]);
  });

  it("a call of it decided elsewhere meanwhile: nothing is decided (409)", async () => {
    const batch = await pause("all-stale", 2);
    await withCopyBehind(batch.calls[0]!.id, () =>
      decideCall(dana, batch.calls[1]!.id, {
        outcome: "reject",
        expectedRevision: 1,
        reason: "No",
      }),
    );
    const refused = await failure(
      decideBatch(sam, batch.id, {
        outcome: "approve",
        expectedRevisions: Object.fromEntries(batch.calls.map((c) => [c.id, 1])),
      }),
    );
    expect(refused.code).toBe("already_decided");
    expect(refused.message).toMatch(/^Nothing was decided/);
    expect(
      await rowsOf("select status from calls where batch_id = ? order by position", batch.id),
    ).toEqual([{ status: "pending" }, { status: "rejected" }]);
  });
});

describe("a copy the database has moved past never decides", () => {
  it("a call another reviewer decided meanwhile: 409 naming them, and nothing written", async () => {
    const batch = await pause("decided-elsewhere");
    const callId = batch.calls[0]!.id;
    await withCopyBehind(callId, () =>
      decideCall(dana, callId, { outcome: "reject", expectedRevision: 1, reason: "No" }),
    );
    const before = await written(batch.id);
    const refused = await failure(
      decideCall(sam, callId, { outcome: "approve", expectedRevision: 1 }),
    );
    expect(refused.code).toBe("already_decided");
    expect(refused.message).toContain("Dana Reviewer");
    expect(await written(batch.id)).toEqual(before);
  });

  it("a batch the agent withdrew meanwhile: 409 not_pending", async () => {
    const batch = await pause("withdrawn");
    const callId = batch.calls[0]!.id;
    await withCopyBehind(callId, () => cancelBatch(agent, batch.id, { reason: "done" }));
    const refused = await failure(
      decideCall(sam, callId, { outcome: "approve", expectedRevision: 1 }),
    );
    expect(refused.code).toBe("not_pending");
  });

  it("a reviewer of another team: 404, as for any call outside their queues", async () => {
    const outsider = await makeReviewer({ name: "Olive Outsider" });
    const olive = (await actorFor(outsider.token)) as ReviewerActor;
    const batch = await pause("outsider");
    const refused = await failure(
      decideCall(olive, batch.calls[0]!.id, { outcome: "approve", expectedRevision: 1 }),
    );
    expect(refused.status).toBe(404);
    expect((await rowsOf("select status from calls where id = ?", batch.calls[0]!.id))[0]).toEqual({
      status: "pending",
    });
  });

  it("a reviewer taken out of the queue meanwhile (no event of the run): 404, nothing written", async () => {
    const leaving = await makeReviewer({ name: "Lee Leaving", queues: [{ name: queueName }] });
    const lee = (await actorFor(leaving.token)) as ReviewerActor;
    const batch = await pause("taken-out");
    const callId = batch.calls[0]!.id;
    await withCopyBehind(callId, () =>
      other.execute({
        sql: "delete from queue_members where queue_id = ? and user_id = ?",
        args: [queueId, lee.id],
      }),
    );
    const refused = await failure(
      decideCall(lee, callId, { outcome: "approve", expectedRevision: 1 }),
    );
    expect(refused.status).toBe(404);
    expect((await rowsOf("select status from calls where id = ?", callId))[0]).toEqual({
      status: "pending",
    });
  });

  it("another reviewer's lock claim made meanwhile: 409 claimed_by_other", async () => {
    await other.execute({
      sql: "update queues set claim_mode = 'lock' where id = ?",
      args: [queueId],
    });
    try {
      const batch = await pause("locked");
      const callId = batch.calls[0]!.id;
      await withCopyBehind(callId, () => claimReview(dana, batch.id, {}));
      const refused = await failure(
        decideCall(sam, callId, { outcome: "approve", expectedRevision: 1 }),
      );
      expect(refused.code).toBe("claimed_by_other");
      expect(refused.message).toContain("Dana Reviewer");
    } finally {
      await other.execute({
        sql: "update queues set claim_mode = 'mark' where id = ?",
        args: [queueId],
      });
    }
  });

  it("separation of duties switched on meanwhile (plain SQL): the agent's owner is refused", async () => {
    const batch = await pause("duties");
    const callId = batch.calls[0]!.id;
    await withCopyBehind(callId, () =>
      other.execute({
        sql: "update queues set separation_of_duties = 1 where id = ?",
        args: [queueId],
      }),
    );
    try {
      const refused = await failure(
        decideCall(dana, callId, { outcome: "approve", expectedRevision: 1 }),
      );
      expect(refused.status).toBe(403);
      expect((await rowsOf("select status from calls where id = ?", callId))[0]).toEqual({
        status: "pending",
      });
    } finally {
      await other.execute({
        sql: "update queues set separation_of_duties = 0 where id = ?",
        args: [queueId],
      });
    }
  });

  it("an agent key renamed meanwhile (plain SQL): the decision shows its name now", async () => {
    const batch = await pause("renamed");
    const callId = batch.calls[0]!.id;
    await withCopyBehind(callId, () =>
      other.execute({
        sql: "update agent_keys set name = 'Refund bot' where id = ?",
        args: [agent.id],
      }),
    );
    const { batch: after } = await decideCall(sam, callId, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(after.agent.name).toBe("Refund bot");
  });

  it("the decider's own claim made meanwhile ends with the decision", async () => {
    const batch = await pause("own-claim");
    const callId = batch.calls[0]!.id;
    await withCopyBehind(callId, () => claimReview(sam, batch.id, {}));
    expect(await rowsOf("select user_id from review_claims where batch_id = ?", batch.id)).toEqual([
      { user_id: sam.id },
    ]);
    await decideCall(sam, callId, { outcome: "approve", expectedRevision: 1 });
    expect(await rowsOf("select user_id from review_claims where batch_id = ?", batch.id)).toEqual(
      [],
    );
  });
});

describe("the copy", () => {
  it("is used once: a second call of the batch is decided from a read", async () => {
    const batch = await pause("twice", 2);
    await decideCall(sam, batch.calls[0]!.id, { outcome: "approve", expectedRevision: 1 });
    expect(takePausedBatch({ callId: batch.calls[1]!.id })).toBeNull();
    const { batch: after } = await decideCall(sam, batch.calls[1]!.id, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(after).toMatchObject({ status: "decided", outcome: "approved" });
  });

  it("holds little memory: a large batch is not kept, and the oldest go past the bound", async () => {
    const big = await createRun(agent, {
      batch: {
        calls: [
          { toolCallId: "big", toolName: "write_file", args: { content: "x".repeat(70_000) } },
        ],
      },
    });
    expect(takePausedBatch({ callId: big.run.batches![0]!.calls[0]!.id })).toBeNull();
    const firstIds: string[] = [];
    for (let i = 0; i < 450; i++) {
      const { run } = await createRun(agent, {
        batch: {
          calls: [
            { toolCallId: `m${i}`, toolName: "write_file", args: { content: "y".repeat(40_000) } },
          ],
        },
      });
      if (i < 5) firstIds.push(run.batches![0]!.calls[0]!.id);
    }
    const held = pausedBatchesHeld();
    expect(held.size).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(held.batches).toBeGreaterThan(300);
    expect(held.batches).toBeLessThan(450);
    // the oldest went first, and a batch let go is decided from a read
    expect(takePausedBatch({ callId: firstIds[0]! })).toBeNull();
    const { batch } = await decideCall(sam, firstIds[1]!, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(batch).toMatchObject({ status: "decided", outcome: "approved" });
  });

  it("is not kept for a batch settled at once (by policy or memory)", async () => {
    const first = await pause("remembered");
    await decideCall(sam, first.calls[0]!.id, {
      outcome: "approve",
      expectedRevision: 1,
      scope: "conversation",
    });
    const again = await pause("remembered");
    expect(again).toMatchObject({ status: "decided", outcome: "approved" });
    expect(takePausedBatch({ callId: again.calls[0]!.id }) as PausedBatch | null).toBeNull();
  });
});

/** What a batch's decisions left: its row, its calls, votes and events, ids and times normalized. */
async function written(batchId: string) {
  const ids = new Map<string, string>();
  const times = /^\d{13}$|^\d{4}-\d\d-\d\dT[\d:.]+Z$/;
  const normal = (value: unknown): unknown => {
    if (typeof value === "string") {
      if (times.test(value)) return "<time>";
      if (/^[0-9a-f-]{36}$/.test(value)) {
        if (!ids.has(value)) ids.set(value, `<id ${ids.size}>`);
        return ids.get(value);
      }
      if (value.startsWith("{") || value.startsWith("[")) return normal(JSON.parse(value));
      return value.replace(/(copy|read)-/g, "");
    }
    if (typeof value === "number" && value > 1e12) return "<time>";
    if (Array.isArray(value)) return value.map(normal);
    // hashes of the args (which name the two batches apart) and links (with the batch's id)
    if (value && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value)
          .filter(([k]) => !["actionHash", "action_hash", "reviewUrl"].includes(k))
          .map(([k, v]) => [k, normal(v)]),
      );
    return value;
  };
  const strip = (rows: Record<string, unknown>[], ...drop: string[]) =>
    rows.map((row) =>
      normal(Object.fromEntries(Object.entries(row).filter(([k]) => !drop.includes(k)))),
    );
  return {
    batch: strip(await rowsOf("select * from batches where id = ?", batchId)),
    calls: strip(await rowsOf("select * from calls where batch_id = ? order by position", batchId)),
    votes: strip(
      await rowsOf(
        "select v.* from votes v join calls c on c.id = v.call_id where c.batch_id = ? order by c.position",
        batchId,
      ),
    ),
    events: strip(
      await rowsOf(
        "select type, queue_id, actor_kind, actor_id, actor_name, data from events where batch_id = ? order by seq",
        batchId,
      ),
    ) as { type: string }[],
  };
}
