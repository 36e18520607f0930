import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, reviewClaims } from "@/db/schema";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";
import { makeReviewers, pausedRun, startApiServer } from "../support/api-fixtures";
import { apiClient, refundBatch, type ApiClient, type ApiResponse } from "../support/http";
import type { TestServer } from "../support/server";

// "I'm reviewing this": POST/DELETE /batches/{id}/review-claim, claims in batch views, and the
// queue's claimMode (mark: the claim only shows; lock: only the claimant may decide).

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("review-claims");
});
afterAll(() => server?.stop());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A queue with `reviewers` members, an agent for it, and a lead who may change its settings. */
async function team(reviewers = 3, requiredApprovals = 1) {
  const queue = await makeQueue({ requiredApprovals });
  const names = ["Dana", "Sam", "Kai", "Lou", "Max", "Ned", "Ola", "Pia", "Rex", "Tia"];
  const people = [];
  for (const name of names.slice(0, reviewers)) {
    const [person] = await makeReviewers(1, queue.name, { name: `${name} Reviewer` });
    people.push({ ...person!, api: apiClient(server.baseUrl, person!.token) });
  }
  const agent = await makeAgentKey({ name: "Support bot", queues: [queue.name] });
  return { queue, people, agent: apiClient(server.baseUrl, agent.key) };
}

async function pendingBatch(agent: ApiClient) {
  return (await pausedRun(agent, refundBatch())).batch;
}

const claim = (client: ApiClient, batchId: string, body: unknown = {}) =>
  client.post(`/batches/${batchId}/review-claim`, body);

async function release(client: ApiClient, batchId: string): Promise<ApiResponse> {
  const response = await client.raw(`/batches/${batchId}/review-claim`, { method: "DELETE" });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    headers: response.headers,
  };
}

const approve = (client: ApiClient, call: { id: string; revision: number }) =>
  client.post(`/calls/${call.id}/decision`, {
    outcome: "approve",
    expectedRevision: call.revision,
  });

async function setClaimMode(queueId: string, queueName: string, claimMode: "mark" | "lock") {
  const lead = await makeReviewer({
    name: "Lee Lead",
    queues: [{ name: queueName, role: "lead" }],
  });
  const response = await apiClient(server.baseUrl, lead.token).raw(`/queues/${queueId}`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ claimMode }),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ claimMode });
}

async function reviewEvents(batchId: string) {
  return getDb()
    .select()
    .from(events)
    .where(and(eq(events.batchId, batchId)))
    .then((rows) => rows.filter((e) => e.type.startsWith("review.")));
}

