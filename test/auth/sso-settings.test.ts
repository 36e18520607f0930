import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { eq, gt, like } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { appSettings, events, queueMembers } from "@/db/schema";
import { sealStoredSecrets } from "@/lib/seal-stored-secrets";
import { openSecret, parseSecretKey } from "@/lib/auth/sealed-secrets";
import { ForbiddenError, InvalidRequestError } from "@/lib/errors";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { OPERATOR } from "@/lib/queues/queue-access";
import { applyGroupRoles } from "@/lib/sso/apply-group-roles";
import { getSsoSettings } from "@/lib/sso/get-sso-settings";
import { saveSsoSettings } from "@/lib/sso/save-sso-settings";
import { readStoredSsoSettings, SSO_SECRET_PLACE } from "@/lib/sso/sso-settings";
import { freshDatabase } from "../support/database";
import { makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { startTestIdp, type TestIdp } from "../support/oidc-idp";

// Issue 16, item 4: the single sign-on settings verb (validation, who may, the secret at rest) and
// the group → queue role mapping, against a real database and a real OpenID Connect provider. The
// sign-in itself is e2e/sso.spec.ts's.

let idp: TestIdp;
let admin: TestReviewer;
let lead: TestReviewer;
let queue: { id: string; name: string };
const reviewerOf = (p: TestReviewer) => ({ kind: "reviewer" as const, ...p });
const SECRET_KEY = Buffer.alloc(32, 7).toString("base64");

beforeAll(async () => {
  await freshDatabase("sso-settings");
  process.env.COUNTERSIGN_SECRET_KEY = SECRET_KEY;
  idp = await startTestIdp({ redirectUri: "http://127.0.0.1:1/api/auth/callback/sso" });
  queue = await makeQueue();
  admin = await makeReviewer({ queues: [{ name: queue.name, role: "admin" }] });
  lead = await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] });
});
afterAll(async () => {
  delete process.env.COUNTERSIGN_SECRET_KEY;
  await idp?.stop();
});

const body = (overrides: Record<string, unknown> = {}) => ({
  enabled: true,
  displayName: "Acme SSO",
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret: idp.clientSecret,
  ...overrides,
});

async function ssoWrites() {
  const db = getDb();
  return {
    setting: await readStoredSsoSettings(db),
    events: await db.select().from(events).where(like(events.type, "sso.%")),
  };
}

/** A discovery document that names another issuer (a mix-up the save must refuse). */
async function impostor(): Promise<{ issuer: string; stop: () => void }> {
  const server = createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        issuer: idp.issuer,
        authorization_endpoint: "x",
        token_endpoint: "x",
        jwks_uri: "x",
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { issuer, stop: () => server.close() };
}

