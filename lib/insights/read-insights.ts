import type { InValue, Row } from "@libsql/client";
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { getClient, getDb, type Executor } from "@/db/client";
import { agentKeys, queueMembers, queues, users, type DecisionSource } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { DEFAULT_TIME_ZONE, TimeZoneName } from "@/lib/time/zone";
import { fatigueStatement, summarizeFatigue, type Fatigue } from "./fatigue";
import { barStarts, bucketMsFor, MAX_PERIOD_MS } from "./insights-period";

// How a team's queues are doing over a period, for their leads and for admins: cards created and
// settled, how long they waited for a decision, who or what decided, deadlines missed,
// escalations, approval rates by tool and agent, and each reviewer's load.
//
// Every number comes from the indexes of migration 0014 without reading a table row (a call's row
// carries its args and schema, a run's its checkpoint): cards are counted by queue and creation
// or settling time, and a period's decisions are the calls and votes of the cards *settled* in
// it (a card's calls are decided by the time it settles). Escalations are counted when they
// happen, from their events, whether or not the card was settled since. Day and week bars are
// calendar days in the viewer's time zone. The reads share one snapshot, so the numbers agree
// with each other.

const HOUR_MS = 3_600_000;

export const ReadInsightsInput = z
  .object({
    /** one queue; none: every queue the caller may see insights of */
    queueId: z.string().min(1).max(200).optional(),
    from: z.number().int().nonnegative(),
    to: z.number().int().positive(),
    /** the zone whose calendar days the day and week bars are (default UTC) */
    timeZone: TimeZoneName.default(DEFAULT_TIME_ZONE),
  })
  .refine((p) => p.from < p.to, { message: "'from' must be before 'to'", path: ["from"] })
  .refine((p) => p.to - p.from <= MAX_PERIOD_MS, {
    message: "a period may cover at most 366 days",
    path: ["to"],
  });
export type ReadInsightsInput = z.infer<typeof ReadInsightsInput>;

export type Outcomes = { approved: number; rejected: number };
export type Named = { id: string; name: string };

export type Insights = {
  period: { from: number; to: number; bucketMs: number };
  /** the queues the caller may see insights of (the picker's choices) */
  queues: Named[];
  /** the queue this view covers; null: all of `queues` */
  queueId: string | null;
  totals: {
    created: number;
    /** settled by decisions (reviewers, policy, memory, an approve-on-timeout) */
    decided: number;
    /** settled at a deadline nobody met: the calls left open were rejected (`onTimeout`) */
    expired: number;
    /** withdrawn by their agent */
    cancelled: number;
    /** cards escalated out of the queues in the period (once each), and how many escalations */
    escalatedCards: number;
    escalations: number;
  };
  /**
   * How long a card waited from creation to settling, over the settled cards that waited at all:
   * cards a policy or a remembered approval settled on arrival are left out (they wait 0 ms and
   * would hide how long people take).
   */
  timeToDecision: {
    count: number;
    p50Ms: number | null;
    p90Ms: number | null;
    p99Ms: number | null;
  };
  /** per bar of the activity chart: cards created and settled, from `start` for `bucketMs` */
  series: { start: number; created: number; settled: number }[];
  bySource: ({ source: DecisionSource } & Outcomes)[];
  byTool: ({ tool: string } & Outcomes)[];
  byAgent: (Named & Outcomes)[];
  /** votes each reviewer cast on the period's cards (with quorum, several per call) */
  reviewers: (Named & Outcomes)[];
  /** quick approvals and approval rates per reviewer and per tool (lib/insights/fatigue.ts) */
  fatigue: Fatigue;
  perQueue: (Named & {
    created: number;
    decided: number;
    expired: number;
    cancelled: number;
    escalatedCards: number;
  })[];
};

