import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { percentile, processCpuMs } from "./load";
import { join } from "node:path";
import { closeDb, getClient } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { decideCall } from "@/lib/approvals/decide-call";
import { readDecisionState } from "@/lib/approvals/plan-decision";
import { requireAgent, requireReviewer, type Actor } from "@/lib/auth/actor";
import { readPauseContext } from "@/lib/batches/open-batch";
import { takePausedBatch } from "@/lib/batches/paused-batches";
import { createRun } from "@/lib/runs/create-run";
import { teamActors } from "./team-actors";
import { startSqld, type Sqld } from "./sqld-server";
import { pauseBody, stopAllChildren } from "./targets";

// `npx tsx test/bench/sqld-cost.ts [N] [--ws] [--rounds=R] [--compactions=C]`: where a libSQL
// server's CPU goes for the two hot writes. Starts sqld, calls the domain verbs in this process
// (no app server, so no background polling reaches sqld), and prints sqld's CPU per operation —
// a whole pause and decision, their read batches alone, and bare batches of INSERTs for scale —
// as the median and the range of R rounds, each round measuring every operation N/R times in
// turn, so that what the machine (or sqld) did meanwhile lands on all of them alike instead of
// on whichever ran then.
//
// sqld keeps a replication log of every WAL frame written (its `wallog`, ~4 KB per frame) and,
// once it exceeds --max-log-size (200 MB by default), compacts it into a snapshot on a background
// thread: about a second of CPU, which used to land on whatever this bench measured at that
// moment (the decision's read batch, right after ~2,000 pauses). The operations are measured on
// a sqld whose log is never compacted (so each figure is steady state); then compaction is
// measured alone, C times (the median kept), on a second sqld with the default limit; each
// operation's share of it (its log bytes × compaction's CPU per byte) is printed beside it and
// added to the total.

/** sqld's own default for --max-log-size, in MB */
const SQLD_DEFAULT_MAX_LOG_MB = 200;

type Round = { cpuMs: number; wallMs: number; logBytes: number };

/**
 * sqld's CPU time so far in ms: the sum of its threads' run time (ns, /proc/…/task/…/schedstat),
 * far finer than /proc/…/stat's 10 ms ticks. A thread that exits takes its time with it; sqld's
 * threads live for its whole run, and `threads` lets the caller check the set did not change.
 */
function cpuMs(pid: number): { ms: number; threads: string } {
  const tasks = readdirSync(`/proc/${pid}/task`);
  let ns = 0;
  for (const task of tasks) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // exited meanwhile
    }
  }
  return { ms: ns / 1e6, threads: tasks.join(",") };
}

/** The directory of sqld's default database (its `wallog` lives there). */
function databaseDir(pid: number): string {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  return join(argv[argv.indexOf("--db-path") + 1]!, "dbs", "default");
}

const fileSize = (path: string) => (existsSync(path) ? statSync(path).size : 0);

/** rounds are odd in number (5 by default, 3 compactions): the middle one */
const median = (values: number[]) => percentile(values, 50);

/** Starts sqld with a replication log of at most `maxLogMb`, and points the app's client at it. */
async function startWith(maxLogMb: number, ws: boolean): Promise<Sqld> {
  process.env.SQLD_MAX_LOG_SIZE = String(maxLogMb);
  const sqld = await startSqld();
  closeDb();
  process.env.DATABASE_URL = ws ? sqld.url.replace(/^http:/, "ws:") : sqld.url;
  await migrateDatabase();
  return sqld;
}

