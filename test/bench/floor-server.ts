import { randomUUID } from "node:crypto";
import http from "node:http";
import { createClient, type Client, type Transaction } from "@libsql/client";

// The floor: the least a server can do for the same requests, to measure Countersign against.
// A bare node:http server (no framework, no auth, no validation beyond JSON.parse) over its own
// libSQL file, with the same write discipline as Countersign (WAL, default synchronous, writes
// queued in-process and run as BEGIN IMMEDIATE transactions):
//
//   POST /api/v1/runs                  one INSERT of the pause (the batch as JSON) in a transaction,
//                                      then one SSE message written to every stream client
//   GET  /api/v1/stream                SSE
//   POST /api/v1/calls/{id}/decision   approve or reject: UPDATE … WHERE status = 'pending' AND
//                                      revision = ? RETURNING, plus an event INSERT, in one
//                                      transaction; 409 already_decided / stale_revision with the
//                                      current row when it updates nothing; wakes long-polls
//   GET  /api/v1/batches/{id}?wait=N   long-poll, woken in-process by the decision
//   POST /bench/seed {n}               n pending calls in one transaction (set-up, not measured)
//   POST /bench/decision-counts {ids}  call.decided events per call (the contention check)
//
// The paths and the response shapes the load generator reads are Countersign's, so the same
// generator drives both. Run: DATABASE_URL=file:/tmp/x.db PORT=4000 node --import tsx floor-server.ts

const port = Number(process.env.PORT) || 4000;
const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");

// FLOOR_SYNCHRONOUS=NORMAL (an experiment, not the default): no fsync per commit. The pragma is
// per connection, so the client is then held to one connection for it to stick.
const synchronous = process.env.FLOOR_SYNCHRONOUS;
const client: Client = createClient({ url, timeout: 5000, ...(synchronous && { concurrency: 1 }) });

class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
const writeLock = new Mutex();

async function write<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
  return writeLock.run(async () => {
    const tx = await client.transaction("write");
    try {
      const result = await work(tx);
      await tx.commit();
      return result;
    } finally {
      tx.close();
    }
  });
}

const streams = new Set<http.ServerResponse>();
const waiters = new Map<string, Set<() => void>>();

