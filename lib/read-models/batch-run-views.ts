import {
  and,
  asc,
  eq,
  getTableColumns,
  getTableName,
  gt,
  inArray,
  sql,
  type Column,
  type Placeholder,
  type SQL,
  type Table,
} from "drizzle-orm";
import { alias, type SelectedFields } from "drizzle-orm/sqlite-core";
import type { z } from "zod";
import type { Executor } from "@/db/client";
import {
  agentKeys,
  batches,
  calls,
  queues,
  reviewClaims,
  routingRules,
  runs,
  users,
  votes,
  type Call,
  type Run,
  type Vote,
} from "@/db/schema";
import { isoTime } from "@/lib/ids";
import type { BatchResource, CallResource, RunResource, VoteResource } from "./resource-schemas";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { returnsAt } from "@/lib/time/set-aside-times";

/** A reviewer's "Not now" on a batch, as read with it (lib/set-aside). */
export type SetAsideRow = { userId: string; name: string | null; setAt: number; until: number };

// The API's resources as the contract shows them (shapes in resource-schemas.ts), loaded from
// the database in a few queries.

export type VoteView = z.infer<typeof VoteResource>;
export type CallView = z.infer<typeof CallResource>;
export type BatchView = z.infer<typeof BatchResource>;
export type RunView = z.infer<typeof RunResource>;

/** Whether views carry the deciders' and voters' emails: only history exports (for auditors). */
export type ViewOptions = { emails?: boolean };

function callView(
  call: Call,
  callVotes: VoteView[],
  deciderName: string | null,
  options: ViewOptions,
): CallView {
  const decided = call.decisionOutcome !== null && call.decidedAt !== null;
  return {
    id: call.id,
    batchId: call.batchId,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    args: call.args,
    inputSchema: call.inputSchema ?? null,
    summary: call.summary,
    risks: call.risks,
    costEstimate: call.costEstimate,
    costCurrency: call.costCurrency,
    metadata: call.metadata ?? null,
    status: call.status,
    revision: call.revision,
    actionHash: call.actionHash,
    requiredApprovals: call.requiredApprovals,
    pendingEdit: call.status === "pending" ? (call.editedArgs ?? null) : null,
    votes: callVotes,
    decision: decided
      ? {
          outcome: call.decisionOutcome!,
          source: call.decisionSource!,
          // The name recorded with the decision; the live name only for rows older than that.
          by: call.decidedBy
            ? {
                id: call.decidedBy,
                name: call.decidedByName ?? deciderName ?? "unknown",
                ...(options.emails && { email: call.decidedByEmail ?? null }),
              }
            : null,
          at: isoTime(call.decidedAt!),
          reason: call.decisionReason,
          editedArgs: call.decisionOutcome === "approved" ? (call.editedArgs ?? null) : null,
          scope: call.decisionScope,
          policy: call.decisionPolicy ?? null,
        }
      : null,
  };
}

/**
 * Who a view is for. Reviewers never see a call a policy blocked in their queue (it was never
 * theirs to decide); the agent that asked sees every call of its batch, blocked ones included,
 * and so does the audit trail (History and its export: a block is a decision too).
 */
export type Audience = "reviewer" | "agent" | "audit";

/**
 * The rows a batch view is made of. A write that changes a batch edits a copy of the rows it read
 * before writing and assembles the view from them, instead of reading the batch again.
 */
export type BatchViewRows = Awaited<ReturnType<typeof readBatchViewRows>>;