describe("POST /batches/{batchId}/review-claim", () => {
  it("claims for 5 minutes by default, shows the claim in the batch, and renews", async () => {
    const { people, agent } = await team(2);
    const [dana, sam] = people;
    const batch = await pendingBatch(agent);
    expect(batch.claim).toBeNull();

    const before = Date.now();
    const claimed = await claim(dana!.api, batch.id);
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect(claimed.body.claim).toEqual({
      by: { id: dana!.id, name: "Dana Reviewer" },
      expiresAt: expect.stringMatching(ISO),
      locked: false,
    });
    const lasts = Date.parse(claimed.body.claim.expiresAt) - before;
    expect(lasts).toBeGreaterThan(4.9 * 60_000);
    expect(lasts).toBeLessThan(5.1 * 60_000);

    // everyone in the queue sees it
    const seen = await sam!.api.get(`/batches/${batch.id}`);
    expect(seen.body.claim.by.name).toBe("Dana Reviewer");
    const queue = await sam!.api.get(`/queue`);
    expect(queue.body.batches.find((b: { id: string }) => b.id === batch.id).claim).toMatchObject({
      by: { id: dana!.id },
    });

    // the holder renews, for up to 15 minutes
    const renewed = await claim(dana!.api, batch.id, { minutes: 15 });
    expect(renewed.status).toBe(200);
    expect(Date.parse(renewed.body.claim.expiresAt) - before).toBeGreaterThan(14.9 * 60_000);

    const logged = await reviewEvents(batch.id);
    expect(logged.map((e) => e.type)).toEqual(["review.claimed", "review.claimed"]);
    expect(logged[0]).toMatchObject({
      queueId: batch.queue.id,
      runId: batch.runId,
      actorId: dana!.id,
      data: { renewed: false, batch: { id: batch.id, claim: { by: { id: dana!.id } } } },
    });
    expect(logged[1]!.data).toMatchObject({ renewed: true });
  });

  it("refuses another reviewer's claim with 409 already_claimed naming the holder", async () => {
    const { people, agent } = await team(2);
    const [dana, sam] = people;
    const batch = await pendingBatch(agent);
    const held = await claim(dana!.api, batch.id, { minutes: 3 });
    expect(held.status).toBe(200);

    const refused = await claim(sam!.api, batch.id);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "already_claimed",
      holder: { id: dana!.id, name: "Dana Reviewer" },
      expiresAt: held.body.claim.expiresAt,
      current: { id: batch.id, claim: { by: { id: dana!.id } } },
    });
    expect(refused.body.error.message).toContain("Dana Reviewer");
    // only Sam's own claim may be released by Sam
    const notHis = await release(sam!.api, batch.id);
    expect(notHis.status).toBe(409);
    expect(notHis.body.error.code).toBe("already_claimed");
  });

  it("is free again once the claim expired, without any sweeper", async () => {
    const { people, agent } = await team(2);
    const [dana, sam] = people;
    const batch = await pendingBatch(agent);
    expect((await claim(dana!.api, batch.id)).status).toBe(200);
    await getDb()
      .update(reviewClaims)
      .set({ expiresAt: Date.now() - 1000 })
      .where(eq(reviewClaims.batchId, batch.id));

    expect((await sam!.api.get(`/batches/${batch.id}`)).body.claim).toBeNull();
    const taken = await claim(sam!.api, batch.id);
    expect(taken.status).toBe(200);
    expect(taken.body.claim.by.id).toBe(sam!.id);
    // a takeover starts a new claim, not a renewal of Dana's
    const [row] = await getDb()
      .select()
      .from(reviewClaims)
      .where(eq(reviewClaims.batchId, batch.id));
    expect(row).toMatchObject({ userId: sam!.id });
    expect(row!.claimedAt).toBeGreaterThan(Date.now() - 5000);
  });

  it("validates minutes (1-15) and claims only pending batches", async () => {
    const { people, agent } = await team(1);
    const [dana] = people;
    const batch = await pendingBatch(agent);
    for (const minutes of [0, 16, 2.5, "5"]) {
      const bad = await claim(dana!.api, batch.id, { minutes });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("invalid_request");
    }
    expect(await reviewEvents(batch.id)).toHaveLength(0);

    expect((await approve(dana!.api, batch.calls[0])).status).toBe(200);
    const settled = await claim(dana!.api, batch.id);
    expect(settled.status).toBe(409);
    expect(settled.body.error).toMatchObject({
      code: "not_pending",
      current: { status: "decided" },
    });
  });

  it("answers 404 to non-members, 403 to agents, 401 without credentials", async () => {
    const { people, agent } = await team(1);
    const batch = await pendingBatch(agent);
    const [outsider] = await makeReviewers(1, (await makeQueue()).name, { name: "Nora Outsider" });
    const nonMember = apiClient(server.baseUrl, outsider!.token);
    expect((await claim(nonMember, batch.id)).status).toBe(404);
    expect((await release(nonMember, batch.id)).status).toBe(404);
    expect((await claim(people[0]!.api, "no-such-batch")).status).toBe(404);
    const byAgent = await claim(agent, batch.id);
    expect(byAgent.status).toBe(403);
    expect(byAgent.body.error.code).toBe("forbidden");
    expect((await release(agent, batch.id)).status).toBe(403);
    expect((await claim(apiClient(server.baseUrl), batch.id)).status).toBe(401);
    expect(await reviewEvents(batch.id)).toHaveLength(0);
  });

  it("gives the batch to exactly one of 10 reviewers claiming at once", async () => {
    const { people, agent } = await team(10);
    const batch = await pendingBatch(agent);
    const answers = await Promise.all(people.map((p) => claim(p.api, batch.id)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    const winner = people[answers.findIndex((a) => a.status === 200)]!;
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(answer.body.error).toMatchObject({
        code: "already_claimed",
        holder: { id: winner.id },
      });
    }
    const rows = await getDb()
      .select()
      .from(reviewClaims)
      .where(eq(reviewClaims.batchId, batch.id));
    expect(rows).toEqual([expect.objectContaining({ userId: winner.id })]);
    expect(await reviewEvents(batch.id)).toHaveLength(1);
  });
});

