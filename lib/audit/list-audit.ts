import { z } from "zod";
import { and, desc, lt, or, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { isoTime } from "@/lib/ids";
import { managerOf, requireAdmin, type QueueCaller } from "@/lib/queues/queue-access";

// The audit view: the event log narrowed to changes of trust — agent keys, reviewer tokens,
// sessions, people, queue memberships and roles, and hosted MCP gateways — newest first, for admins.

/** Event type prefixes that are changes of who may do what. */
export const TRUST_EVENT_PREFIXES = [
  "agent.",
  "reviewer_token.",
  "session.",
  "person.",
  "member.",
  "sso.",
  "mcp_gateway.",
];

export const AuditQuery = z.object({
  /** the seq the previous page ended at: this page holds older events */
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type AuditQuery = z.input<typeof AuditQuery>;

export type AuditEntry = {
  seq: number;
  type: string;
  at: string;
  queueId: string | null;
  actor: { kind: string; id: string | null; name: string | null };
  data: Record<string, unknown>;
};

export async function listAuditEvents(
  caller: QueueCaller,
  query: unknown,
): Promise<{ events: AuditEntry[]; nextCursor: number | null }> {
  const { before, limit } = parseInput(AuditQuery, query ?? {});
  const db = getDb();
  requireAdmin(await managerOf(db, caller), "see the audit log");
  const rows = await db
    .select()
    .from(events)
    .where(
      and(
        before ? lt(events.seq, before) : undefined,
        or(...TRUST_EVENT_PREFIXES.map((p) => sql`${events.type} glob ${`${p}*`}`)),
      ),
    )
    .orderBy(desc(events.seq))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  return {
    events: page.map((row) => ({
      seq: row.seq,
      type: row.type,
      at: isoTime(row.at),
      queueId: row.queueId,
      actor: { kind: row.actorKind, id: row.actorId, name: row.actorName },
      data: row.data,
    })),
    nextCursor: rows.length > limit ? page[page.length - 1]!.seq : null,
  };
}