/** The columns of a batch's row in its view: the batch, its queue, agent, rule, live claim and set-asides. */
function batchRowFields<Extra extends SelectedFields>(now: number | Placeholder, extra: Extra) {
  return {
    ...extra,
    batch: batches,
    queueName: queues.name,
    agentId: runs.agentKeyId,
    agentName: agentKeys.name,
    ruleName: routingRules.name,
    claimMode: queues.claimMode,
    claimUserId: reviewClaims.userId,
    claimExpiresAt: reviewClaims.expiresAt,
    claimantName: users.name,
    // The live "Not now"s of members of the batch's queue (one set aside in a queue the
    // batch has left is nobody's business there). Ended ones by the chosen time are left
    // out here; those ended by the deadline rule when the view is assembled.
    setAsides:
      sql<string>`(select json_group_array(json_object('userId', s.user_id, 'name', u.name, 'setAt', s.set_at, 'until', s.until)) from set_asides s join "user" u on u.id = s.user_id where s.batch_id = ${batches.id} and s.until > ${now} and exists (select 1 from queue_members m where m.queue_id = ${batches.queueId} and m.user_id = s.user_id))`.mapWith(
        (value: string | null): SetAsideRow[] => (value ? JSON.parse(value) : []),
      ),
  };
}

/**
 * The three reads behind batch views: of the batches `ids`, or of the batch an SQL expression
 * names (e.g. the batch of a call), so they can join another read in one read batch.
 */
export function batchViewQueries<Extra extends SelectedFields = Record<never, never>>(
  db: Executor,
  ids: string[] | SQL | Placeholder,
  now: number | Placeholder = Date.now(),
  /** more columns of the batch's row, its queue, run or agent key (who may decide a batch is
   * read in the same statement: lib/access/find-for-caller.ts decisionTargetColumns) */
  extra: Extra = {} as Extra,
) {
  const inBatches = (column: typeof batches.id | typeof calls.batchId) =>
    Array.isArray(ids) ? inArray(column, ids) : eq(column, ids);
  return [
    db
      .select(batchRowFields(now, extra))
      .from(batches)
      .innerJoin(queues, eq(queues.id, batches.queueId))
      .innerJoin(runs, eq(runs.id, batches.runId))
      .innerJoin(agentKeys, eq(agentKeys.id, runs.agentKeyId))
      .leftJoin(routingRules, eq(routingRules.id, batches.routingRuleId))
      // Only a live claim shows: an expired one needs no sweeper, it simply stops matching.
      .leftJoin(
        reviewClaims,
        and(eq(reviewClaims.batchId, batches.id), gt(reviewClaims.expiresAt, now)),
      )
      .leftJoin(users, eq(users.id, reviewClaims.userId))
      .where(inBatches(batches.id)),
    db
      .select({ call: calls, deciderName: users.name })
      .from(calls)
      .leftJoin(users, eq(users.id, calls.decidedBy))
      .where(inBatches(calls.batchId))
      .orderBy(asc(calls.batchId), asc(calls.position)),
    db
      .select({ vote: votes, reviewerName: users.name })
      .from(votes)
      .innerJoin(calls, eq(calls.id, votes.callId))
      .innerJoin(users, eq(users.id, votes.reviewerId))
      .where(inBatches(calls.batchId))
      .orderBy(asc(votes.createdAt)),
  ] as const;
}

const decider = alias(users, "decider");

/** A vote as the one-statement read answers it (see oneBatchQuery), with its voter's name. */
type VoteJson = Vote & { voterName: string };

/**
 * A row of `table` as ONE column: a JSON array of its columns' values (in the schema's order),
 * turned back into the row object and decoded as drizzle decodes each column. Every column is text
 * or an integer, which JSON gives back exactly (SQLite writes an integer's digits; every integer
 * column of the app is far below 2^53), except those in `apart`: a REAL in JSON keeps 15 digits
 * only, so it is read as a column of its own beside the array (null in the object until the caller
 * sets it). Few columns instead of many is what makes the row cheap to receive: the embedded
 * client defines each column of each row as a property, one at a time. An array, not an object:
 * a libSQL server parses the statement's text on every read, and the keys would double it.
 */
