import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, users } from "@/db/schema";
import { getAuth } from "@/lib/auth/better-auth";
import { OPERATOR } from "@/lib/queues/queue-access";
import { getSsoAuth } from "@/lib/sso/sso-auth";
import { saveSsoSettings } from "@/lib/sso/save-sso-settings";
import { freshDatabase } from "../support/database";
import { startTestIdp, type TestIdp } from "../support/oidc-idp";

// Who better-auth may create (lib/auth/better-auth.ts's user.create hooks). The instance every
// password sign-in and session check uses knows nothing of single sign-on and creates no one; the
// single sign-on instance (lib/sso/sso-auth.ts) hands its hooks the rules of lib/sso/sso-sign-in.ts:
// a newcomer only with a verified email in an allowed domain, recorded on Audit. Called here through
// better-auth's own adapter, which runs the database hooks as a sign-in does.

let idp: TestIdp;

beforeAll(async () => {
  await freshDatabase("sign-up-hooks");
  idp = await startTestIdp({ redirectUri: "http://127.0.0.1:1/api/auth/callback/sso" });
});
afterAll(async () => {
  await idp?.stop();
});

/** createUser's arguments as a single sign-on's callback passes them. */
const newcomer = (email: string, emailVerified = true) =>
  [
    { email, emailVerified, name: "New\u0007 Person" },
    { method: "oauth", oauth: { providerId: "sso" } },
  ] as const;

async function refusal(work: Promise<unknown>): Promise<unknown> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  return (error as { body?: { code?: string } } | null)?.body?.code ?? error;
}

describe("creating a person through better-auth", () => {
  it("is refused by the instance without single sign-on, whoever it is", async () => {
    const adapter = (await (await getAuth()).$context).internalAdapter;
    expect(await refusal(adapter.createUser(...newcomer("someone@acme.test")))).toBe(
      "signup_disabled",
    );
    expect(await getDb().select().from(users)).toEqual([]);
  });

  it("is allowed by the single sign-on instance only for a verified email of an allowed domain, and recorded", async () => {
    await saveSsoSettings(OPERATOR, {
      enabled: true,
      displayName: "Acme SSO",
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      allowedDomains: ["acme.test"],
    });
    const adapter = (await (await getSsoAuth())!.$context).internalAdapter;
    expect(await refusal(adapter.createUser(...newcomer("someone@elsewhere.test")))).toBe(
      "signup_disabled",
    );
    expect(await refusal(adapter.createUser(...newcomer("someone@acme.test", false)))).toBe(
      "email_not_verified",
    );
    expect(await getDb().select().from(users)).toEqual([]);

    const created = await adapter.createUser(...newcomer("someone@acme.test"));
    // the provider's name stored as every other name is (no control characters)
    expect(created).toMatchObject({ email: "someone@acme.test", name: "New Person" });
    const joined = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "person.joined_by_sso"));
    expect(joined.map((e) => e.data)).toEqual([
      { userId: created.id, name: "New Person", email: "someone@acme.test" },
    ]);
  });
});
