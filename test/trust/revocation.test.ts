import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, events } from "@/db/schema";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { sessionClient, sessionCookie } from "../support/sessions";
import { openSse, type SseClient } from "../support/sse";
import { freshDatabase } from "../support/database";
import { pausedRun } from "../support/api-fixtures";

// Issue 14, finding 4: revocation that bites. Revoking an agent key or a reviewer token, rotating
// a key past its grace period, or signing out everywhere refuses the credential's next request
// and ends its open streams and long-polls within seconds — against a real server.

let server: TestServer;
let queue: { id: string; name: string };
let admin: TestReviewer;
let asAdmin: ApiClient;
/** keys are created and rotated from a signed-in session only (lib/auth/require-session.ts) */
let asAdminSession: ApiClient;
const opened: SseClient[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase("revocation");
  queue = await makeQueue();
  admin = await makeReviewer({ name: "Ada Admin", queues: [{ name: queue.name, role: "admin" }] });
  server = await startServer({ databaseUrl });
  asAdmin = apiClient(server.baseUrl, admin.token);
  asAdminSession = await sessionClient(server.baseUrl, admin.email);
}, 60_000);
afterEach(() => opened.splice(0).forEach((client) => client.close()));
afterAll(() => server?.stop());

async function stream(path: string, options: { token?: string; cookie?: string }) {
  const client = await openSse(`${server.baseUrl}/api/v1${path}`, {
    token: options.token,
    headers: options.cookie ? { cookie: options.cookie } : {},
  });
  opened.push(client);
  expect(client.status).toBe(200);
  await waitUntil(() => client.raw().startsWith("retry:"), { what: "the stream's first bytes" });
  return client;
}

/** Whether the server ended the stream within `ms` (the client never closes it first here). */
async function endsWithin(client: SseClient, ms: number): Promise<boolean> {
  return Promise.race([client.ended.then(() => true), sleep(ms).then(() => false)]);
}

/** A long-poll of the batch (up to 30 s), answered when the server decides. */
function longPoll(client: ApiClient, batchId: string) {
  const startedAt = Date.now();
  return client
    .get(`/batches/${batchId}?wait=30`)
    .then((answer) => ({ status: answer.status, afterMs: Date.now() - startedAt }));
}

async function agentWithPausedRun() {
  const agent = await makeAgentKey({ queues: [queue.name] });
  const asAgent = apiClient(server.baseUrl, agent.key);
  const { run, batch } = await pausedRun(asAgent, refundBatch());
  return { agent, asAgent, run, batch };
}

