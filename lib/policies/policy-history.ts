import type { InValue } from "@libsql/client";
import { getClient } from "@/db/client";

// A queue's decided history as a policy rule would have met it: every call of the cards settled
// in a period, with its agent, tool, the args the agent asked (what the live gate sees), and what
// became of it. The backtest (backtest-policy.ts) and the suggestions (suggest-policies.ts) both
// read it, and judge it with the live gate's own matcher (evaluate-policy.ts).
//
// What counts as a person's judgement: a reviewer's decision (approved as asked, approved with
// edits, rejected). A deadline nobody met is counted apart (`expired`). A call settled by a policy
// rule or a remembered approval never reached a person: it is no evidence either way, and is only
// counted. A quorum call is one call however many people voted on it, and a card is one card.

/** What became of a call, as evidence of what people think of it. */
export type CallVerdict = "approved" | "edited" | "rejected" | "expired" | "policy" | "memory";

export type HistoryCall = {
  id: string;
  batchId: string;
  runId: string;
  agentKeyId: string;
  toolName: string;
  args: Record<string, unknown>;
  costEstimate: number | null;
  metadata: Record<string, unknown> | null;
  verdict: CallVerdict;
  /** the current revision: the votes that decided it are on this one */
  revision: number;
};

export type HistoryCard = {
  id: string;
  /** `decided` (by people, policy or memory) or `expired` (a deadline settled what was left) */
  status: "decided" | "expired";
  createdAt: number;
  decidedAt: number;
  calls: HistoryCall[];
};

/** Cards per read: each statement holds the (synchronous) embedded database this long at most. */
const PAGE = 500;

function verdictOf(source: unknown, outcome: unknown, edited: unknown): CallVerdict | null {
  switch (source) {
    case "reviewer":
      if (outcome === "rejected") return "rejected";
      return edited ? "edited" : "approved";
    case "timeout":
      return "expired";
    case "policy":
      return "policy";
    case "memory":
      return "memory";
    default:
      return null; // cancelled with its card: nobody decided it
  }
}

/** One page row, as json_array builds it (see readPolicyHistory). */
type PageRow = [
  batchId: string,
  status: HistoryCard["status"],
  createdAt: number,
  decidedAt: number,
  callId: string | null,
  runId: string,
  agentKeyId: string,
  toolName: string,
  args: Record<string, unknown>,
  costEstimate: number | null,
  metadata: Record<string, unknown> | null,
  source: string | null,
  outcome: string | null,
  edited: number,
  revision: number,
];

/**
 * The cards of `queueId` settled (decided or expired; cancelled cards were withdrawn, nobody
 * judged them) in [from, to), oldest first, with their calls. Read a page at a time in one read
 * transaction (one snapshot), letting the event loop run between pages: a 90-day read of a busy
 * queue never holds up the write path for more than one page's statement. Each page comes back
 * as ONE JSON text built by SQLite (json_group_array): handing the driver hundreds of rows of
 * fifteen cells costs several times the query itself.
 */
