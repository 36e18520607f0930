import { rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { closeDb, getDb } from "@/db/client";
import { cacheStatements } from "@/db/statement-cache";
import { decideCall } from "@/lib/approvals/decide-call";
import { authenticate } from "@/lib/auth/actor";
import { takePausedBatch } from "@/lib/batches/paused-batches";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { teamActors } from "./team-actors";
import { pauseBody } from "./targets";

// `npx tsx test/bench/statements.ts [N] [--sql]`: the domain verbs behind a pause and a decision,
// called in-process (no HTTP, no Next.js), N times each, with the SQL statements each one runs
// and its CPU time. A quick check of what a change to lib/ does to the per-request cost.

const require = createRequire(import.meta.url);
// The native driver under @libsql/client: every statement goes through Database.prepare.
const Database = require("libsql") as {
  new (path: string): { exec: (sql: string) => void; close: () => void };
  prototype: { prepare: (sql: string) => unknown };
};
// Counted on top of the app's statement cache (db/statement-cache.ts): every statement run, compiled or not.
cacheStatements();
const statements = new Map<string, number>();
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (this: unknown, sql: string) {
  statements.set(sql, (statements.get(sql) ?? 0) + 1);
  return prepare.call(this, sql);
};

// WAL frames written per operation: a second connection holds a read snapshot open while the
// operations run, so no checkpoint can restart the WAL and its growth counts every frame written.
let databaseFile = "";
const FRAME_HEADER = 24;
const PAGE_SIZE = 4096;
const walSize = () => {
  try {
    return statSync(`${databaseFile}-wal`).size;
  } catch {
    return 0;
  }
};

async function measure(label: string, n: number, work: (i: number) => Promise<void>) {
  for (let i = 0; i < Math.min(50, n); i++) await work(i); // warm-up
  statements.clear();
  const reader = new Database(databaseFile);
  // emptied first: a WAL restarted from its start would not grow until it passed its old size
  reader.exec("pragma wal_checkpoint(truncate); begin; select count(*) from sqlite_schema;");
  const walBefore = walSize();
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) await work(i);
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - started;
  const frames = (walSize() - walBefore) / (PAGE_SIZE + FRAME_HEADER) / n;
  reader.exec("commit");
  reader.close();
  const count = [...statements.values()].reduce((a, b) => a + b, 0);
  // the SQL text a libSQL server parses (twice: its own parser, then SQLite's) per operation
  const text = [...statements].reduce((sum, [sql, times]) => sum + sql.length * times, 0);
  console.log(
    `${label}: ${(count / n).toFixed(1)} statements (${(text / n / 1000).toFixed(1)} KB of SQL), ${frames.toFixed(1)} WAL frames, ${((used.user + used.system) / 1000 / n).toFixed(2)} ms CPU, ${(wall / n).toFixed(2)} ms wall each`,
  );
  if (process.argv.includes("--sql")) {
    for (const [sql, times] of statements)
      console.log(
        `  ${(times / n).toFixed(1)}× ${process.argv.includes("--full") ? sql : sql.slice(0, 140)}`,
      );
  }
}

let databaseDir: string | undefined;

async function main() {
  const n = Number(process.argv[2]) || 300;
  databaseFile = (await freshDatabase("statements")).slice("file:".length);
  databaseDir = dirname(databaseFile);
  const { agent, agentActor, reviewerActor } = await teamActors();
  const pending: { callId: string; revision: number }[] = [];
  const pause = async (i: number) => {
    const { run } = await createRun(agentActor, pauseBody(`statements-${i}-${pending.length}`));
    const call = run.batches![0]!.calls[0]!;
    pending.push({ callId: call.id, revision: call.revision });
  };
  await measure("authenticate (agent key)", n, async () => {
    await authenticate(getDb(), new Headers({ authorization: `Bearer ${agent.key}` }));
  });
  // twice as many pauses as either kind of decision takes, with their warm-ups
  await measure("createRun with a one-call batch (a pause)", 2 * n + 100, pause);
  const decide = async (call: { callId: string; revision: number }) => {
    await decideCall(reviewerActor, call.callId, {
      outcome: "approve",
      expectedRevision: call.revision,
    });
  };
  // Both take the oldest pending calls, as this row was measured before the copy (the newest
  // would write ~4 WAL frames more each). First decided from the copy their pause left:
  await measure("decideCall approve (a decision on a batch this process paused)", n, () =>
    decide(pending.shift()!),
  );
  // then with their copy dropped, as when another instance paused them:
  await measure("decideCall approve (a decision after its read)", n, async () => {
    const call = pending.shift()!;
    takePausedBatch({ callId: call.callId });
    await decide(call);
  });
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    closeDb();
    if (databaseDir) rmSync(databaseDir, { recursive: true, force: true });
  });
