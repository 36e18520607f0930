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
  decidedAt: number | null;
  decidedBy: { id: string | null; name: string | null };
  reason: string | null;
};

export type HistoryCard = {
  id: string;
  /** `decided` (by people, policy or memory) or `expired` (a deadline settled what was left) */
  status: "decided" | "expired";
  createdAt: number;
  decidedAt: number;
  calls: HistoryCall[];
};

/** Rows per read: each statement holds the (synchronous) embedded database this long at most. */
const PAGE = 2000;

function verdictOf(row: Record<string, unknown>): CallVerdict | null {
  switch (row.decision_source) {
    case "reviewer":
      if (row.decision_outcome === "rejected") return "rejected";
      return row.edited ? "edited" : "approved";
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

function json<T>(value: unknown): T | null {
  return typeof value === "string" ? (JSON.parse(value) as T) : null;
}

/**
 * The cards of `queueId` settled (decided or expired; cancelled cards were withdrawn, nobody
 * judged them) in [from, to), oldest first, with their calls. Read a page at a time in one read
 * transaction (one snapshot), letting the event loop run between pages: a 90-day read of a busy
 * queue never holds up the write path for more than one page's statement.
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
      // Keyset pages over the settled-cards index (batches_settled_idx: queue, decided_at, id).
      const args: InValue[] = [queueId, from, to];
      let page = "";
      if (after) {
        page = "and (b.decided_at > ? or (b.decided_at = ? and b.id > ?))";
        args.push(after.decidedAt, after.decidedAt, after.id);
      }
      const { rows: batchRows } = await transaction.execute({
        sql: `select b.id, b.status, b.created_at, b.decided_at from batches b
              where b.queue_id = ? and b.status <> 'pending' and b.decided_at >= ? and b.decided_at < ?
              and b.status in ('decided', 'expired') ${page}
              order by b.decided_at, b.id limit ${PAGE}`,
        args,
      });
      if (batchRows.length === 0) break;
      const last = batchRows[batchRows.length - 1]!;
      after = { decidedAt: Number(last.decided_at), id: String(last.id) };
      for (const b of batchRows)
        cards.set(String(b.id), {
          id: String(b.id),
          status: b.status as HistoryCard["status"],
          createdAt: Number(b.created_at),
          decidedAt: Number(b.decided_at),
          calls: [],
        });
      const ids = batchRows.map((b) => String(b.id));
      const { rows: callRows } = await transaction.execute({
        sql: `select c.id, c.batch_id, c.run_id, r.agent_key_id, c.tool_name, c.args, c.cost_estimate,
                c.metadata, c.decision_source, c.decision_outcome, c.edited_args is not null as edited,
                c.revision, c.decided_at, c.decided_by, c.decided_by_name, c.decision_reason
              from calls c join runs r indexed by runs_insights_agent_idx on r.id = c.run_id
              where c.batch_id in (${ids.map(() => "?").join(", ")})
              order by c.batch_id, c.position`,
        args: ids,
      });
      for (const c of callRows) {
        const verdict = verdictOf(c);
        if (!verdict) continue;
        cards.get(String(c.batch_id))!.calls.push({
          id: String(c.id),
          batchId: String(c.batch_id),
          runId: String(c.run_id),
          agentKeyId: String(c.agent_key_id),
          toolName: String(c.tool_name),
          args: json<Record<string, unknown>>(c.args) ?? {},
          costEstimate: c.cost_estimate === null ? null : Number(c.cost_estimate),
          metadata: json<Record<string, unknown>>(c.metadata),
          verdict,
          revision: Number(c.revision),
          decidedAt: c.decided_at === null ? null : Number(c.decided_at),
          decidedBy: {
            id: (c.decided_by as string | null) ?? null,
            name: (c.decided_by_name as string | null) ?? null,
          },
          reason: (c.decision_reason as string | null) ?? null,
        });
      }
      await new Promise((resolve) => setImmediate(resolve));
      if (batchRows.length < PAGE) break;
    }
  } finally {
    transaction.close();
  }
  return [...cards.values()];
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
