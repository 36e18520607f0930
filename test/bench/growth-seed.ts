import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  fsyncSync,
  openSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
} from "node:fs";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client, type InValue, type Transaction } from "@libsql/client";
import { closeDb, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { decideCall } from "@/lib/approvals/decide-call";
import { authenticate, type Actor } from "@/lib/auth/actor";
import { claimRun } from "@/lib/runs/claim-run";
import { completeRun } from "@/lib/runs/complete-run";
import { createRun } from "@/lib/runs/create-run";
import { recordToolEvent } from "@/lib/runs/record-tool-event";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// The databases the growth benchmark compares: "empty" (a team, its agents and a working set of
// pending cards) and "grown" (the same, plus months of decided history: `decidedBatches` settled
// runs and `events` log rows). History is written fast: a handful of runs go through the real
// verbs once (the templates), and their rows, every column as the real code wrote it, are copied
// with new ids and older times in multi-row INSERTs, a large transaction at a time. Seeding takes
// a minute or two, so both files are cached in the temp directory, keyed by the migrations, the
// plan and SEED_VERSION; each benchmark run works on copies.

export type SeedPlan = { events: number; decidedBatches: number; pending: number };

export type GrowthActors = {
  agentKey: string;
  reviewerToken: string;
  agentId: string;
  /** the bench reviewer's queues (two of the four; the history spreads over all four) */
  reviewerQueueIds: string[];
  /** a tool that a quarter of the history's batches use, for the filtered history page */
  filterTool: string;
};

export type SeededDatabases = {
  empty: string;
  grown: string;
  actors: GrowthActors;
  /** when the templates were made: cached pending deadlines are moved by now − seededAt */
  seededAt: number;
  seedSeconds: number;
  cached: boolean;
  grownCounts: { events: number; batches: number; bytes: number };
};

/** Bump when the seeded content changes in a way the cache key would not see. */
const SEED_VERSION = 1;
const HISTORY_SPAN_MS = 90 * 24 * 3600 * 1000;
const log = (message: string) => console.error(message);

const QUEUES = [
  {
    name: "payments",
    tool: "refund_order",
    args: { orderId: "A-1001", amount: 25, currency: "EUR", reason: "Damaged in transit" },
  },
  {
    name: "deploys",
    tool: "merge_pull_request",
    args: { repo: "acme/checkout", number: 4242, method: "squash" },
  },
  {
    name: "support",
    tool: "send_email",
    args: {
      to: "customer@example.com",
      subject: "Your refund",
      body: "Hello, your refund of 25 EUR is on its way. Regards, Support",
    },
  },
  {
    name: "data",
    tool: "delete_files",
    args: { paths: ["/exports/2025-01.csv", "/exports/2025-02.csv"], recursive: false },
  },
] as const;

/* ------------------------------------------------------------------ the cache */

function cacheKey(plan: SeedPlan): string {
  const hash = createHash("sha256").update(JSON.stringify({ SEED_VERSION, plan }));
  const migrations = join(process.cwd(), "db", "migrations");
  for (const dir of [migrations, join(migrations, "meta")])
    for (const name of readdirSync(dir).sort()) {
      if (!name.endsWith(".sql") && name !== "_journal.json") continue;
      hash.update(name).update(readFileSync(join(dir, name)));
    }
  return hash.digest("hex").slice(0, 16);
}

type CacheMeta = Omit<SeededDatabases, "empty" | "grown" | "cached">;

/** The two seeded files, from the cache when a seed with the same key is there. */
export async function seededDatabases(plan: SeedPlan): Promise<SeededDatabases> {
  const dir = join(tmpdir(), `countersign-bench-growth-${cacheKey(plan)}`);
  const files = { empty: join(dir, "empty.db"), grown: join(dir, "grown.db") };
  const metaFile = join(dir, "meta.json");
  if (existsSync(metaFile)) {
    log(`growth: using the seeded databases cached in ${dir}`);
    const meta = JSON.parse(readFileSync(metaFile, "utf8")) as CacheMeta;
    return { ...files, ...meta, cached: true };
  }
  // Built beside the cache and renamed into place, so an interrupted seed leaves no half cache.
  const work = `${dir}.tmp-${process.pid}`;
  const removeWork = () => rmSync(work, { recursive: true, force: true });
  removeWork();
  mkdirSync(work, { recursive: true });
  // a signal handler's process.exit skips `finally`: the half-made gigabyte goes anyway
  process.once("exit", removeWork);
  try {
    const meta = await seed(plan, work);
    writeFileSync(join(work, "meta.json"), JSON.stringify(meta));
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    return { ...files, ...meta, cached: false };
  } finally {
    removeWork();
    process.off("exit", removeWork);
  }
}

/**
 * A private copy of a seeded file for one run (the benchmark writes), as a DATABASE_URL. The
 * working set's deadlines move forward by the cache's age, so the sweeper does not expire cards
 * that were an hour from their deadline when the cache was made.
 */
export async function copyForRun(file: string, dir: string, seededAt: number): Promise<string> {
  const target = join(dir, "countersign.db");
  copyFileSync(file, target);
  // On disk before the server starts: the kernel writing back a fresh copy of most of a
  // gigabyte otherwise stalls the server's own fsyncs (it doubled the grown start-up time).
  const fd = openSync(target, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const url = `file:${target}`;
  const client = createClient({ url });
  try {
    await client.execute({
      sql: "UPDATE batches SET expires_at = expires_at + ? WHERE status = 'pending'",
      args: [Math.max(0, Date.now() - seededAt)],
    });
    await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    client.close();
  }
  return url;
}

/* ------------------------------------------------------------------ seeding */

async function seed(plan: SeedPlan, dir: string): Promise<CacheMeta> {
  const started = Date.now();
  const url = `file:${join(dir, "base.db")}`;
  closeDb();
  const previousUrl = process.env.DATABASE_URL;
  process.env.DATABASE_URL = url;
  let setup: Awaited<ReturnType<typeof makeTemplates>>;
  try {
    await migrateDatabase();
    log("growth: seeding — the team and the template runs, through the real verbs…");
    setup = await makeTemplates();
  } finally {
    closeDb();
    if (previousUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previousUrl;
  }

  const client = createClient({ url });
  try {
    // A throwaway cache file: durability per commit buys nothing here.
    await client.execute("PRAGMA synchronous = OFF");
    await client.execute("PRAGMA cache_size = -131072");
    const pending = await Promise.all(setup.pendingRunIds.map((id) => readRun(client, id)));
    const working = Math.max(0, plan.pending - pending.length);
    log(`growth: seeding — ${plan.pending} pending cards (the working set of both databases)…`);
    await copyRuns(client, working, (i) => ({
      template: pending[i % pending.length]!,
      at: setup.seededAt + i,
      events: pending[i % pending.length]!.events.length,
    }));
    await checkpoint(client);
    copyFileSync(join(dir, "base.db"), join(dir, "empty.db"));

    const decided = await Promise.all(setup.decidedRunIds.map((id) => readRun(client, id)));
    const from = setup.seededAt - HISTORY_SPAN_MS;
    const step = HISTORY_SPAN_MS / Math.max(1, plan.decidedBatches);
    log(
      `growth: seeding — ${plan.decidedBatches.toLocaleString("en-US")} decided batches, ${plan.events.toLocaleString("en-US")} events of history…`,
    );
    await copyRuns(client, plan.decidedBatches, (i) => ({
      template: decided[i % decided.length]!,
      at: Math.round(from + i * step),
      // spread the events evenly: batch i gets its share of the total, rounded
      events:
        Math.floor(((i + 1) * plan.events) / plan.decidedBatches) -
        Math.floor((i * plan.events) / plan.decidedBatches),
    }));
    await checkpoint(client);
    const count = async (table: string) =>
      Number((await client.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
    const grownCounts = {
      events: await count("events"),
      batches: await count("batches"),
      bytes: 0,
    };
    client.close();
    for (const suffix of ["-wal", "-shm"]) rmSync(join(dir, `base.db${suffix}`), { force: true });
    renameSync(join(dir, "base.db"), join(dir, "grown.db"));
    grownCounts.bytes = statSync(join(dir, "grown.db")).size;
    const seedSeconds = (Date.now() - started) / 1000;
    log(`growth: seeded in ${seedSeconds.toFixed(0)} s`);
    return { actors: setup.actors, seededAt: setup.seededAt, seedSeconds, grownCounts };
  } finally {
    client.close();
  }
}

async function checkpoint(client: Client) {
  await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
}

/**
 * The team (four queues, two agents, two reviewers) and, in each queue, one run taken through
 * its whole life (pause → approve → claim → tool result → complete), plus one pending pause in
 * each of the bench reviewer's queues: the rows that seeding copies.
 */
async function makeTemplates() {
  const queues = [];
  for (const q of QUEUES) queues.push(await makeQueue({ name: q.name }));
  const [payments, deploys, support, data] = queues as [
    (typeof queues)[0],
    (typeof queues)[0],
    (typeof queues)[0],
    (typeof queues)[0],
  ];
  const dana = await makeReviewer({
    name: "Dana Reviewer",
    queues: [{ name: payments.name }, { name: deploys.name }],
  });
  const sam = await makeReviewer({
    name: "Sam Reviewer",
    queues: [{ name: support.name }, { name: data.name }],
  });
  const benchAgent = await makeAgentKey({
    name: "Support bot",
    queues: [payments.name, deploys.name],
  });
  const opsAgent = await makeAgentKey({ name: "Ops bot", queues: [support.name, data.name] });
  const actor = (token: string) =>
    authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));
  const agents = [await actor(benchAgent.key), await actor(opsAgent.key)];
  const reviewers = [await actor(dana.token), await actor(sam.token)];

  const seededAt = Date.now();
  const decidedRunIds: string[] = [];
  const pendingRunIds: string[] = [];
  for (const [i, q] of QUEUES.entries()) {
    const team = i < 2 ? 0 : 1;
    decidedRunIds.push(await wholeRun(agents[team]!, reviewers[team]!, q, i));
    if (team === 0) pendingRunIds.push((await pause(agents[team]!, q, `pending-${i}`)).id);
  }
  return {
    seededAt,
    decidedRunIds,
    pendingRunIds,
    actors: {
      agentKey: benchAgent.key,
      reviewerToken: dana.token,
      agentId: benchAgent.id,
      reviewerQueueIds: [payments.id, deploys.id],
      filterTool: QUEUES[1].tool,
    } satisfies GrowthActors,
  };
}

type QueueSpec = (typeof QUEUES)[number];

async function pause(agent: Actor, q: QueueSpec, externalId: string) {
  const { run } = await createRun(agent, {
    externalId,
    conversationId: `conversation-${externalId}`,
    metadata: { model: "gpt-5", ticket: `T-${externalId}`, user: "customer-4711" },
    batch: {
      queue: q.name,
      calls: [
        {
          toolCallId: `call-${externalId}`,
          toolName: q.tool,
          args: q.args,
          summary: `${q.tool.replaceAll("_", " ")} (${externalId})`,
          risks: ["Hard to undo once done"],
          costEstimate: 25,
        },
      ],
      checkpoint: { messages: [{ role: "user", content: "Please take care of it." }] },
    },
  });
  return run;
}

async function wholeRun(agent: Actor, reviewer: Actor, q: QueueSpec, i: number) {
  const run = await pause(agent, q, `template-${i}`);
  const runId = run.id;
  const call = run.batches![0]!.calls[0]!;
  await decideCall(reviewer, call.id, {
    outcome: "approve",
    expectedRevision: call.revision,
    reason: "Checked against the ticket.",
  });
  const claim = await claimRun(agent, runId, { workerId: "worker-1" });
  await recordToolEvent(agent, runId, {
    claimToken: claim.claimToken,
    type: "tool.completed",
    toolCallId: call.toolCallId,
    result: { ok: true, reference: `R-${i}` },
  });
  await completeRun(agent, runId, {
    claimToken: claim.claimToken,
    outcome: "completed",
    result: { summary: "Done." },
  });
  return runId;
}

/* ------------------------------------------------------------------ copying rows */

type Row = Record<string, InValue>;
type TemplateRun = {
  run: Row;
  batches: Row[];
  calls: Row[];
  votes: Row[];
  events: Row[];
  /** integer columns holding times near the template's creation are shifted by the copy */
  madeAt: number;
  /** what pads a run out to its share of the log: the agent reporting another tool result */
  filler: Row;
};

const rowsOf = async (client: Client, sql: string, args: InValue[]) =>
  (await client.execute({ sql, args })).rows.map((r) => ({ ...r }) as Row);

async function readRun(client: Client, runId: string): Promise<TemplateRun> {
  const [run] = await rowsOf(client, "SELECT * FROM runs WHERE id = ?", [runId]);
  if (!run) throw new Error(`No template run ${runId}`);
  const batches = await rowsOf(client, "SELECT * FROM batches WHERE run_id = ?", [runId]);
  const calls = await rowsOf(client, "SELECT * FROM calls WHERE run_id = ?", [runId]);
  const votes = await rowsOf(
    client,
    "SELECT * FROM votes WHERE call_id IN (SELECT id FROM calls WHERE run_id = ?)",
    [runId],
  );
  // seq is the log's own: every copy gets the next ones
  const events = (
    await rowsOf(client, "SELECT * FROM events WHERE run_id = ? ORDER BY seq", [runId])
  ).map(({ seq: _seq, ...rest }) => rest);
  const filler = events.find((e) => e.type === "tool.completed") ?? events[events.length - 1]!;
  return { run, batches, calls, votes, events, madeAt: Number(run.created_at), filler };
}

/** A UUIDv7 for time `ms`: copies sort by their (older) time, like ids made back then. */
function uuidv7At(ms: number): string {
  const hex = ms.toString(16).padStart(12, "0") + randomBytes(10).toString("hex");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const DAY = 24 * 3600 * 1000;

/** One row copied: new ids (also inside JSON text), times moved by `shift`. */
function copyRow(
  row: Row,
  ids: Map<string, string>,
  pattern: RegExp,
  shift: number,
  madeAt: number,
) {
  const copy: Row = {};
  for (const [column, value] of Object.entries(row)) {
    if (typeof value === "string") {
      copy[column] = ids.has(value)
        ? ids.get(value)!
        : value.replace(pattern, (id) => ids.get(id)!);
    } else if (typeof value === "number" && Math.abs(value - madeAt) < DAY) {
      copy[column] = value + shift;
    } else copy[column] = value;
  }
  return copy;
}

/**
 * `n` event rows for one copy of `template`: its own, cut short, or with more tool results
 * reported after its first one (before the run completes).
 */
function eventsOf(template: TemplateRun, n: number): Row[] {
  const own = template.events;
  if (n <= own.length) return own.slice(0, n);
  const at = own.indexOf(template.filler) + 1;
  const more = Array.from({ length: n - own.length }, (_, k) => ({
    ...template.filler,
    at: Number(template.filler.at) + k + 1,
  }));
  return [...own.slice(0, at), ...more, ...own.slice(at)];
}

type CopyPlan = { template: TemplateRun; at: number; events: number };

const INSERT_ROWS = 500;
const TRANSACTION_EVENTS = 100_000;

/**
 * `count` copies of template runs (run, batches, calls, votes, `events` event rows: the template's,
 * cut short or padded with copies of its last one), inserted with multi-row INSERTs.
 */
async function copyRuns(client: Client, count: number, planOf: (i: number) => CopyPlan) {
  const pending = new Map<string, Row[]>();
  const order = ["runs", "batches", "calls", "votes", "events"];
  let queuedEvents = 0;
  let tx: Transaction = await client.transaction("write");
  let open = true;
  let lastLog = Date.now();

  const flush = async (table: string, all: boolean) => {
    const rows = pending.get(table) ?? [];
    while (rows.length >= INSERT_ROWS || (all && rows.length > 0)) {
      const chunk = rows.splice(0, INSERT_ROWS);
      const columns = Object.keys(chunk[0]!);
      const placeholders = `(${columns.map(() => "?").join(",")})`;
      await tx.execute({
        sql: `INSERT INTO ${table} (${columns.join(",")}) VALUES ${chunk.map(() => placeholders).join(",")}`,
        args: chunk.flatMap((row) => columns.map((c) => row[c] ?? null)),
      });
    }
  };
  const flushAll = async (all: boolean) => {
    // parents before children, so the foreign keys always point at rows already written
    for (const table of order) await flush(table, all);
  };

  try {
    for (let i = 0; i < count; i++) {
      const { template, at, events } = planOf(i);
      const ids = new Map<string, string>();
      const idOf = (row: Row) => {
        const id = String(row.id);
        ids.set(id, uuidv7At(at));
      };
      idOf(template.run);
      template.batches.forEach(idOf);
      template.calls.forEach(idOf);
      template.votes.forEach(idOf);
      const pattern = new RegExp([...ids.keys()].join("|"), "g");
      const shift = at - template.madeAt;
      const add = (table: string, row: Row) => {
        let rows = pending.get(table);
        if (!rows) pending.set(table, (rows = []));
        rows.push(copyRow(row, ids, pattern, shift, template.madeAt));
      };
      add("runs", template.run);
      template.batches.forEach((r) => add("batches", r));
      template.calls.forEach((r) => add("calls", r));
      template.votes.forEach((r) => add("votes", r));
      for (const event of eventsOf(template, events)) add("events", event);
      queuedEvents += events;
      await flushAll(false);
      if (queuedEvents >= TRANSACTION_EVENTS || i === count - 1) {
        await flushAll(true);
        await tx.commit();
        open = false;
        if (i < count - 1) {
          tx = await client.transaction("write");
          open = true;
        }
        queuedEvents = 0;
      }
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(
          `growth:   ${(i + 1).toLocaleString("en-US")} of ${count.toLocaleString("en-US")} runs`,
        );
      }
    }
  } finally {
    if (open) tx.close();
  }
}
