import { rmSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { closeDb, getClient } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { decideCall } from "@/lib/approvals/decide-call";
import { chainRows, verifyChain } from "@/lib/audit/verify-chain";
import { createRun } from "@/lib/runs/create-run";
import { databaseBeforeMigration, sqlRows } from "../support/database";
import { actorFor, makeTeam } from "../support/factories";

// Migration 0029 (issue 28, goal 1: fewer pages written per write) rebuilds `events` without
// AUTOINCREMENT and folds the settled-batches index of history into the insights one. On a
// database an older version filled, it must keep every row and the chain, and the log must go on
// from where it was; history and insights must still walk the index they were written for.

let dir = "";
afterAll(() => {
  closeDb();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function pauseAndDecide(count: number, decide: number) {
  const { agent, reviewer } = await makeTeam();
  const agentActor = await actorFor(agent.key);
  const reviewerActor = await actorFor(reviewer.token);
  for (let i = 0; i < count; i++) {
    const { run } = await createRun(agentActor, {
      batch: { calls: [{ toolCallId: `t${i}`, toolName: "refund_order", args: { order: i } }] },
    });
    const call = run.batches![0]!.calls[0]!;
    if (i < decide)
      await decideCall(reviewerActor, call.id, {
        outcome: "approve",
        expectedRevision: call.revision,
      });
  }
}

const planOf = async (sql: string, ...args: (string | number)[]) =>
  (await getClient().execute({ sql: `explain query plan ${sql}`, args })).rows
    .map((r) => String(r.detail))
    .join("\n");

it("keeps every event, batch and the chain, and the log goes on from its last seq", async () => {
  const old = await databaseBeforeMigration(28);
  dir = old.dir;
  old.client.close();
  closeDb();
  process.env.DATABASE_URL = old.url;
  // written by this version's verbs into the schema as 0028 left it (with, for the time of the
  // writing only, the counter of 0030 that this version's pauses guard on)
  await getClient().execute("create table pause_settings_version as select 1 as id, 1 as version");
  await pauseAndDecide(12, 7);
  await getClient().execute("drop table pause_settings_version");
  const eventsBefore = await sqlRows("select * from events order by seq");
  const batchesBefore = await sqlRows("select * from batches order by id");
  expect(eventsBefore.length).toBeGreaterThan(30);
  expect(await sqlRows("select name from sqlite_sequence where name = 'events'")).toHaveLength(1);

  await migrateDatabase();

  expect(await sqlRows("select * from events order by seq")).toEqual(eventsBefore);
  expect(await sqlRows("select * from batches order by id")).toEqual(batchesBefore);
  const [schema] = await sqlRows("select sql from sqlite_schema where name = 'events'");
  expect(String(schema![0])).not.toMatch(/autoincrement/i);
  const indexes = (
    await sqlRows("select name from sqlite_schema where type = 'index' and tbl_name = 'events'")
  ).flat();
  expect(indexes).toEqual(
    expect.arrayContaining(["events_run_idx", "events_queue_idx", "events_escalations_idx"]),
  );
  expect(await verifyChain(chainRows(getClient()))).toMatchObject({
    ok: true,
    count: eventsBefore.length,
  });

  // new writes continue the log and its chain, and no longer touch sqlite_sequence
  const sequenceBefore = await sqlRows("select * from sqlite_sequence order by name");
  await pauseAndDecide(2, 2);
  const [[last]] = (await sqlRows("select max(seq) from events")) as [[number]];
  expect(Number(last)).toBeGreaterThan(Number(eventsBefore[eventsBefore.length - 1]![0]));
  expect(await verifyChain(chainRows(getClient()))).toMatchObject({ ok: true });
  expect(await sqlRows("select * from sqlite_sequence order by name")).toEqual(sequenceBefore);
});

it("history's keyset pages and insights' period counts walk the one settled-batches index", async () => {
  const indexes = (
    await sqlRows("select name from sqlite_schema where type = 'index' and tbl_name = 'batches'")
  ).flat();
  expect(indexes).not.toContain("batches_settled_idx");
  // history (lib/history/list-history.ts): newest decision first, the next page from a cursor
  const history = await planOf(
    `select b.id, b.decided_at from batches b join runs r on r.id = b.run_id
     where b.queue_id = ? and b.status <> 'pending' and (b.decided_at, b.id) < (?, ?)
     order by b.decided_at desc, b.id desc limit 51`,
    "q",
    Date.now(),
    "z",
  );
  expect(history).toMatch(
    /SEARCH b USING (COVERING )?INDEX batches_insights_settled_idx \(queue_id=\? AND \(decided_at,id\)<\(\?,\?\)\)/,
  );
  expect(history).not.toMatch(/TEMP B-TREE/);
  // insights (lib/insights/read-insights.ts): a period's settled cards by status, from the index
  const insights = await planOf(
    `select b.queue_id, (b.decided_at - ?) / ? as bucket, b.status, count(*) as n from batches b
     where b.queue_id in (?) and b.status <> 'pending' and b.decided_at >= ? and b.decided_at < ?
     group by b.queue_id, bucket, b.status`,
    0,
    86_400_000,
    "q",
    0,
    Date.now(),
  );
  expect(insights).toMatch(/USING COVERING INDEX batches_insights_settled_idx/);
  // policy history (lib/policies/policy-history.ts): a period in decision order, keyset pages
  const policyHistory = await planOf(
    `select b.id, b.status, b.created_at, b.decided_at, b.run_id from batches b
     where b.queue_id = ? and b.status <> 'pending' and b.decided_at >= ? and b.decided_at < ?
     and b.status in ('decided', 'expired') and b.decided_at >= ? and (b.decided_at > ? or b.id > ?)
     order by b.decided_at, b.id limit 1000`,
    "q",
    0,
    Date.now(),
    0,
    0,
    "a",
  );
  expect(policyHistory).toMatch(/COVERING INDEX batches_insights_settled_idx/);
  expect(policyHistory).not.toMatch(/TEMP B-TREE/);
});
