import { execFileSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { closeDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { freshDatabase } from "../support/database";
import {
  cpuMeter,
  keepAliveAgent,
  now,
  openStreams,
  parseJson,
  request,
  sleep,
  summarize,
  until,
  type Summary,
} from "./load";
import { sqldBinary, startCountingProxy, startSqld, type CountingProxy } from "./sqld-server";
import { pauseBody, startCountersign, stopAllChildren, type Target } from "./targets";

// `npx tsx test/bench/idle.ts [--seconds=20] [--instances=1,3] [--latency=40]
// [--databases=sqld,embedded]`: what app
// instances cost while nothing happens, over a libSQL server (sqld) and over the embedded file.
//   - over sqld, each instance reaches it through a counting proxy of its own (Hrana over HTTP,
//     what a `http://` DATABASE_URL uses), so requests per second are counted per instance; the
//     CPU of sqld and of each instance is read from /proc over the same window;
//   - the same with one reviewer's event stream open on each instance (an idle browser tab);
//   - the latency of a live update: a pause sent to the first instance, received on a stream of
//     the last one (another process when there are several, so through the event log's tail);
//   - embedded: the same instances over one database file (CPU only: no requests to count).
// Run `npm run build` first: the instances are the production server (dist/server.js).

const log = (message: string) => console.error(message);
const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback;

const SECONDS = Number(arg("seconds", "20"));
const INSTANCES = arg("instances", "1,3").split(",").map(Number);
const LATENCY_SAMPLES = Number(arg("latency", "40"));
const DATABASES = arg("databases", "sqld,embedded").split(",");
/** after start-up (migrations, the first sweep, electing the one that runs the cluster's work) */
const SETTLE_MS = 8_000;

type Row = {
  database: "sqld" | "embedded";
  instances: number;
  streams: number;
  /** requests to sqld per second, per instance (sqld only) */
  requestsPerSecond: number[];
  /** CPU ms per second of each instance */
  appCpuMsPerSecond: number[];
  sqldCpuMsPerSecond: number | null;
};

type Latency = { database: string; instances: number; latency: Summary };

const perSecond = (ms: number) => ms / SECONDS;

async function measure(
  database: Row["database"],
  targets: Target[],
  proxies: CountingProxy[],
  sqldPid: number | undefined,
  streams: number,
): Promise<Row> {
  const apps = targets.map((t) => cpuMeter(t.pid));
  const sqld = sqldPid === undefined ? null : cpuMeter(sqldPid);
  const rates = await Promise.all(proxies.map((p) => p.learnBackground(SECONDS * 1000)));
  if (proxies.length === 0) await sleep(SECONDS * 1000);
  const row: Row = {
    database,
    instances: targets.length,
    streams,
    requestsPerSecond: rates,
    appCpuMsPerSecond: apps.map((read) => perSecond(read().serverMs)),
    sqldCpuMsPerSecond: sqld ? perSecond(sqld().serverMs) : null,
  };
  log(`    ${JSON.stringify(row)}`);
  return row;
}

/** Pauses sent to the first instance, one at a time, received on a stream of the last one. */
async function liveLatency(targets: Target[]): Promise<Summary> {
  const from = targets[0]!;
  const to = targets[targets.length - 1]!;
  const sentAt = new Map<string, number>();
  const samples: number[] = [];
  const pool = await openStreams(to.endpoint, {
    path: "/api/v1/stream",
    token: from.reviewerToken,
    count: 1,
    onBatchCreated: (_client, token, receivedAt) => {
      const sent = sentAt.get(token);
      if (sent !== undefined) samples.push(receivedAt - sent);
    },
  });
  const agent = keepAliveAgent(1);
  try {
    await sleep(500);
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const token = `idle-latency-${Date.now().toString(36)}-${i}`;
      sentAt.set(token, now());
      parseJson(
        await request(from.endpoint, agent, {
          method: "POST",
          path: "/api/v1/runs",
          token: from.agentKey,
          body: pauseBody(token),
        }),
        "a pause",
      );
      await until(() => samples.length > i, 5000);
      // spread the sends over the poll interval rather than in step with it
      await sleep(150 + Math.random() * 200);
    }
  } finally {
    pool.close();
    agent.destroy();
  }
  return summarize(samples);
}

async function openIdleStreams(targets: Target[]) {
  return Promise.all(
    targets.map((t) =>
      openStreams(t.endpoint, {
        path: "/api/v1/stream",
        token: t.reviewerToken,
        count: 1,
        onBatchCreated: () => {},
      }),
    ),
  );
}

async function scenario(
  database: Row["database"],
  n: number,
  rows: Row[],
  latencies: Latency[],
  sqld?: { endpoint: { host: string; port: number }; pid: number | undefined },
) {
  log(`  ${database}, ${n} instance(s)`);
  const proxies: CountingProxy[] = [];
  const targets: Target[] = [];
  let fileUrl: string | undefined;
  try {
    for (let i = 0; i < n; i++) {
      if (sqld) {
        const proxy = await startCountingProxy(sqld.endpoint);
        proxies.push(proxy);
        targets.push(await startCountersign({ sharedDatabaseUrl: proxy.url }));
      } else {
        fileUrl ??= await freshDatabase("bench-idle");
        targets.push(await startCountersign({ sharedDatabaseUrl: fileUrl }));
      }
    }
    await sleep(SETTLE_MS);
    rows.push(await measure(database, targets, proxies, sqld?.pid, 0));
    const pools = await openIdleStreams(targets);
    await sleep(1000);
    rows.push(await measure(database, targets, proxies, sqld?.pid, 1));
    pools.forEach((p) => p.close());
    const latency = await liveLatency(targets);
    log(`    latency ${JSON.stringify(latency)}`);
    latencies.push({ database, instances: n, latency });
  } finally {
    for (const t of targets) await t.stop();
    for (const p of proxies) await p.stop();
    if (fileUrl) {
      closeDb();
      rmSync(dirname(fileUrl.slice("file:".length)), { recursive: true, force: true });
    }
  }
}

const fmt = (values: number[]) => values.map((v) => v.toFixed(1)).join(" / ");

function report(rows: Row[], latencies: Latency[], version: string): string {
  const lines = [
    `Idle cost, ${SECONDS} s per row (${version}, reached over Hrana-over-HTTP through a counting proxy per instance; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the end)`,
    "",
    "| database | instances | open streams each | requests/s per instance | instance CPU ms/s | sqld CPU ms/s |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.database} | ${r.instances} | ${r.streams} | ${r.database === "sqld" ? fmt(r.requestsPerSecond) : "—"} | ${fmt(r.appCpuMsPerSecond)} | ${r.sqldCpuMsPerSecond === null ? "—" : r.sqldCpuMsPerSecond.toFixed(1)} |`,
    ),
    "",
    "Live update: pause sent to the first instance → `batch.created` on a stream of the last one (ms)",
    "",
    "| database | instances | n | p50 | p99 | max |",
    "| --- | --- | --- | --- | --- | --- |",
    ...latencies.map(
      (l) =>
        `| ${l.database} | ${l.instances} | ${l.latency.n} | ${l.latency.p50.toFixed(0)} | ${l.latency.p99.toFixed(0)} | ${l.latency.max.toFixed(0)} |`,
    ),
  ];
  return lines.join("\n");
}

async function main() {
  const rows: Row[] = [];
  const latencies: Latency[] = [];
  const version = execFileSync(sqldBinary(), ["--version"], { encoding: "utf8" }).trim();
  if (DATABASES.includes("sqld")) {
    const sqld = await startSqld();
    try {
      closeDb();
      process.env.DATABASE_URL = sqld.url;
      await migrateDatabase();
      for (const n of INSTANCES) await scenario("sqld", n, rows, latencies, sqld);
    } finally {
      closeDb();
      await sqld.stop();
    }
  }
  if (DATABASES.includes("embedded"))
    for (const n of INSTANCES) await scenario("embedded", n, rows, latencies);
  console.log(report(rows, latencies, version));
}

process.once("SIGINT", () => void stopAllChildren().then(() => process.exit(130)));
main().catch(async (error) => {
  console.error(error);
  await stopAllChildren();
  process.exit(1);
});
