import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, type Client, type ResultSet } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import * as schema from "./schema";
import { sqliteCodeOf } from "./sqlite-error";
import { reuseStreams } from "./remote-streams";
import { cacheStatements, forgetStatements } from "./statement-cache";
import { GroupCommit } from "./group-commit";
import type { Statement } from "./write-batch";
import { setting } from "@/lib/config/settings";

export type Database = LibSQLDatabase<typeof schema>;
export type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** Anything that can run a query: the database or an open transaction. */
export type Executor = Database | Transaction;

export const DEFAULT_DATABASE_URL = "file:./data/countersign.db";

/** How long one statement waits, synchronously, for another process's lock. */
const BUSY_TIMEOUT_MS = 50;
/** How long a write waits in all (its turn in this process, then the lock) before it fails busy (503). */
const WRITE_WAIT_MS = 5000;

type DatabaseHandle = {
  client: Client;
  db: Database;
  url: string;
  writeLock: Mutex;
  /** for code that writes outside writeTransaction (better-auth): its writes wait for the lock */
  lockedDb: Database;
  /** write batches, committed in groups (db/group-commit.ts); null for an in-memory database */
  groupCommit: GroupCommit | null;
};

// Next.js bundles route handlers and instrumentation separately: a module-level singleton would
// be one client per bundle, so the handle lives on globalThis.
const globalHandle = globalThis as unknown as { __countersignDb?: DatabaseHandle };

export function databaseUrl(): string {
  return setting("DATABASE_URL");
}

/** The database URL as it is safe to print: without a query string or credentials (auth tokens). */
export function databaseUrlForDisplay(url = databaseUrl()): string {
  return url.replace(/\?.*$/, "").replace(/\/\/[^@/]*@/, "//");
}

function open(): DatabaseHandle {
  const url = databaseUrl();
  if (url.startsWith("file:")) {
    cacheStatements();
    const path = url.slice("file:".length).split("?")[0]!;
    if (path && path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  }
  const authToken = setting("DATABASE_AUTH_TOKEN");
  const created = createClient({
    url,
    authToken,
    // SQLite's busy handler sleeps on the JavaScript thread, freezing every request of this
    // process while another process holds the write lock: wait only briefly here, and longer,
    // without blocking, in retryWhileBusy.
    timeout: BUSY_TIMEOUT_MS,
  });
  // over a libSQL server, statements and batches run on reused connections (db/remote-streams.ts)
  const client = /^(libsql|https?|wss?):/i.test(url)
    ? reuseStreams(created, { url, authToken })
    : created;
  const writeLock = new Mutex();
  // An in-memory database has one connection, which a group's transaction would hold from reads.
  const grouped = client !== created || !/^file::memory:|[?&]mode=memory/.test(url);
  return {
    client,
    db: drizzle(client, { schema }),
    url,
    writeLock,
    lockedDb: drizzle(writesTakeTheLock(client, writeLock), { schema }),
    groupCommit: grouped
      ? new GroupCommit({
          client: () => handle().client,
          locked: (work) => writeLock.run(work),
          isBusy,
          afterBusy: async () => {
            forgetStatements();
            await handle().client.reconnect();
          },
          waitMs: WRITE_WAIT_MS,
        })
      : null,
  };
}

/**
 * The same client, but every statement that is not a plain read, and every batch,
 * first takes the process's write lock: a write outside the queue would wait for SQLite's lock
 * synchronously while a queued transaction holds it, freezing the process (see writeTransaction).
 */
function writesTakeTheLock(client: Client, writeLock: Mutex): Client {
  const isRead = (stmt: unknown) =>
    /^\s*(select|with)\b/i.test(typeof stmt === "string" ? stmt : (stmt as { sql: string }).sql);
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property === "execute") {
        return (stmt: Parameters<Client["execute"]>[0], ...rest: unknown[]) =>
          isRead(stmt)
            ? target.execute(stmt as never, ...(rest as []))
            : writeLock.run(retryWhileBusy(() => target.execute(stmt as never, ...(rest as []))));
      }
      // No "transaction": its lock would have to last until commit, and better-auth opens none
      // on SQLite (its drizzle adapter's `transaction` option stays off).
      if (property === "batch" || property === "migrate") {
        return (...args: unknown[]) =>
          writeLock.run(
            retryWhileBusy(() =>
              (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
            ),
          );
      }
      return value.bind(target);
    },
  });
}

function handle(): DatabaseHandle {
  const current = globalHandle.__countersignDb;
  if (current && current.url === databaseUrl()) return current;
  current?.client.close();
  globalHandle.__countersignDb = open();
  return globalHandle.__countersignDb;
}