function broadcast(seq: number | bigint, type: string, event: Record<string, unknown>) {
  if (streams.size === 0) return;
  const bytes = Buffer.from(
    `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq: Number(seq), type, ...event })}\n\n`,
  );
  for (const res of streams) res.write(bytes);
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        resolve(
          chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")),
        );
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

type CallInput = {
  toolCallId: string;
  toolName: string;
  args: unknown;
  summary?: string;
  risks?: string[];
  costEstimate?: number;
};
type PauseInput = { externalId?: string; batch?: { calls?: CallInput[] } };

/** A batch in Countersign's wire shape, so the SSE message carries a comparable payload. */
function batchView(id: string, runId: string, input: CallInput, at: number) {
  const iso = new Date(at).toISOString();
  return {
    id,
    runId,
    kind: "action",
    status: "pending",
    outcome: null,
    queue: { id: "floor-queue", name: "floor" },
    agent: { id: "floor-agent", name: "Support bot" },
    plan: null,
    calls: [
      {
        id,
        batchId: id,
        toolCallId: input.toolCallId,
        toolName: input.toolName,
        args: input.args,
        inputSchema: null,
        summary: input.summary ?? null,
        risks: input.risks ?? [],
        costEstimate: input.costEstimate ?? null,
        metadata: null,
        status: "pending",
        revision: 1,
        actionHash: "0".repeat(64),
        requiredApprovals: 1,
        pendingEdit: null,
        votes: [],
        decision: null,
      },
    ],
    createdAt: iso,
    expiresAt: new Date(at + 86_400_000).toISOString(),
    onTimeout: "reject",
    decidedAt: null,
    cancelReason: null,
    reviewUrl: `http://127.0.0.1:${port}/review/${id}`,
  };
}

async function pause(req: http.IncomingMessage, res: http.ServerResponse) {
  const input = (await readBody(req)) as PauseInput;
  const call = input.batch?.calls?.[0];
  if (!call)
    return send(res, 400, {
      error: { code: "invalid_request", message: "batch.calls[0] is required" },
    });
  const id = randomUUID();
  const runId = randomUUID();
  const at = Date.now();
  const batch = batchView(id, runId, call, at);
  const payload = JSON.stringify(batch);
  const seq = await write(async (tx) => {
    const result = await tx.execute({
      sql: "INSERT INTO items (id, status, revision, payload, created_at) VALUES (?, 'pending', 1, ?, ?)",
      args: [id, payload, at],
    });
    return result.lastInsertRowid ?? 0;
  });
  broadcast(seq, "batch.created", {
    at: new Date(at).toISOString(),
    runId,
    batchId: id,
    callId: null,
    queueId: "floor-queue",
    actor: { kind: "agent", id: "floor-agent", name: "Support bot" },
    data: { batch },
  });
  send(res, 201, {
    id: runId,
    externalId: input.externalId ?? null,
    status: "waiting_approval",
    batches: [batch],
  });
}

async function decide(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  id: string,
  reviewer: string,
) {
  const input = (await readBody(req)) as {
    outcome?: string;
    expectedRevision?: number;
    reason?: string;
  };
  if (
    (input?.outcome !== "approve" && input?.outcome !== "reject") ||
    typeof input.expectedRevision !== "number"
  ) {
    return send(res, 400, {
      error: { code: "invalid_request", message: "outcome approve|reject and expectedRevision" },
    });
  }
  const at = Date.now();
  const status = input.outcome === "approve" ? "approved" : "rejected";
  const decided = await write(async (tx) => {
    const updated = await tx.execute({
      sql: "UPDATE items SET status = ?, decided_at = ? WHERE id = ? AND status = 'pending' AND revision = ? RETURNING id, status, revision",
      args: [status, at, id, input.expectedRevision!],
    });
    const row = updated.rows[0];
    if (!row) return null;
    const event = await tx.execute({
      sql: "INSERT INTO events (type, item_id, at, data) VALUES ('call.decided', ?, ?, ?)",
      args: [
        id,
        at,
        JSON.stringify({
          outcome: status,
          source: "reviewer",
          by: reviewer,
          reason: input.reason ?? null,
          revision: input.expectedRevision,
        }),
      ],
    });
    return { row, seq: event.lastInsertRowid ?? 0 };
  });
  if (!decided) {
    const current = await client.execute({
      sql: "SELECT id, status, revision FROM items WHERE id = ?",
      args: [id],
    });
    const row = current.rows[0];
    if (!row) return send(res, 404, { error: { code: "not_found", message: "Call" } });
    const code = row.status === "pending" ? "stale_revision" : "already_decided";
    return send(res, 409, { error: { code, message: code, current: row } });
  }
  const woken = waiters.get(id);
  if (woken) for (const wake of woken) wake();
  broadcast(decided.seq, "call.decided", {
    at: new Date(at).toISOString(),
    batchId: id,
    callId: id,
    data: { outcome: status },
  });
  send(res, 200, { call: decided.row, batch: { id, status: "decided" } });
}

/** `call.decided` events per item: the contention scenario's exactly-one-winner check. */
async function decisionCounts(req: http.IncomingMessage, res: http.ServerResponse) {
  const { ids } = (await readBody(req)) as { ids: string[] };
  const counts: Record<string, number> = {};
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const result = await client.execute({
      sql: `SELECT item_id, COUNT(*) AS n FROM events WHERE type = 'call.decided' AND item_id IN (${chunk.map(() => "?").join(", ")}) GROUP BY item_id`,
      args: chunk,
    });
    for (const row of result.rows) counts[String(row.item_id)] = Number(row.n);
  }
  send(res, 200, { counts });
}

