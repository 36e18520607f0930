import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { closeDb, getClient } from "@/db/client";
import { type AgentActor } from "@/lib/auth/actor";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { forgetPauseSettings, heldPauseSettings } from "@/lib/batches/pause-settings";
import { createBatch } from "@/lib/batches/create-batch";
import { ConflictError } from "@/lib/errors";
import { completeRun } from "@/lib/runs/complete-run";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { readsDuring } from "../support/reads";
import { actorFor, makeAgentKey, makeQueue } from "../support/factories";

// A pause plans from this process's copy of the queues and rules (lib/batches/pause-settings.ts)
// and reads nothing first. Each test here changes those tables behind the app's back — through
// a second connection, as another instance, the CLI or an operator's SQL would — and checks that
// the very next pause obeys the change: the copy's version guard aborts the stale write, and the
// pause is planned again from a fresh read. Without the guard each of them fails.

let databaseUrl: string;
let other: Client;
let queueId: string;
let queueName: string;
let agentId: string;
let agentKey: string;
let agent: AgentActor;

const as = async (key: string) => (await actorFor(key)) as AgentActor;

const refund = (id: string) => ({
  calls: [{ toolCallId: id, toolName: "refund_order", args: { orderId: id, amount: 25 } }],
});

async function pause(id: string, options: { idempotencyKey?: string } = {}) {
  const { run, replayed } = await createRun(agent, { batch: refund(id) }, options);
  return { run, replayed, batch: run.batches![0]!, call: run.batches![0]!.calls[0]! };
}

const count = async (table: string) =>
  Number((await getClient().execute(`select count(*) as n from ${table}`)).rows[0]!.n);

beforeAll(async () => {
  databaseUrl = await freshDatabase("pause-settings");
  other = createClient({ url: databaseUrl });
  const queue = await makeQueue({});
  queueId = queue.id;
  queueName = queue.name;
  const key = await makeAgentKey({ queues: [queue.name] });
  agentId = key.id;
  agentKey = key.key;
  agent = await as(agentKey);
});

beforeEach(async () => {
  // every test starts from a held copy, read by a pause
  await pause(`warm-${Math.random()}`);
  expect(heldPauseSettings(agent.queueIds)).not.toBeNull();
});

