import { z } from "zod";
import { SingleLineText } from "@/lib/text/stored-text";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import type { AgentActor } from "@/lib/auth/actor";
import { CallInput } from "@/lib/batches/batch-input";
import { createBatch } from "@/lib/batches/create-batch";
import { readBatch } from "@/lib/batches/read-batch";
import { InvalidRequestError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { createRun } from "@/lib/runs/create-run";
import { finishMcpRunOnRead } from "@/lib/runs/finish-mcp-run";

// The two MCP tools as verbs over the API's own verbs (createRun, createBatch, readBatch): the
// same validation, policies, routing, events and access checks as the HTTP API. A run started
// here is finished when its client reads the decision (finishMcpRunOnRead): MCP has no claim.

const Wait = z
  .number()
  .min(0)
  .max(60)
  .default(0)
  .describe(
    "Seconds (0–60) to hold this call until the request is decided; answered as still pending when the time runs out. Many MCP clients give up on a call after 60 s, so 50 or less is safest.",
  );

const Id = SingleLineText.min(1).max(200);

export const RequestApprovalInput = z.object({
  toolName: CallInput.shape.toolName.describe(
    "The name of the tool you are about to call, e.g. refund_order.",
  ),
  args: CallInput.shape.args.describe(
    "The exact arguments you intend to pass to that tool, as an object.",
  ),
  summary: CallInput.shape.summary.describe(
    "One or two sentences for the reviewer: what the call does and why you need it.",
  ),
  risks: CallInput.shape.risks.describe("What could go wrong if it runs, one short item each."),
  costEstimate: CallInput.shape.costEstimate.describe(
    "What the call will cost, when it spends money (a plain number, in costCurrency).",
  ),
  costCurrency: CallInput.shape.costCurrency.describe(
    "The ISO 4217 currency of costEstimate, e.g. EUR (default USD).",
  ),
  inputSchema: CallInput.shape.inputSchema.describe(
    "The tool's JSON Schema for its arguments, if you have it: a reviewer's edits are checked against it.",
  ),
  queue: Id.optional().describe(
    "The reviewer queue (id or name) to ask; leave it out to use this agent key's default queue.",
  ),
  timeoutSecs: z
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .optional()
    .describe("How long reviewers have to decide; the queue's default when left out."),
  onTimeout: z
    .enum(["reject", "approve", "escalate"])
    .optional()
    .describe(
      "What happens if nobody decides in time: reject (the default: fail closed), approve, or escalate to the queue's escalation queue.",
    ),
  runId: Id.optional().describe(
    "Pause this existing run of yours (it must be running, or resuming under your claim) instead of starting a new run. Leave it out in most cases.",
  ),
  claimToken: Id.optional().describe(
    "With runId: the token of your live claim on that run, when it is resuming.",
  ),
  conversationId: Id.optional().describe(
    "An id for the conversation or thread you are working in. Reviewers can approve a call for the whole conversation, and later identical calls with the same conversationId are then approved at once. Used for a new run only.",
  ),
  externalId: Id.optional().describe("Your own id for the new run (used for a new run only)."),
  wait: Wait,
});
export type RequestApprovalInput = z.infer<typeof RequestApprovalInput>;

export const GetApprovalInput = z.object({
  batchId: Id.describe("The batchId that request_approval answered."),
  wait: Wait,
});
export type GetApprovalInput = z.infer<typeof GetApprovalInput>;

/**
 * Asks for approval of one tool call: a new run paused on a one-call batch (or a new batch on the
 * agent's run), then, with `wait`, held until it is decided. Calls that a policy settles at once
 * come back decided without waiting.
 */
export async function requestApproval(
  agent: AgentActor,
  input: RequestApprovalInput,
  signal?: AbortSignal,
): Promise<BatchView> {
  if (input.claimToken !== undefined && input.runId === undefined) {
    throw new InvalidRequestError("Invalid request: claimToken: only with runId", [
      { path: "claimToken", message: "only with runId" },
    ]);
  }
  const batchBody = {
    calls: [
      {
        // MCP does not hand us the host's tool call id; the contract needs one per call.
        toolCallId: `mcp-${newId()}`,
        toolName: input.toolName,
        args: input.args,
        inputSchema: input.inputSchema,
        summary: input.summary,
        risks: input.risks,
        costEstimate: input.costEstimate,
        costCurrency: input.costCurrency,
      },
    ],
    queue: input.queue,
    timeoutSecs: input.timeoutSecs,
    onTimeout: input.onTimeout,
  };
  const batch = input.runId
    ? (await createBatch(agent, input.runId, { ...batchBody, claimToken: input.claimToken })).batch
    : (
        await createRun(
          agent,
          {
            externalId: input.externalId,
            conversationId: input.conversationId,
            batch: batchBody,
          },
          { origin: "mcp" },
        )
      ).run.batches![0]!;
  if (batch.status !== "pending" || input.wait === 0) return delivered(agent, batch);
  return delivered(agent, await readBatch(agent, batch.id, { wait: input.wait }, signal));
}

/** The answer the client is about to read: a settled one finishes an MCP run. */
async function delivered(agent: AgentActor, batch: BatchView): Promise<BatchView> {
  await finishMcpRunOnRead(agent, batch);
  return batch;
}

/** The batch as it is now, or held (up to `wait` seconds) until it is decided. */
export async function getApproval(
  agent: AgentActor,
  input: GetApprovalInput,
  signal?: AbortSignal,
): Promise<BatchView> {
  return delivered(agent, await readBatch(agent, input.batchId, { wait: input.wait }, signal));
}
