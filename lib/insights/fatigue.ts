import type { InValue, Row } from "@libsql/client";

// Approval fatigue: people who approve the same safe call all day stop reading the cards. For
// each reviewer and each tool, how many of their approvals came within QUICK_APPROVAL_MS of the
// card appearing, beside their approval rate, so a lead sees rubber-stamping before it bites.
//
// Only a person's judgement counts: the votes table holds reviewers' votes alone (a policy, a
// remembered approval or a deadline settles a call without one), every human decision casts a
// vote (browser, API, Slack), and with a quorum each reviewer's own vote is timed from when the
// card appeared to them. A card "appears" when it is created, or — for a card escalated into
// the queue — at the latest escalation before the vote (it was in another team's queue before).

/** An approval given sooner than this after the card appeared is counted as a quick one. */
export const QUICK_APPROVAL_MS = 3_000;

export type FatigueCounts = {
  /** approving votes */
  approved: number;
  /** rejecting votes */
  rejected: number;
  /** approving votes cast less than QUICK_APPROVAL_MS after the card appeared */
  quickApprovals: number;
  /** quickApprovals / approved; null without approvals */
  quickShare: number | null;
  /** approved / (approved + rejected); null without votes */
  approvalRate: number | null;
};

export type Fatigue = {
  quickMs: number;
  byReviewer: ({ id: string; name: string } & FatigueCounts)[];
  byTool: ({ tool: string } & FatigueCounts)[];
};

/**
 * The votes of the cards settled in the period (`settledIn`, the same scope as the other
 * decision figures), per reviewer, tool and outcome, with how many approvals were quick. An
 * escalated card's arrival is its latest escalation event before the vote, read through the
 * run's events (events_run_idx) and only for cards that were escalated at all.
 */
export function fatigueStatement(
  settledIn: string,
  period: InValue[],
): { sql: string; args: InValue[] } {
  return {
    sql: `select v.reviewer_id, c.tool_name, v.outcome as decision_outcome, count(*) as n,
            sum(case when v.outcome = 'approved' and v.created_at - (case when b.escalations = 0 then b.created_at else coalesce(
              (select max(e.at) from events e indexed by events_run_idx
               where e.run_id = b.run_id and e.batch_id = b.id and e.type = 'batch.escalated' and e.at <= v.created_at),
              b.created_at) end) < ? then 1 else 0 end) as quick
          from batches b join calls c on c.batch_id = b.id join votes v on v.call_id = c.id
          where ${settledIn}
          group by v.reviewer_id, c.tool_name, v.outcome`,
    args: [QUICK_APPROVAL_MS, ...period],
  };
}

type Tally = { approved: number; rejected: number; quickApprovals: number };

function withRates(tally: Tally): FatigueCounts {
  const votes = tally.approved + tally.rejected;
  return {
    ...tally,
    quickShare: tally.approved === 0 ? null : tally.quickApprovals / tally.approved,
    approvalRate: votes === 0 ? null : tally.approved / votes,
  };
}

/** Most quick approvals first: the rows a lead should look at lead the list. */
const mostQuickFirst = (a: FatigueCounts, b: FatigueCounts) =>
  b.quickApprovals - a.quickApprovals || b.approved + b.rejected - (a.approved + a.rejected);

export function summarizeFatigue(rows: Row[], reviewerNames: Map<string, string>): Fatigue {
  const byReviewer = new Map<string, Tally>();
  const byTool = new Map<string, Tally>();
  const add = (map: Map<string, Tally>, key: string, row: Row) => {
    let tally = map.get(key);
    if (!tally) map.set(key, (tally = { approved: 0, rejected: 0, quickApprovals: 0 }));
    tally[row.decision_outcome as "approved" | "rejected"] += Number(row.n);
    tally.quickApprovals += Number(row.quick);
  };
  for (const row of rows) {
    add(byReviewer, row.reviewer_id as string, row);
    add(byTool, row.tool_name as string, row);
  }
  return {
    quickMs: QUICK_APPROVAL_MS,
    byReviewer: [...byReviewer]
      .map(([id, tally]) => ({
        id,
        name: reviewerNames.get(id) ?? "(deleted person)",
        ...withRates(tally),
      }))
      .sort(mostQuickFirst),
    byTool: [...byTool]
      .map(([tool, tally]) => ({ tool, ...withRates(tally) }))
      .sort(mostQuickFirst),
  };
}
