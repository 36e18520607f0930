import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { asc, count, eq } from "drizzle-orm";
import { closeDb, databaseUrl, getDb } from "@/db/client";
import { queueMembers, queues, users, type Queue } from "@/db/schema";
import { createAgentKey, createQueue } from "@/lib/admin/admin-verbs";
import { ApiError } from "@/lib/errors";
import type { AgentName } from "./scenarios";

// The demo sets itself up the way an operator would with `npm run admin`, on the database the
// app uses (DATABASE_URL, read as db/client.ts reads it): the queue, then one fresh key per agent.

export type DemoSetup = {
  queue: Queue;
  /** true when the demo had to create the queue (then nobody is a member) */
  createdQueue: boolean;
  members: { name: string; role: string }[];
  /** false on a fresh install, before the first sign-up */
  anyAccount: boolean;
  keys: Map<AgentName, string>;
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
    const keys = new Map<AgentName, string>();
    for (const name of agentNames) {
      keys.set(name, (await createAgentKey({ name, queues: [queue.name] })).key);
    }
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
