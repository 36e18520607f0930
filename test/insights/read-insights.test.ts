import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches, calls, events, runs, votes, type DecisionSource } from "@/db/schema";
import { authenticate } from "@/lib/auth/actor";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { queryInsights } from "@/lib/insights/insights-query";
import { InsightsResource } from "@/lib/read-models/resource-schemas";
import { readInsights } from "@/lib/insights/read-insights";
import { freshDatabase } from "@/test/support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";

// The insights numbers against a small history whose answers are worked out by hand. Rows are
// written directly, with chosen times: the verbs stamp Date.now(), and percentiles over a week
// need cards that waited minutes and hours.

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 0, 10);
const WEEK = { from: T0, to: T0 + 7 * 24 * HOUR };

type CallSpec = {
  tool: string;
  source?: DecisionSource;
  outcome?: "approved" | "rejected";
  votes?: { reviewer: string; outcome: "approved" | "rejected" }[];
};

async function card(spec: {
  queueId: string;
  agentId: string;
  createdAt: number;
  /** minutes from creation to settling; none: pending */
  settledAfter?: number;
  status?: "decided" | "expired" | "cancelled";
  escalations?: number;
  /** the other queue each escalation moved it to (its events are written halfway to settling) */
  escalatedTo?: string;
  calls: CallSpec[];
}) {
  const db = getDb();
  const runId = newId();
  const batchId = newId();
  const decidedAt =
    spec.settledAfter === undefined ? null : spec.createdAt + spec.settledAfter * MIN;
  await db.insert(runs).values({
    id: runId,
    agentKeyId: spec.agentId,
    queueId: spec.queueId,
    status: decidedAt === null ? "waiting_approval" : "ready",
    createdAt: spec.createdAt,
    updatedAt: spec.createdAt,
  });
  await db.insert(batches).values({
    id: batchId,
    runId,
    queueId: spec.queueId,
    kind: "action",
    status: decidedAt === null ? "pending" : (spec.status ?? "decided"),
    onTimeout: "reject",
    createdAt: spec.createdAt,
    expiresAt: spec.createdAt + HOUR,
    decidedAt,
    escalations: spec.escalations ?? 0,
  });
  // Each escalation as escalate-batch.ts writes it: an event in the queue left, one in the next.
  for (let n = 1; n <= (spec.escalations ?? 0); n++) {
    const at = spec.createdAt + ((spec.settledAfter ?? 60) * MIN) / 2 + n;
    for (const queueId of [spec.queueId, spec.escalatedTo ?? null]) {
      await db.insert(events).values({
        type: "batch.escalated",
        at,
        runId,
        batchId,
        queueId,
        actorKind: "system",
        data: { escalations: n },
      });
    }
  }
  for (const [position, c] of spec.calls.entries()) {
    const callId = newId();
    const lastVote = c.votes?.at(-1);
    await db.insert(calls).values({
      id: callId,
      batchId,
      runId,
      position,
      toolCallId: `tc-${position}`,
      toolName: c.tool,
      args: {},
      risks: [],
      status: c.outcome ?? (spec.status === "cancelled" ? "cancelled" : "pending"),
      actionHash: "hash",
      requiredApprovals: 1,
      decisionOutcome: c.outcome ?? null,
      decisionSource: c.source ?? null,
      decidedBy: c.source === "reviewer" ? (lastVote?.reviewer ?? null) : null,
      decidedAt: c.outcome ? decidedAt : null,
    });
    for (const vote of c.votes ?? []) {
      await db.insert(votes).values({
        id: newId(),
        callId,
        reviewerId: vote.reviewer,
        outcome: vote.outcome,
        revision: 1,
        actionHash: "hash",
        createdAt: decidedAt!,
      });
    }
  }
}

