import { rmSync } from "node:fs";
import { eq } from "drizzle-orm";
import { afterAll, expect, it } from "vitest";
import { closeDb, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { users } from "@/db/schema";
import { updatePerson } from "@/lib/people/update-person";
import { OPERATOR } from "@/lib/queues/queue-access";
import { databaseBeforeMigration } from "../support/database";

// Issue 24, hole 6, for databases written before names refused control characters: a NUL stored
// inside a name reads back cut at the NUL, so the rename's compare-and-swap on the name as read
// never matched (a 500 for ever). Migration 0021 cuts such names where every reader already did.

let dir = "";
afterAll(() => {
  closeDb();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("a person whose name holds a NUL can be renamed after the upgrade", async () => {
  const old = await databaseBeforeMigration(21);
  dir = old.dir;
  const insert = `insert into "user" (id, name, email, email_verified, created_at, updated_at) values (?, ?, ?, 1, 0, 0)`;
  await old.client.execute({
    sql: insert,
    args: ["bricked", "Dana\u0000 hidden", "dana@example.test"],
  });
  await old.client.execute({ sql: insert, args: ["clean", "Sam Reviewer", "sam@example.test"] });
  old.client.close();

  closeDb();
  process.env.DATABASE_URL = old.url;
  await migrateDatabase();

  const stored = await getDb()
    .select({ id: users.id, name: users.name })
    .from(users)
    .orderBy(users.id);
  expect(stored).toEqual([
    { id: "bricked", name: "Dana" },
    { id: "clean", name: "Sam Reviewer" },
  ]);
  await expect(updatePerson(OPERATOR, "bricked", { name: "Dana Renamed" })).resolves.toMatchObject({
    name: "Dana Renamed",
  });
  const [renamed] = await getDb()
    .select({ name: users.name })
    .from(users)
    .where(eq(users.id, "bricked"));
  expect(renamed!.name).toBe("Dana Renamed");
});
