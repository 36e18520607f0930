import * as hrana from "@libsql/hrana-client";
import type { Client, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import { LibsqlBatchError, LibsqlError } from "@libsql/core/api";
import { expandConfig } from "@libsql/core/config";
import { encodeBaseUrl } from "@libsql/core/uri";
import { ResultSetImpl, transactionModeToBegin } from "@libsql/core/util";

// Over a libSQL server (sqld), every Hrana stream is a database connection of its own on the
// server. @libsql/client opens a stream for each execute() and batch() and closes it after, and
// for each one sqld opens a new SQLite connection, which reads the whole schema again before its
// first statement: with this schema that was most of sqld's CPU per write (test/bench/sqld-cost.ts:
// `select 1` cost sqld 0.75 ms of CPU on a new stream, 0.13 ms on an open one; a pause 3.0 ms).
//
// So the database's execute() and batch() run on streams kept open and reused here, each carrying
// one request at a time: a stream is taken from the idle ones (or opened), used for one statement
// or one batch, and given back. A batch is still one request and one transaction (BEGIN … COMMIT,
// with ROLLBACK when any statement fails, as @libsql/client sends it), so nothing about the
// atomicity of a write changes (lib/README.md, invariant 2); only the connection it runs on is
// reused, as an embedded database's is. A stream that failed in any way is closed, never reused.
// Interactive transactions, migrations and everything else stay on @libsql/client's own streams.

/** Idle streams kept per client; more are opened while more requests are in flight at once. */
const MAX_IDLE_STREAMS = 8;
/** Requests in flight at once per client, as @libsql/client's own default; the rest wait their turn. */
const MAX_IN_FLIGHT = 20;
/**
 * sqld forgets a Hrana-over-HTTP stream that has been idle for a while (its baton expires; over
 * WebSockets a stream lives as long as the connection): older idle HTTP streams are closed and a
 * new one opened instead, well before that.
 */
const HTTP_IDLE_MS = 5_000;

type Idle = { stream: hrana.Stream; since: number };

/** What a server answers about a stream it no longer has (sqld: idle for 10 s); nothing ran. */
const FORGOTTEN_STREAM = /stream has expired|stream not found|invalid baton/i;

/** Statements after which a connection is not as a fresh one would be (a transaction, a pragma). */
const CHANGES_CONNECTION = /^\s*(begin|savepoint|pragma|attach|detach)\b/i;

/**
 * `client` (made by createClient for a remote URL) with its execute() and batch() running on
 * reused streams; close() and reconnect() also drop them.
 */
export function reuseStreams(
  client: Client,
  config: { url: string; authToken?: string | undefined },
): Client {
  const expanded = expandConfig(config, true);
  const overHttp = expanded.scheme === "http" || expanded.scheme === "https";
  const url = encodeBaseUrl(expanded.scheme, expanded.authority, expanded.path);
  const open = () =>
    overHttp ? hrana.openHttp(url, expanded.authToken) : hrana.openWs(url, expanded.authToken);
  let connection: hrana.Client = open();
  let idle: Idle[] = [];

  const take = (): hrana.Stream => {
    const now = Date.now();
    while (idle.length > 0) {
      const { stream, since } = idle.pop()!;
      if (!stream.closed && !(overHttp && now - since > HTTP_IDLE_MS)) return stream;
      stream.close();
    }
    return openStream();
  };
  const openStream = (): hrana.Stream => {
    if (connection.closed) connection = open();
    const stream = connection.openStream();
    stream.intMode = expanded.intMode;
    return stream;
  };
  const giveBack = (stream: hrana.Stream, reusable: boolean) => {
    if (reusable && !stream.closed && idle.length < MAX_IDLE_STREAMS)
      idle.push({ stream, since: Date.now() });
    else stream.close();
  };
  const dropStreams = () => {
    for (const { stream } of idle) stream.close();
    idle = [];
  };

  /**
   * Runs `work` on a stream; the stream is reused only when `work` succeeded and says it may be.
   * A kept stream the server has forgotten meanwhile ran nothing: `work` runs again on a new one.
   */
  const onStream = async <T>(
    work: (stream: hrana.Stream) => Promise<{ value: T; reusable: boolean }>,
  ): Promise<T> => {
    // a request that finishes hands its place straight to the first one waiting
    if (inFlight < MAX_IN_FLIGHT) inFlight++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await attempts(work);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else inFlight--;
    }
  };
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const attempts = async <T>(
    work: (stream: hrana.Stream) => Promise<{ value: T; reusable: boolean }>,
  ): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      const fresh = attempt > 1 || idle.length === 0;
      const stream = attempt > 1 ? openStream() : take();
      let reusable = false;
      try {
        const { value, reusable: clean } = await work(stream);
        reusable = clean;
        return value;
      } catch (error) {
        if (!fresh && FORGOTTEN_STREAM.test(String((error as Error)?.message))) continue;
        throw mapHranaError(error);
      } finally {
        giveBack(stream, reusable);
      }
    }
  };

  const execute = (statement: InStatement, args?: unknown) =>
    onStream(async (stream) => {
      const normalized = normalize(statement, args);
      const rows = await stream.query(toHrana(normalized));
      // a statement that changes the connection itself leaves it to no one else
      return { value: resultSet(rows), reusable: !CHANGES_CONNECTION.test(normalized.sql) };
    });

  const batch = (statements: InStatement[], mode: TransactionMode = "deferred") =>
    onStream(async (stream) => {
      const version = await stream.client().getVersion();
      return runBatch(stream, version, mode, statements.map(normalize).map(toHrana));
    });

  const groupBatch = (batches: InStatement[][]) =>
    onStream(async (stream) => {
      const version = await stream.client().getVersion();
      const statements = batches.map((b) => b.map((s) => toHrana(normalize(s))));
      if (version >= 3) return runGroupBatch(stream, statements);
      // Without the protocol's autocommit condition a group cannot tell a transaction that ended
      // early: each batch goes alone (one request each).
      const value: GroupedOutcome[] = [];
      for (const b of statements)
        value.push(
          await runBatch(stream, version, "write", b).then(
            ({ value: results }) => ({ results }),
            (error: unknown) => ({ error }),
          ),
        );
      return { value, reusable: false };
    });

  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "execute") return execute;
      if (property === "batch") return batch;
      if (property === "groupBatch") return groupBatch;
      if (property === "close")
        return () => {
          dropStreams();
          connection.close();
          target.close();
        };
      if (property === "reconnect")
        return async () => {
          dropStreams();
          connection.close();
          connection = open();
          await target.reconnect();
        };
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

