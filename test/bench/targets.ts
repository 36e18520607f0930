import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { and, count, eq, inArray } from "drizzle-orm";
import { closeDb, getDb, untilNotBusy } from "@/db/client";
import { batches, calls, events, runs } from "@/db/schema";
import { newId } from "@/lib/ids";
import { freshDatabase } from "../support/database";
import { makeReviewer, makeTeam } from "../support/factories";
import { freePort, serverCommand, startServer } from "../support/server";
import { keepAliveAgent, parseJson, request, sleep, type Endpoint } from "./load";

// The two servers under test. Each is started on 127.0.0.1 over a fresh database of its own and
// exposes the same paths, so the scenarios drive both with the same code.

export type PendingCall = { callId: string; batchId: string; revision: number };

export type Target = {
  name: "Countersign" | "floor";
  endpoint: Endpoint;
  /** the server's process id (to profile or trace it) */
  pid: number | undefined;
  agentKey: string;
  reviewerToken: string;
  /** `n` pending one-call batches, made outside the measured path, for the decision benchmark */
  seedPendingCalls: (n: number) => Promise<PendingCall[]>;
  /** `n` distinct reviewer tokens, each a member of the seeded calls' queue */
  reviewerTokens: (n: number) => Promise<string[]>;
  /** how many `call.decided` events the database holds for each of these calls */
  decisionEventCounts: (callIds: string[]) => Promise<Map<string, number>>;
  stop: () => Promise<void>;
};

export type RunResponse = {
  id: string;
  batches: { id: string; calls: { id: string; revision: number }[] }[];
};

/** The pause every scenario sends: one call, the size of a typical review card. */
export function pauseBody(token: string) {
  return {
    externalId: token,
    batch: {
      calls: [
        {
          toolCallId: token,
          toolName: "refund_order",
          args: { orderId: "A-1001", amount: 25, currency: "EUR", reason: "Damaged in transit" },
          summary: "Refund order A-1001 (25 EUR)",
          risks: ["Money leaves the company"],
          costEstimate: 25,
        },
      ],
    },
  };
}

// Every child this process starts, so an error or Ctrl-C can stop them all.
const children = new Set<ChildProcess>();

/** Registers a child (a generator process, say) to be stopped with the servers. */
export function trackChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return void children.delete(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child, 2000)));
}

async function waitHealthy(baseUrl: string, child: ChildProcess, output: () => string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`The server exited during start-up:\n${output()}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`The server did not become healthy in 30 s:\n${output()}`);
    await sleep(100);
  }
}

/* ------------------------------------------------------------------ the floor */

export async function startFloor(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-floor-"));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(new URL("./floor-server.ts", import.meta.url))],
    {
      cwd: process.cwd(),
      env: { ...process.env, DATABASE_URL: `file:${join(dir, "floor.db")}`, PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(baseUrl, child, () => output);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  const endpoint = { host: "127.0.0.1", port };
  return {
    name: "floor",
    endpoint,
    pid: child.pid,
    agentKey: "floor-agent",
    reviewerToken: "floor-reviewer",
    seedPendingCalls: async (n) => {
      const agent = keepAliveAgent(1);
      try {
        const body = parseJson<{ calls: PendingCall[] }>(
          await request(endpoint, agent, { method: "POST", path: "/bench/seed", body: { n } }),
          "seeding the floor",
        );
        return body.calls;
      } finally {
        agent.destroy();
      }
    },
    // the floor has no accounts: a token is just the name its decisions are recorded under
    reviewerTokens: async (n) => Array.from({ length: n }, (_, i) => `floor-reviewer-${i}`),
    decisionEventCounts: async (callIds) => {
      const agent = keepAliveAgent(1);
      try {
        const body = parseJson<{ counts: Record<string, number> }>(
          await request(endpoint, agent, {
            method: "POST",
            path: "/bench/decision-counts",
            body: { ids: callIds },
          }),
          "counting the floor's decision events",
        );
        return new Map(Object.entries(body.counts));
      } finally {
        agent.destroy();
      }
    },
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/* ------------------------------------------------------------------ Countersign */

export async function startCountersign(
  options: {
    profileDir?: string;
    /**
     * Serve the database this process already points at (DATABASE_URL, migrated) instead of a
     * fresh file, reached by the server at this URL (a libSQL server, perhaps through a proxy).
     * The caller owns that database: `stop` leaves it.
     */
    sharedDatabaseUrl?: string;
  } = {},
): Promise<Target> {
  const ownDatabase = options.sharedDatabaseUrl === undefined;
  const databaseUrl = options.sharedDatabaseUrl ?? (await freshDatabase("bench"));
  const { agent, reviewer, queue } = await makeTeam();
  // The stream benches hold thousands of streams with one reviewer token: lift the per-caller cap.
  const env = { COUNTERSIGN_QUIET: "1", STREAMS_PER_CALLER: "1000000" };
  const server = options.profileDir
    ? await startProfiledNext(databaseUrl, env, options.profileDir)
    : await startServer({ databaseUrl, env }).then((s) => ({ port: s.port, process: s.process }));
  children.add(server.process);
  const endpoint = { host: "127.0.0.1", port: server.port };
  return {
    name: "Countersign",
    endpoint,
    pid: server.process.pid,
    agentKey: agent.key,
    reviewerToken: reviewer.token,
    seedPendingCalls: (n) => clonePendingCalls(endpoint, agent.key, n),
    reviewerTokens: async (n) => {
      const tokens: string[] = [];
      for (let i = 0; i < n; i++)
        tokens.push(
          (await makeReviewer({ name: `Bench Reviewer ${i}`, queues: [{ name: queue.name }] }))
            .token,
        );
      return tokens;
    },
    decisionEventCounts: async (callIds) => {
      const counts = new Map<string, number>();
      for (let i = 0; i < callIds.length; i += 500) {
        const rows = await getDb()
          .select({ callId: events.callId, n: count() })
          .from(events)
          .where(
            and(eq(events.type, "call.decided"), inArray(events.callId, callIds.slice(i, i + 500))),
          )
          .groupBy(events.callId);
        for (const row of rows) if (row.callId) counts.set(row.callId, row.n);
      }
      return counts;
    },
    stop: async () => {
      // a profile is written on a clean exit only: give the server time to write it
      await stopChild(server.process, options.profileDir ? 20_000 : 5000);
      if (!ownDatabase) return;
      closeDb();
      rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
    },
  };
}

/**
 * The production server (`npm start`'s) under `node --cpu-prof` (which NODE_OPTIONS may not carry, so test/support's
 * startServer cannot do it): the same command and environment, plus the profiler.
 */
async function startProfiledNext(
  databaseUrl: string,
  env: Record<string, string>,
  profileDir: string,
) {
  mkdirSync(profileDir, { recursive: true });
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      "--cpu-prof",
      `--cpu-prof-dir=${profileDir}`,
      ...serverCommand(),
      "--hostname",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    {
      cwd: process.cwd(),
      env: {
        ...process.env,
        NODE_ENV: "production",
        DATABASE_URL: databaseUrl,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  try {
    await waitHealthy(`http://127.0.0.1:${port}`, child, () => output);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { port, process: child };
}

