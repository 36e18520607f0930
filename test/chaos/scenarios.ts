import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { closeDb, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";
import { sleep } from "../support/polling";
import { freePort, startServer, type TestServer } from "../support/server";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";
import {
  acknowledgedWritesPresent,
  integrityCheck,
  logConsistent,
  refusedPausesAbsent,
  streamsMatchLog,
  type StreamCheck,
} from "./checks";
import { followStream, percentile, post, startLoad, type Follower, type Load } from "./load";

// The five fault scenarios, shared by `npm run chaos` (size "full") and the Vitest suite (size
// "small"): each holds a steady load of pauses and decisions against real production servers (`npm start`'s),
// injects its fault, and reports what it did, what it measured and which invariants failed.

export type Size = "small" | "full";
export type ScenarioResult = {
  name: string;
  /** why the scenario could not run here (it then has no failures) */
  skipped?: string;
  rows: [string, string | number][];
  failures: string[];
  ms: number;
};

const SIZES = {
  small: { agents: 2, deciders: 2, streams: 2, phaseMs: 1200, kills: 1, servers: 2, racers: 2 },
  full: { agents: 4, deciders: 4, streams: 4, phaseMs: 5000, kills: 3, servers: 3, racers: 3 },
} satisfies Record<Size, Record<string, number>>;

/** Servers started by the scenarios, so that an interrupted run stops them all. */
const started = new Set<TestServer>();
const start = async (options: Parameters<typeof startServer>[0]) => {
  const server = await startServer(options);
  started.add(server);
  return server;
};
const stop = async (server: TestServer, how: "stop" | "kill" = "stop") => {
  await server[how]();
  started.delete(server);
};
export async function stopAllServers(): Promise<void> {
  await Promise.all([...started].map((server) => stop(server, "kill")));
}

async function team(databaseUrl?: string) {
  if (databaseUrl) {
    // a database at a chosen place (the small filesystem): the same steps as freshDatabase
    closeDb();
    process.env.DATABASE_URL = databaseUrl;
    await migrateDatabase();
  }
  const url = databaseUrl ?? (await freshDatabase("chaos"));
  const queue = await makeQueue();
  const reviewers = await Promise.all(
    ["Dana", "Lee", "Sam"].map((name) => makeReviewer({ name, queues: [{ name: queue.name }] })),
  );
  const agent = await makeAgentKey({ queues: [queue.name] });
  return { databaseUrl: url, queue, reviewers, agent };
}

type Team = Awaited<ReturnType<typeof team>>;

/** Decides, over the API, what the load left pending: a batch that cannot be decided is stuck. */
async function drain(baseUrl: string, t: Team, loads: Load[]): Promise<string[]> {
  const failures: string[] = [];
  for (const pause of loads.flatMap((load) => load.undecided)) {
    const answer = await post(
      `${baseUrl}/api/v1/calls/${pause.callId}/decision`,
      t.reviewers[0]!.token,
      {
        outcome: "approve",
        expectedRevision: 1,
      },
    );
    // 409: a decision whose answer was lost (the server died) had landed
    if (answer.status !== 200 && answer.status !== 409)
      failures.push(`deciding leftover call ${pause.callId} answered ${answer.status}`);
  }
  return failures;
}

/** The last few distinct "answering 503" warnings of a server's log, to explain a failure. */
function lastWarnings(output: string): string[] {
  const warnings = output.split("\n").filter((line) => line.includes("answering 503"));
  return [...new Set(warnings.slice(-200))]
    .slice(-5)
    .map((line) => `server: ${line.slice(0, 600)}`);
}

/** The invariants every scenario ends with, as report rows and failures. */
async function verify(
  result: ScenarioResult,
  t: Team,
  loads: Load[],
  followers: { label: string; follower: Follower }[],
): Promise<StreamCheck> {
  const pauses = loads.flatMap((l) => l.pausesAcknowledged);
  const decisions = loads.flatMap((l) => l.decisionsAcknowledged);
  result.failures.push(...(await acknowledgedWritesPresent(pauses, decisions)));
  result.failures.push(...(await refusedPausesAbsent(loads.flatMap((l) => l.pausesRefused))));
  result.failures.push(...(await logConsistent()));
  const streams = await streamsMatchLog(followers, t.queue.id);
  result.failures.push(...streams.failures);
  const statuses = new Map<number, number>();
  for (const load of loads)
    for (const [status, n] of load.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
  const malformed = loads.reduce((n, l) => n + l.malformed503, 0);
  if (statuses.get(500)) result.failures.push(`${statuses.get(500)} answers were 500`);
  if (malformed)
    result.failures.push(`${malformed} 503 answers lacked code unavailable or Retry-After`);
  result.rows.push(
    ["pauses / decisions acknowledged", `${pauses.length} / ${decisions.length}`],
    ["acknowledged writes verified in the database", pauses.length + decisions.length],
    [
      "answers by status",
      [...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s || "no answer"}: ${n}`)
        .join(", "),
    ],
    ["503s seen", statuses.get(503) ?? 0],
    [
      "stream events checked (streams, reconnects)",
      `${streams.eventsChecked} (${streams.streams}, ${streams.reconnects})`,
    ],
    ["gaps / duplicates", `${streams.gaps} / ${streams.duplicates}`],
  );
  return streams;
}

function recoveryMs(loads: Load[], since: number): number | null {
  const after = loads.flatMap((l) => l.writeTimes).filter((t) => t > since);
  return after.length ? Math.min(...after) - since : null;
}

async function scenario(
  name: string,
  body: (result: ScenarioResult) => Promise<void>,
): Promise<ScenarioResult> {
  const result: ScenarioResult = { name, rows: [], failures: [], ms: 0 };
  const startedAt = Date.now();
  try {
    await body(result);
  } catch (error) {
    result.failures.push(
      `the scenario failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    await stopAllServers();
  }
  result.ms = Date.now() - startedAt;
  return result;
}

/* ------------------------------------------------------------------ 1. SIGKILL and restart */

export function crashRestart(size: Size): Promise<ScenarioResult> {
  const s = SIZES[size];
  return scenario("SIGKILL under load, then restart", async (result) => {
    const t = await team();
    const port = await freePort();
    const baseUrl = () => `http://127.0.0.1:${port}`;
    let server = await start({ databaseUrl: t.databaseUrl, port });
    const followers = Array.from({ length: s.streams }, (_, i) => ({
      label: `#${i + 1}`,
      follower: followStream(baseUrl, t.reviewers[i % 3]!.token),
    }));
    const load = startLoad({
      baseUrl,
      agentKey: t.agent.key,
      reviewers: t.reviewers,
      agents: s.agents,
      deciders: s.deciders,
    });
    const recoveries: number[] = [];
    try {
      for (let kill = 0; kill < s.kills; kill++) {
        await sleep(s.phaseMs * (0.7 + Math.random() * 0.6));
        const killedAt = Date.now();
        await stop(server, "kill");
        server = await start({ databaseUrl: t.databaseUrl, port });
        // the first write acknowledged by the new process
        while (recoveryMs([load], killedAt) === null && Date.now() - killedAt < 30_000)
          await sleep(20);
        recoveries.push(recoveryMs([load], killedAt) ?? NaN);
      }
      await sleep(s.phaseMs);
    } finally {
      await load.stop();
    }
    result.failures.push(...(await drain(baseUrl(), t, [load])));
    await verify(result, t, [load], followers);
    followers.forEach(({ follower }) => follower.stop());
    result.rows.unshift(
      [
        "fault",
        `SIGKILL ×${s.kills} under ${s.agents} pausing agents + ${s.deciders} deciding reviewers`,
      ],
      [
        "recovery (kill → first acknowledged write, restart included)",
        recoveries.map((ms) => `${ms} ms`).join(", "),
      ],
    );
    if (recoveries.some((ms) => !Number.isFinite(ms)))
      result.failures.push("no write succeeded after a restart");
  });
}

/* ------------------------------------------------------------------ 2. several processes */

export function severalProcesses(size: Size): Promise<ScenarioResult> {
  const s = SIZES[size];
  return scenario(`${s.servers} server processes over one database`, async (result) => {
    const t = await team();
    const servers = await Promise.all(
      Array.from({ length: s.servers }, () =>
        start({ databaseUrl: t.databaseUrl, env: { SWEEP_INTERVAL_MS: "100" } }),
      ),
    );
    const followers = servers.map((server, i) => ({
      label: `on server ${i + 1}`,
      follower: followStream(() => server.baseUrl, t.reviewers[i % 3]!.token),
    }));
    const load = startLoad({
      baseUrl: (worker) => servers[worker % servers.length]!.baseUrl,
      agentKey: t.agent.key,
      reviewers: t.reviewers,
      agents: s.agents,
      deciders: 0, // the racing reviewers below decide
    });
    // Every call is decided by `racers` reviewers at once, each on a different server.
    let raced = 0;
    let racing = true;
    const winners: { callId: string; outcome: "approved" | "rejected"; reviewerId: string }[] = [];
    const racer = (async () => {
      while (racing || load.undecided.length > 0) {
        const pause = load.undecided.shift();
        if (!pause) {
          await sleep(10);
          continue;
        }
        const answers = await Promise.all(
          Array.from({ length: s.racers }, (_, r) =>
            post(
              `${servers[r % servers.length]!.baseUrl}/api/v1/calls/${pause.callId}/decision`,
              t.reviewers[r]!.token,
              {
                outcome: r % 2 ? "reject" : "approve",
                expectedRevision: 1,
              },
            ),
          ),
        );
        raced++;
        const won = answers.flatMap((a, r) => (a.status === 200 ? [r] : []));
        const lost = answers.filter(
          (a) => a.status === 409 && a.body?.error?.code === "already_decided",
        );
        if (won.length !== 1 || lost.length !== s.racers - 1)
          result.failures.push(
            `call ${pause.callId}: answers ${answers.map((a) => a.status).join(", ")} (one 200 expected)`,
          );
        for (const r of won)
          winners.push({
            callId: pause.callId,
            outcome: r % 2 ? "rejected" : "approved",
            reviewerId: t.reviewers[r]!.id,
          });
      }
    })();
    await sleep(s.phaseMs * 2);
    await load.stop();
    racing = false;
    await racer;
    load.decisionsAcknowledged.push(...winners);
    const streams = await verify(result, t, [load], followers);
    const sequences = followers.map(({ follower }) => follower.ids().join(","));
    if (new Set(sequences).size !== 1) result.failures.push("the servers' streams differ");
    followers.forEach(({ follower }) => follower.stop());
    result.rows.unshift(
      [
        "fault",
        `${s.servers} processes, clients spread over them; each call raced by ${s.racers} reviewers on different servers`,
      ],
      ["calls raced / decided exactly once", `${raced} / ${winners.length}`],
      [
        "every server's stream the same sequence",
        `${new Set(sequences).size === 1 ? "yes" : "no"} (${streams.streams} streams)`,
      ],
    );
  });
}

/* ------------------------------------------------------------------ 3. the database locked */

/** Holds SQLite's write lock from this process, as another program (a backup, a migration) would. */
async function holdWriteLock(databaseUrl: string, ms: number): Promise<void> {
  // waits its turn behind the servers' writes (each a few ms), then keeps the lock
  const client = createClient({ url: databaseUrl, timeout: 10_000 });
  try {
    const tx = await client.transaction("write");
    await tx.execute(
      "insert into app_settings (key, value, created_at) values ('chaos-lock', '1', 0) on conflict do nothing",
    );
    await sleep(ms);
    await tx.rollback();
  } finally {
    client.close();
  }
}

export function databaseLocked(size: Size): Promise<ScenarioResult> {
  const s = SIZES[size];
  return scenario("the database locked by another process", async (result) => {
    const t = await team();
    const server = await start({ databaseUrl: t.databaseUrl });
    const followers = [
      { label: "#1", follower: followStream(() => server.baseUrl, t.reviewers[0]!.token) },
    ];
    const load = startLoad({
      baseUrl: () => server.baseUrl,
      agentKey: t.agent.key,
      reviewers: t.reviewers,
      agents: s.agents,
      deciders: s.deciders,
    });
    // Reads (and the event loop) must stay responsive while the writes wait.
    const health: { at: number; ms: number }[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const began = performance.now();
        const at = Date.now();
        await fetch(`${server.baseUrl}/api/health`).catch(() => undefined);
        health.push({ at, ms: performance.now() - began });
        await sleep(50);
      }
    })();
    const snapshot = () => load.statuses.get(503) ?? 0;
    const phases: {
      label: string;
      holdMs: number;
      refused: number;
      healthMaxMs: number;
      recoveryMs: number | null;
    }[] = [];
    try {
      await sleep(s.phaseMs / 2);
      // Shorter than the 5 s a write waits: every request waits and succeeds. Longer: 503s.
      for (const holdMs of [size === "full" ? 3000 : 800, 6500]) {
        const before = snapshot();
        const lockedAt = Date.now();
        await holdWriteLock(t.databaseUrl, holdMs);
        const releasedAt = Date.now();
        await sleep(Math.max(500, s.phaseMs / 2));
        phases.push({
          label: holdMs < 5000 ? "short" : "long",
          holdMs,
          refused: snapshot() - before,
          healthMaxMs: Math.max(
            0,
            ...health.filter((h) => h.at >= lockedAt && h.at < releasedAt).map((h) => h.ms),
          ),
          recoveryMs: recoveryMs([load], releasedAt),
        });
      }
    } finally {
      probing = false;
      await Promise.all([load.stop(), prober]);
      // CHAOS_DEBUG=1: the server's log, to see which statements met the lock
      if (process.env.CHAOS_DEBUG) console.error(server.output());
    }
    await verify(result, t, [load], followers);
    followers.forEach(({ follower }) => follower.stop());
    const [short, long] = phases;
    if (short && short.refused > 0)
      result.failures.push(
        `${short.refused} requests answered 503 during a ${short.holdMs} ms lock (they should have waited)`,
      );
    if (long && long.refused === 0) result.failures.push(`no 503 during a ${long.holdMs} ms lock`);
    for (const phase of phases) {
      if (phase.healthMaxMs > 1000)
        result.failures.push(
          `/api/health took ${phase.healthMaxMs.toFixed(0)} ms during the ${phase.label} lock (the event loop was blocked)`,
        );
      if (phase.recoveryMs === null)
        result.failures.push(`no write succeeded after the ${phase.label} lock`);
    }
    result.rows.unshift(
      ["fault", phases.map((p) => `write lock held ${p.holdMs} ms`).join(", then ")],
      ...phases.map((p): [string, string] => [
        `${p.label} lock: 503s / slowest health check / recovery after release`,
        `${p.refused} / ${p.healthMaxMs.toFixed(0)} ms / ${p.recoveryMs ?? "none"} ms`,
      ]),
    );
  });
}

/* ------------------------------------------------------------------ 4. the disk full */

function fillDisk(dir: string): string {
  const filler = join(dir, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // ENOSPC: full; then the last partial block
    try {
      for (;;) writeSync(fd, chunk, 0, 512);
    } catch {
      // completely full
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

export function diskFull(size: Size): Promise<ScenarioResult> {
  const s = SIZES[size];
  return scenario("the disk under the database full", async (result) => {
    const dir = mkdtempSync(join(tmpdir(), "countersign-chaos-disk-"));
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", dir], {
      encoding: "utf8",
    });
    if (mounted.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      result.skipped = `mounting an 8 MiB tmpfs was not permitted (${(mounted.stderr || mounted.error?.message || "").trim()}); run as root to include this scenario`;
      return;
    }
    let server: TestServer | undefined;
    try {
      const t = await team(`file:${join(dir, "countersign.db")}`);
      server = await start({ databaseUrl: t.databaseUrl });
      const baseUrl = () => server!.baseUrl;
      const followers = [{ label: "#1", follower: followStream(baseUrl, t.reviewers[0]!.token) }];
      const options = {
        baseUrl,
        agentKey: t.agent.key,
        reviewers: t.reviewers,
        agents: s.agents,
        deciders: s.deciders,
      };
      const before = startLoad(options);
      await sleep(s.phaseMs / 2);
      await before.stop();
      // An empty write-ahead log must grow on the next write, which the full disk refuses.
      await getDb().run(sql`pragma wal_checkpoint(TRUNCATE)`);
      const filler = fillDisk(dir);
      const filledAt = Date.now();
      const during = startLoad(options);
      await sleep(s.phaseMs);
      const refused = during.statuses.get(503) ?? 0;
      const readable = (
        await fetch(`${baseUrl()}/api/v1/queue?status=all&limit=1`, {
          headers: { authorization: `Bearer ${t.reviewers[0]!.token}` },
        })
      ).status;
      unlinkSync(filler);
      const freedAt = Date.now();
      while (recoveryMs([during], freedAt) === null && Date.now() - freedAt < 15_000)
        await sleep(20);
      await sleep(s.phaseMs / 2);
      await during.stop();
      const stuck = await drain(baseUrl(), t, [before, during]);
      result.failures.push(...stuck);
      if (stuck.length > 0) {
        // why they were refused, in the server's own words (its 503 warnings name the SQLite
        // code), and whether the process is stuck or was only slow to recover
        result.failures.push(...lastWarnings(server.output()));
        await sleep(2000);
        const still = await drain(baseUrl(), t, [before, during]);
        result.failures.push(
          `2 s later, ${still.length} of those ${stuck.length} were refused again`,
        );
      }
      await verify(result, t, [before, during], followers);
      followers.forEach(({ follower }) => follower.stop());
      const integrity = await integrityCheck();
      const recovered = recoveryMs([during], freedAt);
      if (refused === 0)
        result.failures.push("no write was refused with 503 while the disk was full");
      if (readable !== 200)
        result.failures.push(`reading the queue answered ${readable} while the disk was full`);
      if (integrity !== "ok") result.failures.push(`integrity_check: ${integrity}`);
      if (recovered === null)
        result.failures.push("no write succeeded after space returned (without a restart)");
      result.rows.unshift(
        [
          "fault",
          `8 MiB tmpfs filled for ${s.phaseMs} ms (${Date.now() - filledAt} ms in all) under load`,
        ],
        ["503s while full / reads while full", `${refused} / ${readable}`],
        [
          "recovery (space back → first acknowledged write, same process)",
          `${recovered ?? "none"} ms`,
        ],
        ["PRAGMA integrity_check", integrity],
      );
    } finally {
      if (server) await stop(server);
      closeDb();
      // a process that just exited may still hold a file there for a moment
      for (let attempt = 0; spawnSync("umount", [dir]).status !== 0; attempt++) {
        if (attempt === 20) {
          spawnSync("umount", ["-l", dir]);
          break;
        }
        await sleep(100);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/* ------------------------------------------------------------------ 5. bad webhook receivers */

/** A receiver that takes the request and never answers. */
async function hangingReceiver(): Promise<{
  url: string;
  hits: () => number;
  close: () => Promise<void>;
}> {
  let hits = 0;
  const server: Server = createServer(() => void hits++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hang`,
    hits: () => hits,
    close: () =>
      new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export function badWebhookReceivers(size: Size): Promise<ScenarioResult> {
  const s = SIZES[size];
  return scenario("webhook receivers that hang, fail or answer slowly", async (result) => {
    const t = await team();
    const receivers: WebhookReceiver[] = [];
    const hang = await hangingReceiver();
    try {
      const good = await startWebhookReceiver();
      const failing = await startWebhookReceiver({ answer: () => 500 });
      receivers.push(good, failing);
      // slow: answers after 3 s (the sender gives up after 10 s)
      const slowServer = await slowReceiver(3000);
      const server = await start({
        databaseUrl: t.databaseUrl,
        env: { WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_POLL_MS: "100" },
      });
      const followers = [
        { label: "#1", follower: followStream(() => server.baseUrl, t.reviewers[0]!.token) },
      ];
      const options = {
        baseUrl: () => server.baseUrl,
        agentKey: t.agent.key,
        reviewers: t.reviewers,
        agents: s.agents,
        deciders: s.deciders,
        thinkMs: 20,
      };
      const baseline = startLoad({ ...options, batchExtras: () => ({ callbackUrl: good.url }) });
      await sleep(s.phaseMs);
      await baseline.stop();
      const badUrls = [hang.url, failing.url, slowServer.url, good.url];
      const stressed = startLoad({
        ...options,
        batchExtras: (n) => ({ callbackUrl: badUrls[n % badUrls.length] }),
      });
      await sleep(s.phaseMs);
      await stressed.stop();
      // Deliveries owed to the good receiver arrive though the others hang or fail.
      const goodDeliveries = async () =>
        (
          await getDb().all<{ n: number }>(
            sql`select count(*) as n from webhook_deliveries where url = ${good.url} and status = 'delivered'`,
          )
        )[0]!.n;
      const owed = (
        await getDb().all<{ n: number }>(
          sql`select count(*) as n from webhook_deliveries where url = ${good.url}`,
        )
      )[0]!.n;
      const deadline = Date.now() + 15_000;
      while (
        Date.now() < deadline &&
        ((await goodDeliveries()) < owed ||
          failing.received.length < 2 ||
          slowServer.answered() === 0)
      )
        await sleep(100);
      const delays = await getDb().all<{ url: string; ms: number; attempts: number }>(
        sql`select url, delivered_at - created_at as ms, attempts from webhook_deliveries where status = 'delivered'`,
      );
      const goodDelay = delays.filter((d) => d.url === good.url).map((d) => Number(d.ms));
      const failingAttempts = Math.max(
        0,
        ...(
          await getDb().all<{ attempts: number }>(
            sql`select attempts from webhook_deliveries where url = ${failing.url}`,
          )
        ).map((r) => r.attempts),
      );
      await verify(result, t, [baseline, stressed], followers);
      followers.forEach(({ follower }) => follower.stop());
      await slowServer.close();

      const latency = (load: Load) => [...load.latency.pause, ...load.latency.decide];
      const [p50a, p99a] = [percentile(latency(baseline), 50), percentile(latency(baseline), 99)];
      const [p50b, p99b] = [percentile(latency(stressed), 50), percentile(latency(stressed), 99)];
      if ((await goodDeliveries()) < owed)
        result.failures.push(
          `only ${await goodDeliveries()} of ${owed} deliveries to the healthy receiver arrived`,
        );
      // A hanging receiver holds its own send for up to 10 s; the healthy one must not wait for it.
      if (Math.max(0, ...goodDelay) > 5000)
        result.failures.push(
          `a delivery to the healthy receiver waited ${Math.max(...goodDelay)} ms behind the bad ones`,
        );
      if (failingAttempts < 2)
        result.failures.push("the failing receiver's deliveries were not retried");
      if (slowServer.answered() === 0)
        result.failures.push("the slow receiver's deliveries never completed");
      if (p50b > 2 * p50a + 25)
        result.failures.push(
          `pause/decide p50 rose from ${p50a.toFixed(0)} to ${p50b.toFixed(0)} ms with bad receivers`,
        );
      result.rows.unshift(
        [
          "fault",
          `callbackUrls: a receiver that hangs, one that answers 500, one that answers after 3 s, one healthy (retry base 200 ms)`,
        ],
        [
          "pause+decide latency p50 / p99 without → with bad receivers",
          `${p50a.toFixed(0)} / ${p99a.toFixed(0)} ms → ${p50b.toFixed(0)} / ${p99b.toFixed(0)} ms`,
        ],
        [
          "healthy receiver: deliveries arrived, delay p50 / max",
          `${await goodDeliveries()} of ${owed}, ${percentile(goodDelay, 50).toFixed(0)} / ${Math.max(0, ...goodDelay).toFixed(0)} ms`,
        ],
        [
          "failing receiver: requests seen, most attempts on one delivery",
          `${failing.received.length}, ${failingAttempts}`,
        ],
        [
          "slow receiver answered / hanging receiver requests",
          `${slowServer.answered()} / ${hang.hits()}`,
        ],
      );
    } finally {
      await Promise.all([...receivers.map((r) => r.close()), hang.close()]);
    }
  });
}

async function slowReceiver(delayMs: number) {
  let answered = 0;
  const server = createServer((req, res) => {
    req.resume();
    setTimeout(() => {
      answered++;
      res.writeHead(200).end("ok");
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    answered: () => answered,
    close: () =>
      new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export const SCENARIOS = {
  crash: crashRestart,
  processes: severalProcesses,
  locked: databaseLocked,
  "disk-full": diskFull,
  webhooks: badWebhookReceivers,
} as const;
