import { eq, sql } from "drizzle-orm";
import { getDb, type Database } from "@/db/client";
import { preparedRead } from "@/db/prepared-read";
import { guard, type Statement } from "@/db/write-batch";
import {
  policyRules,
  queues,
  routingRules,
  type PolicyRule,
  type Queue,
  type RoutingRule,
} from "@/db/schema";

// What a pause decides from that rarely changes: every queue, the enabled routing rules and the
// enabled policy rules. Reading them on every pause was most of a pause's read (and, over a
// libSQL server, the whole reason for its first round trip), so each process keeps the last copy
// it read, with the version it was read at.
//
// The copy is never trusted blindly. Every change to those tables raises a counter in the
// database (the triggers of migration 0030, whoever writes: this instance, another one, the CLI,
// plain SQL), and a pause planned from the copy carries `pauseSettingsGuard` in its write batch:
// when the counter moved, the batch aborts, writes nothing, and the pause is planned again from
// a fresh read (`untilPaused`, open-batch.ts), which also refreshes the copy. So a pause commits
// only against the settings as they are at its commit: never a rule late.

export type PauseSettings = {
  /** the counter of migration 0030 at the moment the rows below were read */
  version: number;
  queues: readonly Queue[];
  queueById: ReadonlyMap<string, Queue>;
  routingRules: readonly RoutingRule[];
  policyRules: readonly PolicyRule[];
};

// One copy per process and database handle, on globalThis: the production server and Next's
// bundle each load their own copy of lib/ (lib/http/server.ts) and may as well share what either
// read; a test that points the process at a new database gets a new handle, and no stale copy.
type Held = { db: Database; settings: PauseSettings };
const held = globalThis as unknown as { __countersignPauseSettings?: Held | null };

/**
 * The copy this process holds for the current database, if it has one that knows every queue
 * the agent may pause in (a queue made since the copy was read, for a key made since, sends the
 * pause to a fresh read at once).
 */
export function heldPauseSettings(queueIds: readonly string[]): PauseSettings | null {
  const copy = held.__countersignPauseSettings;
  if (!copy || copy.db !== getDb()) return null;
  const { queueById } = copy.settings;
  return queueIds.every((id) => queueById.has(id)) ? copy.settings : null;
}

/** Forgets the copy: the next pause reads afresh. */
export function forgetPauseSettings(): void {
  held.__countersignPauseSettings = null;
}

/**
 * The reads of a fresh copy, prepared once, sent in the pause's read batch (one snapshot, so the
 * version matches the rows). In the order of `pauseSettingsOf`'s argument.
 */
export const pauseSettingsReads = preparedRead(
  (db) =>
    [
      db
        .select({ version: sql<number>`version` })
        .from(sql`pause_settings_version`)
        .prepare(),
      db.select().from(queues).prepare(),
      db.select().from(routingRules).where(eq(routingRules.enabled, true)).prepare(),
      db.select().from(policyRules).where(eq(policyRules.enabled, true)).prepare(),
    ] as const,
);

/** What `pauseSettingsReads` answer, in their order. */
export type PauseSettingsRows = [{ version: number }[], Queue[], RoutingRule[], PolicyRule[]];

/**
 * The copy made of a fresh read, kept for the next pauses unless a newer one is already held
 * (two pauses may read at once, and answer in either order). Frozen: every pause shares it.
 */
export function pauseSettingsOf([
  versionRows,
  queueRows,
  ruleRows,
  policyRows,
]: PauseSettingsRows): PauseSettings {
  const version = versionRows[0]?.version;
  if (version === undefined) throw new Error("pause_settings_version has no row (migration 0030)");
  const settings = Object.freeze({
    version,
    queues: freezeRows(queueRows),
    queueById: new Map(queueRows.map((queue) => [queue.id, queue])),
    routingRules: freezeRows(ruleRows),
    policyRules: freezeRows(policyRows),
  });
  const current = held.__countersignPauseSettings;
  if (!current || current.db !== getDb() || current.settings.version < version)
    held.__countersignPauseSettings = { db: getDb(), settings };
  return settings;
}

function freezeRows<Row extends object>(rows: Row[]): readonly Row[] {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows);
}

/**
 * Aborts a pause's write batch unless the settings it was planned from are still the database's.
 * It also stands for "the chosen queue still takes batches": archiving a queue raises the version.
 */
export function pauseSettingsGuard(settings: PauseSettings): Statement {
  return guard("exists (select 1 from pause_settings_version where version = ?)", settings.version);
}