type Normalized = { sql: string; args?: unknown };

function normalize(statement: InStatement, args?: unknown): Normalized {
  if (typeof statement === "string") return { sql: statement, args };
  if (Array.isArray(statement)) return { sql: statement[0], args: statement[1] };
  return statement as Normalized;
}

function toHrana({ sql, args }: Normalized): hrana.Stmt {
  const stmt = new hrana.Stmt(sql);
  if (Array.isArray(args)) stmt.bindIndexes(args as hrana.InValue[]);
  else if (args && typeof args === "object")
    for (const [name, value] of Object.entries(args)) stmt.bindName(name, value as hrana.InValue);
  return stmt;
}

/**
 * One batch as @libsql/client sends it (its executeHranaBatch): BEGIN, each statement only if the
 * one before succeeded (and, from protocol 3, only inside the transaction), COMMIT only if all
 * did, ROLLBACK otherwise. The stream may be reused only when every step succeeded.
 */
async function runBatch(
  stream: hrana.Stream,
  version: number,
  mode: TransactionMode,
  statements: hrana.Stmt[],
): Promise<{ value: ResultSet[]; reusable: boolean }> {
  const batch = stream.batch(version >= 3);
  const begin = batch.step();
  const began = begin.run(transactionModeToBegin(mode));
  let last = begin;
  const results = statements.map((statement) => {
    const step = batch.step().condition(hrana.BatchCond.ok(last));
    if (version >= 3) step.condition(hrana.BatchCond.not(hrana.BatchCond.isAutocommit(batch)));
    last = step;
    return step.query(statement);
  });
  const commit = batch.step().condition(hrana.BatchCond.ok(last));
  if (version >= 3) commit.condition(hrana.BatchCond.not(hrana.BatchCond.isAutocommit(batch)));
  const committed = commit.run("COMMIT");
  const rollback = batch.step().condition(hrana.BatchCond.not(hrana.BatchCond.ok(commit)));
  const rolledBack = rollback.run("ROLLBACK");
  // every step's promise settles with the batch; the ones that fail are read below
  for (const step of [began, committed, rolledBack, ...results]) step.catch(() => undefined);
  await batch.execute();
  await began;
  const value: ResultSet[] = [];
  for (let i = 0; i < results.length; i++) {
    let rows: hrana.RowsResult | undefined;
    try {
      rows = await results[i];
    } catch (error) {
      const mapped = mapHranaError(error);
      if (mapped instanceof LibsqlError)
        throw new LibsqlBatchError(
          mapped.message,
          i,
          mapped.code,
          mapped.extendedCode,
          mapped.rawCode,
          mapped.cause instanceof Error ? mapped.cause : undefined,
        );
      throw mapped;
    }
    if (rows === undefined)
      throw new LibsqlBatchError(
        "Statement in a batch was not executed, probably because the transaction has been rolled back",
        i,
        "TRANSACTION_CLOSED",
      );
    value.push(resultSet(rows));
  }
  await committed;
  return { value, reusable: true };
}