/**
 * `n` pending batches without paying `n` API round trips: one pause through the API as the
 * template, then copies of its run, batch and call rows (new ids, every other column as the real
 * code wrote it) written straight into the server's database (its file, or its libSQL server), 250
 * calls to a write batch. Copying whole rows keeps this working when columns are added.
 */
async function clonePendingCalls(
  endpoint: Endpoint,
  agentKey: string,
  n: number,
): Promise<PendingCall[]> {
  const agent = keepAliveAgent(1);
  let template: RunResponse;
  try {
    template = parseJson<RunResponse>(
      await request(endpoint, agent, {
        method: "POST",
        path: "/api/v1/runs",
        token: agentKey,
        body: pauseBody("seed-template"),
      }),
      "the template pause",
    );
  } finally {
    agent.destroy();
  }
  const db = getDb();
  const { run, batch, call } = await templateRows(template);

  const made: PendingCall[] = [];
  const CHUNK = 250;
  // One write batch per chunk (one request, one short transaction). An interactive transaction
  // over all of them held sqld's write lock across dozens of round trips: on a busy machine past
  // sqld's 5 s limit, when a waiting instance's write had it rolled back under the seeding.
  for (let done = 0; done < n; done += CHUNK) {
    const size = Math.min(CHUNK, n - done);
    const runRows: (typeof runs.$inferInsert)[] = [];
    const batchRows: (typeof batches.$inferInsert)[] = [];
    const callRows: (typeof calls.$inferInsert)[] = [];
    for (let i = 0; i < size; i++) {
      // ids as the app makes them (UUIDv7: later sorts later), so indexes grow as they would
      const ids = { run: newId(), batch: newId(), call: newId() };
      const toolCallId = `seed-${done + i}`;
      runRows.push({ ...run, id: ids.run, externalId: toolCallId });
      batchRows.push({ ...batch, id: ids.batch, runId: ids.run });
      callRows.push({ ...call, id: ids.call, batchId: ids.batch, runId: ids.run, toolCallId });
      made.push({ callId: ids.call, batchId: ids.batch, revision: call.revision });
    }
    // a running instance may hold the lock for a moment (its own writes, its sweeps): wait for it
    await untilNotBusy(() =>
      db.batch([
        db.insert(runs).values(runRows),
        db.insert(batches).values(batchRows),
        db.insert(calls).values(callRows),
      ]),
    );
  }
  return made;
}

/** The rows a template pause (POST /runs with one call) wrote, to copy when seeding. */
export async function templateRows(template: { id: string; batches: { id: string }[] }) {
  const db = getDb();
  const batchId = template.batches[0]!.id;
  const [run] = await db.select().from(runs).where(eq(runs.id, template.id));
  const [batch] = await db.select().from(batches).where(eq(batches.id, batchId));
  const [call] = await db.select().from(calls).where(eq(calls.batchId, batchId));
  if (!run || !batch || !call) throw new Error("The template pause left no rows to copy.");
  return { run, batch, call };
}