/** The queues a caller may see insights of: every queue for an admin, the queues they lead for a lead. */
export async function insightsQueues(db: Executor, caller: QueueCaller): Promise<Named[]> {
  const manager = await managerOf(db, caller);
  if (manager.isAdmin) {
    return db.select({ id: queues.id, name: queues.name }).from(queues).orderBy(queues.name);
  }
  const led = await db
    .select({ id: queues.id, name: queues.name })
    .from(queueMembers)
    .innerJoin(queues, eq(queues.id, queueMembers.queueId))
    .where(and(eq(queueMembers.userId, manager.reviewer!.id), eq(queueMembers.role, "lead")))
    .orderBy(queues.name);
  if (led.length === 0) {
    throw new ForbiddenError(
      "Insights are for a queue's lead or an admin; you do not lead a queue.",
    );
  }
  return led;
}

export async function readInsights(caller: QueueCaller, input: unknown): Promise<Insights> {
  const { queueId, from, to, timeZone } = parseInput(ReadInsightsInput, input);
  const db = getDb();
  const visible = await insightsQueues(db, caller);
  // A queue outside the caller's insights is answered as one that does not exist.
  if (queueId !== undefined && !visible.some((q) => q.id === queueId))
    throw new NotFoundError("Queue");
  const scope = queueId !== undefined ? [queueId] : visible.map((q) => q.id);
  const bucketMs = bucketMsFor({ from, to });
  const starts = barStarts({ from, to }, bucketMs, timeZone);
  const [created, settled, waits, decisions, escalations, votes] = await readInOneSnapshot(
    insightsStatements(scope, from, to),
  );

  const names = (rows: Row[], key: string) => [
    ...new Set(rows.map((r) => r[key] as string | null)),
  ];
  const agentIds = names(decisions!.rows, "agent_key_id").filter((id): id is string => !!id);
  const reviewerIds = names(votes!.rows, "reviewer_id").filter((id): id is string => !!id);
  const [agentNames, reviewerNames] = await Promise.all([
    agentIds.length
      ? db
          .select({ id: agentKeys.id, name: agentKeys.name })
          .from(agentKeys)
          .where(inArray(agentKeys.id, agentIds))
      : [],
    reviewerIds.length
      ? db
          .select({ id: users.id, name: users.name })
          .from(users)
          .where(inArray(users.id, reviewerIds))
      : [],
  ]);

  const namesOfReviewers = new Map(reviewerNames.map((u) => [u.id, u.name]));
  return {
    period: { from, to, bucketMs },
    queues: visible,
    queueId: queueId ?? null,
    ...summarizeCards(created!.rows, settled!.rows, escalations!.rows, visible, scope, starts),
    timeToDecision: percentilesOf(waits!.rows),
    ...summarizeDecisions(decisions!.rows, new Map(agentNames.map((a) => [a.id, a.name]))),
    reviewers: outcomesBy(votes!.rows, "reviewer_id", namesOfReviewers),
    fatigue: summarizeFatigue(votes!.rows, namesOfReviewers),
  };
}

/**
 * The statements in one read transaction (one snapshot: the numbers agree with each other),
 * letting the event loop run between them. The embedded database answers a statement
 * synchronously, and a year of a busy installation's cards takes a few hundred ms to join:
 * sent as one batch, the reads would hold up every other request of the process for all of it;
 * this way, for one statement at most. (A read transaction takes no write lock.)
 */
async function readInOneSnapshot(statements: { sql: string; args: InValue[] }[]) {
  const transaction = await getClient().transaction("read");
  try {
    const results = [];
    for (const statement of statements) {
      results.push(await transaction.execute(statement));
      await new Promise((resolve) => setImmediate(resolve));
    }
    return results;
  } finally {
    transaction.close();
  }
}

/**
 * The six reads, each answered from an index of migration 0014 (escalations: of 0022) (test/bench/insights.ts times
 * them on the grown database). `status <> 'pending'` is spelled out wherever a partial index on
 * settled cards is to be used: SQLite only picks a partial index whose condition the query states.
 */