/** What happened to one batch of a group: committed, failed alone, or to be sent again. */
export type GroupedOutcome = { results: ResultSet[] } | { error: unknown } | "again";

/** A client that can send several write batches as one transaction (db/group-commit.ts). */
export type GroupBatchClient = Client & {
  groupBatch(batches: InStatement[][]): Promise<GroupedOutcome[]>;
};

export function canGroupBatches(client: Client): client is GroupBatchClient {
  return typeof (client as Partial<GroupBatchClient>).groupBatch === "function";
}

/**
 * Several write batches as ONE request and one transaction (group commit over a libSQL server,
 * db/group-commit.ts): BEGIN IMMEDIATE; for each batch a SAVEPOINT, its statements (each only if
 * the one before succeeded), RELEASE when all did, else ROLLBACK TO and RELEASE (that batch wrote
 * nothing, the next one goes on); COMMIT when the last batch is settled and the transaction is
 * still open; ROLLBACK otherwise. A failed batch gets the error a batch of its own would give;
 * when the transaction ended early (nothing committed), the others are to be sent again.
 */
async function runGroupBatch(
  stream: hrana.Stream,
  batches: hrana.Stmt[][],
): Promise<{ value: GroupedOutcome[]; reusable: boolean }> {
  const batch = stream.batch(true);
  const open = () => hrana.BatchCond.not(hrana.BatchCond.isAutocommit(batch));
  const begin = batch.step();
  const began = begin.run(transactionModeToBegin("write"));
  let settled: hrana.BatchCond = hrana.BatchCond.ok(begin);
  const pending: Promise<unknown>[] = [began];
  const members = batches.map((statements) => {
    const savepoint = batch.step().condition(settled).condition(open());
    const saved = savepoint.run("savepoint countersign_batch");
    let last = savepoint;
    const results = statements.map((statement) => {
      const step = batch.step().condition(hrana.BatchCond.ok(last)).condition(open());
      last = step;
      return step.query(statement);
    });
    const release = batch.step().condition(hrana.BatchCond.ok(last)).condition(open());
    const released = release.run("release countersign_batch");
    const undo = batch
      .step()
      .condition(hrana.BatchCond.ok(savepoint))
      .condition(hrana.BatchCond.not(hrana.BatchCond.ok(release)))
      .condition(open());
    const undone = undo.run("rollback to countersign_batch");
    const releaseUndone = batch.step().condition(hrana.BatchCond.ok(undo));
    const releasedUndone = releaseUndone.run("release countersign_batch");
    settled = hrana.BatchCond.or(batch, [
      hrana.BatchCond.ok(release),
      hrana.BatchCond.ok(releaseUndone),
    ]);
    pending.push(saved, released, undone, releasedUndone, ...results);
    return { saved, results, released };
  });
  const commit = batch.step().condition(settled).condition(open());
  const committed = commit.run("COMMIT");
  const rollback = batch.step().condition(hrana.BatchCond.not(hrana.BatchCond.ok(commit)));
  const rolledBack = rollback.run("ROLLBACK");
  // every step's promise settles with the batch; the ones that fail are read below
  for (const step of [...pending, committed, rolledBack]) step.catch(() => undefined);
  await batch.execute();
  await began.catch((error: unknown) => {
    throw mapHranaError(error);
  });
  const ranCommit = await committed.then(
    (result) => result !== undefined,
    (error: unknown) => {
      throw mapHranaError(error);
    },
  );
  const value: GroupedOutcome[] = [];
  for (const member of members) {
    if ((await member.saved.catch(() => undefined)) === undefined) {
      value.push("again");
      continue;
    }
    let outcome: GroupedOutcome | null = null;
    const sets: ResultSet[] = [];
    for (let i = 0; i < member.results.length && !outcome; i++) {
      try {
        const rows = await member.results[i];
        if (rows === undefined)
          outcome = {
            error: new LibsqlBatchError(
              "Statement in a batch was not executed, probably because the transaction has been rolled back",
              i,
              "TRANSACTION_CLOSED",
            ),
          };
        else sets.push(resultSet(rows));
      } catch (error) {
        const mapped = mapHranaError(error);
        outcome = {
          error:
            mapped instanceof LibsqlError
              ? new LibsqlBatchError(
                  mapped.message,
                  i,
                  mapped.code,
                  mapped.extendedCode,
                  mapped.rawCode,
                  mapped.cause instanceof Error ? mapped.cause : undefined,
                )
              : mapped,
        };
      }
    }
    if (!outcome && (await member.released.catch(() => undefined)) === undefined)
      outcome = { error: new LibsqlError("The batch's savepoint was not released", "UNKNOWN") };
    value.push(outcome ?? { results: sets });
  }
  // Committed: every batch is settled. Not committed (the transaction ended early): nothing was
  // written; a batch that failed keeps its error, every other one is sent again.
  if (!ranCommit)
    return {
      value: value.map((outcome) =>
        outcome !== "again" && "error" in outcome ? outcome : "again",
      ),
      reusable: (await rolledBack.catch(() => undefined)) !== undefined,
    };
  return { value, reusable: true };
}

