import { z } from "zod";
import { findCallForReviewer } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, type BatchView, type CallView } from "@/lib/api/views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { transact } from "@/lib/events/transact";
import { applyDecision } from "./apply-decision";

export const DecideCallInput = z
  .object({
    outcome: z.enum(["approve", "reject", "edit"]),
    expectedRevision: z.int().min(1),
    reason: z.string().max(4000).optional(),
    editedArgs: z.record(z.string(), z.unknown()).optional(),
    scope: z.enum(["once", "run", "conversation"]).optional(),
  })
  .refine((d) => d.outcome === "edit" || d.editedArgs === undefined, {
    path: ["editedArgs"],
    message: "editedArgs are only for outcome edit",
  })
  .refine((d) => d.outcome !== "edit" || d.editedArgs !== undefined, {
    path: ["editedArgs"],
    message: "required when outcome is edit",
  })
  .refine((d) => d.outcome !== "reject" || d.scope === undefined || d.scope === "once", {
    path: ["scope"],
    message: "only approvals can be remembered",
  });
export type DecideCallInput = z.infer<typeof DecideCallInput>;

/** A reviewer approves, rejects or edits one call at the revision they reviewed. */
export async function decideCall(
  actor: Actor,
  callId: string,
  body: unknown,
): Promise<{ call: CallView; batch: BatchView }> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(DecideCallInput, body);
  return transact(async (tx) => {
    const { call, target } = await findCallForReviewer(tx, reviewer, callId);
    const settled = await applyDecision(tx, reviewer, call, target, input);
    const batch = settled ?? (await loadBatchView(tx, target.batch.id))!;
    return { call: batch.calls.find((c) => c.id === callId)!, batch };
  });
}