async function readBatch(res: http.ServerResponse, id: string, wait: number) {
  const load = async () =>
    (
      await client.execute({
        sql: "SELECT id, status, revision FROM items WHERE id = ?",
        args: [id],
      })
    ).rows[0];
  const row = await load();
  if (!row) return send(res, 404, { error: { code: "not_found", message: "Batch" } });
  if (row.status !== "pending" || wait <= 0)
    return send(res, 200, { id, status: row.status === "pending" ? "pending" : "decided" });
  let set = waiters.get(id);
  if (!set) waiters.set(id, (set = new Set()));
  const mine = set;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    mine.delete(finish);
    if (mine.size === 0) waiters.delete(id);
    if (res.destroyed) return;
    load().then(
      (now) => send(res, 200, { id, status: now?.status === "pending" ? "pending" : "decided" }),
      (error) => send(res, 500, { error: { code: "internal", message: String(error) } }),
    );
  };
  const timer = setTimeout(finish, wait * 1000);
  mine.add(finish);
  res.on("close", () => {
    if (!res.writableEnded) finish();
  });
}

function openStream(res: http.ServerResponse) {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
  });
  res.write("retry: 2000\n: connected\n\n");
  streams.add(res);
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  res.on("close", () => {
    clearInterval(heartbeat);
    streams.delete(res);
  });
}

async function seed(req: http.IncomingMessage, res: http.ServerResponse) {
  const { n } = (await readBody(req)) as { n: number };
  const at = Date.now();
  const ids = Array.from({ length: n }, () => randomUUID());
  await write(async (tx) => {
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await tx.execute({
        sql: `INSERT INTO items (id, status, revision, payload, created_at) VALUES ${chunk.map(() => "(?, 'pending', 1, '{}', ?)").join(", ")}`,
        args: chunk.flatMap((id) => [id, at]),
      });
    }
  });
  send(res, 201, { calls: ids.map((id) => ({ callId: id, batchId: id, revision: 1 })) });
}

/** The caller's token, recorded as who decided (the floor authenticates no one). */
const bearer = (req: http.IncomingMessage) =>
  req.headers.authorization?.replace(/^Bearer /, "") ?? "anonymous";

const server = http.createServer((req, res) => {
  const { pathname, searchParams } = new URL(req.url ?? "/", "http://floor");
  const parts = pathname.split("/");
  const route = async () => {
    if (req.method === "GET" && pathname === "/api/health") return send(res, 200, { ok: true });
    if (req.method === "GET" && pathname === "/api/v1/stream") return openStream(res);
    if (req.method === "POST" && pathname === "/api/v1/runs") return pause(req, res);
    if (req.method === "POST" && parts[3] === "calls" && parts[5] === "decision")
      return decide(req, res, parts[4]!, bearer(req));
    if (req.method === "GET" && parts[3] === "batches" && parts[4]) {
      return readBatch(res, parts[4], Number(searchParams.get("wait") ?? 0));
    }
    if (req.method === "POST" && pathname === "/bench/seed") return seed(req, res);
    if (req.method === "POST" && pathname === "/bench/decision-counts")
      return decisionCounts(req, res);
    send(res, 404, { error: { code: "not_found", message: pathname } });
  };
  route().catch((error) => {
    console.error("floor:", error);
    if (!res.headersSent) send(res, 500, { error: { code: "internal", message: String(error) } });
    else res.destroy();
  });
});

async function main() {
  await client.execute("PRAGMA journal_mode = WAL");
  if (synchronous) await client.execute(`PRAGMA synchronous = ${synchronous}`);
  await client.executeMultiple(`
    CREATE TABLE IF NOT EXISTS items (
      id TEXT PRIMARY KEY, status TEXT NOT NULL, revision INTEGER NOT NULL,
      payload TEXT NOT NULL, created_at INTEGER NOT NULL, decided_at INTEGER
    );
    CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, item_id TEXT, at INTEGER NOT NULL, data TEXT NOT NULL
    );
  `);
  server.listen(port, "127.0.0.1", () => console.log(`floor listening on ${port}`));
}

const shutdown = () => {
  for (const res of streams) res.destroy();
  server.close();
  server.closeAllConnections();
  client.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

void main();
