import { join } from "node:path";
import { migrate } from "drizzle-orm/libsql/migrator";
import { configureDatabase, getDb, untilNotBusy } from "./client";

const migrationsFolder = join(process.cwd(), "db", "migrations");

/** Creates or upgrades the schema with the committed drizzle-kit migrations. Safe to run twice. */
export async function migrateDatabase(): Promise<void> {
  // Servers starting together over one file take turns with the write lock here.
  await untilNotBusy(() => configureDatabase());
  try {
    await untilNotBusy(() => migrate(getDb(), { migrationsFolder }));
  } catch (error) {
    // Several processes started at once over a fresh database may race to apply the same
    // migration (drizzle reads what was applied outside its transaction); the loser fails on
    // "already exists". A second pass sees the winner's record and has nothing left to do. A
    // migration that only rebuilds a table (0031 votes: create __new_x, copy, drop, rename) does
    // not fail that way: the loser rebuilds it once more, inside its own transaction, and records
    // the migration a second time — the same rows, the same table.
    await migrate(getDb(), { migrationsFolder }).catch(() => {
      throw error;
    });
  }
}