export function insightsStatements(
  queueIds: string[],
  from: number,
  to: number,
): { sql: string; args: InValue[] }[] {
  // An empty scope (an admin of an installation with no queue yet) matches nothing.
  const inQueues = `queue_id in (${queueIds.map(() => "?").join(", ") || "null"})`;
  const settledIn = `b.${inQueues} and b.status <> 'pending' and b.decided_at >= ? and b.decided_at < ?`;
  const period = [...queueIds, from, to];
  // Cards are counted per hour since `from` (integers, so that it is an integer division: a float
  // would make a row per card); each hour then goes to its bar, a local day's bar included
  // (summarizeCards), so a day with a DST change is still one bar.
  const bar = [BigInt(from), BigInt(HOUR_MS)];
  return [
    {
      sql: `select queue_id, (created_at - ?) / ? as bucket, count(*) as n from batches
            where ${inQueues} and created_at >= ? and created_at < ? group by queue_id, bucket`,
      args: [...bar, ...period],
    },
    {
      sql: `select b.queue_id, (b.decided_at - ?) / ? as bucket, b.status, count(*) as n
            from batches b where ${settledIn} group by b.queue_id, bucket, b.status`,
      args: [...bar, ...period],
    },
    {
      // Exact nearest-rank percentiles in one sort: rank ⌈n·p⌉ of the waits in ascending order.
      sql: `select wait, n from (
              select wait, row_number() over (order by wait) as rank, count(*) over () as n from (
                select b.decided_at - b.created_at as wait from batches b
                where ${settledIn} and b.status in ('decided', 'expired') and b.decided_at > b.created_at))
            where rank in (max(1, (n * 50 + 99) / 100), max(1, (n * 90 + 99) / 100), max(1, (n * 99 + 99) / 100))
            order by rank`,
      args: period,
    },
    {
      sql: `select c.decision_source, c.decision_outcome, c.tool_name, r.agent_key_id, count(*) as n
            from batches b join calls c on c.batch_id = b.id join runs r indexed by runs_insights_agent_idx on r.id = b.run_id
            where ${settledIn} and c.decision_source is not null
            group by c.decision_source, c.decision_outcome, c.tool_name, r.agent_key_id`,
      args: period,
    },
    {
      // Each escalation writes one event in the queue the card left, then one in the queue it
      // went to, at the same instant: the first of the pair is the escalation out of its queue.
      sql: `select queue_id, batch_id, count(*) as n from (
              select queue_id, batch_id, row_number() over (partition by batch_id, at order by seq) as nth
              from events indexed by events_escalations_idx
              where type = 'batch.escalated' and at >= ? and at < ?)
            where nth = 1 and ${inQueues} group by queue_id, batch_id`,
      args: [from, to, ...queueIds],
    },
    // the votes of the period's cards, by reviewer, tool and outcome: the reviewers' load and
    // the fatigue figures
    fatigueStatement(settledIn, period),
  ];
}

function summarizeCards(
  createdRows: Row[],
  settledRows: Row[],
  escalationRows: Row[],
  visible: Named[],
  scope: string[],
  starts: number[],
): Pick<Insights, "totals" | "series" | "perQueue"> {
  const series = starts.map((start) => ({ start, created: 0, settled: 0 }));
  const from = starts[0]!;
  /** the bar an hour (counted from `from`) falls in: the last one starting at or before it */
  const barOf = (hour: number) => {
    const at = from + hour * HOUR_MS;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (starts[middle]! <= at) low = middle;
      else high = middle - 1;
    }
    return series[low]!;
  };
  const perQueue = new Map(
    visible
      .filter((q) => scope.includes(q.id))
      .map((q) => [
        q.id,
        { ...q, created: 0, decided: 0, expired: 0, cancelled: 0, escalatedCards: 0 },
      ]),
  );
  const totals = {
    created: 0,
    decided: 0,
    expired: 0,
    cancelled: 0,
    escalatedCards: 0,
    escalations: 0,
  };
  for (const row of createdRows) {
    const n = Number(row.n);
    totals.created += n;
    barOf(Number(row.bucket)).created += n;
    perQueue.get(row.queue_id as string)!.created += n;
  }
  for (const row of settledRows) {
    const n = Number(row.n);
    const status = row.status as "decided" | "expired" | "cancelled";
    const queue = perQueue.get(row.queue_id as string)!;
    totals[status] += n;
    queue[status] += n;
    barOf(Number(row.bucket)).settled += n;
  }
  const escalatedCards = new Set<string>();
  for (const row of escalationRows) {
    perQueue.get(row.queue_id as string)!.escalatedCards += 1;
    escalatedCards.add(row.batch_id as string);
    totals.escalations += Number(row.n);
  }
  totals.escalatedCards = escalatedCards.size;
  return { totals, series, perQueue: [...perQueue.values()] };
}