function rowAsJson<T extends Table>(table: T, apart: Column[] = []) {
  const name = getTableName(table);
  const columns = Object.entries(getTableColumns(table) as Record<string, Column>).map(
    ([key, column]) => ({ key, column, apart: apart.includes(column) }),
  );
  for (const { key, column, apart } of columns) {
    if (!apart && column.getSQLType() !== "text" && column.getSQLType() !== "integer")
      throw new Error(`${name}.${key} cannot go through JSON exactly`);
  }
  const values = columns.filter((c) => !c.apart).map((c) => `"${name}"."${c.column.name}"`);
  return sql.raw(`json_array(${values.join(", ")})`).mapWith((text: string) => {
    const array = JSON.parse(text) as unknown[];
    const row: Record<string, unknown> = {};
    let next = 0;
    for (const { key, column, apart } of columns) {
      const value = apart ? null : array[next++];
      row[key] = value === null ? null : column.mapFromDriverValue(value);
    }
    return row as T["$inferSelect"];
  });
}

/**
 * The rows of ONE batch's view as a single statement (a reviewer's decision reads so: lib/approvals/
 * plan-decision.ts): a row per call, in position order, each with its batch's row beside it and
 * its votes, the batch and the call each as one JSON column (rowAsJson). One statement is one
 * snapshot by itself, so no read transaction (BEGIN and COMMIT) is needed around it, and SQLite
 * steps one statement instead of three. `oneBatchRows` turns its rows into the rows
 * `batchViewQueries` reads, the same values in the same order. A batch with no call has no row here.
 */
export function oneBatchQuery<Extra extends SelectedFields = Record<never, never>>(
  db: Executor,
  batch: SQL | Placeholder,
  now: number | Placeholder,
  extra: Extra = {} as Extra,
) {
  // a vote and its voter's name: every column of a vote is text or an integer (as rowAsJson)
  const voteColumns = Object.entries(getTableColumns(votes));
  const vote = sql.raw(voteColumns.map(([, column]) => `v."${column.name}"`).join(", "));
  const voteRow = (array: unknown[]): VoteJson => {
    const row = Object.fromEntries(
      voteColumns.map(([key, column], i) => [
        key,
        array[i] === null ? null : column.mapFromDriverValue(array[i]),
      ]),
    );
    return { ...(row as Vote), voterName: array[voteColumns.length] as string };
  };
  return (
    db
      .select({
        ...batchRowFields(now, extra),
        batch: rowAsJson(batches),
        call: rowAsJson(calls, [calls.costEstimate]),
        costEstimate: calls.costEstimate,
        deciderName: decider.name,
        votes:
          sql<string>`(select coalesce('[' || group_concat(j, ',') || ']', '[]') from (select json_array(${vote}, vu.name) as j from votes v join "user" vu on vu.id = v.reviewer_id where v.call_id = ${calls.id} order by v.created_at))`.mapWith(
            (value: string): VoteJson[] => (JSON.parse(value) as unknown[][]).map(voteRow),
          ),
      })
      .from(batches)
      // the same joins as batchViewQueries' batch row
      .innerJoin(queues, eq(queues.id, batches.queueId))
      .innerJoin(runs, eq(runs.id, batches.runId))
      .innerJoin(agentKeys, eq(agentKeys.id, runs.agentKeyId))
      .leftJoin(routingRules, eq(routingRules.id, batches.routingRuleId))
      .leftJoin(
        reviewClaims,
        and(eq(reviewClaims.batchId, batches.id), gt(reviewClaims.expiresAt, now)),
      )
      .leftJoin(users, eq(users.id, reviewClaims.userId))
      .innerJoin(calls, eq(calls.batchId, batches.id))
      .leftJoin(decider, eq(decider.id, calls.decidedBy))
      .where(eq(batches.id, batch))
      .orderBy(asc(calls.position))
  );
}

/** The rows of oneBatchQuery as batchViewQueries' three reads give them. */
export function oneBatchRows<
  Row extends {
    call: Call;
    costEstimate: number | null;
    deciderName: string | null;
    votes: VoteJson[];
  },
