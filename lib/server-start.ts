import { count } from "drizzle-orm";
import { databaseUrlForDisplay, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { users } from "@/db/schema";
import { hashStoredSessionTokens } from "@/lib/auth/hashed-session-tokens";
import { prepareSetupCode } from "@/lib/auth/setup-code";
import { sealStoredSecrets } from "./seal-stored-secrets";
import { auditSigningKey } from "@/lib/audit/signing-key";
import { configuredAllowList } from "@/lib/webhooks/callback-target";
import { publicBaseUrl } from "./config/listen-address";
import { beginShutdown } from "./shutdown";
import { startBackgroundWork } from "./background";
import { log } from "./log/logger";
import { setting } from "@/lib/config/settings";

/** Start-up: migrate the database, start the background work, and tell a newcomer what to do. */
export async function startServer(): Promise<void> {
  await refuseToStartUnless(async () => configuredAllowList()); // names an entry it cannot read
  await migrateDatabase();
  await hashStoredSessionTokens();
  await refuseToStartUnless(sealStoredSecrets); // names a key the stored secrets need
  await refuseToStartUnless(auditSigningKey); // generated at the first start, sealed
  await startBackgroundWork();
  // On SIGTERM/SIGINT Next.js stops once open requests finish: end streams and long-polls.
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, beginShutdown);
  const url = publicBaseUrl();
  // Printed even when quiet: without it nobody can finish setup from the browser.
  const setupCode = await prepareSetupCode();
  if (setupCode) {
    forAPerson(
      [
        "",
        `Countersign has no admin yet. Open ${url}/setup and enter this one-time setup code:`,
        "",
        `    ${setupCode}`,
        "",
        "It works until the first admin exists; only this console shows it.",
        "",
      ].join("\n"),
    );
  }
  if (setting("COUNTERSIGN_QUIET")) return;
  const [row] = await getDb().select({ n: count() }).from(users);
  log().info({ database: databaseUrlForDisplay() }, "The database is migrated.");
  forAPerson(
    ((row?.n ?? 0) === 0
      ? [
          `Open ${url}/setup with the setup code above to create the admin account (and a "General" queue).`,
          "  (or from a terminal: npm run admin -- queue create General, then",
          "   npm run admin -- reviewer create --email you@example.com --name 'You' --password 'choose-one' --queue General:admin)",
        ]
      : [`Open ${url} and sign in.`]
    )
      .concat([
        "Then, in another terminal, run a scripted demo agent that asks for approvals:",
        "  npm run demo",
      ])
      .join("\n"),
  );
}

/**
 * A configuration the server cannot work with ends the process with its reason. Next.js would
 * log a failed start-up hook and serve anyway, without background work and unable to sign
 * webhooks or sessions: better not to start at all.
 */
async function refuseToStartUnless(check: () => Promise<unknown>): Promise<void> {
  try {
    await check();
  } catch (error) {
    log().fatal(`Countersign cannot start: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
}

/**
 * Instructions for the person who started the server, as plain lines beside the JSON log: the
 * setup code must be readable (and copyable) as printed, not as an escaped string in a log field.
 */
function forAPerson(text: string): void {
  process.stdout.write(`${text}\n`);
}