describe("agent keys", () => {
  it("a key revoked in the database ends its open stream and long-poll within seconds", async () => {
    // Today's only way to revoke (a hand edit): the stream kept delivering, the long-poll waited.
    const { agent, asAgent, run, batch } = await agentWithPausedRun();
    const runStream = await stream(`/runs/${run.id}/stream`, { token: agent.key });
    const poll = longPoll(asAgent, batch.id);
    await sleep(300);
    await getDb()
      .update(agentKeys)
      .set({ revokedAt: Date.now() })
      .where(eq(agentKeys.id, agent.id));
    expect(await endsWithin(runStream, 5000)).toBe(true);
    const answer = await poll;
    expect(answer.status).toBe(401);
    expect(answer.afterMs).toBeLessThan(6000);
    // and its next request, once the second-long cache has passed
    await sleep(1100);
    expect((await asAgent.get(`/runs/${run.id}`)).status).toBe(401);
  });

  it("POST /agents/{id}/revoke: the next request is 401 at once; stream and long-poll end", async () => {
    const { agent, asAgent, run, batch } = await agentWithPausedRun();
    const runStream = await stream(`/runs/${run.id}/stream`, { token: agent.key });
    const poll = longPoll(asAgent, batch.id);
    await sleep(300);
    const revoked = await asAdmin.post(`/agents/${agent.id}/revoke`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.agent.revokedAt).not.toBeNull();
    expect((await asAgent.get(`/runs/${run.id}`)).status).toBe(401);
    expect(await endsWithin(runStream, 5000)).toBe(true);
    expect((await poll).status).toBe(401);
    // Revoking again changes nothing and writes no second event.
    expect((await asAdmin.post(`/agents/${agent.id}/revoke`)).status).toBe(200);
    const logged = await getDb().select().from(events).where(eq(events.type, "agent.revoked"));
    expect(logged.filter((e) => e.data.agentId === agent.id)).toHaveLength(1);
    expect(logged.find((e) => e.data.agentId === agent.id)).toMatchObject({
      actorId: admin.id,
      actorName: "Ada Admin",
      // not on the agent's queue: reviewer streams never carry key changes
      queueId: null,
    });
    // A revoked key cannot be rotated back to life.
    const rotated = await asAdminSession.post(`/agents/${agent.id}/rotate`, {});
    expect(rotated.status).toBe(409);
    expect(rotated.body.error.code).toBe("key_revoked");
  });

  it("rotation: the old key works during its grace period and stops after it; its stream ends", async () => {
    const { agent, run } = await agentWithPausedRun();
    const rotated = await asAdminSession.post(`/agents/${agent.id}/rotate`, { graceSecs: 3 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const newKey: string = rotated.body.key;
    expect(newKey).toMatch(/^cs_agent_/);
    expect(newKey).not.toBe(agent.key);
    expect(rotated.body.agent.previousKeyExpiresAt).not.toBeNull();
    const asOld = apiClient(server.baseUrl, agent.key);
    const asNew = apiClient(server.baseUrl, newKey);
    expect((await asOld.get(`/runs/${run.id}`)).status).toBe(200);
    expect((await asNew.get(`/runs/${run.id}`)).status).toBe(200);
    const oldStream = await stream(`/runs/${run.id}/stream`, { token: agent.key });
    // past the grace (3 s), the actor cache (1 s) and a stream check (2 s)
    expect(await endsWithin(oldStream, 7000)).toBe(true);
    expect((await asOld.get(`/runs/${run.id}`)).status).toBe(401);
    expect((await asNew.get(`/runs/${run.id}`)).status).toBe(200);
  });

  it("rotation with no grace stops the old key at once", async () => {
    const { agent, run } = await agentWithPausedRun();
    const rotated = await asAdminSession.post(`/agents/${agent.id}/rotate`, { graceSecs: 0 });
    expect(rotated.status).toBe(200);
    expect((await apiClient(server.baseUrl, agent.key).get(`/runs/${run.id}`)).status).toBe(401);
    expect((await apiClient(server.baseUrl, rotated.body.key).get(`/runs/${run.id}`)).status).toBe(
      200,
    );
  });

  it("a key created over the API works at once, and its last use is recorded", async () => {
    const created = await asAdminSession.post("/agents", {
      name: "Made in the app",
      defaultQueue: queue.id,
      ownerEmail: admin.email,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.key).toMatch(/^cs_agent_/);
    expect(created.body.agent).toMatchObject({
      name: "Made in the app",
      defaultQueue: { id: queue.id },
      queues: [{ id: queue.id }],
      owner: { id: admin.id },
      lastUsedAt: null,
    });
    // The list never shows a secret, only its prefix.
    const listed = await asAdmin.get("/agents");
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    const asAgent = apiClient(server.baseUrl, created.body.key);
    expect((await asAgent.post("/runs", {})).status).toBe(201);
    const used = await waitUntil(async () => {
      const { body } = await asAdmin.get("/agents");
      return body.agents.find((a: { id: string }) => a.id === created.body.agent.id)?.lastUsedAt;
    });
    expect(Date.parse(used)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe("reviewer tokens", () => {
  it("a revoked token is refused and its stream ends; others' tokens are not the reviewer's to revoke", async () => {
    const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
    const other = await makeReviewer({ queues: [{ name: queue.name }] });
    const asReviewer = apiClient(server.baseUrl, reviewer.token);
    // made from a signed-in session (a token may not mint its own successor)
    const created = await apiClient(server.baseUrl).post(
      "/reviewer-tokens",
      {},
      { cookie: await sessionCookie(server.baseUrl, reviewer.email), origin: server.baseUrl },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const token: string = created.body.token;
    const listed = await asReviewer.get("/reviewer-tokens");
    expect(listed.body.tokens.map((t: { id: string }) => t.id)).toContain(
      created.body.reviewerToken.id,
    );
    expect(
      listed.body.tokens.every((t: { user: { id: string } }) => t.user.id === reviewer.id),
    ).toBe(true);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    // Another reviewer's token does not exist for them.
    const theirs = (await apiClient(server.baseUrl, other.token).get("/reviewer-tokens")).body
      .tokens[0];
    expect((await asReviewer.post(`/reviewer-tokens/${theirs.id}/revoke`)).status).toBe(404);

    const live = await stream("/stream", { token });
    const revoked = await asReviewer.post(
      `/reviewer-tokens/${created.body.reviewerToken.id}/revoke`,
    );
    expect(revoked.status).toBe(200);
    expect(revoked.body.token.revokedAt).not.toBeNull();
    expect((await apiClient(server.baseUrl, token).get("/queue")).status).toBe(401);
    expect(await endsWithin(live, 5000)).toBe(true);
    // The reviewer's other token still works.
    expect((await asReviewer.get("/queue")).status).toBe(200);
    // An admin may revoke anyone's.
    expect((await asAdmin.post(`/reviewer-tokens/${theirs.id}/revoke`)).status).toBe(200);
    expect((await apiClient(server.baseUrl, other.token).get("/queue")).status).toBe(401);
  });
});

describe("sign out everywhere", () => {
  it("refuses every session cookie of the reviewer and ends their streams; tokens too if asked", async () => {
    const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
    const laptop = await sessionCookie(server.baseUrl, reviewer.email);
    const phone = await sessionCookie(server.baseUrl, reviewer.email);
    const asLaptop = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/api/v1${path}`, {
        ...init,
        headers: { cookie: laptop, origin: server.baseUrl, ...(init.headers ?? {}) },
      });
    expect((await asLaptop("/queue")).status).toBe(200);
    const phoneStream = await stream("/stream", { cookie: phone });
    const tokenStream = await stream("/stream", { token: reviewer.token });

    const answer = await asLaptop("/sessions/revoke-all", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ revokeTokens: false }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ sessionsEnded: 2, tokensRevoked: 0 });
    expect((await asLaptop("/queue")).status).toBe(401);
    expect(
      (await fetch(`${server.baseUrl}/api/v1/queue`, { headers: { cookie: phone } })).status,
    ).toBe(401);
    expect(await endsWithin(phoneStream, 5000)).toBe(true);
    // Tokens were not asked for: the token and its stream go on.
    expect(await endsWithin(tokenStream, 2500)).toBe(false);
    const asToken = apiClient(server.baseUrl, reviewer.token);
    expect((await asToken.get("/queue")).status).toBe(200);

    const again = await asToken.post("/sessions/revoke-all", { revokeTokens: true });
    expect(again.body).toEqual({ sessionsEnded: 0, tokensRevoked: 1 });
    expect((await asToken.get("/queue")).status).toBe(401);
    expect(await endsWithin(tokenStream, 5000)).toBe(true);
    const logged = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "session.signed_out_everywhere"));
    expect(logged.filter((e) => e.actorId === reviewer.id)).toHaveLength(2);
    expect(logged.every((e) => e.queueId === null)).toBe(true);
  });
});

describe("signing out", () => {
  it("ends the session's open stream within seconds", async () => {
    const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
    const cookie = await sessionCookie(server.baseUrl, reviewer.email);
    const live = await stream("/stream", { cookie });
    const signedOut = await fetch(`${server.baseUrl}/api/auth/sign-out`, {
      method: "POST",
      headers: { cookie, origin: server.baseUrl, "content-type": "application/json" },
      body: "{}",
    });
    expect(signedOut.status).toBe(200);
    expect(await endsWithin(live, 5000)).toBe(true);
  });
});

describe("the audit log", () => {
  it("shows admins the trust changes newest first, and nobody else", async () => {
    const audit = await asAdmin.get("/audit?limit=5");
    expect(audit.status).toBe(200);
    const types: string[] = audit.body.events.map((e: { type: string }) => e.type);
    expect(types.length).toBeGreaterThan(0);
    expect(types.every((t) => /^(agent|reviewer_token|session|person|member)\./.test(t))).toBe(
      true,
    );
    const seqs = audit.body.events.map((e: { seq: number }) => e.seq);
    expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);
    const older = await asAdmin.get(`/audit?limit=5&before=${audit.body.nextCursor}`);
    expect(older.body.events[0].seq).toBeLessThan(seqs[seqs.length - 1]);
    const reviewer = await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] });
    expect((await apiClient(server.baseUrl, reviewer.token).get("/audit")).status).toBe(403);
  });
});
