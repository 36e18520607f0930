import type { Batch, Call, Decision } from "@/components/review-card";

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
