import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, LibsqlError } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getClient, groupCommitStats } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { changedRow, guard, StateMoved, statement, writeBatch } from "@/db/write-batch";
import { chainRows, verifyChain } from "@/lib/audit/verify-chain";
import { SYSTEM_ACTOR, eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { startSqld, sqldBinary, type Sqld } from "../bench/sqld-server";
import { freshDatabase } from "../support/database";

// Group commit (db/group-commit.ts): write batches asked for at the same time on the embedded
// file share one transaction and one fsync, each in its own savepoint. Each batch must keep
// exactly the outcome it has alone: all or nothing, its guards checked against every batch
// committed before it (those of its own group included), its own error and no one else's. Over
// a libSQL server (sqld) a group is one request (db/remote-streams.ts runGroupBatch): the same
// tests run there.

const sqldAvailable = (() => {
  try {
    sqldBinary();
    return true;
  } catch {
    return false;
  }
})();

const rows = async (sql: string) => (await getClient().execute(sql)).rows.map((r) => r[0]);
const stats = () => ({ ...groupCommitStats()! });

/** The batches `make` builds, asked for at the same time (as concurrent requests do). */
async function atOnce<T>(...writes: (() => Promise<T>)[]) {
  const before = stats();
  const settled = await Promise.allSettled(writes.map((write) => write()));
  const after = stats();
  return { settled, groups: after.groups - before.groups, batches: after.batches - before.batches };
}

function createScratch() {
  return writeBatch([
    statement("create table scratch (id text primary key, n int not null)"),
    statement("insert into scratch values ('counter', 0)"),
  ]);
}

describe("group commit on the embedded file", () => {
  let databaseUrl: string;
  beforeAll(async () => {
    databaseUrl = await freshDatabase("group-commit");
    await createScratch();
  });
  afterAll(() => {
    closeDb();
    rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
  });

  groupCommitTests();

  it("waits out another process's write lock, then commits what queued meanwhile", async () => {
    const other = createClient({ url: databaseUrl });
    const held = await other.transaction("write");
    await held.execute("insert into scratch values ('other', 1)");
    const writes = Promise.all(
      ["e1", "e2", "e3"].map((id) =>
        writeBatch([statement("insert into scratch values (?, 1)", id)]),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await held.commit();
    other.close();
    await writes;
    expect(
      await rows("select id from scratch where id in ('other', 'e1', 'e2', 'e3') order by id"),
    ).toEqual(["e1", "e2", "e3", "other"]);
  });
});

describe.skipIf(!sqldAvailable).each(["ws", "http"])("group commit over sqld (%s)", (scheme) => {
  let sqld: Sqld;
  const previousUrl = process.env.DATABASE_URL;
  beforeAll(async () => {
    sqld = await startSqld();
    closeDb();
    process.env.DATABASE_URL = sqld.url.replace(/^http/, scheme);
    await migrateDatabase();
    await createScratch();
  });
  afterAll(async () => {
    closeDb();
    await sqld?.stop();
    if (previousUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previousUrl;
  });

  groupCommitTests();
});

function groupCommitTests() {
  it("commits batches asked for together in one transaction; a guard aborts only its own batch", async () => {
    const { settled, groups, batches } = await atOnce(
      () => writeBatch([statement("insert into scratch values ('a1', 1)")]),
      () =>
        writeBatch([
          statement("insert into scratch values ('b1', 1)"),
          statement("update scratch set n = 1 where id = 'nobody'"),
          changedRow(),
        ]),
      () =>
        writeBatch([
          statement("insert into scratch values ('c1', 1)"),
          statement("insert into scratch values ('c2', 1)"),
        ]),
    );
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(StateMoved);
    expect({ groups, batches }).toEqual({ groups: 1, batches: 3 });
    expect(await rows("select id from scratch where id <> 'counter' order by id")).toEqual([
      "a1",
      "c1",
      "c2",
    ]);
    expect(await rows("select count(*) from write_guards")).toEqual([0]);
  });

  it("checks each batch's compare-and-swap against the batches before it in its group: one winner", async () => {
    const cas = () =>
      writeBatch([
        statement("update scratch set n = n + 1 where id = 'counter' and n = 0"),
        changedRow(),
        statement("insert into scratch values (?, 0)", `winner-${Math.random()}`),
      ]);
    const { settled, groups } = await atOnce(cas, cas, cas, cas, cas);
    expect(groups).toBe(1);
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    for (const lost of settled.filter((s) => s.status === "rejected"))
      expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(StateMoved);
    expect(await rows("select n from scratch where id = 'counter'")).toEqual([1]);
    expect(await rows("select count(*) from scratch where id like 'winner-%'")).toEqual([1]);
  });

  it("gives a batch whose statement fails the same error it gets alone, and commits the others", async () => {
    const duplicate = () => writeBatch([statement("insert into scratch values ('a1', 2)")]);
    const alone = await duplicate().catch((error: unknown) => error);
    expect(alone).toBeInstanceOf(LibsqlError);
    const { settled, groups } = await atOnce(
      () => writeBatch([statement("insert into scratch values ('d1', 1)")]),
      duplicate,
      () => writeBatch([statement("insert into scratch values ('d2', 1)")]),
    );
    expect(groups).toBe(1);
    const grouped = (settled[1] as PromiseRejectedResult).reason as LibsqlError;
    expect(grouped.constructor).toBe((alone as LibsqlError).constructor);
    expect(grouped.code).toBe((alone as LibsqlError).code);
    expect(grouped.message).toBe((alone as LibsqlError).message);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await rows("select n from scratch where id = 'a1'")).toEqual([1]);
    expect(await rows("select count(*) from scratch where id in ('d1', 'd2')")).toEqual([2]);
  });

  it("gives a group's events seq in the order their batches were asked for, chained without a gap from an aborted batch", async () => {
    const event = (label: string) =>
      eventRows({ type: "test.group", queueId: null, actor: SYSTEM_ACTOR, data: { label } });
    const [first] = await rows("select coalesce(max(seq), 0) from events");
    const { settled, groups } = await atOnce(
      () => commit([event("one")]),
      () => commit([event("aborted"), guard("1 = 0")]),
      () => commit([event("two"), event("three")]),
      () => commit([event("four")]),
    );
    expect(groups).toBe(1);
    expect(settled.map((s) => s.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const written = await getClient().execute({
      sql: "select seq, json_extract(data, '$.label') from events where seq > ? order by seq",
      args: [first!],
    });
    expect(written.rows.map((r) => r[1])).toEqual(["one", "two", "three", "four"]);
    expect(written.rows.map((r) => Number(r[0]) - Number(first))).toEqual([1, 2, 3, 4]);
    const verdict = await verifyChain(chainRows(getClient()));
    expect(verdict.ok).toBe(true);
  });
}
