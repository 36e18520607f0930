import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches, calls, events, runs, votes, type DecisionSource } from "@/db/schema";
import { authenticate } from "@/lib/auth/actor";
import { newId } from "@/lib/ids";
import { queryInsights } from "@/lib/insights/insights-query";
import { InsightsResource } from "@/lib/read-models/resource-schemas";
import { readInsights } from "@/lib/insights/read-insights";
import { freshDatabase } from "@/test/support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";

// Approval fatigue (issue 29, item 3): per reviewer and per tool, the share of approvals given
// under 3 s after the card appeared, and the approval rate. The history is generated from a
// fixed seed and written as rows with chosen times; the expected figures are recounted here by
// brute force from the generator's own record of what it wrote, not from the database.

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 2, 2);
const PERIOD = { from: T0, to: T0 + 7 * 24 * HOUR };

/** mulberry32: the same history on every run */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the generator wrote, one entry per human vote. */
type VoteRecord = {
  queueId: string;
  reviewerId: string;
  tool: string;
  outcome: "approved" | "rejected";
  at: number;
  /** when the card appeared to this voter: created, or escalated into the queue */
  appearedAt: number;
  /** the card's settling time; null: still pending */
  settledAt: number | null;
};
const written: VoteRecord[] = [];

type CallSpec = {
  tool: string;
  source?: DecisionSource;
  outcome?: "approved" | "rejected";
  /** each vote `after` ms from when the card appeared */
  votes?: { reviewer: string; outcome: "approved" | "rejected"; after: number }[];
};

async function card(spec: {
  queueId: string;
  agentId: string;
  createdAt: number;
  /** ms from creation to an escalation into this queue (the card appears to voters then) */
  escalatedAfter?: number;
  /** ms from appearing to settling; none: pending */
  settledAfter?: number;
  calls: CallSpec[];
}) {
  const db = getDb();
  const runId = newId();
  const batchId = newId();
  const appearedAt = spec.createdAt + (spec.escalatedAfter ?? 0);
  const settledAt = spec.settledAfter === undefined ? null : appearedAt + spec.settledAfter;
  await db.insert(runs).values({
    id: runId,
    agentKeyId: spec.agentId,
    queueId: spec.queueId,
    status: settledAt === null ? "waiting_approval" : "ready",
    createdAt: spec.createdAt,
    updatedAt: spec.createdAt,
  });
  await db.insert(batches).values({
    id: batchId,
    runId,
    queueId: spec.queueId,
    kind: "action",
    status: settledAt === null ? "pending" : "decided",
    onTimeout: "escalate",
    createdAt: spec.createdAt,
    expiresAt: appearedAt + HOUR,
    decidedAt: settledAt,
    escalations: spec.escalatedAfter === undefined ? 0 : 1,
  });
  if (spec.escalatedAfter !== undefined) {
    // as escalate-batch.ts writes it: one event in the queue left (none here), one in this one
    for (const queueId of [null, spec.queueId]) {
      await db.insert(events).values({
        type: "batch.escalated",
        at: appearedAt,
        runId,
        batchId,
        queueId,
        actorKind: "system",
        data: { escalations: 1 },
      });
    }
  }
  for (const [position, c] of spec.calls.entries()) {
    const callId = newId();
    await db.insert(calls).values({
      id: callId,
      batchId,
      runId,
      position,
      toolCallId: `tc-${position}`,
      toolName: c.tool,
      args: {},
      risks: [],
      status: c.outcome ?? "pending",
      actionHash: "hash",
      requiredApprovals: c.votes?.length ?? 1,
      decisionOutcome: c.outcome ?? null,
      decisionSource: c.source ?? null,
      decidedBy: c.source === "reviewer" ? (c.votes?.at(-1)?.reviewer ?? null) : null,
      decidedAt: c.outcome ? settledAt : null,
    });
    for (const vote of c.votes ?? []) {
      const at = appearedAt + vote.after;
      await db.insert(votes).values({
        id: newId(),
        callId,
        reviewerId: vote.reviewer,
        outcome: vote.outcome,
        revision: 1,
        actionHash: "hash",
        createdAt: at,
      });
      written.push({
        queueId: spec.queueId,
        reviewerId: vote.reviewer,
        tool: c.tool,
        outcome: vote.outcome,
        at,
        appearedAt,
        settledAt,
      });
    }
  }
}