describe("DELETE /batches/{batchId}/review-claim", () => {
  it("releases the holder's claim once, and is idempotent", async () => {
    const { people, agent } = await team(2);
    const [dana, sam] = people;
    const batch = await pendingBatch(agent);
    expect((await claim(dana!.api, batch.id)).status).toBe(200);

    const released = await release(dana!.api, batch.id);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id: batch.id, claim: null });
    const again = await release(dana!.api, batch.id);
    expect(again.status).toBe(200);
    expect(again.body.claim).toBeNull();
    // never claimed: still fine
    expect((await release(sam!.api, batch.id)).status).toBe(200);

    const logged = await reviewEvents(batch.id);
    expect(logged.map((e) => e.type)).toEqual(["review.claimed", "review.released"]);
    expect(logged[1]).toMatchObject({
      queueId: batch.queue.id,
      actorId: dana!.id,
      data: { batch: { id: batch.id, claim: null } },
    });
    // and someone else may claim it now
    expect((await claim(sam!.api, batch.id)).status).toBe(200);
  });
});

describe("claimMode", () => {
  it("mark (the default): anyone may decide a claimed batch; the claim stays marked", async () => {
    const { people, agent } = await team(3, 2);
    const [dana, sam] = people;
    const batch = await pendingBatch(agent);
    expect((await claim(dana!.api, batch.id)).status).toBe(200);

    const voted = await approve(sam!.api, batch.calls[0]);
    expect(voted.status, JSON.stringify(voted.body)).toBe(200);
    expect(voted.body.batch.claim).toMatchObject({ by: { id: dana!.id }, locked: false });
  });

  it("lock: others get 409 claimed_by_other with the batch; the claimant decides and the claim ends", async () => {
    const { queue, people, agent } = await team(3, 2);
    const [dana, sam, kai] = people;
    await setClaimMode(queue.id, queue.name, "lock");
    const batch = await pendingBatch(agent);
    const held = await claim(dana!.api, batch.id);
    expect(held.body.claim.locked).toBe(true);

    const refused = await approve(sam!.api, batch.calls[0]);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "claimed_by_other",
      holder: { id: dana!.id, name: "Dana Reviewer" },
      current: { id: batch.id, status: "pending", claim: { by: { id: dana!.id }, locked: true } },
    });
    expect(refused.body.error.message).toContain("Dana Reviewer");
    const refusedBatch = await kai!.api.post(`/batches/${batch.id}/decision`, {
      outcome: "reject",
      expectedRevisions: { [batch.calls[0].id]: 1 },
      reason: "no",
    });
    expect(refusedBatch.status).toBe(409);
    expect(refusedBatch.body.error.code).toBe("claimed_by_other");
    // nothing was written by the refused decisions
    const unchanged = await dana!.api.get(`/batches/${batch.id}`);
    expect(unchanged.body.calls[0].votes).toHaveLength(0);

    // the claimant votes: the claim ends in the same transaction, and the others may vote
    const voted = await approve(dana!.api, batch.calls[0]);
    expect(voted.status, JSON.stringify(voted.body)).toBe(200);
    expect(voted.body.batch.claim).toBeNull();
    expect(
      await getDb().select().from(reviewClaims).where(eq(reviewClaims.batchId, batch.id)),
    ).toHaveLength(0);
    const second = await approve(sam!.api, voted.body.call);
    expect(second.status).toBe(200);
    expect(second.body.batch).toMatchObject({ status: "decided", outcome: "approved" });
  });

  it("lock: an expired claim locks nothing", async () => {
    const { queue, people, agent } = await team(2);
    const [dana, sam] = people;
    await setClaimMode(queue.id, queue.name, "lock");
    const batch = await pendingBatch(agent);
    expect((await claim(dana!.api, batch.id)).status).toBe(200);
    await getDb()
      .update(reviewClaims)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(reviewClaims.batchId, batch.id));
    const decided = await approve(sam!.api, batch.calls[0]);
    expect(decided.status).toBe(200);
    expect(decided.body.batch.status).toBe("decided");
  });
});
