import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getClient, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { decideCall } from "@/lib/approvals/decide-call";
import { chainRows, verifyChain } from "@/lib/audit/verify-chain";
import { authenticate, type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { eventRows, SYSTEM_ACTOR, type NewEvent } from "@/lib/events/append-event";
import { linkHash } from "@/lib/events/event-chain";
import { commit } from "@/lib/events/commit";
import { claimRun } from "@/lib/runs/claim-run";
import { completeRun } from "@/lib/runs/complete-run";
import { createRun } from "@/lib/runs/create-run";
import { recordToolEvent } from "@/lib/runs/record-tool-event";
import { runAdminCli } from "../support/admin-cli";
import { databaseBeforeMigration, freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// The event log's hash chain (lib/events/event-chain.ts) and `audit verify`
// (lib/audit/verify-chain.ts): every way of writing an event chains, several rows of one
// statement chain to each other in seq order, racing writers never fork the chain, an upgraded
// database verifies, and an edited, deleted or inserted row is named.

let databaseUrl: string;
let agent: AgentActor;
let dana: ReviewerActor;

const as = (token: string) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));
const file = (url: string) => url.slice("file:".length);

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  queueId: null,
  actor: SYSTEM_ACTOR,
  data,
});

async function verdict(client: Client = getClient()) {
  return verifyChain(chainRows(client));
}

/** A whole run: pause, a decision, a claim, a tool report, completion. */
async function wholeRun(i: number) {
  const { run } = await createRun(agent, {
    batch: { calls: [{ toolCallId: `t${i}`, toolName: "refund_order", args: { order: i } }] },
  });
  const call = run.batches![0]!.calls[0]!;
  await decideCall(dana, call.id, { outcome: "approve", expectedRevision: call.revision });
  const claim = await claimRun(agent, run.id, { workerId: "worker-1" });
  await recordToolEvent(agent, run.id, {
    claimToken: claim.claimToken,
    type: "tool.completed",
    toolCallId: call.toolCallId,
    result: { ok: true },
  });
  await completeRun(agent, run.id, { claimToken: claim.claimToken, outcome: "completed" });
}

beforeAll(async () => {
  databaseUrl = await freshDatabase("event-chain");
  const queue = await makeQueue({});
  const reviewer = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queue.name }] });
  agent = (await as((await makeAgentKey({ queues: [queue.name] })).key)) as AgentActor;
  dana = (await as(reviewer.token)) as ReviewerActor;
});

afterAll(() => {
  closeDb();
  rmSync(dirname(file(databaseUrl)), { recursive: true, force: true });
});

describe("the chain", () => {
  it("covers every event a whole flow writes, and verifies", async () => {
    for (let i = 0; i < 3; i++) await wholeRun(i);
    const rows = await getClient().execute("select seq, type, hash from events order by seq");
    expect(rows.rows.length).toBeGreaterThan(10);
    expect(rows.rows.every((r) => typeof r.hash === "string" && r.hash.length === 64)).toBe(true);
    const result = await verdict();
    expect(result).toMatchObject({ ok: true, count: rows.rows.length });
  });

  it("chains the rows of one statement to each other, in seq order", async () => {
    const [before] = (await getClient().execute("select max(seq) from events")).rows;
    const insert = eventRows(event("test.a", { n: 1 }), event("test.b"), event("test.c", { n: 3 }));
    const [result] = await commit([insert]);
    const written = result!.rows.map((r) => Number(r[0])).sort((a, b) => a - b);
    const first = Number(before![0]) + 1;
    expect(written).toEqual([first, first + 1, first + 2]);
    const rows = await getClient().execute({
      sql: "select seq, type from events where seq >= ? order by seq",
      args: [first],
    });
    expect(rows.rows.map((r) => r.type)).toEqual(["test.a", "test.b", "test.c"]);
    // each recomputed from the one before it, in this process
    let previous = (
      await getClient().execute({ sql: "select hash from events where seq = ?", args: [first - 1] })
    ).rows[0]!.hash as string;
    for await (const row of chainRows(getClient())) {
      if (row.seq < first) continue;
      expect(row.hash).toBe(linkHash(previous, row.content));
      previous = row.hash!;
    }
    expect((await verdict()).ok).toBe(true);
  });

  it("hashes exactly what is stored, whatever the text holds", async () => {
    await commit([
      eventRows({
        ...event("test.odd", { text: "a\u0000b \ud800 é 🙂", quote: '"' }),
        actor: { kind: "system", id: "x", name: "Nul\u0000Name é" },
      }),
    ]);
    expect((await verdict()).ok).toBe(true);
  });

  it("never forks when writers over two connections race", async () => {
    const other = createClient({ url: databaseUrl });
    try {
      const write = (client: Client, i: number) =>
        client.batch([eventRows(event("test.race", { i }), event("test.race2", { i }))], "write");
      const busy = async (client: Client, i: number) => {
        for (;;) {
          try {
            return await write(client, i);
          } catch (error) {
            if (!String(error).includes("SQLITE_BUSY")) throw error;
          }
        }
      };
      await Promise.all(Array.from({ length: 40 }, (_, i) => busy(i % 2 ? other : getClient(), i)));
    } finally {
      other.close();
    }
    const result = await verdict();
    expect(result.ok).toBe(true);
    const total = (await getClient().execute("select count(*) from events")).rows[0]![0];
    expect(result).toMatchObject({ count: Number(total) });
  });
});