export function getDb(): Database {
  return handle().db;
}

/** The libSQL client under getDb(), for reads sent as one batch (db/prepared-read.ts). */
export function getClient(): Client {
  return handle().client;
}

/** The database for libraries that write on their own (better-auth); see writesTakeTheLock. */
export function getLockedDb(): Database {
  return handle().lockedDb;
}

/** Applies the connection settings the embedded database needs (WAL lets readers run beside the writer). */
export async function configureDatabase(): Promise<void> {
  const { client, url } = handle();
  if (!url.startsWith("file:")) return;
  await client.execute("PRAGMA journal_mode = WAL");
}

export function closeDb(): void {
  globalHandle.__countersignDb?.client.close();
  globalHandle.__countersignDb = undefined;
}

/**
 * Runs `work` in one write transaction: `@libsql/client` opens its default "write" transactions
 * with BEGIN IMMEDIATE, so the write lock is taken up front and reads inside see the latest commit.
 *
 * Writes inside one process are queued here first, and they must be: the embedded driver waits
 * for SQLite's write lock synchronously, so a second transaction of the same process would block
 * the event loop that the first one needs in order to commit, until the busy timeout fails it.
 * Other processes are kept apart by SQLite's own lock. Correctness comes from the conditional
 * writes; the queue is what keeps one process live.
 */
export async function writeTransaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
  const { db, writeLock } = handle();
  let started = false;
  return writeLock.run(
    retryWhileBusy(
      () =>
        db.transaction((tx) => {
          started = true;
          return work(tx);
        }),
      // Only a BEGIN that found the lock taken is retried: once `work` ran, its reads and any
      // effects on memory belong to that attempt.
      () => !started,
    ),
  );
}

/**
 * Runs one self-contained write (a batch: db/write-batch.ts) with the retries of a busy database,
 * in this process's write queue. On the embedded file the queue is required (see
 * writeTransaction: a synchronous wait for SQLite's lock must never stall a transaction of this
 * process that holds it). Over a libSQL server one batch in flight per process is also what
 * keeps sqld live: with 16 batches of one process in flight at once, sqld 0.24 spun for about
 * five seconds at a time with every request waiting (measured by the bench's closed loop), while
 * queued batches ran steadily at the same throughput, which the machine's CPU bounds anyway.
 */
export function runWrite<T>(write: (client: Client) => Promise<T>): Promise<T> {
  const { client, writeLock } = handle();
  const attempt = retryWhileBusy(() => write(client));
  return writeLock.run(attempt);
}

/**
 * One write batch (db/write-batch.ts), all or nothing, committed together with the batches that
 * are waiting beside it (db/group-commit.ts: one transaction, each batch in its savepoint; one
 * fsync on the embedded file, one request over a libSQL server).
 */
export function runWriteBatch(statements: Statement[]): Promise<ResultSet[]> {
  const { groupCommit } = handle();
  if (groupCommit) return groupCommit.write(statements);
  return runWrite((client) => client.batch(statements, "write"));
}

/** The group commit's counts (tests, the bench); null for an in-memory database. */
export function groupCommitStats(): GroupCommit["stats"] | null {
  return handle().groupCommit?.stats ?? null;
}

/**
 * `attempt`, tried again while it fails because another process holds the lock (a failed
 * statement, batch or BEGIN wrote nothing), until WRITE_WAIT_MS after the call; then its
 * SQLITE_BUSY goes to the caller, who answers 503 (lib/errors.ts). The clock starts before the
 * queue of this process, so writes queued behind a long lock fail together instead of each
 * waiting its own full time.
 */
function retryWhileBusy<T>(
  attempt: () => Promise<T>,
  retryable: () => boolean = () => true,
): () => Promise<T> {
  const giveUpAt = Date.now() + WRITE_WAIT_MS;
  return async () => {
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      try {
        return await attempt();
      } catch (error) {
        if (!isBusy(error)) throw error;
        // The embedded driver leaves a statement that failed busy unfinished on its connection,
        // and every later COMMIT there fails ("SQL statements in progress"): the process could
        // never write again (npm run chaos found it). Fresh connections drop it; safe here, as
        // writes are queued and no transaction is holding a connection.
        forgetStatements();
        await handle().client.reconnect();
        if (!retryable() || Date.now() + pause > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  };
}

/** Runs `attempt` again while another process holds the lock, for up to WRITE_WAIT_MS (start-up work). */
export function untilNotBusy<T>(attempt: () => Promise<T>): Promise<T> {
  return retryWhileBusy(attempt)();
}

function isBusy(error: unknown): boolean {
  return sqliteCodeOf(error)?.startsWith("SQLITE_BUSY") ?? false;
}

class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
