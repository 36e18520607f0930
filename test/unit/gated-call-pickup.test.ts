import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeDb, getDb } from "@/db/client";
import { batches, calls } from "@/db/schema";
import { decideCall } from "@/lib/approvals/decide-call";
import { authenticate, type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { recordGatedCall } from "@/lib/gated-calls/record-gated-call";
import { reportGatedOutcomes } from "@/lib/gated-calls/report-gated-outcomes";
import { ApiError } from "@/lib/errors";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// The pick-up of an earlier identical call's card (lib/gated-calls/record-gated-call.ts) when a
// reviewer decides between the verb's reads: the answer must come from the state it writes on,
// and an allow is never given without a committed use (lib/README.md, invariant 2).

// A test may run `before` just before the verb loads the earlier call's batch.
const hook = vi.hoisted(() => ({ before: null as null | (() => Promise<void>) }));

vi.mock("@/lib/read-models/batch-run-views", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/read-models/batch-run-views")>();
  return {
    ...actual,
    loadBatchView: async (...args: Parameters<typeof actual.loadBatchView>) => {
      const before = hook.before;
      hook.before = null;
      if (before) await before();
      return actual.loadBatchView(...args);
    },
  };
});

let databaseUrl: string;
const as = async <T>(token: string) =>
  (await authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }))) as T;

beforeAll(async () => {
  databaseUrl = await freshDatabase("gated-call-pickup");
});

afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

const gatedCall = (toolCallId: string) => ({
  gateway: "g",
  toolCallId,
  toolName: "t",
  args: { x: 1 },
});

describe("picking up an earlier call's card", () => {
  it("approved between the verb's reads: the answer is allow with a committed use, given once", async () => {
    const queue = await makeQueue();
    const reviewer = await as<ReviewerActor>(
      (await makeReviewer({ queues: [{ name: queue.name }] })).token,
    );
    const agent = await as<AgentActor>((await makeAgentKey({ queues: [queue.name] })).key);
    const { run } = await createRun(agent, {});

    const asked = await recordGatedCall(agent, run.id, gatedCall("a"));
    expect(asked.answer.decision).toBe("ask");
    const callId = asked.answer.callId;

    // the identical call finds the card pending; a reviewer approves it before the batch is loaded
    hook.before = async () => {
      await decideCall(reviewer, callId, { outcome: "approve", expectedRevision: 1 });
    };
    const second = await recordGatedCall(agent, run.id, gatedCall("b"));
    const [row] = await getDb().select().from(calls).where(eq(calls.id, callId));
    if (second.answer.decision === "allow") {
      // allowed: the use is committed
      expect(second.answer).toMatchObject({ pickedUp: true, callId });
      expect(row!.usedAt).not.toBeNull();
    } else {
      expect(second.answer).toMatchObject({ decision: "ask", pickedUp: true, callId });
    }

    // the approval is given once in all
    const third = await recordGatedCall(agent, run.id, gatedCall("c"));
    const fourth = await recordGatedCall(agent, run.id, gatedCall("d"));
    const allowsOfCard = [second, third, fourth].filter(
      (r) => r.answer.decision === "allow" && r.answer.callId === callId,
    );
    expect(allowsOfCard).toHaveLength(1);
    const [after] = await getDb().select().from(calls).where(eq(calls.id, callId));
    expect(after!.usedAt).not.toBeNull();
  });

  it("is bounded: a card older than the pick-up window, or in another queue than the call would go to now, is not picked up", async () => {
    const home = await makeQueue();
    const other = await makeQueue();
    const reviewer = await as<ReviewerActor>(
      (await makeReviewer({ queues: [{ name: home.name }, { name: other.name }] })).token,
    );
    const agent = await as<AgentActor>(
      (await makeAgentKey({ queues: [home.name, other.name] })).key,
    );
    const { run } = await createRun(agent, {});
    const ask = (toolCallId: string, queue: string, args = { x: 2 }) =>
      recordGatedCall(agent, run.id, { ...gatedCall(toolCallId), args, queue });

    // approved in `home`; the identical call going to `other` asks there instead
    const asked = await ask("a", home.name);
    await decideCall(reviewer, asked.answer.callId, { outcome: "approve", expectedRevision: 1 });
    const elsewhere = await ask("b", other.name);
    expect(elsewhere.answer).toMatchObject({ decision: "ask", pickedUp: false });
    expect(elsewhere.answer.callId).not.toBe(asked.answer.callId);

    // approved, then left unused past the window: the identical call is asked afresh
    const stale = await ask("c", home.name, { x: 3 });
    await decideCall(reviewer, stale.answer.callId, { outcome: "approve", expectedRevision: 1 });
    await getDb()
      .update(batches)
      .set({ createdAt: Date.now() - 25 * 3600_000 })
      .where(eq(batches.id, stale.answer.batch.id));
    const late = await ask("d", home.name, { x: 3 });
    expect(late.answer).toMatchObject({ decision: "ask", pickedUp: false });

    // within the window and in the same queue it is picked up (once)
    const fresh = await ask("e", home.name);
    expect(fresh.answer).toMatchObject({
      decision: "allow",
      pickedUp: true,
      callId: asked.answer.callId,
    });
  });
});

