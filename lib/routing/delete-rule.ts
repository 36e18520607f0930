import { eq } from "drizzle-orm";
import { routingRules } from "@/db/schema";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { NotFoundError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { findRule, requireRoutingAdmin } from "./rule-access";

/** Batches it routed keep its id; their cards say "(deleted rule)". */
export async function deleteRule(actor: QueueCaller, ruleId: string): Promise<void> {
  await transact(async (tx) => {
    const manager = await requireRoutingAdmin(tx, actor);
    const rule = await findRule(tx, ruleId);
    const [gone] = await tx
      .delete(routingRules)
      .where(eq(routingRules.id, ruleId))
      .returning({ id: routingRules.id });
    if (!gone) throw new NotFoundError("Routing rule");
    await appendEvent(tx, {
      type: "routing.rule_deleted",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { rule },
    });
  });
}
