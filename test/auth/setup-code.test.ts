import { count } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { appSettings, queueMembers, queues, users } from "@/db/schema";
import { freshDatabase } from "@/test/support/database";
import { startServer, setupCodeOf, type TestServer } from "@/test/support/server";
import {
  actionPagePath,
  findServerAction,
  invokeServerAction,
  serverActions,
} from "@/test/support/server-actions";
import { TEST_PASSWORD } from "@/test/support/sessions";

// Issue 14, finding 9: on an empty database the first anonymous visitor of /setup became admin of
// every queue. Now setup takes the one-time code the server printed at start; a wrong one is
// refused (and, repeated, rate-limited) and creates nothing.

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    databaseUrl: await freshDatabase("setup-code"),
    env: { SETUP_ATTEMPTS_PER_MINUTE: "3" },
  });
}, 60_000);
afterAll(() => server?.stop());

function setUp(input: Record<string, unknown>) {
  const action = findServerAction(
    serverActions(),
    "app/(auth)/setup/actions.ts",
    "createFirstAdminAction",
  );
  return invokeServerAction(server.baseUrl, action, actionPagePath(action), [input]);
}

const admin = (setupCode: string) => ({
  name: "Ada Admin",
  email: "ada@example.com",
  password: TEST_PASSWORD,
  setupCode,
});

const nothingCreated = async () => {
  const db = getDb();
  expect((await db.select({ n: count() }).from(users))[0]!.n).toBe(0);
  expect((await db.select({ n: count() }).from(queues))[0]!.n).toBe(0);
  expect((await db.select({ n: count() }).from(queueMembers))[0]!.n).toBe(0);
};

describe("first-run setup", () => {
  it("the server prints a one-time code with the setup address, and stores only its hash", async () => {
    const code = setupCodeOf(server);
    expect(server.output()).toContain(`${server.baseUrl}/setup`);
    const stored = await getDb().select().from(appSettings);
    expect(JSON.stringify(stored)).not.toContain(code);
    expect(JSON.stringify(stored)).not.toContain(code.replaceAll("-", ""));
  });

  it("the setup page asks for the code", async () => {
    const html = await (await fetch(`${server.baseUrl}/setup`)).text();
    expect(html).toMatch(/<label[^>]*for="setupCode"[^>]*>Setup code<\/label>/);
  });

  it("refuses a missing or wrong code, creating nothing", async () => {
    const missing = await setUp({ ...admin(""), setupCode: undefined });
    expect(missing.result).toMatchObject({ ok: false, code: "invalid_request" });
    const wrong = await setUp(admin("AAAA-BBBB-CCCC-DDDD"));
    expect(wrong.result).toMatchObject({ ok: false, code: "forbidden" });
    expect(wrong.result.message).toMatch(/setup code is not right/);
    await nothingCreated();
  });

  it("rate-limits wrong codes, even before the right one", async () => {
    // One wrong code above; two more reach the limit of three a minute.
    for (let i = 0; i < 2; i++) {
      expect((await setUp(admin(`WRNG-000${i}-0000-0000`))).result).toMatchObject({
        code: "forbidden",
      });
    }
    const limited = await setUp(admin(setupCodeOf(server)));
    expect(limited.result).toMatchObject({ ok: false, code: "rate_limited" });
    await nothingCreated();
  });

  it("the printed code creates the admin once, as typed in any case, and is then used up", async () => {
    // The limit is per minute: restart the server for a clean count (and a new code).
    const databaseUrl = process.env.DATABASE_URL!;
    const first = setupCodeOf(server);
    await server.stop();
    server = await startServer({ databaseUrl, env: { SETUP_ATTEMPTS_PER_MINUTE: "3" } });
    const code = setupCodeOf(server);
    expect(code).not.toBe(first);
    // The old code died with the old start.
    expect((await setUp(admin(first))).result).toMatchObject({ code: "forbidden" });

    const made = await setUp(admin(` ${code.toLowerCase()} `));
    expect(made.result).toEqual({ ok: true, email: "ada@example.com" });
    expect(await getDb().select().from(appSettings)).not.toContainEqual(
      expect.objectContaining({ key: "setup_code_hash" }),
    );
    const again = await setUp({ ...admin(code), email: "mallory@example.com" });
    expect(again.result).toMatchObject({ ok: false, code: "already_exists" });
    expect((await getDb().select({ n: count() }).from(users))[0]!.n).toBe(1);
  });

  it("SETUP_CODE fixes the code, and a start with an admin prints none", async () => {
    const restarted = await startServer({
      databaseUrl: process.env.DATABASE_URL!,
      env: { SETUP_CODE: "FIXD-CODE-FOR-TEST" },
    });
    try {
      expect(() => setupCodeOf(restarted)).toThrow(/no setup code/);
    } finally {
      await restarted.stop();
    }
    const empty = await startServer({
      databaseUrl: await freshDatabase("setup-code-fixed"),
      env: { SETUP_CODE: "FIXD-CODE-FOR-TEST" },
    });
    try {
      expect(setupCodeOf(empty)).toBe("FIXD-CODE-FOR-TEST");
    } finally {
      await empty.stop();
    }
  });
});
