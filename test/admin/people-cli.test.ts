import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, reviewerTokens, users } from "@/db/schema";
import { redeemLink } from "@/lib/people/person-links";
import { runAdminCli } from "../support/admin-cli";
import { freshDatabase } from "../support/database";

// `npm run admin -- reviewer list|invite|rename|deactivate|reactivate|reset-password`, as an
// operator runs it: a real child process on a real database file.

let databaseUrl: string;

const admin = (...args: string[]) => runAdminCli(databaseUrl, ...args);

beforeAll(async () => {
  databaseUrl = await freshDatabase("people-cli");
});

const userOf = async (email: string) =>
  (await getDb().select().from(users).where(eq(users.email, email)))[0]!;

describe("npm run admin -- reviewer …", () => {
  it("invites, renames, deactivates, reactivates, resets and lists people, each with its event", async () => {
    expect((await admin("queue", "create", "ops")).code).toBe(0);
    const invited = await admin(
      "reviewer",
      "invite",
      "--email",
      "ivy@example.com",
      "--name",
      "Ivy",
      "--queue",
      "ops:lead",
    );
    expect(invited.code, invited.stderr).toBe(0);
    const link = /http\S+\/invite\/(\S+)/.exec(invited.stdout);
    expect(link).not.toBeNull();
    expect((await admin("reviewer", "list")).stdout).toMatch(
      /ivy@example\.com\s+Ivy\s+invited\s+ops:lead/,
    );
    await redeemLink({ token: link![1], password: "ivy's password" });

    expect(
      (await admin("reviewer", "rename", "--email", "ivy@example.com", "--name", "Ivy Q")).code,
    ).toBe(0);
    expect((await userOf("ivy@example.com")).name).toBe("Ivy Q");
    expect((await admin("reviewer", "token", "--email", "ivy@example.com")).code).toBe(0);

    expect((await admin("reviewer", "deactivate", "--email", "ivy@example.com")).stdout).toContain(
      "deactivated",
    );
    const user = await userOf("ivy@example.com");
    expect(user.deactivatedAt).not.toBeNull();
    const tokens = await getDb()
      .select()
      .from(reviewerTokens)
      .where(eq(reviewerTokens.userId, user.id));
    expect(tokens.every((t) => t.revokedAt !== null)).toBe(true);
    expect((await admin("reviewer", "reset-password", "--email", "ivy@example.com")).code).toBe(1);

    expect((await admin("reviewer", "reactivate", "--email", "ivy@example.com")).stdout).toContain(
      "active",
    );
    const reset = await admin("reviewer", "reset-password", "--email", "ivy@example.com");
    expect(reset.stdout).toMatch(/\/reset-password\/cs_link_/);

    const types = (await getDb().select({ type: events.type }).from(events)).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "person.invited",
        "person.invite_accepted",
        "person.renamed",
        "person.deactivated",
        "person.reactivated",
        "person.password_reset_issued",
      ]),
    );
    const bad = await admin("reviewer", "rename", "--email", "ivy@example.com");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("needs --name");
  }, 120_000); // a dozen CLI processes: slow on a loaded 2-core machine
});
