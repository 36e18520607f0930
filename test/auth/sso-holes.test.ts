import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { accounts, events, queueMembers, users } from "@/db/schema";
import { readStoredSsoSettings } from "@/lib/sso/sso-settings";
import { freshDatabase } from "../support/database";
import { makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import type { ApiClient } from "../support/http";
import { startTestIdp, type IdpUser, type TestIdp } from "../support/oidc-idp";
import { freePort, startServer, type TestServer } from "../support/server";
import {
  actionPagePath,
  findServerAction,
  invokeServerAction,
  serverActions,
} from "../support/server-actions";
import { sessionClient, sessionCookie, signInRequest } from "../support/sessions";
import { ssoSignInOverHttp } from "../support/sso-http";

// Issue 24, holes 1, 2 and 5, replayed from outside against the production server: every step is
// an HTTP request a browser (or curl) could send — PUT /api/v1/sso from an admin's session, the
// single sign-on dance through a real OpenID Connect provider, the invite page's server action,
// the password sign-in. Each `it` is the attack as it succeeded on the code before the fix, and
// asserts what the server answers now.

let server: TestServer;
let idp1: TestIdp;
let idp2: TestIdp;
let admin: TestReviewer;
let lead: TestReviewer;
let adminApi: ApiClient;
let queueA: { id: string; name: string };
let queueB: { id: string; name: string };

const unique = () => Math.random().toString(36).slice(2, 10);

beforeAll(async () => {
  const databaseUrl = await freshDatabase("sso-holes");
  const port = await freePort();
  const redirectUri = `http://127.0.0.1:${port}/api/auth/callback/sso`;
  idp1 = await startTestIdp({ redirectUri });
  idp2 = await startTestIdp({ redirectUri });
  const home = await makeQueue();
  queueA = await makeQueue();
  queueB = await makeQueue();
  admin = await makeReviewer({ name: "Ada Admin", queues: [{ name: home.name, role: "admin" }] });
  lead = await makeReviewer({ name: "Lou Lead", queues: [{ name: queueA.name, role: "lead" }] });
  server = await startServer({
    databaseUrl,
    port,
    env: { SIGN_IN_ATTEMPTS_PER_MINUTE: "1000" },
  });
  // PUT /sso takes a signed-in session, never a token (hole 3: it could lead to a credential)
  adminApi = await sessionClient(server.baseUrl, admin.email);
});
afterAll(async () => {
  await server?.stop();
  await idp1?.stop();
  await idp2?.stop();
});

const settingsFor = (idp: TestIdp, overrides: Record<string, unknown> = {}) => ({
  enabled: true,
  displayName: "Acme SSO",
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret: idp.clientSecret,
  groupsClaim: "groups",
  groupRoles: [{ group: "b-leads", queueId: queueB.id, role: "lead" }],
  ...overrides,
});

function putSso(body: unknown) {
  return adminApi.raw("/sso", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A link redeemed as its page does it: the invite page's server action, over HTTP. */
async function redeemThroughPage(token: string, password: string) {
  const action = findServerAction(
    serverActions(),
    "app/(auth)/invite/actions.ts",
    "redeemLinkAction",
  );
  return invokeServerAction(server.baseUrl, action, actionPagePath(action, { token }), [
    { token, password },
  ]);
}

const idpUser = (email: string, overrides: Partial<IdpUser> = {}): IdpUser => ({
  sub: `sub-${unique()}`,
  email,
  email_verified: true,
  name: "Someone at Acme",
  ...overrides,
});

async function roleIn(userId: string, queueId: string) {
  const [row] = await getDb()
    .select({ role: queueMembers.role })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, userId), eq(queueMembers.queueId, queueId)));
  return row?.role ?? null;
}