afterAll(() => {
  other.close();
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

describe("a pause with a current copy of the settings", () => {
  it("reads nothing before its write", async () => {
    expect(await readsDuring(() => pause("no-read"))).toEqual([]);
  });

  it("on a run it pauses again reads the run, not the settings; a refusal reads them", async () => {
    const { run } = await createRun(agent, {});
    await completeRun(agent, run.id, { outcome: "completed" });
    let refused: unknown;
    const sent = await readsDuring(async () => {
      // the run is done: refused (409) on the first try, and again from a full read
      refused = await createBatch(agent, run.id, refund("late")).catch((e: unknown) => e);
    });
    expect((refused as ConflictError).code).toBe("run_terminal");
    const readsSettings = (read: string[]) =>
      read.some((sql) => sql.includes("pause_settings_version"));
    expect(sent[0]!.some((sql) => sql.includes(`from "runs"`))).toBe(true);
    expect(readsSettings(sent[0]!)).toBe(false);
    expect(sent.slice(1).some(readsSettings)).toBe(true);
  });
});

describe("a change made behind the app's back applies to the very next pause", () => {
  it("a deny rule added by another instance blocks the call", async () => {
    const now = Date.now();
    await other.execute({
      sql: `insert into policy_rules (id, name, queue_id, position, enabled, effect, tool_pattern,
              arg_predicates, reason, created_at, updated_at)
            values ('deny-refunds', 'No refunds', null, 1, 1, 'deny', 'refund_order', '[]',
              'Refunds are paused', ?, ?)`,
      args: [now, now],
    });
    try {
      const { call } = await pause("denied");
      expect(call.status).toBe("rejected");
      expect(call.decision).toMatchObject({ source: "policy", outcome: "rejected" });
    } finally {
      await other.execute("delete from policy_rules where id = 'deny-refunds'");
    }
    // and its removal, to the one after
    expect((await pause("allowed-again")).call.status).toBe("pending");
  });

  it("a routing rule added by another instance routes the batch", async () => {
    const elsewhere = await makeQueue({});
    await other.execute({
      sql: `insert into routing_rules (id, name, position, agent_key_id, tool_pattern, queue_id,
              enabled, created_at)
            values ('route-refunds', 'Refunds elsewhere', 1, ?, 'refund_*', ?, 1, ?)`,
      args: [agentId, elsewhere.id, Date.now()],
    });
    try {
      expect((await pause("routed")).batch.queue).toMatchObject({ id: elsewhere.id });
    } finally {
      await other.execute("delete from routing_rules where id = 'route-refunds'");
    }
    expect((await pause("not-routed")).batch.queue).toMatchObject({ id: queueId });
  });

  it("a queue archived by another instance refuses the pause, and nothing is written", async () => {
    const before = { runs: await count("runs"), batches: await count("batches") };
    await other.execute({
      sql: "update queues set archived_at = ? where id = ?",
      args: [Date.now(), queueId],
    });
    try {
      const refused = await pause("archived").catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as ConflictError).code).toBe("queue_archived");
      expect({ runs: await count("runs"), batches: await count("batches") }).toEqual(before);
    } finally {
      await other.execute({
        sql: "update queues set archived_at = null where id = ?",
        args: [queueId],
      });
    }
  });

  it("a run without a batch, in a default queue archived by another instance: 409", async () => {
    const runs = await count("runs");
    await other.execute({
      sql: "update queues set archived_at = ? where id = ?",
      args: [Date.now(), queueId],
    });
    try {
      const refused = await createRun(agent, {}).catch((error: unknown) => error);
      expect((refused as ConflictError).code).toBe("queue_archived");
      expect(await count("runs")).toBe(runs);
    } finally {
      await other.execute({
        sql: "update queues set archived_at = null where id = ?",
        args: [queueId],
      });
    }
  });

  it("a queue made by another instance, and given to the key, can be named at once", async () => {
    const id = `queue-made-elsewhere-${Date.now()}`;
    await other.batch(
      [
        {
          sql: "insert into queues (id, name, created_at) values (?, ?, ?)",
          args: [id, id, Date.now()],
        },
        {
          sql: "insert into agent_key_queues (agent_key_id, queue_id) values (?, ?)",
          args: [agentId, id],
        },
      ],
      "write",
    );
    forgetCachedActors();
    agent = await as(agentKey);
    const { run } = await createRun(agent, { batch: { ...refund("named"), queue: id } });
    expect(run.batches![0]!.queue).toMatchObject({ id, name: id });
  });
});

