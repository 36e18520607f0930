import { z } from "zod";
import { SingleLineText } from "@/lib/text/stored-text";

export const RoutingRuleInput = z.object({
  name: SingleLineText.trim().min(1).max(100),
  /** the queue to send matching batches to: id or name */
  queue: SingleLineText.min(1).max(200),
  /** only this agent's batches: agent key id or name; omit for any agent */
  agent: SingleLineText.min(1).max(200).nullish(),
  /** a glob over tool names (`*` for any run of characters), matched by any call */
  toolPattern: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_.:*\-/]+$/, "letters, digits, _ . : - / and * only")
    .nullish(),
  /** the batch's total cost estimate at least this */
  minCost: z.number().min(0).nullish(),
  /** lower runs first; default: after the last rule */
  position: z.int().min(0).max(1_000_000).optional(),
  enabled: z.boolean().default(true),
});
export type RoutingRuleInput = z.infer<typeof RoutingRuleInput>;

export const RoutingRuleUpdate = RoutingRuleInput.partial();
export type RoutingRuleUpdate = z.infer<typeof RoutingRuleUpdate>;

export const RoutingRuleMove = z.object({
  /** the rule's place in the order after the move, counted from 0 (clamped to the ends) */
  to: z.int().min(0).max(1_000_000),
});