function percentilesOf(rows: Row[]): Insights["timeToDecision"] {
  if (rows.length === 0) return { count: 0, p50Ms: null, p90Ms: null, p99Ms: null };
  // Ranks can coincide on few waits (one wait is every percentile): one row per distinct rank.
  const waits = rows.map((r) => Number(r.wait));
  const n = Number(rows[0]!.n);
  const rank = (p: number) => Math.max(1, Math.ceil((n * p) / 100));
  const distinct = [...new Set([rank(50), rank(90), rank(99)])];
  const at = (p: number) => waits[distinct.indexOf(rank(p))]!;
  return { count: n, p50Ms: at(50), p90Ms: at(90), p99Ms: at(99) };
}

function summarizeDecisions(
  rows: Row[],
  agentNames: Map<string, string>,
): Pick<Insights, "bySource" | "byTool" | "byAgent"> {
  const bySource = new Map<DecisionSource, Outcomes>();
  const byTool = new Map<string, Outcomes>();
  const byAgent = new Map<string, Outcomes>();
  const add = <K>(map: Map<K, Outcomes>, key: K, outcome: keyof Outcomes, n: number) => {
    let entry = map.get(key);
    if (!entry) map.set(key, (entry = { approved: 0, rejected: 0 }));
    entry[outcome] += n;
  };
  for (const row of rows) {
    const outcome = row.decision_outcome as keyof Outcomes;
    const n = Number(row.n);
    add(bySource, row.decision_source as DecisionSource, outcome, n);
    add(byTool, row.tool_name as string, outcome, n);
    add(byAgent, row.agent_key_id as string, outcome, n);
  }
  const busiestFirst = <T extends Outcomes>(a: T, b: T) =>
    b.approved + b.rejected - (a.approved + a.rejected);
  const SOURCES: DecisionSource[] = ["reviewer", "policy", "memory", "timeout"];
  return {
    bySource: SOURCES.map((source) => ({
      source,
      ...(bySource.get(source) ?? { approved: 0, rejected: 0 }),
    })),
    byTool: [...byTool].map(([tool, o]) => ({ tool, ...o })).sort(busiestFirst),
    byAgent: [...byAgent]
      .map(([id, o]) => ({ id, name: agentNames.get(id) ?? "(deleted agent)", ...o }))
      .sort(busiestFirst),
  };
}

function outcomesBy(
  rows: Row[],
  key: string,
  namesById: Map<string, string>,
): (Named & Outcomes)[] {
  const byId = new Map<string, Outcomes>();
  for (const row of rows) {
    const id = row[key] as string;
    let entry = byId.get(id);
    if (!entry) byId.set(id, (entry = { approved: 0, rejected: 0 }));
    entry[row.decision_outcome as keyof Outcomes] += Number(row.n);
  }
  return [...byId]
    .map(([id, o]) => ({ id, name: namesById.get(id) ?? "(deleted person)", ...o }))
    .sort((a, b) => b.approved + b.rejected - (a.approved + a.rejected));
}