/** The figures recounted from `written`: the votes of cards settled in the period. */
function recount(queueIds: string[], period: { from: number; to: number }) {
  const counted = written.filter(
    (v) =>
      queueIds.includes(v.queueId) &&
      v.settledAt !== null &&
      v.settledAt >= period.from &&
      v.settledAt < period.to,
  );
  const tally = (key: (v: VoteRecord) => string) => {
    const out = new Map<string, { approved: number; rejected: number; quickApprovals: number }>();
    for (const v of counted) {
      const entry = out.get(key(v)) ?? { approved: 0, rejected: 0, quickApprovals: 0 };
      entry[v.outcome]++;
      if (v.outcome === "approved" && v.at - v.appearedAt < 3000) entry.quickApprovals++;
      out.set(key(v), entry);
    }
    return new Map(
      [...out].map(([k, t]) => [
        k,
        {
          ...t,
          quickShare: t.approved ? t.quickApprovals / t.approved : null,
          approvalRate: t.approved + t.rejected ? t.approved / (t.approved + t.rejected) : null,
        },
      ]),
    );
  };
  return { byReviewer: tally((v) => v.reviewerId), byTool: tally((v) => v.tool) };
}

let lead: { id: string; token: string };
let admin: { id: string; token: string };
let reviewers: { id: string; name: string }[];
let queueA: { id: string };
let queueB: { id: string };
const TOOLS = ["refund_order", "send_email", "merge_pr", "delete_files"];
const as = async (who: { token: string }) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${who.token}` }));

beforeAll(async () => {
  await freshDatabase("insights-fatigue");
  queueA = await makeQueue({ name: "alpha" });
  queueB = await makeQueue({ name: "beta" });
  lead = await makeReviewer({ queues: [{ name: "alpha", role: "lead" }] });
  admin = await makeReviewer({ queues: [{ name: "beta", role: "admin" }] });
  reviewers = [];
  for (const name of ["Quick Quinn", "Careful Cas", "Mixed Max"]) {
    reviewers.push(await makeReviewer({ name, queues: [{ name: "alpha" }, { name: "beta" }] }));
  }
  const [quinn, cas, max] = reviewers.map((r) => r.id) as [string, string, string];
  const agent = await makeAgentKey({ name: "Fatigue bot", queues: ["alpha", "beta"] });
  const A = { queueId: queueA.id, agentId: agent.id };

  // Hand-made edges first. The 3 s line: 2,999 ms is quick, 3,000 ms is not.
  await card({ ...A, createdAt: T0 + HOUR, settledAfter: 5 * SEC, calls: [{ tool: "refund_order", source: "reviewer", outcome: "approved", votes: [{ reviewer: quinn, outcome: "approved", after: 2_999 }] }] }); // prettier-ignore
  await card({ ...A, createdAt: T0 + 2 * HOUR, settledAfter: 5 * SEC, calls: [{ tool: "refund_order", source: "reviewer", outcome: "approved", votes: [{ reviewer: cas, outcome: "approved", after: 3_000 }] }] }); // prettier-ignore
  // Quorum: each reviewer's own vote time, not the call's decision time.
  await card({ ...A, createdAt: T0 + 3 * HOUR, settledAfter: 2 * MIN, calls: [{ tool: "merge_pr", source: "reviewer", outcome: "approved", votes: [{ reviewer: quinn, outcome: "approved", after: 1_000 }, { reviewer: cas, outcome: "approved", after: 2 * MIN }] }] }); // prettier-ignore
  // Escalated 20 minutes after creation: a vote 1 s after the escalation is quick.
  await card({ ...A, createdAt: T0 + 4 * HOUR, escalatedAfter: 20 * MIN, settledAfter: 10 * SEC, calls: [{ tool: "delete_files", source: "reviewer", outcome: "approved", votes: [{ reviewer: max, outcome: "approved", after: 1_000 }] }] }); // prettier-ignore
  // Policy and remembered approvals settle at once and are nobody's judgement: not counted.
  for (const source of ["policy", "memory"] as const) {
    await card({ ...A, createdAt: T0 + 5 * HOUR, settledAfter: 0, calls: [{ tool: "send_email", source, outcome: "approved" }] }); // prettier-ignore
  }
  // Pending (not settled): not yet counted. Settled before the period: not counted.
  await card({ ...A, createdAt: T0 + 6 * HOUR, calls: [{ tool: "send_email", votes: [{ reviewer: quinn, outcome: "approved", after: 500 }] }] }); // prettier-ignore
  await card({ ...A, createdAt: T0 - 2 * HOUR, settledAfter: SEC, calls: [{ tool: "send_email", source: "reviewer", outcome: "approved", votes: [{ reviewer: quinn, outcome: "approved", after: 500 }] }] }); // prettier-ignore

  // Then a generated history over both queues: Quinn approves nearly everything within a
  // second or two, Cas reads (10-120 s) and rejects a fair share, Max is in between.
  const next = random(29);
  const habits = [
    { id: quinn, approve: 0.97, quick: 0.8 },
    { id: cas, approve: 0.7, quick: 0.05 },
    { id: max, approve: 0.85, quick: 0.4 },
  ];
  for (let n = 0; n < 120; n++) {
    const queueId = next() < 0.75 ? queueA.id : queueB.id;
    const tool = TOOLS[Math.floor(next() * TOOLS.length)]!;
    const quorum = next() < 0.25 ? 2 : 1;
    const voters = [...habits].sort(() => next() - 0.5).slice(0, quorum);
    const cast = voters.map((h) => ({
      reviewer: h.id,
      outcome: (next() < h.approve ? "approved" : "rejected") as "approved" | "rejected",
      after: next() < h.quick ? Math.floor(next() * 3_500) : 3_000 + Math.floor(next() * 120_000),
    }));
    const rejected = cast.some((c) => c.outcome === "rejected");
    const escalatedAfter = next() < 0.1 ? 15 * MIN : undefined;
    await card({
      queueId,
      agentId: agent.id,
      createdAt: T0 + 12 * HOUR + n * 7 * MIN,
      escalatedAfter,
      settledAfter: Math.max(...cast.map((c) => c.after)) + 10,
      calls: [
        {
          tool,
          source: "reviewer",
          outcome: rejected ? "rejected" : "approved",
          votes: cast,
        },
      ],
    });
  }
}, 120_000);

describe("approval fatigue", () => {
  it("counts quick approvals per reviewer and per tool as a recount of the seeded votes does", async () => {
    const { fatigue } = await readInsights(await as(lead), { queueId: queueA.id, ...PERIOD });
    const expected = recount([queueA.id], PERIOD);
    expect(fatigue.quickMs).toBe(3000);
    expect(new Map(fatigue.byReviewer.map(({ id, name: _, ...counts }) => [id, counts]))).toEqual(
      expected.byReviewer,
    );
    expect(new Map(fatigue.byTool.map(({ tool, ...counts }) => [tool, counts]))).toEqual(
      expected.byTool,
    );
    // the generated habits show: Quinn rubber-stamps, Cas reads
    const share = (name: string) => fatigue.byReviewer.find((r) => r.name === name)!.quickShare!;
    expect(share("Quick Quinn")).toBeGreaterThan(0.6);
    expect(share("Careful Cas")).toBeLessThan(0.2);
    // most quick approvals first
    expect(fatigue.byReviewer[0]!.name).toBe("Quick Quinn");
  });

  it("agrees with the recount over all of an admin's queues, and another period", async () => {
    const everything = await readInsights(await as(admin), PERIOD);
    const expected = recount([queueA.id, queueB.id], PERIOD);
    expect(new Map(everything.fatigue.byTool.map(({ tool, ...counts }) => [tool, counts]))).toEqual(
      expected.byTool,
    );
    const firstDay = { from: T0, to: T0 + 24 * HOUR };
    const oneDay = await readInsights(await as(admin), firstDay);
    expect(
      new Map(oneDay.fatigue.byReviewer.map(({ id, name: _, ...counts }) => [id, counts])),
    ).toEqual(recount([queueA.id, queueB.id], firstDay).byReviewer);
  });

  it("draws the 3 s line, times quorum votes and escalated cards, and leaves out policy and memory", async () => {
    // Only the hand-made cards of the first hours: a period that ends before the generated ones.
    const early = { from: T0, to: T0 + 6 * HOUR };
    const { fatigue } = await readInsights(await as(lead), { queueId: queueA.id, ...early });
    const row = (name: string) => {
      const r = fatigue.byReviewer.find((x) => x.name === name)!;
      return [r.approved, r.rejected, r.quickApprovals];
    };
    // Quinn: 2,999 ms (quick) and a quorum vote at 1 s (quick); the pending card not counted
    expect(row("Quick Quinn")).toEqual([2, 0, 2]);
    // Cas: 3,000 ms (not quick) and the quorum's second vote at 2 min (not quick)
    expect(row("Careful Cas")).toEqual([2, 0, 0]);
    // Max: 1 s after the escalation, 20 min after creation: quick
    expect(row("Mixed Max")).toEqual([1, 0, 1]);
    // send_email was only ever approved by policy and memory here: no human row for it
    expect(fatigue.byTool.map((t) => t.tool).sort()).toEqual([
      "delete_files",
      "merge_pr",
      "refund_order",
    ]);
    expect(fatigue.byTool.find((t) => t.tool === "refund_order")).toMatchObject({
      approved: 2,
      quickApprovals: 1,
      quickShare: 0.5,
      approvalRate: 1,
    });
  });

  it("is part of GET /api/v1/insights's documented answer", async () => {
    const answer = await queryInsights(await as(admin), { from: "2026-03-02", to: "2026-03-08" });
    expect(InsightsResource.strict().safeParse(answer).success).toBe(true);
    expect(answer.fatigue.byReviewer.length).toBe(3);
  });
});
