import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, users } from "@/db/schema";
import { pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import { sessionClient, sessionCookie, signInRequest } from "@/test/support/sessions";
import { sleep, waitUntil } from "@/test/support/polling";
import { openSse } from "@/test/support/sse";
import type { TestServer } from "@/test/support/server";

// Issue 14, finding 3 (the audit trail could be rewritten by a rename) and the people API:
// invite by link, rename, deactivate, reset password; every change one write batch with its event.

let server: TestServer;
let queue: { id: string; name: string };
let otherQueue: { id: string; name: string };
let admin: TestReviewer;
let lead: TestReviewer;
let asAdmin: ApiClient;
let asLead: ApiClient;
let agent: ApiClient;

beforeAll(async () => {
  // many sign-ins from one address in a minute: the limit is not what this suite tests
  server = await startApiServer("people", { SIGN_IN_ATTEMPTS_PER_MINUTE: "100" });
  queue = await makeQueue();
  otherQueue = await makeQueue();
  admin = await makeReviewer({ name: "Ada Admin", queues: [{ name: queue.name, role: "admin" }] });
  lead = await makeReviewer({ name: "Lee Lead", queues: [{ name: queue.name, role: "lead" }] });
  // signed in: invites and reset links are made from a session only (lib/auth/require-session.ts)
  asAdmin = await sessionClient(server.baseUrl, admin.email);
  asLead = await sessionClient(server.baseUrl, lead.email);
  agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [queue.name] })).key);
}, 60_000);
afterAll(() => server?.stop());

const patch = (client: ApiClient, path: string, body: unknown) =>
  client.raw(path, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function decide(reviewer: ApiClient, outcome: "approve" | "reject" = "approve") {
  const { batch } = await pausedRun(agent, refundBatch());
  const answer = await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
    outcome,
    expectedRevision: batch.calls[0].revision,
    reason: "checked",
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return batch.id as string;
}

const nameOf = async (id: string) =>
  (await getDb().select({ name: users.name }).from(users).where(eq(users.id, id)))[0]!.name;

describe("finding 3: the audit trail keeps the names people had when they decided", () => {
  it("refuses a reviewer renaming themselves through better-auth's update-user", async () => {
    const person = await makeReviewer({ name: "Rae Real", queues: [{ name: queue.name }] });
    const answer = await fetch(`${server.baseUrl}/api/auth/update-user`, {
      method: "POST",
      headers: {
        cookie: await sessionCookie(server.baseUrl, person.email),
        origin: server.baseUrl,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: "Somebody Else" }),
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(await nameOf(person.id)).toBe("Rae Real");
  });

  it("shows past decisions and votes under the old name after a rename, new ones under the new", async () => {
    const person = await makeReviewer({ name: "Olive Old", queues: [{ name: queue.name }] });
    const asPerson = apiClient(server.baseUrl, person.token);
    const before = await decide(asPerson);

    // Any rename (here straight in the database, as any path to it would end) leaves the record.
    await getDb().update(users).set({ name: "Nora New" }).where(eq(users.id, person.id));
    const old = (await asAdmin.get(`/batches/${before}`)).body;
    expect(old.calls[0].decision.by).toEqual({ id: person.id, name: "Olive Old" });
    expect(old.calls[0].votes[0].reviewer).toEqual({ id: person.id, name: "Olive Old" });
    await getDb().update(users).set({ name: "Olive Old" }).where(eq(users.id, person.id));

    // An admin's rename, through the people API.
    const renamed = await patch(asAdmin, `/people/${person.id}`, { name: "Nora New" });
    expect(renamed.status).toBe(200);
    expect((await renamed.json()).name).toBe("Nora New");
    const after = await decide(asPerson);

    expect((await asAdmin.get(`/batches/${before}`)).body.calls[0].decision.by.name).toBe(
      "Olive Old",
    );
    expect((await asAdmin.get(`/batches/${after}`)).body.calls[0].decision.by.name).toBe(
      "Nora New",
    );
    const history = (await asAdmin.get(`/history?queue=${queue.id}&decidedBy=${person.id}`)).body;
    expect(
      Object.fromEntries(history.batches.map((b: any) => [b.id, b.calls[0].decision.by.name])),
    ).toEqual({ [before]: "Olive Old", [after]: "Nora New" });

    // The export names the decider as recorded, with their id and email.
    const csv = await (
      await asAdmin.raw(`/history/export?format=csv&decidedBy=${person.id}`)
    ).text();
    // the last line is the signed chain head (lib/audit/signed-export.ts)
    const [header, ...rows] = csv.trimEnd().split("\r\n").slice(0, -1);
    const columns = header!.split(",");
    const cell = (row: string, column: string) => row.split(",")[columns.indexOf(column)];
    const byBatch = Object.fromEntries(rows.map((r) => [cell(r, "batchId"), r]));
    expect(cell(byBatch[before]!, "decidedBy")).toBe("Olive Old");
    expect(cell(byBatch[after]!, "decidedBy")).toBe("Nora New");
    for (const row of rows) {
      expect(cell(row, "decidedById")).toBe(person.id);
      expect(cell(row, "decidedByEmail")).toBe(person.email);
    }
    const json = await (
      await asAdmin.raw(`/history/export?format=json&decidedBy=${person.id}`)
    ).json();
    const exported = json.batches.find((b: any) => b.id === before);
    expect(exported.calls[0].decision.by).toEqual({
      id: person.id,
      name: "Olive Old",
      email: person.email,
    });
    expect(exported.calls[0].votes[0].reviewer.email).toBe(person.email);
    // …while the ordinary API shows no email to agents or reviewers.
    expect((await asAdmin.get(`/batches/${before}`)).body.calls[0].decision.by.email).toBe(
      undefined,
    );
  });

  it("lets only admins rename, and logs the rename", async () => {
    const person = await makeReviewer({ name: "Pat Plain", queues: [{ name: queue.name }] });
    const byLead = await patch(asLead, `/people/${person.id}`, { name: "Pat Lead-Renamed" });
    expect(byLead.status).toBe(403);
    const bySelf = await patch(apiClient(server.baseUrl, person.token), `/people/${person.id}`, {
      name: "Pat Self",
    });
    expect(bySelf.status).toBe(403);
    expect(await nameOf(person.id)).toBe("Pat Plain");
    expect((await patch(asAdmin, `/people/${person.id}`, { name: "" })).status).toBe(400);

    expect((await patch(asAdmin, `/people/${person.id}`, { name: "Pat Proper" })).status).toBe(200);
    const [logged] = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "person.renamed"))
      .then((rows) => rows.filter((e) => e.data.userId === person.id));
    expect(logged).toMatchObject({
      queueId: null,
      actorId: admin.id,
      data: { userId: person.id, email: person.email, before: "Pat Plain", after: "Pat Proper" },
    });
  });
});