describe("saving the settings", () => {
  it("refuses a bad issuer with a 400 on `issuer`, writing nothing", async () => {
    const other = await impostor();
    const before = await ssoWrites();
    try {
      for (const issuer of [
        "not a url",
        "ftp://login.example.com",
        "http://login.example.com", // http only on loopback
        `${idp.issuer}?tenant=1`,
        `${idp.issuer}/nowhere`, // no discovery document there
        other.issuer, // its document names another issuer
      ]) {
        const error = await saveSsoSettings(reviewerOf(admin), body({ issuer })).catch((e) => e);
        expect(error, issuer).toBeInstanceOf(InvalidRequestError);
        expect(error.status, issuer).toBe(400);
        expect(error.extra.issues[0].path, issuer).toBe("issuer");
      }
    } finally {
      other.stop();
    }
    expect(await ssoWrites()).toEqual(before);
  });

  it("refuses other bad input and non-admins, writing nothing", async () => {
    const before = await ssoWrites();
    const refusals: [unknown, unknown][] = [
      [admin, body({ clientSecret: undefined })], // no secret stored yet
      [admin, body({ allowedDomains: ["not a domain"] })],
      [admin, body({ groupRoles: [{ group: "ops", queueId: "nope", role: "reviewer" }] })],
      [admin, body({ groupRoles: [{ group: "ops", queueId: queue.id, role: "admin" }] })],
      [admin, body({ extra: true })],
    ];
    for (const [who, input] of refusals) {
      const error = await saveSsoSettings(reviewerOf(who as TestReviewer), input).catch((e) => e);
      expect(error, JSON.stringify(input)).toBeInstanceOf(InvalidRequestError);
    }
    for (const who of [lead]) {
      await expect(saveSsoSettings(reviewerOf(who), body())).rejects.toBeInstanceOf(ForbiddenError);
      await expect(getSsoSettings(reviewerOf(who))).rejects.toBeInstanceOf(ForbiddenError);
    }
    await expect(
      saveSsoSettings({ kind: "agent", id: "a", name: "bot" } as never, body()),
    ).rejects.toBeInstanceOf(ForbiddenError);
    expect(await ssoWrites()).toEqual(before);
  });

  it("saves, seals the secret, never hands it back, and keeps it when left out", async () => {
    const saved = await saveSsoSettings(reviewerOf(admin), body({ allowedDomains: ["Acme.test"] }));
    expect(JSON.stringify(saved)).not.toContain(idp.clientSecret);
    expect(saved).toMatchObject({ clientSecretSet: true, allowedDomains: ["acme.test"] });
    expect(saved.redirectUri).toMatch(/\/api\/auth\/callback\/sso$/);

    const [row] = await getDb().select().from(appSettings).where(eq(appSettings.key, "sso"));
    expect(row!.value).not.toContain(idp.clientSecret);
    const stored = (await readStoredSsoSettings(getDb()))!.settings;
    expect(stored.clientSecret).toMatch(/^enc:v1:/);
    expect(openSecret(stored.clientSecret, SSO_SECRET_PLACE)).toBe(idp.clientSecret);

    const read = await getSsoSettings(reviewerOf(admin));
    expect(JSON.stringify(read)).not.toContain(idp.clientSecret);

    // Renamed, secret left out: the stored one stays.
    await saveSsoSettings(
      reviewerOf(admin),
      body({ displayName: "Acme", clientSecret: undefined }),
    );
    const again = (await readStoredSsoSettings(getDb()))!.settings;
    expect(again.displayName).toBe("Acme");
    expect(openSecret(again.clientSecret, SSO_SECRET_PLACE)).toBe(idp.clientSecret);

    const written = (await ssoWrites()).events;
    expect(written.map((e) => [e.type, e.actorId])).toEqual([
      ["sso.settings_updated", admin.id],
      ["sso.settings_updated", admin.id],
    ]);
    expect(written.map((e) => e.data.clientSecretChanged)).toEqual([true, false]);
    expect(JSON.stringify(written)).not.toContain(idp.clientSecret);
  });
});

describe("the client secret goes only where it was given for (issue 24, hole 5)", () => {
  /** A provider whose discovery document names a token endpoint the test can move. */
  async function movableProvider() {
    let tokenEndpoint = "";
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: tokenEndpoint,
          jwks_uri: `${issuer}/jwks`,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    tokenEndpoint = `${issuer}/token`;
    return {
      issuer,
      moveTokenEndpoint: (to: string) => (tokenEndpoint = to),
      stop: () => server.close(),
    };
  }

  it("a new issuer, or a token endpoint that moved, needs the secret again; nothing is written without it", async () => {
    const provider = await movableProvider();
    try {
      await saveSsoSettings(reviewerOf(admin), body({ issuer: provider.issuer }));
      expect((await readStoredSsoSettings(getDb()))!.settings.tokenEndpoint).toBe(
        `${provider.issuer}/token`,
      );
      const refused = async (input: Record<string, unknown>) => {
        const before = await ssoWrites();
        const error = await saveSsoSettings(reviewerOf(admin), input).catch((e) => e);
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(error.extra.issues.map((i: { path: string }) => i.path)).toEqual(["clientSecret"]);
        expect(await ssoWrites()).toEqual(before);
        return error as InvalidRequestError;
      };
      // Another issuer, secret left out.
      expect((await refused(body({ clientSecret: undefined }))).message).toMatch(/issuer changes/);
      // The same issuer, whose discovery now names another token endpoint.
      provider.moveTokenEndpoint("https://collector.example/token");
      expect(
        (await refused(body({ issuer: provider.issuer, clientSecret: undefined }))).message,
      ).toMatch(/collector\.example/);
      // With the secret, it saves and the new endpoint is the one the secret goes to.
      await saveSsoSettings(reviewerOf(admin), body({ issuer: provider.issuer }));
      expect((await readStoredSsoSettings(getDb()))!.settings.tokenEndpoint).toBe(
        "https://collector.example/token",
      );
    } finally {
      provider.stop();
      await saveSsoSettings(reviewerOf(admin), body());
    }
  });
});