let people: Record<"leadA" | "reviewerA" | "admin" | "r1" | "r2", { id: string; token: string }>;
let queueA: { id: string };
let queueB: { id: string };
let agentKey: string;
const as = async (who: keyof typeof people) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${people[who].token}` }));

beforeAll(async () => {
  await freshDatabase("insights");
  const a = await makeQueue({ name: "alpha" });
  const b = await makeQueue({ name: "beta" });
  queueA = a;
  queueB = b;
  people = {
    leadA: await makeReviewer({ queues: [{ name: "alpha", role: "lead" }] }),
    reviewerA: await makeReviewer({ queues: [{ name: "alpha" }] }),
    admin: await makeReviewer({ queues: [{ name: "beta", role: "admin" }] }),
    r1: await makeReviewer({ name: "Rae One", queues: [{ name: "alpha" }, { name: "beta" }] }),
    r2: await makeReviewer({ name: "Rio Two", queues: [{ name: "alpha" }] }),
  };
  const agent1 = await makeAgentKey({ name: "Refund bot", queues: ["alpha", "beta"] });
  const agent2 = await makeAgentKey({ name: "Ops bot", queues: ["alpha"] });
  agentKey = agent1.key;
  const r1 = people.r1.id;
  const r2 = people.r2.id;
  const A = { queueId: a.id };
  const h = (hours: number) => T0 + hours * HOUR;
  const byReviewer = (
    tool: string,
    outcome: "approved" | "rejected",
    ...voters: string[]
  ): CallSpec => ({
    tool,
    source: "reviewer",
    outcome,
    votes: voters.map((reviewer) => ({ reviewer, outcome })),
  });

  // queue alpha, in the week
  await card({ ...A, agentId: agent1.id, createdAt: h(1), settledAfter: 10, calls: [byReviewer("refund", "approved", r1)] }); // prettier-ignore
  await card({ ...A, agentId: agent1.id, createdAt: h(2), settledAfter: 20, calls: [byReviewer("refund", "rejected", r2), byReviewer("send_email", "approved", r2)] }); // prettier-ignore
  await card({ ...A, agentId: agent1.id, createdAt: h(3), settledAfter: 0, calls: [{ tool: "send_email", source: "policy", outcome: "approved" }] }); // prettier-ignore
  await card({ ...A, agentId: agent2.id, createdAt: h(4), settledAfter: 60, status: "expired", escalations: 1, calls: [{ tool: "refund", source: "timeout", outcome: "rejected" }] }); // prettier-ignore
  await card({ ...A, agentId: agent2.id, createdAt: h(6), settledAfter: 30, calls: [byReviewer("refund", "approved", r1, r2)] }); // prettier-ignore
  await card({ ...A, agentId: agent1.id, createdAt: h(7), settledAfter: 5, status: "cancelled", calls: [{ tool: "refund" }] }); // prettier-ignore
  await card({ ...A, agentId: agent1.id, createdAt: h(8), calls: [{ tool: "refund" }] }); // pending
  await card({ ...A, agentId: agent1.id, createdAt: h(9), settledAfter: 0, calls: [{ tool: "delete_files", source: "memory", outcome: "approved" }] }); // prettier-ignore
  // created before the week, settled in it: counted as settled, not as created
  await card({ ...A, agentId: agent1.id, createdAt: h(-1), settledAfter: 90, calls: [byReviewer("refund", "approved", r1)] }); // prettier-ignore
  // wholly before the week: nowhere
  await card({ ...A, agentId: agent1.id, createdAt: h(-30), settledAfter: 5, calls: [byReviewer("refund", "rejected", r2)] }); // prettier-ignore
  // queue beta
  await card({ queueId: b.id, agentId: agent1.id, createdAt: h(1), settledAfter: 40, calls: [byReviewer("deploy", "approved", r1)] }); // prettier-ignore
}, 60_000);

describe("insights of one queue", () => {
  it("count cards created, decided, expired, withdrawn and escalated in the period", async () => {
    const insights = await readInsights(await as("leadA"), { queueId: queueA.id, ...WEEK });
    expect(insights.totals).toEqual({
      created: 8,
      decided: 6,
      expired: 1,
      cancelled: 1,
      escalatedCards: 1,
      escalations: 1,
    });
    // a week is shown a day a bar; every card of the week came on its first day
    expect(insights.series).toHaveLength(7);
    expect(insights.series[0]).toEqual({ start: T0, created: 8, settled: 8 });
    expect(insights.series.slice(1).every((bar) => bar.created === 0)).toBe(true);
  });

  it("give exact nearest-rank percentiles of the waits, leaving out cards settled on arrival", async () => {
    const { timeToDecision } = await readInsights(await as("leadA"), {
      queueId: queueA.id,
      ...WEEK,
    });
    // waits 10, 20, 30, 60 (expired), 90 minutes; the policy and memory cards waited 0
    expect(timeToDecision).toEqual({
      count: 5,
      p50Ms: 30 * MIN,
      p90Ms: 90 * MIN,
      p99Ms: 90 * MIN,
    });
  });

  it("split decisions by source, tool and agent, and votes by reviewer", async () => {
    const insights = await readInsights(await as("leadA"), { queueId: queueA.id, ...WEEK });
    expect(insights.bySource).toEqual([
      { source: "reviewer", approved: 4, rejected: 1 },
      { source: "policy", approved: 1, rejected: 0 },
      { source: "memory", approved: 1, rejected: 0 },
      { source: "timeout", approved: 0, rejected: 1 },
    ]);
    expect(insights.byTool).toEqual([
      { tool: "refund", approved: 3, rejected: 2 },
      { tool: "send_email", approved: 2, rejected: 0 },
      { tool: "delete_files", approved: 1, rejected: 0 },
    ]);
    expect(
      insights.byAgent.map(({ name, approved, rejected }) => [name, approved, rejected]),
    ).toEqual([
      ["Refund bot", 5, 1],
      ["Ops bot", 1, 1],
    ]);
    expect(
      insights.reviewers.map(({ name, approved, rejected }) => [name, approved, rejected]),
    ).toEqual([
      ["Rae One", 3, 0],
      ["Rio Two", 2, 1],
    ]);
  });
});

describe("who sees insights", () => {
  it("shows an admin every queue, overall", async () => {
    const insights = await readInsights(await as("admin"), WEEK);
    expect(insights.queues.map((q) => q.name)).toEqual(["alpha", "beta"]);
    expect(insights.totals.created).toBe(9);
    expect(insights.timeToDecision).toMatchObject({ count: 6, p50Ms: 30 * MIN, p99Ms: 90 * MIN });
    expect(insights.perQueue.map((q) => [q.name, q.created, q.decided])).toEqual([
      ["alpha", 8, 6],
      ["beta", 1, 1],
    ]);
  });

  it("shows a lead only the queues they lead, overall and one by one", async () => {
    const lead = await as("leadA");
    const overall = await readInsights(lead, WEEK);
    expect(overall.queues.map((q) => q.name)).toEqual(["alpha"]);
    expect(overall.totals.created).toBe(8);
    await expect(readInsights(lead, { queueId: queueB.id, ...WEEK })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("refuses a reviewer who leads no queue, and an agent", async () => {
    await expect(readInsights(await as("reviewerA"), WEEK)).rejects.toThrow(
      /Insights are for a queue's lead or an admin/,
    );
    await expect(readInsights(await as("r1"), WEEK)).rejects.toBeInstanceOf(ForbiddenError);
    const agent = await authenticate(getDb(), new Headers({ authorization: `Bearer ${agentKey}` }));
    await expect(readInsights(agent, WEEK)).rejects.toBeInstanceOf(ForbiddenError);
  });

  it("refuses a period that ends before it starts or spans more than a year", async () => {
    const admin = await as("admin");
    await expect(readInsights(admin, { from: T0, to: T0 })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    await expect(
      readInsights(admin, { from: T0, to: T0 + 400 * 24 * HOUR }),
    ).rejects.toBeInstanceOf(InvalidRequestError);
  });
});

describe("GET /api/v1/insights's query", () => {
  it("takes whole UTC days, the last one included, and answers in its documented shape", async () => {
    const admin = await as("admin");
    const answer = await queryInsights(admin, { from: "2026-01-10", to: "2026-01-16" });
    expect(answer.period).toEqual({
      from: "2026-01-10T00:00:00.000Z",
      to: "2026-01-17T00:00:00.000Z",
      bucketMs: 24 * HOUR,
    });
    expect(answer.totals.created).toBe(9);
    expect(answer.series[0]!.start).toBe("2026-01-10T00:00:00.000Z");
    expect(InsightsResource.strict().safeParse(answer).success).toBe(true);
    const alpha = await queryInsights(admin, {
      queue: queueA.id,
      from: "2026-01-10",
      to: "2026-01-16",
    });
    expect(alpha.totals.created).toBe(8);
  });

  it("refuses what is not a date, and a queue that is not there", async () => {
    const admin = await as("admin");
    await expect(queryInsights(admin, { from: "last week" })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    await expect(queryInsights(admin, { queue: "no-such-queue" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});