describe("tampering", () => {
  /** A copy of the test database, tampered with by `change`, checked by the real CLI. */
  async function tampered(change: (client: Client) => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), "countersign-tampered-"));
    const copy = join(dir, "copy.db");
    await getClient().execute("pragma wal_checkpoint(truncate)");
    cpSync(file(databaseUrl), copy);
    const client = createClient({ url: `file:${copy}` });
    try {
      await change(client);
      return { client, dir, cli: await runAdminCli(`file:${copy}`, "audit", "verify") };
    } catch (error) {
      client.close();
      throw error;
    }
  }
  const done = ({ client, dir }: { client: Client; dir: string }) => {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  };

  it("the CLI verifies an untouched log: exit 0 and the count", async () => {
    const answer = await runAdminCli(databaseUrl, "audit", "verify");
    const result = await verdict();
    expect(answer.code).toBe(0);
    expect(answer.stdout).toContain(`Verified ${result.ok && result.count} events`);
  });

  it("names an edited event", async () => {
    const t = await tampered((c) =>
      c
        .execute(
          "update events set data = json_set(data, '$.i', 99) where type = 'test.race' and seq = (select min(seq) from events where type = 'test.race')",
        )
        .then(() => undefined),
    );
    const seq = Number(
      (await t.client.execute("select min(seq) from events where type = 'test.race'")).rows[0]![0],
    );
    expect(t.cli.code).toBe(1);
    expect(t.cli.stderr).toContain(`event seq ${seq} was edited`);
    done(t);
  });

  it("names the place of a deleted event", async () => {
    const t = await tampered((c) =>
      c.execute("delete from events where seq = 5").then(() => undefined),
    );
    expect(t.cli.code).toBe(1);
    expect(t.cli.stderr).toContain("event seq 6 does not follow seq 4: seq 5 is missing (deleted)");
    done(t);
  });

  it("names an inserted event, at the end or slipped in between", async () => {
    const atEnd = await tampered((c) =>
      c
        .execute(
          "insert into events (type, at, actor_kind, data) values ('agent.key_created', 0, 'system', '{}')",
        )
        .then(() => undefined),
    );
    const last = Number((await atEnd.client.execute("select max(seq) from events")).rows[0]![0]);
    expect(atEnd.cli.code).toBe(1);
    expect(atEnd.cli.stderr).toContain(`event seq ${last} has no chain hash`);
    done(atEnd);

    // Between 7 and 8: the rows after move up one, and the new row copies a real row's hash.
    const between = await tampered(async (c) => {
      await c.batch(
        [
          "update events set seq = -seq - 1 where seq > 7",
          "update events set seq = -seq where seq < 0",
          "insert into events (seq, type, at, actor_kind, data, hash) select 8, 'member.added', at, 'system', '{}', hash from events where seq = 7",
        ],
        "write",
      );
    });
    expect(between.cli.code).toBe(1);
    expect(between.cli.stderr).toContain("event seq 8 was inserted");
    done(between);
  });
});

