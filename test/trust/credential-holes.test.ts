import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, events, personLinks, reviewerTokens, users } from "@/db/schema";
import { sha256Hex } from "@/lib/ids";
import { redeemLink } from "@/lib/people/person-links";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import { sessionClient, signInRequest } from "@/test/support/sessions";
import type { TestServer } from "@/test/support/server";

// Issue 24, holes 3, 4, 7 and 8, replayed from outside against a real server: a leaked personal
// token taking over its own account through a reset link (and every other path to a new
// credential), a reset that left tokens working, links that outlived a deactivation, and a lead
// looking up accounts outside their queues.

let server: TestServer;
let queue: { id: string; name: string };
let otherQueue: { id: string; name: string };
let admin: TestReviewer;
let lead: TestReviewer;
let asAdmin: ApiClient;
let asLead: ApiClient;

beforeAll(async () => {
  // many sign-ins from one address in a minute: the limit is not what this suite tests
  server = await startApiServer("credential-holes", { SIGN_IN_ATTEMPTS_PER_MINUTE: "100" });
  queue = await makeQueue();
  otherQueue = await makeQueue();
  admin = await makeReviewer({ name: "Ada Admin", queues: [{ name: queue.name, role: "admin" }] });
  lead = await makeReviewer({ name: "Lee Lead", queues: [{ name: queue.name, role: "lead" }] });
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
const put = (client: ApiClient, path: string, body: unknown) =>
  client.raw(path, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** Everything a credential could be made in: links, accounts, keys (and their secrets), tokens, SSO. */
async function credentialRows() {
  const db = getDb();
  return {
    links: (await db.select({ n: count() }).from(personLinks))[0]!.n,
    users: (await db.select({ n: count() }).from(users))[0]!.n,
    tokens: (await db.select({ n: count() }).from(reviewerTokens))[0]!.n,
    keyHashes: (await db.select({ hash: agentKeys.keyHash }).from(agentKeys))
      .map((row) => row.hash)
      .sort(),
    ssoEvents: (await db.select().from(events)).filter((e) => e.type.startsWith("sso.")).length,
  };
}

describe("hole 3: a bearer token never leads to a new credential", () => {
  it("refuses a token's reset link for its own account (the takeover), 403 and nothing written", async () => {
    const before = await credentialRows();
    const answer = await apiClient(server.baseUrl, lead.token).post(
      `/people/${lead.id}/password-reset`,
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(403);
    expect(answer.body.error).toMatchObject({
      code: "forbidden",
      message: expect.stringMatching(
        /^Password reset links are issued from a signed-in session only, never with a key or token/,
      ),
    });
    expect(answer.body.error.url).toBeUndefined();
    expect(await credentialRows()).toEqual(before);
    // signed in, the lead still may (a session is a password sign-in, and a reset ends them all)
    expect((await asLead.post(`/people/${lead.id}/password-reset`)).status).toBe(201);
  });

  it("refuses every other path to a credential with a token: invites, accounts, keys, rotation, SSO, tokens", async () => {
    const key = await makeAgentKey({ queues: [queue.name] });
    const asToken = apiClient(server.baseUrl, admin.token);
    const before = await credentialRows();
    const attempts: [string, () => Promise<{ status: number; body: any }>][] = [
      [
        "POST /people (invite)",
        () =>
          asToken.post("/people", {
            email: `t-${Date.now()}@example.com`,
            name: "T",
            queues: [{ queueId: queue.id }],
          }),
      ],
      [
        "POST /people (password)",
        () =>
          asToken.post("/people", {
            email: `p-${Date.now()}@example.com`,
            name: "P",
            password: "chosen by the thief",
          }),
      ],
      [
        "POST /agents",
        () => asToken.post("/agents", { name: "Thief bot", defaultQueue: queue.id }),
      ],
      [
        "POST /agents/{id}/rotate",
        () => asToken.post(`/agents/${key.id}/rotate`, { graceSecs: 60 }),
      ],
      [
        "PUT /sso",
        async () => {
          const answer = await put(asToken, "/sso", {
            enabled: true,
            displayName: "Evil",
            issuer: "https://idp.evil.test",
            clientId: "x",
            clientSecret: "y",
          });
          return { status: answer.status, body: await answer.json() };
        },
      ],
      ["POST /reviewer-tokens", () => asToken.post("/reviewer-tokens", {})],
    ];
    for (const [what, attempt] of attempts) {
      const answer = await attempt();
      expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.error.code, what).toBe("forbidden");
      expect(answer.body.error.message, what).toMatch(/from a signed-in session only/);
    }
    expect(await credentialRows()).toEqual(before);
    // the OpenAPI document says these take a session only
    const document = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json();
    for (const [path, method] of [
      ["/people", "post"],
      ["/people/{userId}/password-reset", "post"],
      ["/agents", "post"],
      ["/agents/{agentId}/rotate", "post"],
      ["/sso", "put"],
      ["/reviewer-tokens", "post"],
    ] as const)
      expect(document.paths[path][method].security, `${method} ${path}`).toEqual([{ session: [] }]);
  });
});

describe("hole 4: a password reset revokes every personal token of the account", () => {
  it("in the batch that sets the password: a token minted before stops, also after a promotion", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    // whoever held the account minted a token of their own
    const minted = await (
      await sessionClient(server.baseUrl, person.email)
    ).post("/reviewer-tokens", {});
    expect(minted.status).toBe(201);
    const asMinted = apiClient(server.baseUrl, minted.body.token);
    const asFactoryToken = apiClient(server.baseUrl, person.token);
    expect((await asMinted.get("/queue")).status).toBe(200);

    const reset = await asAdmin.post(`/people/${person.id}/password-reset`);
    expect(reset.status).toBe(201);
    await redeemLink({ token: tokenOf(reset.body.url), password: "the owner's own again" });
    const at = Date.now();

    // (the server remembers a token's owner for at most a second: lib/auth/actor-cache.ts)
    await waitUntil(async () => (await asMinted.get("/queue")).status === 401, {
      what: "the minted token to be refused",
      timeoutMs: 3000,
    });
    expect((await asFactoryToken.get("/queue")).status).toBe(401);
    const rows = await getDb()
      .select()
      .from(reviewerTokens)
      .where(eq(reviewerTokens.userId, person.id));
    expect(rows.length).toBe(2);
    for (const row of rows) expect(row.revokedAt).toBeGreaterThanOrEqual(at - 5000);
    // the redeem and the revocation are one write: same moment as the link's use
    const [link] = await getDb()
      .select()
      .from(personLinks)
      .where(eq(personLinks.tokenHash, sha256Hex(tokenOf(reset.body.url))));
    for (const row of rows) expect(row.revokedAt).toBe(link!.usedAt);

    // promoted afterwards, the old token still gets nothing
    const promoted = await patch(asAdmin, `/queues/${queue.id}/members/${person.id}`, {
      role: "lead",
    });
    expect(promoted.status).toBe(200);
    expect((await asMinted.get("/people")).status).toBe(401);
    expect(
      (await signInRequest(server.baseUrl, person.email, "the owner's own again")).status,
    ).toBe(200);
  });
});

describe("hole 7: deactivation retires every open invite and reset link", () => {
  it("a reset link issued before a deactivation does not work after the reactivation", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const reset = await asAdmin.post(`/people/${person.id}/password-reset`);
    expect(reset.status).toBe(201);
    expect((await patch(asAdmin, `/people/${person.id}`, { active: false })).status).toBe(200);
    expect((await patch(asAdmin, `/people/${person.id}`, { active: true })).status).toBe(200);

    await expect(
      redeemLink({ token: tokenOf(reset.body.url), password: "kept link's pick" }),
    ).rejects.toMatchObject({ code: "link_expired" });
    expect((await signInRequest(server.baseUrl, person.email, "kept link's pick")).status).toBe(
      401,
    );
    expect((await signInRequest(server.baseUrl, person.email)).status).toBe(200);
  });

  it("nor does an invite link", async () => {
    const invited = await asAdmin.post("/people", {
      email: `retired-${Date.now()}@example.com`,
      name: "Ria Retired",
      queues: [{ queueId: queue.id }],
    });
    expect(invited.status).toBe(201);
    const id = invited.body.person.id;
    expect((await patch(asAdmin, `/people/${id}`, { active: false })).status).toBe(200);
    expect((await patch(asAdmin, `/people/${id}`, { active: true })).status).toBe(200);
    await expect(
      redeemLink({ token: tokenOf(invited.body.invite.url), password: "kept invite's pick" }),
    ).rejects.toMatchObject({ code: "link_expired" });
    // a new link, issued after the reactivation, works
    const fresh = await asAdmin.post(`/people/${id}/password-reset`);
    await redeemLink({ token: tokenOf(fresh.body.url), password: "a fresh link's pick" });
  });
});

describe("a redeemed link retires the person's other open link (found by review)", () => {
  it("an invite redeemed: a reset link issued beside it no longer sets the password", async () => {
    const invited = await asAdmin.post("/people", {
      email: `both-links-${Date.now()}@example.com`,
      name: "Bo Both",
      queues: [{ queueId: queue.id }],
    });
    expect(invited.status).toBe(201);
    const id = invited.body.person.id;
    const reset = await asAdmin.post(`/people/${id}/password-reset`);
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    await redeemLink({ token: tokenOf(invited.body.invite.url), password: "the owner's pick" });
    await expect(
      redeemLink({ token: tokenOf(reset.body.url), password: "someone else's pick" }),
    ).rejects.toMatchObject({ code: "link_expired" });
  });
});

describe("hole 8: a lead learns nothing of people outside their queues", () => {
  let outsider: TestReviewer;
  beforeAll(async () => {
    outsider = await makeReviewer({ name: "Otto Outsider", queues: [{ name: otherQueue.name }] });
  });

  it("POST /people with an outsider's email: a refusal that names no one (admins get the id)", async () => {
    const answer = await asLead.post("/people", {
      email: outsider.email,
      name: "Whoever",
      queues: [{ queueId: queue.id }],
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatchObject({ code: "already_exists", current: null });
    const text = JSON.stringify(answer.body);
    for (const secret of [outsider.id, outsider.name]) expect(text).not.toContain(secret);

    // someone in the lead's own queue: the lead sees them anyway
    const member = await makeReviewer({ queues: [{ name: queue.name }] });
    const known = await asLead.post("/people", {
      email: member.email,
      name: "M",
      queues: [{ queueId: queue.id }],
    });
    expect(known.status).toBe(409);
    expect(known.body.error.current).toEqual({ id: member.id });
    // an admin sees everyone
    const byAdmin = await asAdmin.post("/people", { email: outsider.email, name: "W" });
    expect(byAdmin.body.error.current).toEqual({ id: outsider.id });
  });

  it("POST /agents with an outsider as ownerEmail: answered as an address with no account", async () => {
    const agent = (ownerEmail: string) =>
      asLead.post("/agents", { name: `Bot ${Date.now()}`, defaultQueue: queue.id, ownerEmail });
    const outside = await agent(outsider.email);
    expect(outside.status, JSON.stringify(outside.body)).toBe(400);
    const text = JSON.stringify(outside.body);
    for (const secret of [outsider.id, outsider.name]) expect(text).not.toContain(secret);
    const nobody = `nobody-${Date.now()}@example.com`;
    const unknown = await agent(nobody);
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(outside.body).replaceAll(outsider.email, "E")).toBe(
      JSON.stringify(unknown.body).replaceAll(nobody, "E"),
    );
    // a member of the lead's queue may own it; an admin may name anyone
    const member = await makeReviewer({ name: "Mia Member", queues: [{ name: queue.name }] });
    const owned = await agent(member.email);
    expect(owned.status).toBe(201);
    expect(owned.body.agent.owner).toMatchObject({ id: member.id, name: "Mia Member" });
    const byAdmin = await asAdmin.post("/agents", {
      name: `Admin bot ${Date.now()}`,
      defaultQueue: queue.id,
      ownerEmail: outsider.email,
    });
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body.agent.owner.id).toBe(outsider.id);
  });
  it("POST /queues/{id}/members with an outsider: answered as an unknown address, so no takeover by reset", async () => {
    // Found by review: a person in no queue (an SSO newcomer, someone removed everywhere) added to
    // the lead's queue had all their memberships there, so the lead could reset their password.
    const loner = await makeReviewer({ name: "Lona Nobody-else" });
    const add = (email: string) =>
      asLead.post(`/queues/${queue.id}/members`, { email, role: "reviewer" });
    const outside = await add(loner.email);
    expect(outside.status, JSON.stringify(outside.body)).toBe(400);
    const text = JSON.stringify(outside.body);
    for (const secret of [loner.id, loner.name]) expect(text).not.toContain(secret);
    const nobody = `nobody-${Date.now()}@example.com`;
    const unknown = await add(nobody);
    expect(JSON.stringify(outside.body).replaceAll(loner.email, "E")).toBe(
      JSON.stringify(unknown.body).replaceAll(nobody, "E"),
    );
    expect((await asLead.post(`/people/${loner.id}/password-reset`, {})).status).not.toBe(201);
    // a member of another queue the lead leads moves in; an admin adds anyone
    expect((await asAdmin.post(`/queues/${queue.id}/members`, { email: loner.email })).status).toBe(
      201,
    );
  });
});
