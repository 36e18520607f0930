import { afterAll, beforeAll, expect, it } from "vitest";
import { getClient } from "@/db/client";
import { runAdminCli } from "../support/admin-cli";
import { freshDatabase } from "../support/database";
import { makeTeam } from "../support/factories";
import { apiClient, refundBatch } from "../support/http";
import { waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";

// The anchor kept outside the database (lib/audit/chain-head.ts): the server logs the event log's
// chain head at start and every AUDIT_HEAD_LOG_MS when it moved, and a logged head is what
// `audit verify --anchor` checks the chain against.

let server: TestServer;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase("chain-head-log");
  server = await startServer({ databaseUrl, env: { AUDIT_HEAD_LOG_MS: "100" } });
}, 60_000);

afterAll(() => server?.stop());

type HeadLine = { msg: string; chainHead: { seq: number; hash: string } };

const headLines = (): HeadLine[] =>
  server
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{") && line.includes('"chainHead"'))
    .map((line) => JSON.parse(line) as HeadLine);

it("logs the chain head at start and when it moves, and verify accepts it as an anchor", async () => {
  await waitUntil(async () => headLines().length > 0, { what: "the first chain head line" });
  expect(headLines()[0]!.msg).toBe("Event log chain head");

  const { agent } = await makeTeam();
  const created = await apiClient(server.baseUrl, agent.key).post("/runs", {
    batch: refundBatch(),
  });
  expect(created.status).toBe(201);
  const [last] = (
    await getClient().execute("select seq, hash from events order by seq desc limit 1")
  ).rows;
  const head = { seq: Number(last![0]), hash: String(last![1]) };
  await waitUntil(async () => headLines().some((l) => l.chainHead.seq === head.seq), {
    what: "a chain head line for the new events",
  });
  expect(headLines().find((l) => l.chainHead.seq === head.seq)!.chainHead).toEqual(head);
  // once per move: no line repeats the head it logged last
  const seqs = headLines().map((l) => l.chainHead.seq);
  expect(new Set(seqs).size).toBe(seqs.length);

  const anchored = await runAdminCli(
    databaseUrl,
    "audit",
    "verify",
    "--anchor",
    `${head.seq}:${head.hash}`,
  );
  expect(anchored.code).toBe(0);
});