async function main() {
  const n = Number(process.argv.find((a) => /^\d+$/.test(a))) || 1000;
  const ws = process.argv.includes("--ws");
  const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9)) || 5;
  const compactions =
    Number(process.argv.find((a) => a.startsWith("--compactions="))?.slice(14)) || 3;
  const perRound = Math.max(1, Math.round(n / rounds));
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(" ");
  console.log(
    `sqld-cost: ${rounds} rounds of ${perRound} per operation over ${ws ? "WebSockets" : "HTTP"}; load average ${load()}`,
  );

  const sqld = await startWith(1_000_000, ws);
  const results = new Map<string, Round[]>();
  let compactionMsPerMb = 0;
  try {
    const pid = sqld.pid!;
    const wallog = join(databaseDir(pid), "wallog");
    const { agentActor, reviewerActor } = await teamActors();
    const pending: { callId: string; revision: number }[] = [];
    let made = 0;
    const pause = async (actor: Actor = agentActor) => {
      const { run } = await createRun(actor, pauseBody(`cost-${made++}`));
      const call = run.batches![0]!.calls[0]!;
      pending.push({ callId: call.id, revision: call.revision });
    };
    await getClient().execute(
      "create table if not exists bench_scratch (id integer primary key, a text, b text)",
    );
    const inserts = (k: number) =>
      Array.from({ length: k }, () => ({
        sql: "insert into bench_scratch (a, b) values (?, ?)",
        args: ["x".repeat(40), "y".repeat(200)],
      }));
    // The decision read batch reads the newest pending call; the decisions are described below.
    const decide = (call: { callId: string; revision: number }) =>
      decideCall(reviewerActor, call.callId, {
        outcome: "approve",
        expectedRevision: call.revision,
      });
    const operations: [string, () => Promise<unknown>][] = [
      ["bare batch of 1 INSERT", () => getClient().batch(inserts(1), "write")],
      ["bare batch of 17 INSERTs", () => getClient().batch(inserts(17), "write")],
      ["select 1 (execute)", () => getClient().execute("select 1")],
      [
        // read only after a change to the queues or rules (steady state: no read at all)
        "pause read batch (full)",
        () =>
          readPauseContext(
            requireAgent(agentActor),
            { idempotency: null, batch: pauseBody("x").batch as never },
            "full",
          ),
      ],
      // Both decisions take the oldest pending calls, as this row was measured before the copy
      // (the newest would write ~4 WAL frames more each), and come before the pauses in each
      // round: the process then never holds more than the copies' bound (2,000), so the oldest
      // are still held when the first kind takes them.
      [
        // decided from the copy its pause left (lib/batches/paused-batches.ts): no read
        "decision (decideCall approve, on a batch this process paused)",
        () => decide(pending.shift()!),
      ],
      [
        // its copy dropped first: as when another instance paused it
        "decision (decideCall approve, after its read batch)",
        async () => {
          const call = pending.shift()!;
          takePausedBatch({ callId: call.callId });
          await decide(call);
        },
      ],
      ["pause (createRun with a one-call batch)", () => pause()],
      [
        "decision read batch",
        () =>
          readDecisionState(requireReviewer(reviewerActor), {
            callId: pending[pending.length - 1]!.callId,
          }),
      ],
    ];
    // pending calls for the decisions: each round's pauses then add half as many as its two
    // kinds of decision take (and the bound of the copies is 2,000)
    for (let i = 0; i < Math.min(2 * n, 2000); i++) await pause();
    const idle = cpuMs(pid).ms;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    console.log(`idle: sqld ${((cpuMs(pid).ms - idle) / 2).toFixed(1)} ms CPU per second`);

    for (let round = 0; round < rounds; round++) {
      for (const [label, work] of operations) {
        for (let i = 0; i < 20; i++) await work();
        for (let attempt = 1; ; attempt++) {
          const before = cpuMs(pid);
          const logBefore = fileSize(wallog);
          const started = performance.now();
          for (let i = 0; i < perRound; i++) await work();
          const after = cpuMs(pid);
          // a thread came or went: its time is missing from the sum; measure again
          if (after.threads !== before.threads && attempt < 3) continue;
          const list = results.get(label) ?? [];
          list.push({
            cpuMs: (after.ms - before.ms) / perRound,
            wallMs: (performance.now() - started) / perRound,
            logBytes: (fileSize(wallog) - logBefore) / perRound,
          });
          results.set(label, list);
          break;
        }
      }
    }
  } finally {
    closeDb();
    await sqld.stop();
  }

  // Compaction alone: a sqld with its default log limit, filled with pauses until it compacts,
  // then left idle until the snapshot is written; its CPU meanwhile is the compaction's. Several
  // times: one compaction's CPU moves with the machine's load more than the operations' do.
  const small = await startWith(SQLD_DEFAULT_MAX_LOG_MB, ws);
  try {
    const pid = small.pid!;
    const dir = databaseDir(pid);
    const snapshots = () =>
      existsSync(join(dir, "snapshots")) ? readdirSync(join(dir, "snapshots")).sort().join() : "";
    const { agentActor } = await teamActors();
    const perMb: number[] = [];
    let made = 0;
    for (let compaction = 0; compaction < compactions; compaction++) {
      let logged = 0;
      let last = fileSize(join(dir, "wallog"));
      for (;;) {
        await createRun(agentActor, pauseBody(`fill-${made++}`));
        const now = fileSize(join(dir, "wallog"));
        if (now < last) break;
        logged += now - last;
        last = now;
      }
      const seen = snapshots();
      // the process's ticks, not its threads' schedstat: they keep the time of threads that exited
      const before = processCpuMs(pid);
      const deadline = performance.now() + 30_000;
      while (snapshots() === seen) {
        if (performance.now() > deadline) throw new Error("sqld wrote no snapshot in 30 s");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const compactionMs = processCpuMs(pid) - before;
      perMb.push(compactionMs / (logged / 1e6));
      console.log(
        `compaction of a ${(logged / 1e6).toFixed(0)} MB replication log: sqld ${compactionMs.toFixed(0)} ms CPU, ${perMb.at(-1)!.toFixed(2)} ms per MB logged`,
      );
    }
    compactionMsPerMb = median(perMb);
  } finally {
    closeDb();
    await small.stop();
    await stopAllChildren();
  }

  const ms = (value: number) => value.toFixed(2);
  for (const [label, list] of results) {
    const cpu = list.map((r) => r.cpuMs);
    const logBytes = median(list.map((r) => r.logBytes));
    const share = (logBytes / 1e6) * compactionMsPerMb;
    console.log(
      `${label}: sqld ${ms(median(cpu))} ms CPU (${ms(Math.min(...cpu))}–${ms(Math.max(...cpu))}), ` +
        `${ms(median(list.map((r) => r.wallMs)))} ms wall; log ${(logBytes / 1e3).toFixed(1)} kB, ` +
        `its compaction ${ms(share)} ms; with it ${ms(median(cpu) + share)} ms`,
    );
  }
  console.log(`load average at the end ${load()}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