describe("the upstream's fingerprint", () => {
  it("a decision is picked up only by a gateway of the same name in front of the same upstream", async () => {
    const queue = await makeQueue();
    const reviewer = await as<ReviewerActor>(
      (await makeReviewer({ queues: [{ name: queue.name }] })).token,
    );
    const agent = await as<AgentActor>((await makeAgentKey({ queues: [queue.name] })).key);
    const { run } = await createRun(agent, {});
    const ask = (toolCallId: string, upstream?: string) =>
      recordGatedCall(agent, run.id, {
        ...gatedCall(toolCallId),
        args: { sql: "delete from t" },
        ...(upstream !== undefined && { upstream }),
      });
    const dev = await ask("a", "dev-sqlite");
    await decideCall(reviewer, dev.answer.callId, { outcome: "approve", expectedRevision: 1 });
    // the same name, another upstream (prod): asked afresh
    const prod = await ask("b", "prod-sqlite");
    expect(prod.answer).toMatchObject({ decision: "ask", pickedUp: false });
    const unnamed = await ask("c");
    expect(unnamed.answer).toMatchObject({ decision: "ask", pickedUp: false });
    // the same upstream picks it up
    const again = await ask("d", "dev-sqlite");
    expect(again.answer).toMatchObject({
      decision: "allow",
      pickedUp: true,
      callId: dev.answer.callId,
    });
    // policies still see the gateway's name
    expect(again.answer.batch.calls[0]!.metadata).toMatchObject({ mcp: { server: "g" } });
  });
});

describe("arguments", () => {
  it("an own __proto__ key is refused (400): the reviewer would never see it", async () => {
    const queue = await makeQueue();
    const agent = await as<AgentActor>((await makeAgentKey({ queues: [queue.name] })).key);
    const { run } = await createRun(agent, {});
    const args = JSON.parse('{"x":1,"__proto__":{"y":2}}') as Record<string, unknown>;
    const refused = await recordGatedCall(agent, run.id, { ...gatedCall("p"), args }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(400);
    expect((refused as ApiError).message).toMatch(/__proto__/);
  });
});

describe("outcome reports", () => {
  it("a result or error over the size cap is refused (400), alone or riding along with a call", async () => {
    const queue = await makeQueue();
    const agent = await as<AgentActor>((await makeAgentKey({ queues: [queue.name] })).key);
    const { run } = await createRun(agent, {});
    const huge = { text: "x".repeat(100_000) };
    for (const outcome of [
      { callId: "c1", type: "tool.completed", result: huge },
      { callId: "c1", type: "tool.failed", error: huge },
    ]) {
      const alone = await reportGatedOutcomes(agent, run.id, { outcomes: [outcome] }).catch(
        (error: unknown) => error,
      );
      expect(alone).toBeInstanceOf(ApiError);
      expect((alone as ApiError).status).toBe(400);
      const along = await recordGatedCall(agent, run.id, {
        ...gatedCall("z"),
        outcomes: [outcome],
      }).catch((error: unknown) => error);
      expect(along).toBeInstanceOf(ApiError);
      expect((along as ApiError).status).toBe(400);
    }
  });
});