describe("hole 5: the stored client secret never goes to another issuer", () => {
  it("PUT /sso with a new issuer and no clientSecret is a 400 on clientSecret, writing nothing", async () => {
    expect((await putSso(settingsFor(idp1))).status).toBe(200);
    const before = await readStoredSsoSettings(getDb());
    const eventsBefore = await getDb()
      .select({ n: sql<number>`count(*)` })
      .from(events);

    const { clientSecret: _omitted, ...withoutSecret } = settingsFor(idp2);
    const answer = await putSso(withoutSecret);
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as {
      error: { code: string; message: string; issues: { path: string }[] };
    };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.issues.map((i) => i.path)).toEqual(["clientSecret"]);
    expect(body.error.message).toMatch(/clientSecret/);

    expect(await readStoredSsoSettings(getDb())).toEqual(before);
    expect(
      await getDb()
        .select({ n: sql<number>`count(*)` })
        .from(events),
    ).toEqual(eventsBefore);

    // The same issuer still keeps the stored secret when it is left out.
    const { clientSecret: _kept, ...sameIssuer } = settingsFor(idp1, { displayName: "Acme" });
    expect((await putSso(sameIssuer)).status).toBe(200);
    expect((await putSso(settingsFor(idp1))).status).toBe(200);
  });
});

describe("hole 1: a link made with one issuer never signs in through another", () => {
  it("after the issuer changes, the new provider's user with the admin's old `sub` is refused", async () => {
    expect((await putSso(settingsFor(idp1))).status).toBe(200);
    // The admin links their account through the first provider.
    const sharedSub = `shared-${unique()}`;
    const linked = await ssoSignInOverHttp(
      server.baseUrl,
      idp1,
      idpUser(admin.email, { sub: sharedSub }),
    );
    expect(linked.signedInAs?.id).toBe(admin.id);

    // The admin moves to another provider (secret given, as required now).
    expect((await putSso(settingsFor(idp2))).status).toBe(200);

    // At the new provider, someone else holds the same `sub`, with another, unverified email.
    const attack = await ssoSignInOverHttp(
      server.baseUrl,
      idp2,
      idpUser(`mallory-${unique()}@elsewhere.test`, { sub: sharedSub, email_verified: false }),
    );
    expect(attack.signedInAs).toBeNull();
    expect(attack.error).toBe("signup_disabled");

    // Every old link was retired with the change, and the audit trail says so.
    const links = await getDb().select().from(accounts).where(eq(accounts.userId, admin.id));
    expect(links.map((l) => l.providerId)).toEqual(["credential"]);
    const audit = await adminApi.get("/audit?limit=20");
    expect(audit.status).toBe(200);
    const retired = (audit.body.events as { type: string; data: Record<string, unknown> }[]).find(
      (e) => e.type === "sso.settings_updated" && e.data.issuer === idp2.issuer,
    );
    expect(retired?.data).toMatchObject({ previousIssuer: idp1.issuer, linksRetired: 1 });

    // The admin links again, by their verified email, at the new provider.
    const again = await ssoSignInOverHttp(
      server.baseUrl,
      idp2,
      idpUser(admin.email, { sub: `admin-at-2-${unique()}` }),
    );
    expect(again.signedInAs?.id).toBe(admin.id);
  });

  it("a link is bound to its issuer even if an old row survived (made before the binding)", async () => {
    // A link row as the code before the fix wrote it: provider "sso", account id = the bare sub.
    const bareSub = `bare-${unique()}`;
    await getDb()
      .insert(accounts)
      .values({
        id: `legacy-${unique()}`,
        accountId: bareSub,
        providerId: "sso",
        userId: admin.id,
        createdAt: new Date(),
        updatedAt: new Date(),
      });
    const attack = await ssoSignInOverHttp(
      server.baseUrl,
      idp2,
      idpUser(`eve-${unique()}@elsewhere.test`, { sub: bareSub, email_verified: false }),
    );
    expect(attack.signedInAs).toBeNull();
  });
});

