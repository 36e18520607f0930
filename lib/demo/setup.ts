import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { and, asc, count, desc, eq, inArray, isNull } from "drizzle-orm";
import { closeDb, databaseUrl, getDb } from "@/db/client";
import { agentKeyQueues, agentKeys, queueMembers, queues, users, type Queue } from "@/db/schema";
import { createQueue } from "@/lib/admin/admin-verbs";
import { createAgentKey } from "@/lib/agents/create-agent-key";
import { rotateAgentKey } from "@/lib/agents/rotate-agent-key";
import { ApiError } from "@/lib/errors";
import { OPERATOR } from "@/lib/queues/queue-access";
import type { AgentName } from "./scenarios";

// The demo sets itself up the way an operator would with `npm run admin`, on the database the
// app uses (DATABASE_URL, read as db/client.ts reads it): the queue, then one key per agent. A key
// from an earlier demo is reused (same id and name, so `npm run admin -- agent mode --name …`
// keeps finding exactly one): only its hash is stored, so the demo rotates it for a secret it can
// use, and the secret an earlier demo still running holds keeps working for an hour.

/** How long the secret of an earlier demo run keeps working after the next run rotates its key. */
export const DEMO_ROTATION_GRACE_SECS = 3600;

export type DemoKey = {
  /** the key's name: the agent's, or "Coding agent (Night shift)" when a key of the agent's own
   * name exists but may not use the demo's queue */
  name: string;
  secret: string;
  /** false when an earlier demo's key was reused (rotated) */
  created: boolean;
  /** the queue to name in each pause: set when the key's default queue is another one */
  queue?: string;
  /** other active keys with the same name (from demos before keys were reused) */
  duplicates: string[];
};

export type DemoSetup = {
  queue: Queue;
  /** true when the demo had to create the queue (then nobody is a member) */
  createdQueue: boolean;
  members: { name: string; role: string }[];
  /** false on a fresh install, before the first sign-up */
  anyAccount: boolean;
  keys: Map<AgentName, DemoKey>;
};

/** Why the setup failed, in words a newcomer can act on. */
export class SetupError extends Error {}

function databaseFile(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = url.slice("file:".length).split("?")[0]!;
  return path && path !== ":memory:" ? resolve(path) : null;
}

export async function setUpDemo(queueName: string, agentNames: AgentName[]): Promise<DemoSetup> {
  const url = databaseUrl();
  const file = databaseFile(url);
  // The server creates and migrates its database when it starts; no file here means the
  // server runs on another one, and keys created in a new file would only be refused (401).
  if (file && !existsSync(file)) {
    throw new SetupError(
      `There is no database at ${file} (DATABASE_URL=${url}).\n` +
        "The demo creates its agent keys in the database the app uses: run it from the project folder " +
        "with the same DATABASE_URL as `npm start`, or pass an agent key in COUNTERSIGN_AGENT_KEY.",
    );
  }
  try {
    const { queue, created } = await findOrCreateQueue(queueName);
    const members = await getDb()
      .select({ name: users.name, role: queueMembers.role })
      .from(queueMembers)
      .innerJoin(users, eq(users.id, queueMembers.userId))
      .where(eq(queueMembers.queueId, queue.id))
      .orderBy(asc(queueMembers.createdAt));
    const [accounts] = await getDb().select({ n: count() }).from(users);
    const keys = new Map<AgentName, DemoKey>();
    for (const name of agentNames) keys.set(name, await demoKey(name, queue));
    return { queue, createdQueue: created, members, anyAccount: (accounts?.n ?? 0) > 0, keys };
  } catch (error) {
    if (error instanceof SetupError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new SetupError(
      `Could not set up the demo on ${url}: ${message}\n` +
        (/no such table/i.test(message)
          ? "That database has no Countersign tables yet: start the app on it once (`npm start`) so it is migrated."
          : "Is it the database the app uses? Or pass an agent key in COUNTERSIGN_AGENT_KEY to skip the setup."),
    );
  } finally {
    // The app is the one that keeps the database open; the demo only talks HTTP from here on.
    closeDb();
  }
}

async function findOrCreateQueue(name: string): Promise<{ queue: Queue; created: boolean }> {
  const find = async () => (await getDb().select().from(queues).where(eq(queues.name, name)))[0];
  const existing = await find();
  if (existing) return { queue: existing, created: false };
  try {
    return { queue: await createQueue({ name }), created: true };
  } catch (error) {
    // Someone (the first sign-up, another demo) created it a moment ago: use theirs.
    const raced =
      error instanceof ApiError && error.code === "already_exists" ? await find() : null;
    if (raced) return { queue: raced, created: false };
    throw error;
  }
}

type ActiveKey = { id: string; name: string; defaultQueueId: string; queueIds: Set<string> };

/** Active (unrevoked) keys by name, newest first, with the queues each may use. */
async function activeKeys(names: string[]): Promise<ActiveKey[]> {
  const db = getDb();
  const rows = await db
    .select({ id: agentKeys.id, name: agentKeys.name, defaultQueueId: agentKeys.defaultQueueId })
    .from(agentKeys)
    .where(and(inArray(agentKeys.name, names), isNull(agentKeys.revokedAt)))
    .orderBy(desc(agentKeys.createdAt), desc(agentKeys.id));
  if (rows.length === 0) return [];
  const links = await db
    .select()
    .from(agentKeyQueues)
    .where(
      inArray(
        agentKeyQueues.agentKeyId,
        rows.map((r) => r.id),
      ),
    );
  return rows.map((row) => ({
    ...row,
    queueIds: new Set([
      row.defaultQueueId,
      ...links.filter((l) => l.agentKeyId === row.id).map((l) => l.queueId),
    ]),
  }));
}

/**
 * The agent's key for `queue`: the newest active key of its name that may use the queue, rotated
 * for a fresh secret; else a new one. When a key of the agent's name exists but may not use the
 * queue (the demo ran on another queue before), the key is "<name> (<queue>)", so no two active
 * keys ever share a name because of the demo.
 */
async function demoKey(agent: AgentName, queue: Queue): Promise<DemoKey> {
  const queued = `${agent} (${queue.name})`;
  const found = await activeKeys([agent, queued]);
  const plain = found.filter((k) => k.name === agent);
  const name = plain.length === 0 || plain.some((k) => k.queueIds.has(queue.id)) ? agent : queued;
  const sameName = found.filter((k) => k.name === name);
  const reuse = sameName.find((k) => k.queueIds.has(queue.id));
  const duplicates = sameName.filter((k) => k !== reuse).map((k) => k.id);
  if (reuse) {
    const rotated = await rotateAgentKey(OPERATOR, reuse.id, {
      graceSecs: DEMO_ROTATION_GRACE_SECS,
    });
    return {
      name,
      secret: rotated.key,
      created: false,
      ...(reuse.defaultQueueId !== queue.id && { queue: queue.name }),
      duplicates,
    };
  }
  const created = await createAgentKey(OPERATOR, { name, defaultQueue: queue.id });
  return { name, secret: created.key, created: true, duplicates };
}
