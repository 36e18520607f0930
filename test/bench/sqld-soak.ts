import { closeDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { processCpuMs, sleep } from "./load";
import { warmUp } from "./scenarios";
import { startSqld, type Sqld } from "./sqld-server";
import { startCountersign, stopAllChildren, type Target } from "./targets";
import { closedLoopWrites, WRITE_KINDS } from "./writes";

// `npx tsx test/bench/sqld-soak.ts [ROUNDS] [--log=FILE]`: the sqld scenario's uncapped
// two-instance closed loops (pauses, then decisions of seeded calls; 16 clients per instance),
// again and again over one sqld, until a loop is not done STALL_MS after it started (its seeding
// and its wait for idle instances included). A stall prints sqld's and the instances' CPU while it
// lasts and leaves every process running for a look (`perf top -p`, sqld's debug log with --log
// and RUST_LOG), until Ctrl-C. A loop with answers other than 200/201 is reported, and makes the
// soak exit 1 at the end.

const STALL_MS = 60_000;
const log = (message: string) => console.error(message);

async function main() {
  const rounds = Number(process.argv[2]) || 20;
  const logFile = process.argv.find((a) => a.startsWith("--log="))?.slice("--log=".length);
  const sqld: Sqld = await startSqld({ logFile });
  log(`soak: sqld pid ${sqld.pid} at ${sqld.url}${logFile ? `, log ${logFile}` : ""}`);
  closeDb();
  process.env.DATABASE_URL = sqld.url;
  await migrateDatabase();
  const url = sqld.url.replace(/^http:/, "ws:");
  const targets: Target[] = [];
  for (let i = 0; i < 2; i++) {
    const target = await startCountersign({ sharedDatabaseUrl: url });
    await warmUp(target, 3000);
    targets.push(target);
    log(`  instance ${i + 1}: pid ${target.pid}`);
  }
  let failedLoops = 0;
  const options = { clients: 32, warmupMs: 500, durationMs: 4000, seed: 3000 };
  for (let round = 1; round <= rounds; round++) {
    for (const kind of WRITE_KINDS) {
      const started = Date.now();
      let done = false;
      const loop = closedLoopWrites(targets, kind, options, [sqld.pid]).finally(
        () => (done = true),
      );
      while (!done && Date.now() - started < STALL_MS) await sleep(250);
      if (!done) {
        const pids = [sqld.pid, ...targets.map((t) => t.pid)];
        const before = pids.map((pid) => processCpuMs(pid));
        await sleep(5000);
        const cpu = pids.map((pid, i) => ((processCpuMs(pid) - before[i]!) / 50).toFixed(0));
        log(
          `soak: round ${round}, ${kind}s STALLED for ${STALL_MS / 1000} s. CPU % over 5 s: sqld (pid ${pids[0]}) ${cpu[0]}, instances (${pids.slice(1).join(", ")}) ${cpu.slice(1).join(", ")}. Processes left running; Ctrl-C ends them.`,
        );
        await new Promise(() => undefined);
      }
      const result = await loop;
      const failed = result.requests - result.ok;
      if (failed > 0) failedLoops++;
      log(
        `soak: round ${round}, ${kind}s ${result.perSecond.toFixed(0)}/s${failed > 0 ? `, ${failed} FAILED (${JSON.stringify(result.statuses)})` : ""}`,
      );
    }
  }
  for (const target of targets) await target.stop();
  closeDb();
  await sqld.stop();
  if (failedLoops > 0) throw new Error(`${failedLoops} loops had failed answers`);
}

// on any failure (an unhandled rejection included) and on Ctrl-C, sqld and the instances go too
const fail = (error: unknown) => {
  console.error(error);
  void stopAllChildren().finally(() => process.exit(1));
};
process.on("unhandledRejection", fail);
process.on("SIGINT", () => fail("interrupted"));
main().then(() => process.exit(0), fail);
