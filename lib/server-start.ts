import { count } from "drizzle-orm";
import { databaseUrl, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { users } from "@/db/schema";
import { beginShutdown } from "./shutdown";
import { startBackgroundWork } from "./background";

/** Start-up: migrate the database, start the background work, and tell a newcomer what to do. */
export async function startServer(): Promise<void> {
  await migrateDatabase();
  await startBackgroundWork();
  // On SIGTERM/SIGINT Next.js stops once open requests finish: end streams and long-polls.
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, beginShutdown);
  if (process.env.COUNTERSIGN_QUIET) return;
  const [row] = await getDb().select({ n: count() }).from(users);
  console.log(`Countersign: database ${databaseUrl()} is migrated.`);
  if ((row?.n ?? 0) === 0) {
    console.log(
      [
        "No reviewers yet. Create a queue, a reviewer and an agent key:",
        "  npm run admin -- queue create support",
        "  npm run admin -- reviewer create --email you@example.com --name 'You' --password 'choose-one' --queue support:admin",
        "  npm run admin -- reviewer token --email you@example.com",
        "  npm run admin -- agent create --name 'Support bot' --queue support",
      ].join("\n"),
    );
  }
}
