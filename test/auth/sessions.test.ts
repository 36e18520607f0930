import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { sessions } from "@/db/schema";
import { createFirstAdmin } from "@/lib/admin/create-first-admin";
import { hashStoredSessionTokens } from "@/lib/auth/hashed-session-tokens";
import { sha256Hex } from "@/lib/ids";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import { setupCodeOf, type TestServer } from "@/test/support/server";

// Reviewer sessions over real HTTP: better-auth's sign-in sets a cookie that the API accepts
// as the reviewer, cross-site writes with it are refused, password guessing is slowed, and the
// database holds only a hash of the cookie's token.

let server: TestServer;
let team: Awaited<ReturnType<typeof makeTeam>>;

beforeAll(async () => {
  // The test client stands in for a proxy on loopback, so `from` below names other clients.
  server = await startApiServer("sessions", { TRUSTED_PROXIES: "127.0.0.1" });
}, 60_000);
afterAll(() => server?.stop());

/** `from`: the client address, so sign-ins that are not about guessing stay out of its limit. */
async function signIn(email: string, password: string, from?: string) {
  return fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      origin: server.baseUrl,
      ...(from && { "x-forwarded-for": from }),
    },
    body: JSON.stringify({ email, password }),
  });
}

function sessionCookie(response: Response): string {
  const cookie = response.headers
    .getSetCookie()
    .find((c) => c.startsWith("better-auth.session_token="));
  if (!cookie) throw new Error(`no session cookie in ${response.headers.getSetCookie()}`);
  return cookie.split(";")[0]!;
}

/** The session token inside a cookie (`name=token.signature`, URL-encoded). */
function tokenOf(cookie: string): string {
  return decodeURIComponent(cookie.slice(cookie.indexOf("=") + 1)).split(".")[0]!;
}

const storedTokens = async () =>
  (await getDb().select({ token: sessions.token }).from(sessions)).map((row) => row.token);

