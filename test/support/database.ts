import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { closeDb, getClient } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";

/**
 * Points this test process at a new, migrated database file (real libSQL, the real migrations)
 * and returns its URL, to hand to servers started for the test.
 */
export async function freshDatabase(label = "test"): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `countersign-${label}-`));
  const url = `file:${join(dir, "countersign.db")}`;
  closeDb();
  process.env.DATABASE_URL = url;
  await migrateDatabase();
  return url;
}

/**
 * A database file migrated only up to (not including) migration number `upTo`, as an older
 * version of Countersign left it: to test that a migration upgrades the rows already there.
 * Run the real migrations on `url` afterwards (point DATABASE_URL at it, then migrateDatabase).
 */
export async function databaseBeforeMigration(
  upTo: number,
): Promise<{ dir: string; url: string; client: Client }> {
  const dir = mkdtempSync(join(tmpdir(), "countersign-upgrade-"));
  const migrations = join(dir, "migrations");
  cpSync(join(process.cwd(), "db", "migrations"), migrations, { recursive: true });
  const journalFile = join(migrations, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as {
    entries: { idx: number; tag: string }[];
  };
  for (const entry of journal.entries.filter((e) => e.idx >= upTo))
    rmSync(join(migrations, `${entry.tag}.sql`));
  journal.entries = journal.entries.filter((e) => e.idx < upTo);
  writeFileSync(journalFile, JSON.stringify(journal));
  const url = `file:${join(dir, "old.db")}`;
  const client = createClient({ url });
  await migrate(drizzle(client), { migrationsFolder: migrations });
  return { dir, url, client };
}

/** The rows `sql` reads from the test's database, each as an array of its values. */
export async function sqlRows(sql: string, ...args: (string | number)[]): Promise<unknown[][]> {
  return (await getClient().execute({ sql, args })).rows.map((r) =>
    Array.from(r as ArrayLike<unknown>),
  );
}
