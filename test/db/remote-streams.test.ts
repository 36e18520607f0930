import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@libsql/client";
import { reuseStreams } from "@/db/remote-streams";
import { startSqld, sqldBinary, type Sqld } from "../bench/sqld-server";

// db/remote-streams.ts: over a libSQL server, statements and batches run on reused connections
// (sqld opens a new SQLite connection, schema read and all, for every new stream), and a batch is
// still one all-or-nothing transaction.

const available = (() => {
  try {
    sqldBinary();
    return true;
  } catch {
    return false;
  }
})();

let sqld: Sqld | undefined;

beforeAll(async () => {
  if (available) sqld = await startSqld();
});
afterAll(async () => {
  await sqld?.stop();
});

describe.skipIf(!available).each(["http", "ws"])("over %s", (scheme) => {
  let client: Client;
  beforeAll(async () => {
    const url = sqld!.url.replace(/^http/, scheme);
    client = reuseStreams(createClient({ url }), { url });
    await client.execute(
      `create table if not exists items_${scheme} (id integer primary key, name text not null)`,
    );
  });
  afterAll(() => client.close());

  it("runs one request after another on the same connection", async () => {
    // last_insert_rowid() belongs to the connection that inserted (0 on a new one)
    const table = `items_${scheme}`;
    await client.execute({ sql: `insert into ${table} (id, name) values (?, ?)`, args: [42, "x"] });
    expect((await client.execute("select last_insert_rowid()")).rows[0]![0]).toBe(42);
    const [rows] = await client.batch(["select last_insert_rowid()"], "deferred");
    expect(rows!.rows[0]![0]).toBe(42);
    await client.execute({ sql: `delete from ${table} where id = ?`, args: [42] });
  });

  it("keeps a failed batch all-or-nothing, and the next batch runs outside any transaction", async () => {
    const table = `items_${scheme}`;
    await expect(
      client.batch(
        [
          { sql: `insert into ${table} (id, name) values (?, ?)`, args: [1, "kept?"] },
          { sql: `insert into ${table} (id, name) values (?, ?)`, args: [2, null] },
        ],
        "write",
      ),
    ).rejects.toThrow(/NOT NULL/);
    expect((await client.execute(`select count(*) from ${table}`)).rows[0]![0]).toBe(0);
    const [inserted] = await client.batch(
      [{ sql: `insert into ${table} (id, name) values (?, ?) returning id`, args: [3, "three"] }],
      "write",
    );
    expect(inserted!.rows[0]![0]).toBe(3);
    // committed: seen by another client's new connection
    const other = createClient({ url: sqld!.url });
    try {
      expect((await other.execute(`select name from ${table} where id = 3`)).rows[0]![0]).toBe(
        "three",
      );
    } finally {
      other.close();
    }
  });

  it("serves many requests at once (more than it runs at a time), each on a connection of its own", async () => {
    const table = `items_${scheme}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2
          ? client.batch(
              [{ sql: `insert into ${table} (id, name) values (?, ?)`, args: [100 + i, `n${i}`] }],
              "write",
            )
          : client.batch([`select count(*) from ${table}`, "select 1"], "deferred"),
      ),
    );
    expect(results).toHaveLength(50);
    expect(
      (await client.execute(`select count(*) from ${table} where id >= 100`)).rows[0]![0],
    ).toBe(25);
  });
});
