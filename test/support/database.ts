import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeDb } from "@/db/client";
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