describe("anchors: heads recorded outside the database", () => {
  // What the chain alone cannot show: the newest rows deleted, or the whole chain recomputed
  // after an edit. A head the server logged (lib/audit/chain-head.ts) shows both.
  const rechain = readFileSync(
    join(process.cwd(), "db/migrations/0019_event_chain.sql"),
    "utf8",
  ).split("--> statement-breakpoint")[1]!;

  async function chainHashAt(seq: number): Promise<string | null> {
    const { rows } = await getClient().execute({
      sql: "select hash from events where seq = ?",
      args: [seq],
    });
    return rows[0] ? String(rows[0].hash) : null;
  }

  async function copyWith(change: (client: Client) => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), "countersign-anchor-"));
    const url = `file:${join(dir, "copy.db")}`;
    await getClient().execute("pragma wal_checkpoint(truncate)");
    cpSync(file(databaseUrl), file(url));
    const client = createClient({ url });
    await change(client);
    client.close();
    return { url, dir };
  }

  it("catch deleted newest rows and a recomputed chain that verify alone accepts", async () => {
    const result = await verdict();
    if (!result.ok) throw new Error("the log must verify");
    const head = `${result.head.seq}:${result.head.hash}`;
    expect((await runAdminCli(databaseUrl, "audit", "verify", "--anchor", head)).code).toBe(0);

    const truncated = await copyWith(async (c) => {
      await c.execute("delete from events where seq > (select max(seq) - 2 from events)");
    });
    expect((await runAdminCli(truncated.url, "audit", "verify")).code).toBe(0);
    const cut = await runAdminCli(truncated.url, "audit", "verify", "--anchor", head);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain(`event seq ${result.head.seq} was recorded`);
    expect(cut.stderr).toContain("its newest rows were deleted");

    const rebuilt = await copyWith(async (c) => {
      await c.execute("update events set data = '{\"rewritten\":true}' where seq = 4");
      await c.execute(rechain);
    });
    expect((await runAdminCli(rebuilt.url, "audit", "verify")).code).toBe(0);
    const caught = await runAdminCli(rebuilt.url, "audit", "verify", "--anchor", head);
    expect(caught.code).toBe(1);
    expect(caught.stderr).toContain(
      `event seq ${result.head.seq} does not carry the hash recorded`,
    );

    // the anchored row itself deleted, an earlier one edited, the chain rebuilt over both, while
    // later rows remain (found by review: the anchor used to be skipped when its row was gone)
    const middle = `${result.head.seq - 2}:${(await chainHashAt(result.head.seq - 2))!}`;
    const hidden = await copyWith(async (c) => {
      await c.execute("update events set data = '{\"rewritten\":true}' where seq = 4");
      await c.execute({ sql: "delete from events where seq = ?", args: [result.head.seq - 2] });
      await c.execute(rechain);
    });
    expect((await runAdminCli(hidden.url, "audit", "verify")).code).toBe(0);
    const gone = await runAdminCli(hidden.url, "audit", "verify", "--anchor", middle);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`event seq ${result.head.seq - 2} was recorded`);
    expect(gone.stderr).toContain("is no longer in the log");

    const bad = await runAdminCli(databaseUrl, "audit", "verify", "--anchor", "12:nothex");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--anchor takes SEQ:HASH");
    for (const { dir } of [truncated, rebuilt, hidden])
      rmSync(dir, { recursive: true, force: true });
  });
});

describe("an upgraded database", () => {
  it("chains the rows written before the chain existed, and new rows chain onto them", async () => {
    // The migrations up to 0018 (before the chain), some events, then the real migrations.
    const { dir, url, client: old } = await databaseBeforeMigration(19);
    for (let i = 1; i <= 30; i++)
      await old.execute({
        sql: "insert into events (type, at, queue_id, actor_kind, actor_name, data) values (?, ?, ?, 'system', ?, ?)",
        args: [
          `old.${i}`,
          1_700_000_000_000 + i,
          i % 3 ? "q1" : null,
          "Old",
          JSON.stringify({ i }),
        ],
      });
    await old.execute("delete from events where seq = 17"); // a gap from before: chained over
    old.close();

    const saved = process.env.DATABASE_URL;
    closeDb();
    process.env.DATABASE_URL = url;
    try {
      await migrateDatabase();
      await commit([eventRows(event("new.one")), eventRows(event("new.two"), event("new.three"))]);
      expect(await verdict()).toMatchObject({ ok: true, count: 29 + 3 });
    } finally {
      closeDb();
      process.env.DATABASE_URL = saved;
    }
    rmSync(dir, { recursive: true, force: true });
  });
});