function resultSet(rows: hrana.RowsResult): ResultSet {
  return new ResultSetImpl(
    rows.columnNames.map((name) => name ?? ""),
    rows.columnDecltypes.map((type) => type ?? ""),
    rows.rows,
    rows.affectedRowCount,
    rows.lastInsertRowid,
  );
}

/** A Hrana error as @libsql/client reports it (its mapHranaError), so callers see the same codes. */
function mapHranaError(error: unknown): unknown {
  if (!(error instanceof hrana.ClientError)) return error;
  return new LibsqlError(error.message, hranaCode(error), undefined, undefined, error);
}

function hranaCode(error: hrana.ClientError): string {
  if (error instanceof hrana.ResponseError && error.code !== undefined) return error.code;
  if (error instanceof hrana.ProtoError) return "HRANA_PROTO_ERROR";
  if (error instanceof hrana.ClosedError)
    return error.cause instanceof hrana.ClientError ? hranaCode(error.cause) : "HRANA_CLOSED_ERROR";
  if (error instanceof hrana.WebSocketError) return "HRANA_WEBSOCKET_ERROR";
  if (error instanceof hrana.HttpServerError) return "SERVER_ERROR";
  if (error instanceof hrana.ProtocolVersionError) return "PROTOCOL_VERSION_ERROR";
  if (error instanceof hrana.InternalError) return "INTERNAL_ERROR";
  return "UNKNOWN";
}