>(rows: Row[]) {
  const voteRows = rows
    .flatMap((row) => row.votes)
    .map(({ voterName, ...vote }) => ({ vote: vote as Vote, reviewerName: voterName }))
    // in the order of their time, as batchViewQueries' ORDER BY (a stable sort: ties by call)
    .sort((a, b) => a.vote.createdAt - b.vote.createdAt);
  const callRows = rows.map((row) => {
    row.call.costEstimate = row.costEstimate; // read apart from the JSON (rowAsJson)
    return { call: row.call, deciderName: row.deciderName };
  });
  const batchRows = rows.slice(0, 1).map((row) => {
    const { call, costEstimate, deciderName, votes, ...batchRow } = row;
    return batchRow;
  });
  return { batchRows, callRows, voteRows };
}

/** The rows of batch views, read in one read batch (one round trip). */
export async function readBatchViewRows(db: Executor, ids: string[]) {
  const queries = batchViewQueries(db, ids); // Inside an open transaction (the verbs not yet written as one batch) the reads go one by one.
  const [batchRows, callRows, voteRows] =
    "batch" in db
      ? await db.batch(queries)
      : [await queries[0], await queries[1], await queries[2]];
  return { batchRows, callRows, voteRows };
}

/** Loads batches with their calls, votes and names, in the order of `ids`; unknown ids are skipped. */
export async function loadBatchViews(
  db: Executor,
  ids: string[],
  audience: Audience = "reviewer",
  options: ViewOptions = {},
): Promise<BatchView[]> {
  if (ids.length === 0) return [];
  return assembleBatchViews(await readBatchViewRows(db, ids), ids, audience, options);
}

/** The views of `ids` (in that order) from their rows. */
export function assembleBatchViews(
  { batchRows, callRows, voteRows }: BatchViewRows,
  ids: string[],
  audience: Audience = "reviewer",
  options: ViewOptions = {},
): BatchView[] {
  const votesByCall = new Map<string, VoteView[]>();
  for (const { vote: v, reviewerName } of voteRows) {
    const list = votesByCall.get(v.callId) ?? [];
    list.push({
      reviewer: {
        id: v.reviewerId,
        name: v.reviewerName ?? reviewerName,
        ...(options.emails && { email: v.reviewerEmail ?? null }),
      },
      outcome: v.outcome,
      revision: v.revision,
      actionHash: v.actionHash,
      at: isoTime(v.createdAt),
    });
    votesByCall.set(v.callId, list);
  }
  const callsByBatch = new Map<string, CallView[]>();
  for (const { call: c, deciderName } of callRows) {
    const list = callsByBatch.get(c.batchId) ?? [];
    list.push(callView(c, votesByCall.get(c.id) ?? [], deciderName, options));
    callsByBatch.set(c.batchId, list);
  }

  const now = Date.now();
  const byId = new Map(
    batchRows.map(({ batch, queueName, agentId, agentName, ruleName, setAsides, ...claim }) => [
      batch.id,
      {
        id: batch.id,
        runId: batch.runId,
        kind: batch.kind,
        status: batch.status,
        outcome: batch.outcome,
        queue: { id: batch.queueId, name: queueName },
        agent: { id: agentId, name: agentName },
        plan: batch.plan ?? null,
        calls: callsByBatch.get(batch.id) ?? [],
        createdAt: isoTime(batch.createdAt),
        expiresAt: isoTime(batch.expiresAt),
        onTimeout: batch.onTimeout,
        escalations: batch.escalations,
        routing: batch.routingRuleId
          ? { ruleId: batch.routingRuleId, name: ruleName ?? "(deleted rule)" }
          : null,
        decidedAt: isoTime(batch.decidedAt),
        cancelReason: batch.cancelReason,
        reviewUrl: `${publicBaseUrl()}/batches/${batch.id}`,
        claim:
          batch.status === "pending" && claim.claimUserId && claim.claimExpiresAt !== null
            ? {
                by: { id: claim.claimUserId, name: claim.claimantName ?? "unknown" },
                expiresAt: isoTime(claim.claimExpiresAt),
                locked: claim.claimMode === "lock",
              }
            : null,
        setAside: batch.status === "pending" ? setAsideViews(setAsides, batch, now) : [],
      } satisfies BatchView,
    ]),
  );
  const views = ids.flatMap((id) => byId.get(id) ?? []);
  return audience === "reviewer" ? views.map(forReviewers) : views;
}

