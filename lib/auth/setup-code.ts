import { randomInt } from "node:crypto";
import { eq, getTableName } from "drizzle-orm";
import { getDb } from "@/db/client";
import { appSettings, users } from "@/db/schema";
import { statement, writeBatch } from "@/db/write-batch";
import { ForbiddenError, RateLimitedError } from "@/lib/errors";
import { matchesHash, sha256Hex } from "@/lib/ids";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// The one-time setup code (issue 14, finding 9). On a database without any account, whoever
// reached /setup first became admin of every queue: on a server left open for a minute, that
// could be anyone. Now setup also asks for a code that only the person who started the server
// sees, printed in its console (as Grafana and Jenkins do). Only its hash is stored (app_settings,
// so every instance over the database checks the same one); it is deleted with the write that
// creates the first admin, and a start that finds an account deletes any left over.

export const SETUP_CODE_SETTING = "setup_code_hash";

/** Crockford's base32: no I, L, O or U to misread. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A fresh code: 16 characters (80 bits) in groups of four, `K7QX-2M9D-…`. */
export function newSetupCode(): string {
  const chars = Array.from({ length: 16 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join("")).join("-");
}

/** As typed or pasted: case, spaces and dashes do not matter. */
function normalized(code: string): string {
  return code.toUpperCase().replace(/[\s-]+/g, "");
}

/** SETUP_CODE, when an operator (or a test) fixes the code; too short to be a secret is ignored. */
function configuredCode(): string | null {
  const value = setting("SETUP_CODE")?.trim();
  if (!value) return null;
  if (normalized(value).length < 12) {
    log().warn("SETUP_CODE is shorter than 12 characters: ignored, a random code is used.");
    return null;
  }
  return value;
}

/**
 * At start: while no account exists, a new setup code (SETUP_CODE, else random) replaces any
 * earlier one and is returned to be printed; once one exists, a leftover code is deleted and
 * null returned. One write, conditioned in SQL on there being no account, so an admin created
 * meanwhile (another instance) is never given a code to reopen setup with.
 */
export async function prepareSetupCode(): Promise<string | null> {
  const code = configuredCode() ?? newSetupCode();
  const anyAccount = `exists (select 1 from "${getTableName(users)}")`;
  const [stored] = await writeBatch([
    statement(
      `insert into "${getTableName(appSettings)}" (key, value, created_at)
       select ?, ?, ? where not ${anyAccount}
       on conflict (key) do update set value = excluded.value, created_at = excluded.created_at`,
      SETUP_CODE_SETTING,
      sha256Hex(normalized(code)),
      Date.now(),
    ),
    statement(
      `delete from "${getTableName(appSettings)}" where key = ? and ${anyAccount}`,
      SETUP_CODE_SETTING,
    ),
  ]);
  return stored!.rowsAffected > 0 ? code : null;
}

/* Wrong codes, counted in this process for the whole server (not per address: the address a
   request claims can be forged). 80 random bits cannot be guessed anyway; this keeps a script
   from trying, at the price of the operator waiting a minute after several typos. */
const WINDOW_MS = 60_000;
const store = globalThis as typeof globalThis & { __countersignSetupFailures?: number[] };
const failures = (store.__countersignSetupFailures ??= []);

function attemptsPerMinute(): number {
  return setting("SETUP_ATTEMPTS_PER_MINUTE");
}

function recentFailures(now: number): number {
  while (failures.length > 0 && failures[0]! <= now - WINDOW_MS) failures.shift();
  return failures.length;
}

/** 429 while too many wrong codes were tried in the last minute. */
export function assertSetupNotLimited(now = Date.now()): void {
  if (recentFailures(now) < attemptsPerMinute()) return;
  const retryAfterSecs = Math.max(1, Math.ceil((failures[0]! + WINDOW_MS - now) / 1000));
  throw new RateLimitedError(
    retryAfterSecs,
    `Too many wrong setup codes. Wait ${retryAfterSecs} s and try again.`,
  );
}

/**
 * The stored hash `code` matches, for the write that creates the first admin to delete on the
 * same condition; throws 403 (counting a failure) when it does not match.
 */
export async function checkSetupCode(code: string): Promise<string> {
  const [row] = await getDb()
    .select({ value: appSettings.value })
    .from(appSettings)
    .where(eq(appSettings.key, SETUP_CODE_SETTING));
  if (row && matchesHash(normalized(code), row.value)) return row.value;
  failures.push(Date.now());
  throw new ForbiddenError(
    "That setup code is not right. Use the code the server printed in its console when it started (npm start), or the SETUP_CODE it was started with.",
  );
}
