import { readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { closeDb } from "@/db/client";
import { decideCall } from "@/lib/approvals/decide-call";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { teamActors } from "./team-actors";
import { pauseBody } from "./targets";

// `npx tsx test/bench/wal-pages.ts [N]`: which b-trees (tables, indexes) the WAL frames of a
// pause and of a decision belong to, per write. A second connection holds a read snapshot so no
// checkpoint restarts the WAL; each frame's page number is mapped to its b-tree with dbstat.

const require = createRequire(import.meta.url);
type Db = {
  exec: (sql: string) => void;
  prepare: (sql: string) => { all: () => Record<string, unknown>[] };
  close: () => void;
};
const Database = require("libsql") as new (path: string) => Db;
const HEADER = 32;
const FRAME_HEADER = 24;

function framePages(file: string, from: number, pageSize: number): number[] {
  const wal = readFileSync(`${file}-wal`);
  const pages: number[] = [];
  for (
    let at = Math.max(HEADER, from);
    at + FRAME_HEADER <= wal.length;
    at += FRAME_HEADER + pageSize
  )
    pages.push(wal.readUInt32BE(at));
  return pages;
}

async function main() {
  const n = Number(process.argv[2]) || 200;
  const file = (await freshDatabase("wal-pages")).slice("file:".length);
  const { agentActor, reviewerActor } = await teamActors();
  const pending: { callId: string; revision: number }[] = [];
  const pause = async (i: number) => {
    const { run } = await createRun(agentActor, pauseBody(`pages-${i}`));
    const call = run.batches![0]!.calls[0]!;
    pending.push({ callId: call.id, revision: call.revision });
  };
  for (let i = 0; i < 300; i++) await pause(-1 - i); // a log and tables that are not empty
  for (let i = 0; i < 100; i++) {
    const call = pending.shift()!;
    await decideCall(reviewerActor, call.callId, {
      outcome: "approve",
      expectedRevision: call.revision,
    });
  }
  const count = async (label: string, work: (i: number) => Promise<void>) => {
    const reader = new Database(file);
    reader.exec("pragma wal_checkpoint(truncate); begin; select count(*) from sqlite_schema;");
    const pageSize = Number(reader.prepare("pragma page_size").all()[0]!.page_size);
    const start = statSync(`${file}-wal`).size;
    for (let i = 0; i < n; i++) await work(i);
    const pages = framePages(file, start, pageSize);
    reader.exec("commit");
    // the b-tree of each page, as the database is now (pages added since are in dbstat too)
    const owner = new Map<number, string>();
    const mapper = new Database(file);
    for (const row of mapper.prepare("select name, pageno from dbstat").all())
      owner.set(Number(row.pageno), String(row.name));
    mapper.close();
    reader.close();
    const by = new Map<string, number>();
    for (const page of pages) {
      const name = page === 1 ? "page 1 (header)" : (owner.get(page) ?? "free/other");
      by.set(name, (by.get(name) ?? 0) + 1);
    }
    console.log(`${label}: ${(pages.length / n).toFixed(1)} WAL frames each`);
    for (const [name, k] of [...by].sort((a, b) => b[1] - a[1]))
      console.log(`  ${(k / n).toFixed(2)}  ${name}`);
  };
  await count("pause", pause);
  await count("decision", async () => {
    const call = pending.shift()!;
    await decideCall(reviewerActor, call.callId, {
      outcome: "approve",
      expectedRevision: call.revision,
    });
  });
  closeDb();
  rmSync(dirname(file), { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
