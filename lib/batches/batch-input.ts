import { z } from "zod";
import { schemaProblem } from "@/lib/input/json-schema";
import { callbackUrlProblem } from "@/lib/webhooks/callback-target";
import { MultiLineText, SingleLineText } from "@/lib/text/stored-text";

const MAX_TIMEOUT_SECS = 30 * 24 * 3600;

const JsonObject = z.record(z.string(), z.unknown());

// The currencies this runtime can format (ISO 4217 codes it knows), read once.
const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

/** An ISO 4217 code, in capitals ("usd" is taken as "USD"); one Intl does not know is refused. */
export const CurrencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, "an ISO 4217 code of three letters, e.g. EUR")
  .transform((code) => code.toUpperCase())
  .refine((code) => KNOWN_CURRENCIES.has(code), { message: "not an ISO 4217 currency code" });

export const CallInput = z.object({
  toolCallId: SingleLineText.min(1).max(200),
  toolName: SingleLineText.min(1).max(200),
  args: JsonObject,
  inputSchema: JsonObject.optional().superRefine((schema, ctx) => {
    const problem = schema && schemaProblem(schema);
    if (problem) ctx.addIssue({ code: "custom", message: `not a valid JSON Schema: ${problem}` });
  }),
  summary: MultiLineText.max(4000).optional(),
  risks: z.array(MultiLineText.min(1).max(2000)).max(50).optional(),
  costEstimate: z.number().nonnegative().optional(),
  costCurrency: CurrencyCode.optional().describe(
    "the ISO 4217 currency of costEstimate (default USD); shown in it, never converted",
  ),
  metadata: JsonObject.optional(),
});
export type CallInput = z.infer<typeof CallInput>;

export const PlanInput = z.object({
  summary: MultiLineText.min(1).max(4000),
  rationale: MultiLineText.max(8000).optional(),
  resources: z.array(MultiLineText.min(1).max(2000)).max(200).optional(),
  risks: z.array(MultiLineText.min(1).max(2000)).max(50).optional(),
  rollback: MultiLineText.max(8000).optional(),
});
export type PlanInput = z.infer<typeof PlanInput>;

export const CreateBatchInput = z
  .object({
    kind: z.enum(["action", "plan"]).default("action"),
    calls: z.array(CallInput).max(100).default([]),
    plan: PlanInput.optional(),
    /** a queue id or name; it must be one the agent key may target */
    queue: SingleLineText.min(1).max(200).optional(),
    timeoutSecs: z.int().min(1).max(MAX_TIMEOUT_SECS).optional(),
    onTimeout: z
      .enum(["reject", "approve", "escalate"])
      .default("reject")
      .describe(
        "What happens at the deadline: reject the open calls (fail closed), approve them, or escalate: move the batch to its queue's escalation queue with a new deadline (that queue's default timeout). With no escalation queue, or after 3 escalations, it is rejected. approve is refused (400) unless the batch's queue allows it (approveOnTimeout) and the deadline is at least its approveOnTimeoutMinSecs.",
      ),
    checkpoint: z.unknown().optional(),
    callbackUrl: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
      .max(2000)
      // Loopback, private, link-local … targets are refused (lib/webhooks/callback-target.ts).
      .superRefine((url, ctx) => {
        const problem = callbackUrlProblem(url);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .describe(
        "Where the signed webhook is POSTed once the batch is settled: a public http(s) URL without credentials. Loopback, private, link-local, CGNAT and unique-local addresses (and names resolving to them) are refused unless the operator allows them (CALLBACK_ALLOWED_HOSTS).",
      )
      .optional(),
    claimToken: SingleLineText.min(1).max(200).optional(),
  })
  .superRefine((batch, ctx) => {
    if (batch.kind === "action" && batch.calls.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["calls"],
        message: "an action batch needs at least one call",
      });
    }
    if (batch.kind === "plan" && !batch.plan) {
      ctx.addIssue({ code: "custom", path: ["plan"], message: "a plan batch needs a plan" });
    }
    const seen = new Set<string>();
    batch.calls.forEach((call, index) => {
      if (seen.has(call.toolCallId)) {
        ctx.addIssue({
          code: "custom",
          path: ["calls", index, "toolCallId"],
          message: "duplicate toolCallId in this batch",
        });
      }
      seen.add(call.toolCallId);
    });
  });
export type CreateBatchInput = z.infer<typeof CreateBatchInput>;
