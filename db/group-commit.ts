import type { Client, ResultSet } from "@libsql/client";
import { canGroupBatches } from "./remote-streams";
import type { Statement } from "./write-batch";

// Group commit for the embedded database file (db/write-batch.ts sends every write batch here when
// the database is a file).
//
// The embedded driver runs a batch synchronously on the JavaScript thread, fsync of its COMMIT
// included: while one commit waits for the disk, the whole process waits with it — no request is
// read, parsed or answered. On a busy disk (an fsync of 2–7 ms, 12–65 ms at p99, measured by the
// bench's commit floor) that, not the CPU, capped the server at one commit per fsync, whatever
// the number of clients (test/bench/README.md, "MCP gateway").
//
// So write batches are not committed the moment they are asked for: each is queued, and the queue
// is committed once the event loop has read what else arrived meanwhile (setImmediate: after the
// I/O of this turn). Every batch queued by then is committed in ONE transaction — one fsync —
// each inside a SAVEPOINT of its own:
//   - a statement of a batch that fails (a guard's ABORT, a constraint) rolls back to that
//     batch's savepoint: nothing of that batch is written, its caller gets the same error a batch
//     of its own would have given, and the others of the group go on;
//   - a failure that ends the whole transaction (SQLite rolls back on a full disk, an I/O error)
//     fails that batch, and the others of the group, none of which was written, are committed
//     again in the next group;
//   - a busy database (another process holds the write lock) is tried again for the whole group,
//     each batch until its own deadline.
// Each batch is thus still all-or-nothing, with its compare-and-swap conditions checked in SQL
// against every batch committed before it, those of its own group included (lib/README.md,
// invariant 2); events get their `seq` in the order the batches were asked for, and a group's rows
// become visible together at its COMMIT, so a tailer still never skips one (invariant 3). A caller
// is answered only after the COMMIT that made its batch durable.
//
// Over a libSQL server a group is ONE request: a Hrana batch whose steps are conditioned the same
// way (db/remote-streams.ts runGroupBatch), so a group costs one round trip and one transaction
// on the server instead of one per batch.

type Pending = {
  statements: Statement[];
  /** after this time a busy database fails the batch (SQLITE_BUSY → 503) */
  giveUpAt: number;
  resolve: (results: ResultSet[]) => void;
  reject: (error: unknown) => void;
};

/** what happened to one batch of a group */
type Settled = { results: ResultSet[] } | { error: unknown } | "again";

export type GroupCommitDeps = {
  client: () => Client;
  /** runs `work` holding the process's write lock (db/client.ts) */
  locked: <T>(work: () => Promise<T>) => Promise<T>;
  isBusy: (error: unknown) => boolean;
  /** after a busy failure: fresh connections (db/client.ts retryWhileBusy) */
  afterBusy: () => Promise<void>;
  waitMs: number;
};

/** Batches per transaction at most (a group's statements run back to back on the event loop). */
export const MAX_GROUP = 64;
const SAVEPOINT = "savepoint countersign_batch";
const RELEASE = "release countersign_batch";
const ROLLBACK_TO = "rollback to countersign_batch";

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  /** committed transactions and the batches they carried (the bench and the tests read them) */
  readonly stats = { groups: 0, batches: 0, largest: 0 };

  constructor(private readonly deps: GroupCommitDeps) {}

  write(statements: Statement[]): Promise<ResultSet[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ statements, giveUpAt: Date.now() + this.deps.waitMs, resolve, reject });
      this.schedule();
    });
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    // After this turn's I/O: the requests that arrived while the last commit held the thread
    // reach their writes first, and share this commit.
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      await this.deps.locked(async () => {
        while (this.queue.length > 0) await this.commitGroup(this.queue.splice(0, MAX_GROUP));
      });
    } catch (error) {
      // the lock itself failed (it does not): fail what waits rather than leave it hanging
      for (const pending of this.queue.splice(0)) pending.reject(error);
    } finally {
      this.scheduled = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  /** Commits `group` (one transaction), settling every batch of it; never throws. */
  private async commitGroup(group: Pending[]): Promise<void> {
    for (let pause = 5, idleRounds = 0; group.length > 0; pause = Math.min(pause * 2, 100)) {
      let settled: Settled[];
      try {
        settled = await this.runGroup(group);
      } catch (error) {
        if (!this.deps.isBusy(error)) {
          for (const pending of group) pending.reject(error);
          return;
        }
        // Nothing of the group was written. As db/client.ts retryWhileBusy does for one batch:
        // fresh connections, then again after a pause, each batch until its own deadline.
        await this.deps.afterBusy().catch(() => undefined);
        const now = Date.now();
        group = group.filter((pending) => {
          if (now + pause <= pending.giveUpAt) return true;
          pending.reject(error);
          return false;
        });
        if (group.length === 0) return;
        await new Promise((resolve) => setTimeout(resolve, pause));
        group.push(...this.queue.splice(0, MAX_GROUP - group.length));
        continue;
      }
      const again: Pending[] = [];
      settled.forEach((outcome, i) => {
        const pending = group[i]!;
        if (outcome === "again") again.push(pending);
        else if ("results" in outcome) pending.resolve(outcome.results);
        else pending.reject(outcome.error);
      });
      // every round settles at least one batch; should one not, the group fails rather than spin
      if (again.length === group.length && ++idleRounds >= 3) {
        const error = new Error("The write could not be committed (its transaction kept ending).");
        for (const pending of again) pending.reject(error);
        return;
      }
      group = again;
    }
  }

  private count(batches: number) {
    this.stats.groups++;
    this.stats.batches += batches;
    this.stats.largest = Math.max(this.stats.largest, batches);
  }

  /** One transaction: each batch in its savepoint, then COMMIT. Throws when the group failed whole. */
  private async runGroup(group: Pending[]): Promise<Settled[]> {
    const client = this.deps.client();
    if (group.length === 1) {
      // Alone: sent as a batch of its own, exactly as without grouping (no savepoint statements,
      // which over a libSQL server cost its parser and its thread hand-offs per step).
      try {
        const results = await client.batch(group[0]!.statements, "write");
        this.count(1);
        return [{ results }];
      } catch (error) {
        if (this.deps.isBusy(error)) throw error;
        return [{ error }];
      }
    }
    if (canGroupBatches(client)) {
      // a libSQL server: the whole group is one request (throws when the group failed whole)
      const settled = await client.groupBatch(group.map((pending) => pending.statements));
      this.count(group.length);
      return settled;
    }
    const tx = await client.transaction("write"); // BEGIN IMMEDIATE
    try {
      const settled: Settled[] = [];
      for (let i = 0; i < group.length; i++) {
        await tx.execute(SAVEPOINT);
        try {
          const results = await tx.batch(group[i]!.statements);
          await tx.execute(RELEASE);
          settled.push({ results });
        } catch (error) {
          if (tx.closed) {
            // SQLite ended the whole transaction: nothing of the group is written.
            if (this.deps.isBusy(error)) throw error;
            return group.map((_, j) => (j === i ? { error } : "again"));
          }
          await tx.execute(ROLLBACK_TO);
          await tx.execute(RELEASE);
          settled.push({ error });
        }
      }
      await tx.commit();
      this.count(group.length);
      return settled;
    } finally {
      tx.close();
    }
  }
}
