import { rmSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { closeDb, getClient } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { decideCall } from "@/lib/approvals/decide-call";
import { createRun } from "@/lib/runs/create-run";
import { databaseBeforeMigration, sqlRows } from "../support/database";
import { actorFor, makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// Migration 0031 (issue 28: fewer pages per decision) rebuilds `votes` keyed by call, revision and
// reviewer, WITHOUT ROWID: one b-tree instead of three. On a database an older version filled it
// must keep every vote, still refuse a second vote of a reviewer on one revision, and count a
// quorum as before.

let dir = "";
afterAll(() => {
  closeDb();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const VOTES =
  "select id, call_id, reviewer_id, outcome, revision, action_hash, reviewer_name, reviewer_email, created_at from votes order by call_id, revision, reviewer_id";

async function quorumTeam() {
  const queue = await makeQueue({ requiredApprovals: 2 });
  const reviewers = await Promise.all(
    ["Dana", "Lee"].map((name) => makeReviewer({ name, queues: [{ name: queue.name }] })),
  );
  const agent = await makeAgentKey({ queues: [queue.name] });
  return {
    agent: (await actorFor(agent.key))!,
    dana: (await actorFor(reviewers[0]!.token))!,
    lee: (await actorFor(reviewers[1]!.token))!,
  };
}

async function pause(agent: Awaited<ReturnType<typeof quorumTeam>>["agent"], id: string) {
  const { run } = await createRun(agent, {
    batch: { calls: [{ toolCallId: id, toolName: "refund_order", args: { order: id } }] },
  });
  return run.batches![0]!.calls[0]!;
}

it("keeps every vote, one table keyed by call, revision and reviewer, and counts quorums as before", async () => {
  const old = await databaseBeforeMigration(30);
  dir = old.dir;
  old.client.close();
  closeDb();
  process.env.DATABASE_URL = old.url;
  const { agent, dana, lee } = await quorumTeam();
  // written by this version's verbs into the schema as 0030 left it
  const decided = await pause(agent, "before-1");
  await decideCall(dana, decided.id, { outcome: "approve", expectedRevision: 1 });
  await decideCall(lee, decided.id, { outcome: "approve", expectedRevision: 1 });
  const halfway = await pause(agent, "before-2");
  await decideCall(dana, halfway.id, { outcome: "approve", expectedRevision: 1 });
  const votesBefore = await sqlRows(VOTES);
  expect(votesBefore).toHaveLength(3);

  await migrateDatabase();

  expect(await sqlRows(VOTES)).toEqual(votesBefore);
  const [schema] = (await sqlRows("select sql from sqlite_schema where name = 'votes'")).flat();
  expect(String(schema)).toMatch(/PRIMARY KEY\s*\(\s*`call_id`,\s*`revision`,\s*`reviewer_id`\)/);
  expect(String(schema)).toMatch(/WITHOUT ROWID\s*$/);
  // no index of its own any more (a WITHOUT ROWID table has none for its key)
  expect(
    await sqlRows("select name from sqlite_schema where type = 'index' and tbl_name = 'votes'"),
  ).toEqual([]);

  // the vote a reviewer already cast: refused as before; the quorum completes with the second
  await expect(
    decideCall(dana, halfway.id, { outcome: "approve", expectedRevision: 1 }),
  ).rejects.toMatchObject({ status: 409 });
  const { call } = await decideCall(lee, halfway.id, { outcome: "approve", expectedRevision: 1 });
  expect(call.status).toBe("approved");
  expect(call.votes.map((v) => v.reviewer.name)).toEqual(["Dana", "Lee"]);
  // the key refuses a second vote however it is written
  await expect(
    getClient().execute({
      sql: "insert into votes (id, call_id, reviewer_id, outcome, revision, action_hash, created_at) select 'x', call_id, reviewer_id, outcome, revision, action_hash, created_at from votes limit 1",
      args: [],
    }),
  ).rejects.toThrow(/UNIQUE|PRIMARY KEY|constraint/i);
});