describe("an Idempotency-Key on a new run, taken as new on the first try", () => {
  it("a retry gets the first answer, from the key's record", async () => {
    const first = await pause("once", { idempotencyKey: "retry-1" });
    const runs = await count("runs");
    const again = await pause("once", { idempotencyKey: "retry-1" });
    expect(again.replayed).toBe(true);
    expect(again.run.id).toBe(first.run.id);
    expect(await count("runs")).toBe(runs);
  });

  it("a retry is answered from the key even when the settings would now refuse it", async () => {
    const first = await pause("before-archive", { idempotencyKey: "retry-2" });
    await other.execute({
      sql: "update queues set archived_at = ? where id = ?",
      args: [Date.now(), queueId],
    });
    try {
      const again = await pause("before-archive", { idempotencyKey: "retry-2" });
      expect(again).toMatchObject({ replayed: true, run: { id: first.run.id } });
    } finally {
      await other.execute({
        sql: "update queues set archived_at = null where id = ?",
        args: [queueId],
      });
    }
  });

  it("the same key with another body is refused (409), and writes nothing", async () => {
    await pause("body-a", { idempotencyKey: "retry-3" });
    const runs = await count("runs");
    const refused = await pause("body-b", { idempotencyKey: "retry-3" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(await count("runs")).toBe(runs);
  });
});

describe("the copy", () => {
  it("survives only as long as the triggers that keep it honest: every migration keeps all nine", async () => {
    // A rebuild of queues, routing_rules or policy_rules (drizzle-kit's CREATE __new_…; DROP;
    // RENAME for many column changes) drops their triggers with the old table; the migration
    // that does it must create them again (db/migrations/0030_pause_settings_version.sql).
    const triggers = await other.execute(
      "select tbl_name, name from sqlite_schema where type = 'trigger' and name like '%_bumps_pause_settings' order by name",
    );
    expect(triggers.rows.map((r) => `${String(r.tbl_name)}: ${String(r.name)}`)).toEqual(
      ["policy_rules", "queues", "routing_rules"].flatMap((table) =>
        ["delete", "insert", "update"].map((op) => `${table}: ${table}_${op}_bumps_pause_settings`),
      ),
    );
  });

  it("is read again after it is forgotten, and is the database's", async () => {
    forgetPauseSettings();
    expect(heldPauseSettings(agent.queueIds)).toBeNull();
    await pause("refill");
    const held = heldPauseSettings(agent.queueIds)!;
    const version = Number(
      (await other.execute("select version from pause_settings_version")).rows[0]!.version,
    );
    expect(held.version).toBe(version);
    expect(held.queueById.get(queueId)?.name).toBe(queueName);
    expect(Object.isFrozen(held.queues[0])).toBe(true);
  });
});

describe("pauses racing changes to the rules", () => {
  it("each pause obeys the rules as they were when it committed", async () => {
    // Another instance switches a deny rule on and off while 200 pauses run; each switch notes
    // the event log's last seq in its own transaction, so every pause's batch.created event can
    // be placed before or after it (SQLite commits one writer at a time, seq in commit order).
    await other.executeMultiple(`
      create table if not exists switch_log (after_seq integer not null, enabled integer not null);
      delete from switch_log;`);
    const now = Date.now();
    await other.execute({
      sql: `insert into policy_rules (id, name, queue_id, position, enabled, effect, tool_pattern,
              arg_predicates, reason, created_at, updated_at)
            values ('switched', 'Switched', null, 1, 0, 'deny', 'refund_order', '[]', null, ?, ?)`,
      args: [now, now],
    });
    let pausing = true;
    const switching = (async () => {
      for (let enabled = 1; pausing; enabled = 1 - enabled) {
        await other.batch(
          [
            { sql: "update policy_rules set enabled = ? where id = 'switched'", args: [enabled] },
            {
              sql: "insert into switch_log select coalesce(max(seq), 0), ? from events",
              args: [enabled],
            },
          ],
          "write",
        );
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    const paused: { callId: string; status: string }[] = [];
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          for (let i = 0; i < 25; i++) {
            const { call } = await pause(`race-${worker}-${i}`);
            paused.push({ callId: call.id, status: call.status });
          }
        }),
      );
    } finally {
      pausing = false;
      await switching;
      await other.execute("delete from policy_rules where id = 'switched'");
    }
    const switches = (await other.execute("select after_seq, enabled from switch_log")).rows.map(
      (r) => ({ afterSeq: Number(r.after_seq), enabled: Number(r.enabled) }),
    );
    expect(switches.length).toBeGreaterThan(5);
    const seqOf = async (callId: string) =>
      Number(
        (
          await other.execute({
            sql: "select min(e.seq) as seq from events e join calls c on c.batch_id = e.batch_id where c.id = ? and e.type = 'batch.created'",
            args: [callId],
          })
        ).rows[0]!.seq,
      );
    let denied = 0;
    for (const { callId, status } of paused) {
      const seq = await seqOf(callId);
      const inForce = switches.filter((s) => s.afterSeq < seq).at(-1)?.enabled === 1;
      expect({ callId, status }).toEqual({ callId, status: inForce ? "rejected" : "pending" });
      if (inForce) denied++;
    }
    // both states were met, or the test proved nothing
    expect(denied).toBeGreaterThan(0);
    expect(denied).toBeLessThan(paused.length);
  });
});