describe("the client secret at rest", () => {
  it("is sealed again with a new key at start-up, the rest of the settings untouched", async () => {
    const before = (await readStoredSsoSettings(getDb()))!.settings;
    const newKey = Buffer.alloc(32, 9).toString("base64");
    process.env.COUNTERSIGN_SECRET_KEY = newKey;
    process.env.COUNTERSIGN_OLD_SECRET_KEYS = SECRET_KEY;
    try {
      expect(await sealStoredSecrets()).toBeGreaterThanOrEqual(1);
      const after = (await readStoredSsoSettings(getDb()))!.settings;
      expect(after.clientSecret).not.toBe(before.clientSecret);
      expect(after.clientSecret).toMatch(new RegExp(`^enc:v1:${parseSecretKey(newKey).id}:`));
      expect(openSecret(after.clientSecret, SSO_SECRET_PLACE)).toBe(idp.clientSecret);
      expect({ ...after, clientSecret: null }).toEqual({ ...before, clientSecret: null });
    } finally {
      process.env.COUNTERSIGN_SECRET_KEY = SECRET_KEY;
      delete process.env.COUNTERSIGN_OLD_SECRET_KEYS;
    }
  });
});

describe("group → queue roles at sign-in", () => {
  it("grants and raises roles, never lowers them, and skips archived queues", async () => {
    const [joins, raises, keeps, archived] = [
      await makeQueue(),
      await makeQueue(),
      await makeQueue(),
      await makeQueue(),
    ];
    const person = await makeReviewer({
      queues: [
        { name: raises.name, role: "reviewer" },
        { name: keeps.name, role: "lead" },
      ],
    });
    await archiveQueue(OPERATOR, archived.id);
    const mappings = [
      { group: "payments", queueId: joins.id, role: "reviewer" as const },
      { group: "payments-leads", queueId: joins.id, role: "lead" as const },
      { group: "payments", queueId: raises.id, role: "lead" as const },
      { group: "payments", queueId: keeps.id, role: "reviewer" as const },
      { group: "payments", queueId: archived.id, role: "reviewer" as const },
      { group: "other", queueId: keeps.id, role: "lead" as const },
    ];
    const db = getDb();
    const [{ seq }] = (await db.select({ seq: events.seq }).from(events)).slice(-1) as [
      { seq: number },
    ];

    expect(await applyGroupRoles(person.id, ["payments"], mappings)).toBe(2);
    const roles = Object.fromEntries(
      (await db.select().from(queueMembers).where(eq(queueMembers.userId, person.id))).map((m) => [
        m.queueId,
        m.role,
      ]),
    );
    expect(roles).toEqual({ [joins.id]: "reviewer", [raises.id]: "lead", [keeps.id]: "lead" });
    const written = await db
      .select({ type: events.type, queueId: events.queueId, data: events.data })
      .from(events)
      .where(gt(events.seq, seq));
    expect(written).toEqual([
      {
        type: "member.added",
        queueId: joins.id,
        data: expect.objectContaining({ userId: person.id, role: "reviewer", source: "sso" }),
      },
      {
        type: "member.role_changed",
        queueId: raises.id,
        data: expect.objectContaining({ before: "reviewer", after: "lead", source: "sso" }),
      },
    ]);

    // The next sign-in with the same groups changes nothing; a lead group raises again.
    expect(await applyGroupRoles(person.id, ["payments"], mappings)).toBe(0);
    expect(await applyGroupRoles(person.id, ["payments", "payments-leads"], mappings)).toBe(1);
  });
});
