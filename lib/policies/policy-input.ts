import { z } from "zod";
import { POLICY_EFFECTS, PREDICATE_OPS } from "@/db/schema";
import { JsonValue } from "@/lib/input/json-value";
import { InvalidRequestError } from "@/lib/errors";
import { MultiLineText, SingleLineText } from "@/lib/text/stored-text";

const ToolPattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:*\-/]+$/, "letters, digits, _ . : - / and * only");

export const ArgPredicateInput = z
  .strictObject({
    /**
     * a path into the call's args: `path`, `options.target`, `files[0].path` (`$.` optional); in a
     * list, `paths[*]` holds when any element matches, `paths[all]` when every element does
     */
    path: z
      .string()
      .min(1)
      .max(200)
      .regex(
        /^(\$\.?)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+|\[(\d+|\*|all)\])*$/,
        "like a.b, files[0].path, paths[*] (any element) or paths[all] (every element)",
      ),
    op: z.enum(PREDICATE_OPS),
    /**
     * equals: any JSON value; prefix and glob: a string (`*` any run, `?` one character); atMost:
     * a number (the call's value must be a number no greater)
     */
    value: JsonValue,
  })
  .superRefine((predicate, ctx) => {
    if (predicate.op === "atMost") {
      if (typeof predicate.value !== "number" || !Number.isFinite(predicate.value))
        ctx.addIssue({
          code: "custom",
          path: ["value"],
          message: "atMost compares numbers: give a number",
        });
    } else if (
      predicate.op !== "equals" &&
      (typeof predicate.value !== "string" || !predicate.value)
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["value"],
        message: `${predicate.op} compares text: give a non-empty string`,
      });
    }
    if (JSON.stringify(predicate.value).length > 2000) {
      ctx.addIssue({ code: "custom", path: ["value"], message: "at most 2,000 characters" });
    }
  });

export const PolicyRuleInput = z.strictObject({
  name: SingleLineText.trim().min(1).max(100),
  /** the queue (id or name) the rule belongs to; null or omitted: every queue (admins only) */
  queue: SingleLineText.min(1).max(200).nullish(),
  effect: z.enum(POLICY_EFFECTS),
  /** only this agent's calls: agent key id or name */
  agent: SingleLineText.min(1).max(200).nullish(),
  /** a glob over the tool name (`*` for any run of characters) */
  toolPattern: ToolPattern.nullish(),
  /** every one must hold */
  argPredicates: z.array(ArgPredicateInput).max(20).default([]),
  /** the call's cost estimate above this */
  costAbove: z.number().min(0).nullish(),
  /** told to the agent when the rule blocks a call */
  reason: MultiLineText.trim().max(1000).nullish(),
  enabled: z.boolean().default(true),
});
export type PolicyRuleInput = z.infer<typeof PolicyRuleInput>;

export const PolicyRuleUpdate = PolicyRuleInput.omit({ queue: true })
  .partial()
  .extend({ argPredicates: z.array(ArgPredicateInput).max(20).optional() })
  .refine((input) => Object.values(input).some((v) => v !== undefined), {
    message: "name at least one field to change",
  });

export const PolicyRuleMove = z.strictObject({
  /** the rule's place among its queue's rules (or the global ones) after the move, from 0 */
  to: z.int().min(0).max(1_000_000),
});

export const PolicyTryInput = z.strictObject({
  /** the queue whose rules (with the global ones) apply */
  queue: SingleLineText.min(1).max(200),
  /** the agent (key id or name); omitted: rules that name an agent do not match */
  agent: SingleLineText.min(1).max(200).nullish(),
  call: z.strictObject({
    toolName: SingleLineText.min(1).max(200),
    args: z.record(z.string(), z.unknown()),
    costEstimate: z.number().nonnegative().optional(),
  }),
});

const Time = z.iso.datetime({ offset: true });
export const DAY_MS = 86_400_000;
/** The period of history a backtest or the suggestions read by default: the last 30 days. */
export const DEFAULT_HISTORY_DAYS = 30;
export const MAX_HISTORY_DAYS = 366;

/** A period of a queue's history: [from, to), ISO-8601 times. */
const HistoryPeriod = {
  from: Time.optional().describe("the period's start, inclusive; default: 30 days before `to`"),
  to: Time.optional().describe("the period's end, exclusive; default: now"),
};

export const PolicyBacktestInput = z.strictObject({
  /** the rule, exactly as `POST /policy-rules` takes it */
  rule: PolicyRuleInput,
  /** whose history: a queue id or name; default the rule's own queue (required for a global rule) */
  queue: SingleLineText.min(1).max(200).nullish(),
  /** the stored rule being changed, if any: it is left out of the rules the candidate meets */
  ruleId: SingleLineText.min(1).max(200).nullish(),
  ...HistoryPeriod,
});
export type PolicyBacktestInput = z.infer<typeof PolicyBacktestInput>;

export const PolicySuggestionsQuery = z.strictObject({
  queue: SingleLineText.min(1).max(200).describe("the queue (id or name) whose history is mined"),
  minApprovals: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe("approvals (unedited) a suggestion needs at least; default 20"),
  ...HistoryPeriod,
});
export type PolicySuggestionsQuery = z.infer<typeof PolicySuggestionsQuery>;

export const DismissSuggestionInput = z.strictObject({
  queue: SingleLineText.min(1).max(200),
  suggestionId: z.string().regex(/^[0-9a-f]{16,64}$/, "a suggestion's id"),
  fingerprint: z.string().regex(/^[0-9a-f]{16,64}$/, "a suggestion's fingerprint"),
});
export type DismissSuggestionInput = z.infer<typeof DismissSuggestionInput>;

/** [from, to) in ms from a period's optional ISO bounds; refuses a reversed or overlong one. */
export function periodOf(
  input: { from?: string | undefined; to?: string | undefined },
  now = Date.now(),
): { from: number; to: number } {
  const to = input.to ? Date.parse(input.to) : now;
  const from = input.from ? Date.parse(input.from) : to - DEFAULT_HISTORY_DAYS * DAY_MS;
  if (from >= to)
    throw new InvalidRequestError("The period must start before it ends.", [
      { path: "from", message: "must be before 'to'" },
    ]);
  if (to - from > MAX_HISTORY_DAYS * DAY_MS)
    throw new InvalidRequestError(`A period may cover at most ${MAX_HISTORY_DAYS} days.`, [
      { path: "from", message: `at most ${MAX_HISTORY_DAYS} days before 'to'` },
    ]);
  return { from, to };
}