describe("hole 2: a lead cannot pre-create an account and harvest what SSO grants it", () => {
  async function leadInvitesAndRedeems(email: string, password: string) {
    const leadApi = await sessionClient(server.baseUrl, lead.email);
    const invited = await leadApi.post("/people", {
      email,
      name: "Vic Victim",
      queues: [{ queueId: queueA.id, role: "reviewer" }],
    });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const token = (invited.body.invite.url as string).split("/").pop()!;
    const redeemed = await redeemThroughPage(token, password);
    expect(redeemed.result).toMatchObject({ ok: true });
    return invited.body.person.id as string;
  }

  it("the victim's SSO sign-in is refused until the password is proven; the lead gets no queue B", async () => {
    await putSso(settingsFor(idp2));
    const email = `victim-${unique()}@corp.test`;
    const password = "the lead chose this";
    const victimId = await leadInvitesAndRedeems(email, password);

    // The real victim signs in with single sign-on; their group maps to lead of queue B.
    const victim = await ssoSignInOverHttp(
      server.baseUrl,
      idp2,
      idpUser(email, { groups: ["b-leads"] }),
    );
    expect(victim.signedInAs).toBeNull();
    expect(victim.error).toBe("password_proof_required");
    expect(await roleIn(victimId, queueB.id)).toBeNull();
    const ssoLinks = await getDb()
      .select()
      .from(accounts)
      .where(and(eq(accounts.userId, victimId), eq(accounts.providerId, "sso")));
    expect(ssoLinks).toEqual([]);

    // The lead signs in with the password they chose: queue B is not theirs to see.
    const cookie = await sessionCookie(server.baseUrl, email, password);
    const queue = await fetch(`${server.baseUrl}/api/v1/queue?queue=${queueB.id}`, {
      headers: { cookie },
    });
    expect(queue.status).toBe(404);

    // The invite never verified the address: the lead, not the owner, set the password.
    const [row] = await getDb().select().from(users).where(eq(users.id, victimId));
    expect(row!.emailVerified).toBe(false);
  });

  it("whoever holds both the password and the SSO identity links them by signing in with the password first", async () => {
    const email = `owner-${unique()}@corp.test`;
    const password = "the owner chose this";
    const ownerId = await leadInvitesAndRedeems(email, password);
    const idpOwner = idpUser(email, { groups: ["b-leads"] });

    // Someone else's session in the same browser proves nothing.
    const otherCookie = await sessionCookie(server.baseUrl, lead.email);
    const withOther = await ssoSignInOverHttp(server.baseUrl, idp2, idpOwner, otherCookie);
    expect(withOther.error).toBe("password_proof_required");

    const cookie = await sessionCookie(server.baseUrl, email, password);
    const proven = await ssoSignInOverHttp(server.baseUrl, idp2, idpOwner, cookie);
    expect(proven.signedInAs?.id).toBe(ownerId);
    expect(await roleIn(ownerId, queueB.id)).toBe("lead");
    const [row] = await getDb().select().from(users).where(eq(users.id, ownerId));
    expect(row!.emailVerified).toBe(true);
    const trail = await getDb()
      .select({ type: events.type })
      .from(events)
      .where(sql`json_extract(${events.data}, '$.userId') = ${ownerId}`);
    expect(trail.map((e) => e.type)).toContain("person.sso_linked");

    // From now on single sign-on alone signs them in.
    const later = await ssoSignInOverHttp(server.baseUrl, idp2, idpOwner);
    expect(later.signedInAs?.id).toBe(ownerId);

    // A reset link changes who may hold the password: the existing link waits for proof again.
    const adminCookie = await sessionCookie(server.baseUrl, admin.email);
    const reset = await fetch(`${server.baseUrl}/api/v1/people/${ownerId}/password-reset`, {
      method: "POST",
      headers: { cookie: adminCookie, origin: server.baseUrl },
    });
    expect(reset.status).toBe(201);
    const resetToken = ((await reset.json()) as { url: string }).url.split("/").pop()!;
    const redeemed = await redeemThroughPage(resetToken, "whoever got the link");
    expect(redeemed.result).toMatchObject({ ok: true });
    const afterReset = await ssoSignInOverHttp(server.baseUrl, idp2, idpOwner);
    expect(afterReset.signedInAs).toBeNull();
    expect(afterReset.error).toBe("password_proof_required");
  });

  it("an invite not yet redeemed: SSO signs the owner in and the lead's link dies with it", async () => {
    const leadApi = await sessionClient(server.baseUrl, lead.email);
    const email = `fresh-${unique()}@corp.test`;
    const invited = await leadApi.post("/people", {
      email,
      name: "Fay Fresh",
      queues: [{ queueId: queueA.id, role: "reviewer" }],
    });
    const token = (invited.body.invite.url as string).split("/").pop()!;
    // No group: the owner stays in the lead's queue only, so the lead may still "give access"
    // to them — yet must not set a password on the account its owner now uses.
    const owner = await ssoSignInOverHttp(server.baseUrl, idp2, idpUser(email));
    expect(owner.signedInAs?.email).toBe(email);

    const redeemed = await redeemThroughPage(token, "the lead chose this");
    expect(redeemed.result).toMatchObject({ ok: false });
    expect((await signInRequest(server.baseUrl, email, "the lead chose this")).status).toBe(401);
  });
});