export async function readPolicyHistory(
  queueId: string,
  from: number,
  to: number,
): Promise<HistoryCard[]> {
  const transaction = await getClient().transaction("read");
  const cards = new Map<string, HistoryCard>();
  try {
    let after: { decidedAt: number; id: string } | null = null;
    for (;;) {
      // Keyset pages over the settled-cards index (queue, decided_at, …, id).
      const args: InValue[] = [queueId, from, to];
      let page = "";
      if (after) {
        // the plain lower bound lets SQLite seek the index to the page's start (an OR alone
        // would have it scan the period from its beginning for every page)
        page = "and b.decided_at >= ? and (b.decided_at > ? or b.id > ?)";
        args.push(after.decidedAt, after.decidedAt, after.id);
      }
      const { rows } = await transaction.execute({
        sql: `with page as (
                select b.id, b.status, b.created_at, b.decided_at, b.run_id from batches b
                where b.queue_id = ? and b.status <> 'pending' and b.decided_at >= ? and b.decided_at < ?
                and b.status in ('decided', 'expired') ${page}
                order by b.decided_at, b.id limit ${PAGE})
              select count(distinct p.id) as cards, json_group_array(json_array(
                p.id, p.status, p.created_at, p.decided_at, c.id, c.run_id, r.agent_key_id, c.tool_name,
                json(c.args), c.cost_estimate, json(c.metadata), c.decision_source, c.decision_outcome,
                c.edited_args is not null, c.revision)) as rows
              from page p left join calls c on c.batch_id = p.id
              left join runs r indexed by runs_insights_agent_idx on r.id = p.run_id`,
        args,
      });
      const pageCards = Number(rows[0]?.cards ?? 0);
      if (pageCards === 0) break;
      const pageRows = JSON.parse(String(rows[0]!.rows)) as PageRow[];
      for (const row of pageRows) {
        const [batchId, status, createdAt, decidedAt, callId] = row;
        let card = cards.get(batchId);
        if (!card)
          cards.set(batchId, (card = { id: batchId, status, createdAt, decidedAt, calls: [] }));
        if (
          !after ||
          decidedAt > after.decidedAt ||
          (decidedAt === after.decidedAt && batchId > after.id)
        )
          after = { decidedAt, id: batchId };
        if (callId === null) continue;
        const verdict = verdictOf(row[11], row[12], row[13]);
        if (!verdict) continue;
        card.calls.push({
          id: callId,
          batchId,
          runId: row[5],
          agentKeyId: row[6],
          toolName: row[7],
          args: row[8] ?? {},
          costEstimate: row[9],
          metadata: row[10],
          verdict,
          revision: row[14],
        });
      }
      await new Promise((resolve) => setImmediate(resolve));
      if (pageCards < PAGE) break;
    }
  } finally {
    transaction.close();
  }
  // oldest first; a card's calls in the order the agent sent them
  return [...cards.values()].sort(
    (a, b) => a.decidedAt - b.decidedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** When and why the named calls were decided, read only for the few a report lists. */
export async function decisionsOf(
  ids: string[],
): Promise<Map<string, { decidedAt: number | null; reason: string | null }>> {
  const found = new Map<string, { decidedAt: number | null; reason: string | null }>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const { rows } = await getClient().execute({
      sql: `select id, decided_at, decision_reason from calls where id in (${chunk.map(() => "?").join(", ")})`,
      args: chunk,
    });
    for (const row of rows)
      found.set(String(row.id), {
        decidedAt: row.decided_at === null ? null : Number(row.decided_at),
        reason: (row.decision_reason as string | null) ?? null,
      });
  }
  return found;
}

/**
 * The people whose votes decided `calls` (several under a quorum: every approval of the decided
 * revision, or the rejection), by call id. Read only for the few calls a report names.
 */
export async function decidersOf(
  calls: { id: string; revision: number; outcome: "approved" | "rejected" }[],
): Promise<Map<string, { id: string; name: string | null; at: number }[]>> {
  const byCall = new Map<string, { id: string; name: string | null; at: number }[]>();
  for (let i = 0; i < calls.length; i += 500) {
    const chunk = calls.slice(i, i + 500);
    const { rows } = await getClient().execute({
      sql: `select v.call_id, v.reviewer_id, coalesce(v.reviewer_name, u.name) as name, v.outcome,
              v.revision, v.created_at
            from votes v left join user u on u.id = v.reviewer_id
            where v.call_id in (${chunk.map(() => "?").join(", ")}) order by v.created_at`,
      args: chunk.map((c) => c.id),
    });
    const wanted = new Map(chunk.map((c) => [c.id, c]));
    for (const row of rows) {
      const call = wanted.get(String(row.call_id))!;
      if (row.outcome !== call.outcome) continue;
      // a rejection rejects whatever revision it was cast on; approvals count on the decided one
      if (call.outcome === "approved" && Number(row.revision) !== call.revision) continue;
      const list = byCall.get(call.id) ?? [];
      list.push({
        id: String(row.reviewer_id),
        name: (row.name as string | null) ?? null,
        at: Number(row.created_at),
      });
      byCall.set(call.id, list);
    }
  }
  return byCall;
}