describe("deactivating and reactivating", () => {
  it("refuses the person's token, session and sign-in at once, and brings them back", async () => {
    const person = await makeReviewer({ name: "Dee Active", queues: [{ name: queue.name }] });
    const asPerson = apiClient(server.baseUrl, person.token);
    const cookie = await sessionCookie(server.baseUrl, person.email);
    expect((await asPerson.get("/queue")).status).toBe(200);
    expect((await apiClient(server.baseUrl).get("/queue", { cookie })).status).toBe(200);

    const off = await patch(asAdmin, `/people/${person.id}`, { active: false });
    expect(off.status).toBe(200);
    expect((await off.json()).status).toBe("deactivated");
    expect((await asPerson.get("/queue")).status).toBe(401);
    expect((await apiClient(server.baseUrl).get("/queue", { cookie })).status).toBe(401);
    expect((await signInRequest(server.baseUrl, person.email)).status).toBe(403);

    const on = await patch(asAdmin, `/people/${person.id}`, { active: true });
    expect((await on.json()).status).toBe("active");
    expect((await signInRequest(server.baseUrl, person.email)).status).toBe(200);
    // the old token stays revoked: reactivation does not bring credentials back
    expect((await asPerson.get("/queue")).status).toBe(401);
  });
});

describe("a deactivated person's open streams", () => {
  it("end within seconds, by token and by session (their credentials are gone)", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const cookie = await sessionCookie(server.baseUrl, person.email);
    const streams = [
      await openSse(`${server.baseUrl}/api/v1/stream`, { token: person.token }),
      await openSse(`${server.baseUrl}/api/v1/stream`, { headers: { cookie } }),
    ];
    try {
      for (const client of streams) {
        expect(client.status).toBe(200);
        await waitUntil(() => client.raw().startsWith("retry:"), { what: "the stream's head" });
      }
      expect((await patch(asAdmin, `/people/${person.id}`, { active: false })).status).toBe(200);
      for (const client of streams)
        expect(
          await Promise.race([client.ended.then(() => true), sleep(6000).then(() => false)]),
        ).toBe(true);
    } finally {
      streams.forEach((client) => client.close());
    }
  });
});

