import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CountersignError, runRollback, type Claim } from "@/lib/sdk/index";
import { startApiServer } from "@/test/support/api-fixtures";
import { sleep, waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";
import {
  batchCount,
  decide,
  decideTool,
  eventsOf,
  pendingBatch,
  runCount,
  sdkTeam,
  type SdkTeam,
} from "./fixtures";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

// The SDK against a real server: a run paused, decided by a reviewer over the API and resumed by
// a claim; retries that never duplicate; claims that race, beat and get lost; rollbacks.

let server: TestServer;
let team: SdkTeam;
const proxies: TcpProxy[] = [];
const claims: Claim[] = [];

beforeAll(async () => {
  server = await startApiServer("sdk-client");
  team = await sdkTeam(server.baseUrl);
}, 60_000);
afterAll(async () => {
  claims.forEach((claim) => claim.release());
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await server?.stop();
});

const refund = (orderId: string, extra: Record<string, unknown> = {}) => ({
  toolCallId: `call-${orderId}`,
  toolName: "refund_order",
  args: { orderId, amount: 25 },
  summary: `Refund order ${orderId}`,
  ...extra,
});

/** A run paused on one refund, its batch approved by the reviewer. */
async function approvedRun(orderId: string) {
  const run = await team.client.createRun({
    batch: { calls: [refund(orderId)], checkpoint: { step: 3 } },
  });
  const batch = run.batches![0]!;
  await decide(team.reviewer, batch.calls[0]!, "approve");
  return { run, batch };
}

describe("pause → decide → resume", () => {
  it("waits for the reviewer's decision, claims the run, reports the tool and completes it", async () => {
    const run = await team.client.createRun({ externalId: "order-A-1", metadata: { via: "sdk" } });
    expect(run.status).toBe("running");
    const paused = await team.client.pause(run.id, {
      calls: [refund("A-1", { risks: ["Money leaves the company"], costEstimate: 25 })],
      checkpoint: { messages: ["refund A-1?"] },
    });
    expect(paused.status).toBe("pending");

    const waiting = team.client.waitForDecision(paused.id);
    const seen = await pendingBatch(team.reviewer, team.queue.id, (b) => b.id === paused.id);
    await decide(team.reviewer, seen.calls[0], "approve");
    const settled = await waiting;
    expect(settled).toMatchObject({ id: paused.id, status: "decided", outcome: "approved" });
    expect(settled.calls[0]!.decision).toMatchObject({
      outcome: "approved",
      source: "reviewer",
      by: { name: team.reviewerName },
    });

    const claim = await team.client.claim(run.id, { workerId: "worker-1" });
    claims.push(claim);
    expect(claim.state).toBe("held");
    expect(claim.batch?.id).toBe(paused.id);
    expect(claim.checkpoint).toEqual({ messages: ["refund A-1?"] });
    expect(claim.rollback).toBeNull();
    const reported = await claim.reportToolResult("call-A-1", { refunded: 25 });
    expect(reported).toMatchObject({ type: "tool.completed", data: { toolCallId: "call-A-1" } });
    const done = await claim.complete({ ok: true });
    expect(done.status).toBe("completed");
    expect(claim.state).toBe("ended");

    expect((await team.client.getRun(run.id)).batches).toHaveLength(1);
  });

  it("answers at once for a batch that is already settled, and pauses again from a claim", async () => {
    const { run, batch } = await approvedRun("A-2");
    expect((await team.client.waitForDecision(batch.id)).status).toBe("decided");

    const claim = await team.client.claim(run.id, { workerId: "worker-2" });
    claims.push(claim);
    const next = await claim.pause({ calls: [refund("A-2b")] });
    expect(next.status).toBe("pending");
    expect(claim.state).toBe("ended");
    expect((await team.client.getRun(run.id)).status).toBe("waiting_approval");

    const cancelled = await team.client.cancelBatch(next.id, { reason: "customer called back" });
    expect(cancelled).toMatchObject({ status: "cancelled", cancelReason: "customer called back" });
    expect((await team.client.waitForDecision(next.id)).status).toBe("cancelled");
    expect((await team.client.getRun(run.id)).status).toBe("running");
  });

  it("turns the contract's errors into CountersignError with code, status and current", async () => {
    const { run } = await approvedRun("A-3");
    const paused = await team.client
      .pause(run.id, { calls: [refund("A-3b")] })
      .catch((e: unknown) => e);
    expect(paused).toBeInstanceOf(CountersignError);
    expect(paused).toMatchObject({ status: 409, code: "not_ready", current: { id: run.id } });

    const invalid = await team.client
      .pause(run.id, { calls: [] })
      .catch((e: CountersignError) => e);
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request" });
    expect((invalid as CountersignError).issues.length).toBeGreaterThan(0);

    const missing = await team.client.getBatch("no-such-batch").catch((e: CountersignError) => e);
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("retries after a dropped connection", () => {
  it("create a run and a batch exactly once: the retry carries the same Idempotency-Key", async () => {
    const proxy = await startTcpProxy(server.port);
    proxies.push(proxy);
    const client = team.clientWith({ baseUrl: proxy.baseUrl });
    const before = await runCount(team.agentId);

    proxy.dropAnswerTo("POST /api/v1/runs HTTP/1.1");
    const run = await client.createRun({ externalId: "dropped-1" });
    expect(await runCount(team.agentId)).toBe(before + 1);
    const posts = proxy.requests.filter((r) => r.startsWith("POST /api/v1/runs HTTP"));
    expect(posts).toHaveLength(2);
    const keys = posts.map((head) => /idempotency-key: (\S+)/i.exec(head)?.[1]);
    expect(keys[0]).toBeTruthy();
    expect(keys[1]).toBe(keys[0]);

    proxy.dropAnswerTo(`POST /api/v1/runs/${run.id}/batches`);
    const batch = await client.pause(run.id, { calls: [refund("dropped-1")] });
    expect(batch.status).toBe("pending");
    expect(await batchCount(run.id)).toBe(1);
    expect(
      proxy.requests.filter((r) => r.startsWith(`POST /api/v1/runs/${run.id}/batches`)),
    ).toHaveLength(2);
  });
});

describe("claims", () => {
  it("two workers racing to resume: exactly one wins, the others get already_claimed", async () => {
    const { run } = await approvedRun("R-1");
    const workers = ["w-a", "w-b", "w-c", "w-d"].map((workerId) => ({
      workerId,
      client: team.clientWith(),
    }));
    const outcomes = await Promise.allSettled(
      workers.map(({ workerId, client }) => client.claim(run.id, { workerId })),
    );
    const won = outcomes.filter((o) => o.status === "fulfilled");
    const lost = outcomes.filter((o) => o.status === "rejected");
    expect(won).toHaveLength(1);
    const winner = (won[0] as PromiseFulfilledResult<Claim>).value;
    claims.push(winner);
    for (const outcome of lost) {
      const error = (outcome as PromiseRejectedResult).reason as CountersignError;
      expect(error).toBeInstanceOf(CountersignError);
      expect(error.code).toBe("already_claimed");
      expect(error.details.holder).toBe(winner.workerId);
    }
    await winner.complete();
  });

  it("heartbeats keep a lease; a claim that stops beating is lost and says so", async () => {
    const [beating, silent, cutOff] = await Promise.all([
      approvedRun("H-1"),
      approvedRun("H-2"),
      approvedRun("H-3"),
    ]);
    let heartbeatsBlocked = false;
    const blocking = team.clientWith({
      retry: false,
      fetch: (url, init) =>
        heartbeatsBlocked && url.endsWith("/heartbeat")
          ? Promise.reject(new TypeError("fetch failed"))
          : fetch(url, init),
    });
    const kept = await team.client.claim(beating.run.id, { workerId: "beats", leaseSecs: 5 });
    const quiet = await team.client.claim(silent.run.id, {
      workerId: "quiet",
      leaseSecs: 5,
      heartbeat: false,
    });
    const unreachable = await blocking.claim(cutOff.run.id, { workerId: "cut", leaseSecs: 5 });
    claims.push(kept, quiet, unreachable);
    const lostByCallback: string[] = [];
    quiet.onLost((error) => lostByCallback.push(error.code));
    const firstLease = kept.leaseExpiresAt;
    heartbeatsBlocked = true;

    await sleep(5_300);
    expect(kept.leaseExpiresAt > firstLease).toBe(true);
    const other = team.clientWith();
    await expect(other.claim(beating.run.id, { workerId: "thief" })).rejects.toMatchObject({
      code: "already_claimed",
    });

    // The silent one's lease ran out: another worker takes the run over, and the silent one learns
    // it at its next request (through the rejection, `lost`, `signal` and onLost alike).
    const takeover = await other.claim(silent.run.id, { workerId: "successor" });
    claims.push(takeover);
    await expect(quiet.reportToolResult("call-H-2", { ok: true })).rejects.toMatchObject({
      code: "claim_lost",
    });
    expect(quiet.state).toBe("lost");
    expect((await quiet.lost).code).toBe("claim_lost");
    expect(quiet.signal.aborted).toBe(true);
    expect(lostByCallback).toEqual(["claim_lost"]);

    // The cut-off one could not beat for a whole lease: it reports the claim lost by itself.
    const lost = await Promise.race([unreachable.lost, sleep(3_000).then(() => null)]);
    expect(lost?.code).toBe("claim_lost");
    expect(unreachable.signal.aborted).toBe(true);

    kept.release();
    await takeover.complete();
  });
});

describe("rollback", () => {
  it("reverts the reported actions newest first and reports each action.reverted", async () => {
    const session = await team.client.startRun({ externalId: "rollback-1" });
    const tools = ["create_ticket", "send_email", "create_ticket"];
    for (const [i, toolName] of tools.entries()) {
      const asked = session.ask({
        calls: [{ toolCallId: `step-${i + 1}`, toolName, args: { n: i + 1 } }],
      });
      await decideTool(team, toolName, "approve");
      await asked;
      await session.reportToolResult(
        `step-${i + 1}`,
        { id: `thing-${i + 1}` },
        {
          revert: { undo: i + 1 },
        },
      );
    }
    // An action without revert data has nothing to undo.
    await session.reportToolResult("read-only", { rows: 3 });
    await session.complete({ ok: true });

    const asked = await team.client.requestRollback(session.runId, "wrong customer");
    expect(asked.status).toBe("ready");
    const claim = await team.client.claim(session.runId, { workerId: "reverter" });
    claims.push(claim);
    expect(claim.rollback!.map((a) => a.toolCallId)).toEqual(["step-3", "step-2", "step-1"]);

    const calls: string[] = [];
    const reverted = await runRollback(claim, {
      create_ticket: async (revert, result) => {
        calls.push(`create_ticket ${JSON.stringify(revert)} ${JSON.stringify(result)}`);
      },
      send_email: async (revert) => {
        calls.push(`send_email ${JSON.stringify(revert)}`);
      },
    });
    expect(calls).toEqual([
      'create_ticket {"undo":3} {"id":"thing-3"}',
      'send_email {"undo":2}',
      'create_ticket {"undo":1} {"id":"thing-1"}',
    ]);
    expect(reverted.map((a) => a.toolCallId)).toEqual(["step-3", "step-2", "step-1"]);
    const logged = await eventsOf(session.runId, "action.reverted");
    expect(logged.map((e) => e.data.toolCallId)).toEqual(["step-3", "step-2", "step-1"]);
    expect(logged.every((e) => e.actorKind === "agent")).toBe(true);

    expect((await claim.complete()).status).toBe("completed");
    await waitUntil(
      async () => (await team.client.getRun(session.runId)).rollbackRequestedAt === null,
      {
        what: "the rollback to be answered",
      },
    );
  });
});