describe("reviewer sessions", () => {
  it("first-run setup makes one admin of a General queue, and only ever one", async () => {
    const setupCode = setupCodeOf(server);
    const attempts = await Promise.allSettled([
      createFirstAdmin({
        name: "Eve",
        email: "eve@example.com",
        password: "long enough pw",
        setupCode,
      }),
      createFirstAdmin({
        name: "Mal",
        email: "mal@example.com",
        password: "long enough pw",
        setupCode,
      }),
    ]);
    expect(attempts.map((a) => a.status).sort()).toEqual(["fulfilled", "rejected"]);
    const winner = attempts.find((a) => a.status === "fulfilled")!;
    expect(winner.value.queueNames).toEqual(["General"]);
    expect((await signIn(winner.value.email, "long enough pw")).status).toBe(200);

    team = await makeTeam();
    await expect(
      createFirstAdmin({
        name: "Late",
        email: "late@example.com",
        password: "long enough pw",
        setupCode,
      }),
    ).rejects.toMatchObject({ code: "already_exists" });
  });

  it("a signed-in reviewer's cookie works on the API; agents' endpoints still refuse it", async () => {
    const response = await signIn(team.reviewer.email, "correct horse battery");
    expect(response.status).toBe(200);
    const cookie = sessionCookie(response);
    expect(response.headers.getSetCookie().join(";")).toMatch(/HttpOnly/i);
    expect(response.headers.getSetCookie().join(";")).toMatch(/SameSite=Lax/i);

    const agent = apiClient(server.baseUrl, team.agent.key);
    const { body: run } = await agent.post("/runs", { batch: refundBatch() });
    const asReviewer = apiClient(server.baseUrl);
    const queue = await asReviewer.get("/queue", { cookie });
    expect(queue.status).toBe(200);
    expect(queue.body.batches.map((b: { id: string }) => b.id)).toEqual([run.batches[0].id]);

    const snapshot = await asReviewer.get("/queue/snapshot", { cookie });
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.batches).toHaveLength(1);
    expect(snapshot.body.lastEventId).toBeGreaterThan(0);

    // A decision from the app's own origin is the reviewer's…
    const call = run.batches[0].calls[0];
    const decided = await asReviewer.post(
      `/calls/${call.id}/decision`,
      { outcome: "approve", expectedRevision: 1 },
      { cookie, origin: server.baseUrl },
    );
    expect(decided.status).toBe(200);
    expect(decided.body.call.decision.by.name).toBe("Dana Reviewer");

    const other = await agent.post("/runs", { batch: refundBatch() });
    // …one from another origin riding on the cookie is refused and writes nothing.
    const forged = await asReviewer.post(
      `/calls/${other.body.batches[0].calls[0].id}/decision`,
      { outcome: "approve", expectedRevision: 1 },
      { cookie, origin: "http://evil.example" },
    );
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe("forbidden");
    const after = await agent.get(`/batches/${other.body.batches[0].id}`);
    expect(after.body.status).toBe("pending");

    // The session is a reviewer's: agent endpoints answer 403.
    const asAgent = await asReviewer.post("/runs", {}, { cookie, origin: server.baseUrl });
    expect(asAgent.status).toBe(403);
  });

  it("a forged or signed-out session is unauthenticated", async () => {
    const response = await signIn(team.reviewer.email, "correct horse battery");
    const cookie = sessionCookie(response);
    const client = apiClient(server.baseUrl);
    const forged = await client.get("/queue", { cookie: `${cookie.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);

    await fetch(`${server.baseUrl}/api/auth/sign-out`, {
      method: "POST",
      headers: { cookie, origin: server.baseUrl, "content-type": "application/json" },
      body: "{}",
    });
    expect((await client.get("/queue", { cookie })).status).toBe(401);
    // signing out deletes the row, found by the hash of the cookie's token
    expect(await storedTokens()).not.toContain(sha256Hex(tokenOf(cookie)));
  });

  it("stores sessions as SHA-256 hashes: the cookie's token is nowhere in the database", async () => {
    const cookie = sessionCookie(
      await signIn(team.reviewer.email, "correct horse battery", "192.0.2.10"),
    );
    const token = tokenOf(cookie);
    expect(token.length).toBeGreaterThanOrEqual(32);
    const stored = await storedTokens();
    expect(stored).toContain(sha256Hex(token));
    expect(stored.every((t) => /^[0-9a-f]{64}$/.test(t))).toBe(true);
    // nor inside any other column of the table
    const rows = await getDb().select().from(sessions);
    expect(JSON.stringify(rows)).not.toContain(token);

    const client = apiClient(server.baseUrl);
    expect((await client.get("/queue", { cookie })).status).toBe(200);
    // better-auth's own session endpoint hands the raw token back to its owner, not the hash
    const own = await fetch(`${server.baseUrl}/api/auth/get-session`, { headers: { cookie } });
    expect((await own.json()).session.token).toBe(token);

    // An expired session is refused (and the row is found by its hash to expire it).
    await getDb()
      .update(sessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(sessions.token, sha256Hex(token)));
    expect((await client.get("/queue", { cookie })).status).toBe(401);
  });

  it("start-up hashes sessions stored before hashing, once, and they keep working", async () => {
    const cookie = sessionCookie(
      await signIn(team.reviewer.email, "correct horse battery", "192.0.2.10"),
    );
    const token = tokenOf(cookie);
    // As an older release left it: the token itself in the row.
    await getDb()
      .update(sessions)
      .set({ token })
      .where(eq(sessions.token, sha256Hex(token)));
    const client = apiClient(server.baseUrl);
    expect((await client.get("/queue", { cookie })).status).toBe(401);

    expect(await hashStoredSessionTokens()).toBe(1);
    expect(await hashStoredSessionTokens()).toBe(0);
    expect(await storedTokens()).toContain(sha256Hex(token));
    expect((await client.get("/queue", { cookie })).status).toBe(200);
  });

  it("password guessing is rate limited", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await signIn(team.reviewer.email, `wrong guess ${i}`)).status);
    }
    expect(statuses.slice(0, 5).every((s) => s === 401)).toBe(true);
    expect(statuses).toContain(429);
    // Even the right password waits out the window.
    expect((await signIn(team.reviewer.email, "correct horse battery")).status).toBe(429);
  });
});
