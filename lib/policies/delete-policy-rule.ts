import { eq } from "drizzle-orm";
import { policyRules } from "@/db/schema";
import { NotFoundError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { findWritableRule } from "./policy-access";

/** Calls it settled keep a copy of it (decision.policy.rule), so their record stays whole. */
export async function deletePolicyRule(caller: QueueCaller, ruleId: string): Promise<void> {
  await transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const rule = await findWritableRule(tx, manager, ruleId);
    const [gone] = await tx
      .delete(policyRules)
      .where(eq(policyRules.id, ruleId))
      .returning({ id: policyRules.id });
    if (!gone) throw new NotFoundError("Policy rule");
    await appendEvent(tx, {
      type: "policy.rule_deleted",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { rule },
    });
  });
}