describe("invites and password resets", () => {
  it("invites by a one-time link that sets a password and is used up", async () => {
    const email = `invitee-${Date.now()}@example.com`;
    const invited = await asLead.post("/people", {
      email,
      name: "Ivy Invitee",
      queues: [{ queueId: queue.id, role: "reviewer" }],
    });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    expect(invited.body.person.status).toBe("invited");
    const url = new URL(invited.body.invite.url);
    const token = url.pathname.split("/").pop()!;
    expect(url.pathname).toBe(`/invite/${token}`);

    // Not before the link is used.
    expect((await signInRequest(server.baseUrl, email, "a new password")).status).toBe(401);
    const { redeemLink } = await import("@/lib/people/person-links");
    await redeemLink({ token, password: "a new password" });
    expect((await signInRequest(server.baseUrl, email, "a new password")).status).toBe(200);
    await expect(redeemLink({ token, password: "another one" })).rejects.toMatchObject({
      code: "link_used",
    });
    const people = (await asLead.get("/people")).body.people;
    expect(people.find((p: any) => p.email === email)).toMatchObject({
      status: "active",
      queues: [{ id: queue.id, role: "reviewer" }],
    });
  });

  it("lets a lead invite only into their queues, never as admin, and never with a password", async () => {
    const base = { email: `x-${Date.now()}@example.com`, name: "X" };
    const other = await asLead.post("/people", {
      ...base,
      queues: [{ queueId: otherQueue.id }],
    });
    expect(other.status).toBe(403);
    const asAdminRole = await asLead.post("/people", {
      ...base,
      queues: [{ queueId: queue.id, role: "admin" }],
    });
    expect(asAdminRole.status).toBe(403);
    const withPassword = await asLead.post("/people", { ...base, password: "long enough" });
    expect(withPassword.status).toBe(403);
    expect((await asLead.post("/people", { ...base, email: "not an email" })).status).toBe(400);
    const none = await getDb().select().from(users).where(eq(users.email, base.email));
    expect(none).toEqual([]);
  });

  it("creates with a password (admins) and resets a password by a one-time link", async () => {
    const email = `made-${Date.now()}@example.com`;
    const made = await asAdmin.post("/people", {
      email,
      name: "Max Made",
      password: "first password",
      queues: [{ queueId: queue.id }],
    });
    expect(made.status).toBe(201);
    expect(made.body.invite).toBe(null);
    const cookie = (await signInRequest(server.baseUrl, email, "first password")).headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const reset = await asLead.post(`/people/${made.body.person.id}/password-reset`);
    expect(reset.status, JSON.stringify(reset.body)).toBe(201);
    const token = new URL(reset.body.url).pathname.split("/").pop()!;
    const { redeemLink } = await import("@/lib/people/person-links");
    await redeemLink({ token, password: "second password" });
    expect((await signInRequest(server.baseUrl, email, "first password")).status).toBe(401);
    expect((await signInRequest(server.baseUrl, email, "second password")).status).toBe(200);
    // the sessions from before the reset are gone
    expect((await apiClient(server.baseUrl).get("/queue", { cookie })).status).toBe(401);
    // a lead cannot reset an admin's password
    expect((await asLead.post(`/people/${admin.id}/password-reset`)).status).toBe(403);
  });
});

describe("last sign-in", () => {
  it("is recorded at sign-in and still shown after signing out", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    const lastSignIn = async () =>
      (await asAdmin.get("/people")).body.people.find((p: { id: string }) => p.id === person.id)
        .lastSignInAt as string | null;
    expect(await lastSignIn()).toBe(null);
    const before = Date.now();
    const cookie = await sessionCookie(server.baseUrl, person.email);
    const signedIn = await lastSignIn();
    expect(Date.parse(signedIn!)).toBeGreaterThanOrEqual(before - 1000);
    const out = await fetch(`${server.baseUrl}/api/auth/sign-out`, {
      method: "POST",
      headers: { cookie, origin: server.baseUrl, "content-type": "application/json" },
      body: "{}",
    });
    expect(out.status).toBe(200);
    expect(await lastSignIn()).toBe(signedIn);
  });
});

// Last: it deactivates the suite's admin.
describe("the last active admin", () => {
  it("is never deactivated, and leads may not deactivate anyone", async () => {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    expect((await patch(asLead, `/people/${person.id}`, { active: false })).status).toBe(403);
    expect((await patch(asAdmin, `/people/${admin.id}`, { active: false })).status).toBe(403);
    const second = await makeReviewer({ queues: [{ name: otherQueue.name, role: "admin" }] });
    const asSecond = apiClient(server.baseUrl, second.token);
    expect((await patch(asSecond, `/people/${admin.id}`, { active: false })).status).toBe(200);
    // `second` is now the only active admin: the operator (CLI) may not deactivate them either.
    const { updatePerson } = await import("@/lib/people/update-person");
    const { OPERATOR } = await import("@/lib/queues/queue-access");
    await expect(updatePerson(OPERATOR, second.id, { active: false })).rejects.toMatchObject({
      code: "last_admin",
    });
    // Nor may their admin role be taken: the deactivated admin keeps nothing managed.
    const { changeRole } = await import("@/lib/queues/change-role");
    await expect(
      changeRole(OPERATOR, otherQueue.id, second.id, { role: "reviewer" }),
    ).rejects.toMatchObject({ code: "last_admin" });
    expect((await asSecond.get("/people")).status).toBe(200);
  });
});
