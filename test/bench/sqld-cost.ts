import { readFileSync } from "node:fs";
import { closeDb, getClient } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { decideCall } from "@/lib/approvals/decide-call";
import { readDecisionState } from "@/lib/approvals/plan-decision";
import { requireAgent, requireReviewer } from "@/lib/auth/actor";
import { readPauseContext } from "@/lib/batches/open-batch";
import { createRun } from "@/lib/runs/create-run";
import { teamActors } from "./team-actors";
import { startSqld } from "./sqld-server";
import { pauseBody, stopAllChildren } from "./targets";

// `npx tsx test/bench/sqld-cost.ts [N] [--ws]`: where a libSQL server's CPU goes for the two hot
// writes. Starts sqld, calls the domain verbs in this process (no app server, so no background
// polling reaches sqld), and prints sqld's CPU per operation from /proc/<pid>/stat: a whole pause
// and decision, their read batches alone, and bare batches of INSERTs for scale.

const TICKS_PER_SECOND = 100;
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

async function main() {
  const n = Number(process.argv.find((a) => /^\d+$/.test(a))) || 400;
  const ws = process.argv.includes("--ws");
  const sqld = await startSqld();
  try {
    const url = ws ? sqld.url.replace(/^http:/, "ws:") : sqld.url;
    closeDb();
    process.env.DATABASE_URL = url;
    await migrateDatabase();
    const { agentActor, reviewerActor } = await teamActors();
    const pid = sqld.pid!;
    const measure = async (label: string, work: (i: number) => Promise<unknown>) => {
      for (let i = 0; i < Math.min(50, n); i++) await work(-1 - i);
      const before = cpuMs(pid);
      const started = performance.now();
      for (let i = 0; i < n; i++) await work(i);
      const cpu = (cpuMs(pid) - before) / n;
      const wall = (performance.now() - started) / n;
      console.log(`${label}: sqld ${cpu.toFixed(2)} ms CPU, ${wall.toFixed(2)} ms wall each`);
    };
    const pending: { callId: string; revision: number }[] = [];
    let made = 0;
    const pause = async () => {
      const { run } = await createRun(agentActor, pauseBody(`cost-${made++}`));
      const call = run.batches![0]!.calls[0]!;
      pending.push({ callId: call.id, revision: call.revision });
    };
    const idleBefore = cpuMs(pid);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    console.log(`idle: sqld ${((cpuMs(pid) - idleBefore) / 2).toFixed(1)} ms CPU per second`);
    await getClient().execute(
      "create table if not exists bench_scratch (id integer primary key, a text, b text)",
    );
    const inserts = (k: number) =>
      Array.from({ length: k }, () => ({
        sql: "insert into bench_scratch (a, b) values (?, ?)",
        args: ["x".repeat(40), "y".repeat(200)],
      }));
    await measure("bare batch of 1 INSERT", () => getClient().batch(inserts(1), "write"));
    await measure("bare batch of 17 INSERTs", () => getClient().batch(inserts(17), "write"));
    await measure("select 1 (execute)", () => getClient().execute("select 1"));
    await measure("pause read batch", () =>
      readPauseContext(requireAgent(agentActor), {
        idempotency: null,
        batch: pauseBody("x").batch as never,
      }),
    );
    await measure("pause (createRun with a one-call batch)", pause);
    for (let i = 0; i < n + 100; i++) await pause();
    let next = 0;
    await measure("decision read batch", () =>
      readDecisionState(requireReviewer(reviewerActor), {
        callId: pending[pending.length - 1]!.callId,
      }),
    );
    await measure("decision (decideCall approve)", async () => {
      const call = pending[next++]!;
      await decideCall(reviewerActor, call.callId, {
        outcome: "approve",
        expectedRevision: call.revision,
      });
    });
  } finally {
    closeDb();
    await sqld.stop();
    await stopAllChildren();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
