import type { Batch, Call, Decision, Plan, PolicyDecision } from "@/components/review-card/index";

// Builders for the card's wire shapes: each test states only what it is about.

export const NOW = Date.parse("2025-06-01T12:00:00.000Z");
export const clock = () => NOW;
export const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

export const dana = { id: "u-dana", name: "Dana" };
export const sam = { id: "u-sam", name: "Sam" };

export function makeCall(overrides: Partial<Call> = {}): Call {
  return {
    id: "call-1",
    batchId: "batch-1",
    toolCallId: "tc-1",
    toolName: "refund_order",
    args: { orderId: "A-1", amount: 25 },
    inputSchema: null,
    summary: "Refund order A-1",
    risks: [],
    costEstimate: null,
    metadata: null,
    status: "pending",
    revision: 1,
    actionHash: "hash-1",
    requiredApprovals: 1,
    pendingEdit: null,
    votes: [],
    decision: null,
    ...overrides,
  };
}

export function makeBatch(overrides: Partial<Batch> = {}): Batch {
  return {
    id: "batch-1",
    runId: "run-0123456789abcdef",
    kind: "action",
    status: "pending",
    outcome: null,
    queue: { id: "q-1", name: "support" },
    agent: { id: "a-1", name: "Support bot" },
    plan: null,
    calls: [makeCall()],
    createdAt: iso(-120_000),
    expiresAt: iso(300_000),
    onTimeout: "reject",
    decidedAt: null,
    cancelReason: null,
    reviewUrl: "http://localhost:3000/batches/batch-1",
    ...overrides,
  };
}

export function decision(overrides: Partial<Decision> = {}): Decision {
  return {
    outcome: "approved",
    source: "reviewer",
    by: dana,
    at: iso(-4_000),
    reason: null,
    editedArgs: null,
    scope: "once",
    ...overrides,
  };
}

export const scratchRule = { id: "pr-1", name: "Scratch writes", queueId: "q-1" };

/** A decision a policy made at creation: by default the allow rule "Scratch writes". */
export function byPolicy(
  policy: Partial<PolicyDecision> = {},
  overrides: Partial<Decision> = {},
): Decision {
  return decision({
    source: "policy",
    by: null,
    scope: null,
    policy: { effect: "allow", rule: scratchRule, agentMode: "ask", blocked: false, ...policy },
    ...overrides,
  });
}

export const migrationPlan: Plan = {
  summary: "Migrate the billing database",
  rationale: "The old cluster is end-of-life",
  resources: ["db/billing", "svc/invoices"],
  risks: ["Writes pause for 2 minutes"],
  rollback: "Point the app back at the old cluster",
};

/** A plan batch as the server builds it: one synthetic call whose edit may change the summary. */
export function makePlanBatch(plan: Plan = migrationPlan, call: Partial<Call> = {}): Batch {
  const fixed = Object.fromEntries(
    Object.entries(plan)
      .filter(([key]) => key !== "summary")
      .map(([key, value]) => [key, { const: value }]),
  );
  return makeBatch({
    kind: "plan",
    plan,
    calls: [
      makeCall({
        toolCallId: "plan",
        toolName: "plan",
        args: plan,
        summary: plan.summary,
        risks: plan.risks ?? [],
        inputSchema: {
          type: "object",
          properties: { summary: { type: "string", minLength: 1, maxLength: 4000 }, ...fixed },
          required: ["summary", ...Object.keys(fixed)],
          additionalProperties: false,
        },
        ...call,
      }),
    ],
  });
}

/** The batch after `call` was decided with `d`. */
export function decided(batch: Batch, d: Decision, callId = batch.calls[0]!.id): Batch {
  const calls = batch.calls.map((call) =>
    call.id === callId
      ? {
          ...call,
          status: d.outcome,
          decision: d,
          votes: d.by
            ? [{ reviewer: d.by, outcome: d.outcome, revision: call.revision, at: d.at }]
            : [],
        }
      : call,
  );
  const open = calls.some((c) => c.status === "pending");
  return {
    ...batch,
    calls,
    status: open ? "pending" : "decided",
    outcome: open ? null : calls.every((c) => c.status === "approved") ? "approved" : "rejected",
    decidedAt: open ? null : d.at,
  };
}

/** A promise the test settles by hand, to look at the card while a decision is in flight. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
