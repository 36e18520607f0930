import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/db/client";
import { readDecisionState } from "@/lib/approvals/plan-decision";
import { decideCall } from "@/lib/approvals/decide-call";
import { type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { claimReview } from "@/lib/claims/claim-review";
import { decideBatch } from "@/lib/approvals/decide-batch";
import { events } from "@/db/schema";
import {
  loadBatchView,
  readBatchViewRows,
  type BatchViewRows,
} from "@/lib/read-models/batch-run-views";
import { and, eq } from "drizzle-orm";
import { createRun } from "@/lib/runs/create-run";
import { setAside } from "@/lib/set-aside/set-aside";
import { freshDatabase } from "../support/database";
import { actorFor, makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// A reviewer's decision reads its batch in ONE statement (lib/read-models/batch-run-views.ts
// oneBatchQuery), without a read transaction around it: these tests hold it to the rows the
// three reads of every other batch view give (readBatchViewRows), value for value, and to the
// one statement.

let databaseUrl: string;
let agent: AgentActor;
let dana: ReviewerActor;
let sam: ReviewerActor;

beforeAll(async () => {
  databaseUrl = await freshDatabase("decision-read");
  const queue = await makeQueue({ requiredApprovals: 2 });
  const queues = [{ name: queue.name }];
  dana = (await actorFor(
    (await makeReviewer({ name: "Dana Reviewer", queues })).token,
  )) as ReviewerActor;
  sam = (await actorFor(
    (await makeReviewer({ name: "Sam Reviewer", queues })).token,
  )) as ReviewerActor;
  agent = (await actorFor((await makeAgentKey({ queues: [queue.name] })).key)) as AgentActor;
});

afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

const call = (i: number, extra: Record<string, unknown> = {}) => ({
  toolCallId: `tool-${i}`,
  toolName: "refund_order",
  args: { orderId: `A-${i}`, note: "naïve — ünïcödé ✓" },
  summary: `Refund ${i}`,
  risks: ["Money leaves the company"],
  ...extra,
});

/** A batch of three calls: the first approved by two votes, the second rejected, the third edited
 * and pending. */
async function busyBatch(label: string) {
  const { run } = await createRun(agent, {
    externalId: label,
    batch: {
      calls: [
        // a cost that only a 17-digit number gives back exactly
        call(1, { costEstimate: 0.1 + 0.2, metadata: { ticket: 7 } }),
        call(2, { costEstimate: 1 / 3 }),
        call(3),
      ],
    },
  });
  const batch = run.batches![0]!;
  const [first, second] = batch.calls;
  await decideCall(dana, first!.id, { outcome: "approve", expectedRevision: 1 });
  await decideCall(sam, first!.id, { outcome: "approve", expectedRevision: 1, reason: "ok" });
  await decideCall(dana, second!.id, { outcome: "reject", expectedRevision: 1, reason: "no" });
  // an edit waiting for a second approval: edited args, revision 2, one vote
  const edit = { orderId: "A-3", note: "half", amount: 12.5 };
  await decideCall(dana, batch.calls[2]!.id, {
    outcome: "edit",
    expectedRevision: 1,
    editedArgs: edit,
  });
  await claimReview(sam, batch.id, {});
  await setAside(dana, batch.id, { for: "1h" });
  return batch;
}

/** The batch row without the columns only a decision reads (who may decide); votes cast in the
 * same millisecond, whose order neither read fixes, by id. */
function viewRows(rows: BatchViewRows): BatchViewRows {
  return {
    ...rows,
    voteRows: [...rows.voteRows].sort(
      (a, b) => a.vote.createdAt - b.vote.createdAt || a.vote.id.localeCompare(b.vote.id),
    ),
    batchRows: rows.batchRows.map((row) => {
      const { separationOfDuties, agentOwnerId, conversationId, isMember, ...rest } =
        row as typeof row & {
          separationOfDuties: unknown;
          agentOwnerId: unknown;
          conversationId: unknown;
          isMember: unknown;
        };
      void [separationOfDuties, agentOwnerId, conversationId, isMember];
      return rest;
    }),
  };
}

/** The SQL statements run while `work` runs (every one goes through the driver's prepare). */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const Database = createRequire(import.meta.url)("libsql") as {
    prototype: { prepare: (sql: string) => unknown };
  };
  const prepare = Database.prototype.prepare;
  const seen: string[] = [];
  Database.prototype.prepare = function (this: unknown, sql: string) {
    seen.push(sql);
    return prepare.call(this, sql);
  };
  try {
    await work();
  } finally {
    Database.prototype.prepare = prepare;
  }
  return seen;
}

describe("a decision's read", () => {
  it("gives the rows of batch views' three reads: calls in order, votes, names, claim, set-asides", async () => {
    const batch = await busyBatch("same-rows");
    const [, , third] = batch.calls;
    const expected = await readBatchViewRows(getDb(), [batch.id]);
    expect(expected.voteRows).toHaveLength(4);
    expect(expected.batchRows[0]!.claimUserId).toBe(sam.id);
    expect(expected.batchRows[0]!.setAsides).toHaveLength(1);

    const byCall = await readDecisionState(dana, { callId: third!.id });
    expect(viewRows(byCall.rows)).toEqual(viewRows(expected));
    // the same keys in the same order, the same types (a boolean, not 0 or 1)
    expect(JSON.stringify(viewRows(byCall.rows))).toBe(JSON.stringify(viewRows(expected)));
    expect(viewRows(byCall.rows)).toStrictEqual(viewRows(expected));
    const times = byCall.rows.voteRows.map((r) => r.vote.createdAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const byBatch = await readDecisionState(dana, { batchId: batch.id });
    expect(viewRows(byBatch.rows)).toEqual(viewRows(expected));
    // the exact float, not JSON's 15 digits
    expect(byCall.rows.callRows[0]!.call.costEstimate).toBe(0.1 + 0.2);
    expect(byCall.target).toMatchObject({ agentKeyId: agent.id, claimedBy: sam.id });
  });

  it("is one statement, with no read transaction around it", async () => {
    const batch = await busyBatch("one-statement");
    const seen = await statementsOf(() => readDecisionState(dana, { callId: batch.calls[2]!.id }));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^select /);
  });

  it("reports a call or batch that is not there as missing, as before", async () => {
    await expect(readDecisionState(dana, { callId: "no-such-call" })).rejects.toMatchObject({
      status: 404,
    });
    await expect(readDecisionState(dana, { batchId: "no-such-batch" })).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe("a decision that settles its batch", () => {
  /** The batch as a fresh read shows it to reviewers, and as its batch.decided event carries it. */
  async function settled(batchId: string) {
    const [event] = await getDb()
      .select({ data: events.data })
      .from(events)
      .where(and(eq(events.batchId, batchId), eq(events.type, "batch.decided")));
    return { fresh: await loadBatchView(getDb(), batchId, "reviewer"), event: event!.data };
  }

  it("answers with the batch its event carries, as a fresh read shows it (a call's decision)", async () => {
    const { run } = await createRun(agent, {
      externalId: "settle-call",
      batch: { calls: [call(1)] },
    });
    const only = run.batches![0]!.calls[0]!;
    await decideCall(sam, only.id, { outcome: "approve", expectedRevision: 1 });
    const answer = await decideCall(dana, only.id, { outcome: "approve", expectedRevision: 1 });
    const { fresh, event } = await settled(only.batchId);
    expect(answer.batch.status).toBe("decided");
    expect(answer.batch).toEqual(fresh);
    expect(answer.batch).toEqual(event.batch);
    expect(answer.call).toEqual(fresh!.calls[0]);
  });

  it("answers with the batch its event carries, as a fresh read shows it (a batch's decision)", async () => {
    const { run } = await createRun(agent, {
      externalId: "settle-batch",
      batch: { calls: [call(1), call(2)] },
    });
    const batch = run.batches![0]!;
    const expectedRevisions = Object.fromEntries(batch.calls.map((c) => [c.id, 1]));
    const answer = await decideBatch(dana, batch.id, { outcome: "reject", expectedRevisions });
    const { fresh, event } = await settled(batch.id);
    expect(answer.status).toBe("decided");
    expect(answer).toEqual(fresh);
    expect(answer).toEqual(event.batch);
  });
});