/** The set-asides still away at `now`, soonest back first. */
function setAsideViews(
  rows: SetAsideRow[],
  batch: { createdAt: number; expiresAt: number },
  now: number,
): BatchView["setAside"] {
  return rows
    .map((row) => ({ row, back: returnsAt(row.until, batch) }))
    .filter(({ back }) => back > now)
    .sort((a, b) => a.back - b.back || a.row.setAt - b.row.setAt)
    .map(({ row, back }) => ({
      by: { id: row.userId, name: row.name ?? "unknown" },
      at: isoTime(row.setAt),
      until: isoTime(row.until),
      returnsAt: isoTime(back),
    }));
}

/** The agent's view of a batch as reviewers see it: without the calls a policy blocked. */
export function forReviewers(view: BatchView): BatchView {
  return view.calls.some((call) => call.decision?.policy?.blocked)
    ? { ...view, calls: view.calls.filter((call) => !call.decision?.policy?.blocked) }
    : view;
}

export async function loadBatchView(
  db: Executor,
  id: string,
  audience: Audience = "reviewer",
): Promise<BatchView | null> {
  const [view] = await loadBatchViews(db, [id], audience);
  return view ?? null;
}

export async function loadRunView(
  db: Executor,
  id: string,
  options: {
    withBatches: boolean;
    /** for a reviewer: only the batches of these queues (as reviewers see them); else the agent's view */
    batchQueueIds?: string[];
  },
): Promise<RunView | null> {
  const [row] = await db
    .select({ run: runs, agentName: agentKeys.name })
    .from(runs)
    .innerJoin(agentKeys, eq(agentKeys.id, runs.agentKeyId))
    .where(eq(runs.id, id));
  if (!row) return null;
  const view = runView(row.run, row.agentName);
  if (options.withBatches) {
    const batchIds = await db
      .select({ id: batches.id })
      .from(batches)
      .where(
        options.batchQueueIds
          ? and(
              eq(batches.runId, id),
              inArray(batches.queueId, options.batchQueueIds),
              eq(batches.hiddenFromReviewers, false),
            )
          : eq(batches.runId, id),
      )
      .orderBy(asc(batches.createdAt), asc(batches.id));
    view.batches = await loadBatchViews(
      db,
      batchIds.map((b) => b.id),
      options.batchQueueIds ? "reviewer" : "agent",
    );
  }
  return view;
}

/** A run row as the API shows it (without its batches). */
export function runView(run: Run, agentName: string): RunView {
  return {
    id: run.id,
    agent: { id: run.agentKeyId, name: agentName },
    externalId: run.externalId,
    conversationId: run.conversationId,
    status: run.status,
    metadata: run.metadata ?? null,
    claim:
      run.status === "resuming" && run.claimWorkerId && run.leaseExpiresAt
        ? { workerId: run.claimWorkerId, leaseExpiresAt: isoTime(run.leaseExpiresAt) }
        : null,
    rollbackRequestedAt: isoTime(run.rollbackRequestedAt),
    requirePlanApproval: run.requirePlanApproval,
    result: run.result ?? null,
    error: run.error ?? null,
    createdAt: isoTime(run.createdAt),
    updatedAt: isoTime(run.updatedAt),
  };
}
