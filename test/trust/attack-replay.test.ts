import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, reviewerTokens } from "@/db/schema";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { sessionClient, sessionCookie, signInRequest } from "@/test/support/sessions";
import type { TestServer } from "@/test/support/server";

// Issue 14: holes found by replaying the attack against the fixed build from outside — a lead's
// one-time links outliving the lead's power over the account, a lead rotating a key that reaches
// queues they do not lead, a lead inviting into no queue, a token minting its own successor.

let server: TestServer;
let queue: { id: string; name: string };
let otherQueue: { id: string; name: string };
let admin: TestReviewer;
let lead: TestReviewer;
let asAdmin: ApiClient;
let asLead: ApiClient;

beforeAll(async () => {
  server = await startApiServer("attack-replay");
  queue = await makeQueue();
  otherQueue = await makeQueue();
  admin = await makeReviewer({ queues: [{ name: queue.name, role: "admin" }] });
  lead = await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] });
  // signed in: links, keys and tokens are made from a session only (lib/auth/require-session.ts)
  asAdmin = await sessionClient(server.baseUrl, admin.email);
  asLead = await sessionClient(server.baseUrl, lead.email);
}, 60_000);
afterAll(() => server?.stop());

const tokenOf = (url: string) => new URL(url).pathname.split("/").pop()!;
const patch = (client: ApiClient, path: string, body: unknown) =>
  client.raw(path, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a lead's one-time links are checked again when used", () => {
  it("refuses a reset link once its person became an admin", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const reset = await asLead.post(`/people/${person.id}/password-reset`);
    expect(reset.status).toBe(201);
    const promoted = await patch(asAdmin, `/queues/${queue.id}/members/${person.id}`, {
      role: "admin",
    });
    expect(promoted.status).toBe(200);

    const { redeemLink } = await import("@/lib/people/person-links");
    await expect(
      redeemLink({ token: tokenOf(reset.body.url), password: "lead owns you" }),
    ).rejects.toMatchObject({ status: 403 });
    expect((await signInRequest(server.baseUrl, person.email, "lead owns you")).status).toBe(401);
    expect((await signInRequest(server.baseUrl, person.email)).status).toBe(200);
  });

  it("refuses an invite once the invited address was made an admin", async () => {
    const email = `newboss-${Date.now()}@example.com`;
    const invite = await asLead.post("/people", {
      email,
      name: "New Boss",
      queues: [{ queueId: queue.id, role: "reviewer" }],
    });
    expect(invite.status, JSON.stringify(invite.body)).toBe(201);
    const promoted = await patch(asAdmin, `/queues/${queue.id}/members/${invite.body.person.id}`, {
      role: "admin",
    });
    expect(promoted.status).toBe(200);
    const { redeemLink } = await import("@/lib/people/person-links");
    await expect(
      redeemLink({ token: tokenOf(invite.body.invite.url), password: "lead owns you" }),
    ).rejects.toMatchObject({ status: 403 });
  });

  it("refuses a lead's link once the lead was deactivated", async () => {
    const shortLead = await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] });
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const reset = await (
      await sessionClient(server.baseUrl, shortLead.email)
    ).post(`/people/${person.id}/password-reset`);
    expect(reset.status).toBe(201);
    expect((await patch(asAdmin, `/people/${shortLead.id}`, { active: false })).status).toBe(200);
    const { redeemLink } = await import("@/lib/people/person-links");
    await expect(
      redeemLink({ token: tokenOf(reset.body.url), password: "fired lead's pick" }),
    ).rejects.toMatchObject({ status: 403 });
  });

  it("still honours an admin's link", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const reset = await asAdmin.post(`/people/${person.id}/password-reset`);
    const { redeemLink } = await import("@/lib/people/person-links");
    await redeemLink({ token: tokenOf(reset.body.url), password: "admin's fresh one" });
    expect((await signInRequest(server.baseUrl, person.email, "admin's fresh one")).status).toBe(
      200,
    );
  });

  it("refuses a lead inviting someone into no queue (an account the lead alone would hold)", async () => {
    const answer = await asLead.post("/people", {
      email: `squat-${Date.now()}@example.com`,
      name: "Squat",
      queues: [],
    });
    expect(answer.status).toBe(403);
  });
});

describe("a lead and agent keys that reach other queues", () => {
  it("cannot rotate or revoke a key that also reaches a queue they do not lead", async () => {
    const key = await makeAgentKey({ queues: [queue.name, otherQueue.name] });
    const [before] = await getDb().select().from(agentKeys).where(eq(agentKeys.id, key.id));
    expect((await asLead.post(`/agents/${key.id}/rotate`, { graceSecs: 60 })).status).toBe(403);
    expect((await asLead.post(`/agents/${key.id}/revoke`)).status).toBe(403);
    const [after] = await getDb().select().from(agentKeys).where(eq(agentKeys.id, key.id));
    expect(after).toEqual(before);
    // within their queues they still can
    const own = await makeAgentKey({ queues: [queue.name] });
    expect((await asLead.post(`/agents/${own.id}/rotate`, { graceSecs: 60 })).status).toBe(200);
  });
});

describe("personal tokens", () => {
  it("are made from a signed-in session, never by a token for itself", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const rows = async () =>
      (await getDb().select().from(reviewerTokens).where(eq(reviewerTokens.userId, person.id)))
        .length;
    const before = await rows();
    expect(
      (await apiClient(server.baseUrl, person.token).post("/reviewer-tokens", {})).status,
    ).toBe(403);
    expect(await rows()).toBe(before);
    const cookie = await sessionCookie(server.baseUrl, person.email);
    const made = await apiClient(server.baseUrl).raw("/reviewer-tokens", {
      method: "POST",
      headers: { cookie, origin: server.baseUrl, "content-type": "application/json" },
      body: "{}",
    });
    expect(made.status).toBe(201);
  });
});
