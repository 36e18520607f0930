import { pathToFileURL } from "node:url";
import {
  Agent,
  run,
  setTracingDisabled,
  tool,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import { assistantMessage, functionCall } from "@openai/agents/testing";
import { z } from "zod";
import { pauseOnInterruptions, resumeFromDecision } from "../adapters/openai-agents.js";
import { Countersign } from "../client.js";
import { CountersignError } from "../errors.js";

// A support agent (OpenAI Agents SDK) whose `refund_order` tool needs a person's approval, in two
// processes that share nothing but a run id:
//
//   COUNTERSIGN_URL=http://127.0.0.1:3000 COUNTERSIGN_AGENT_KEY=cs_agent_… \
//     npx tsx lib/sdk/examples/openai-agents.ts start          # pauses, prints the review link
//   npx tsx lib/sdk/examples/openai-agents.ts resume <runId>    # after the decision (--wait: wait for it)
//
// The model is scripted (no OpenAI account needed): give the agent `model: "gpt-5.1"` instead,
// and set OPENAI_API_KEY, for a real one.

const USAGE = `Usage: npx tsx lib/sdk/examples/openai-agents.ts start ["customer message"]
       npx tsx lib/sdk/examples/openai-agents.ts resume <runId> [--wait]
Environment: COUNTERSIGN_URL (default http://127.0.0.1:3000), COUNTERSIGN_AGENT_KEY (required).`;

// The scripted model needs no OpenAI account, so there is nowhere to send traces.
if (!process.env.OPENAI_API_KEY) setTracingDisabled(true);

export type Refund = { orderId: string; amount: number; idempotencyKey: string };

/**
 * Stands in for the payment provider. Refunds are keyed by the model's call id, so a call run
 * twice (a resumer that crashed after the refund, before Countersign heard of it) refunds once.
 */
export class Payments {
  readonly refunds: Refund[] = [];

  refund(request: Refund): Refund {
    const earlier = this.refunds.find((r) => r.idempotencyKey === request.idempotencyKey);
    if (earlier) return earlier;
    this.refunds.push(request);
    return request;
  }
}

/**
 * A stand-in for an LLM that answers from the conversation alone, as a real one does, so any
 * process can continue it: asked for a refund, it calls `refund_order`; given the tool's answer,
 * it tells the customer what happened.
 */
export class ScriptedSupportModel implements Model {
  /** every request it was sent, for tests */
  readonly requests: ModelRequest[] = [];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const items = typeof request.input === "string" ? [] : request.input;
    const answer = items.findLast((item) => item.type === "function_call_result");
    if (answer && answer.type === "function_call_result") {
      return this.respond([assistantMessage(reply(outputText(answer.output)))]);
    }
    const asked = typeof request.input === "string" ? request.input : userText(items);
    const orderId = /\b([A-Z]-\d+)\b/.exec(asked)?.[1] ?? "A-1001";
    const amount = Number(/(\d+(?:\.\d+)?)\s*(?:USD|\$)/i.exec(asked)?.[1] ?? 250);
    const callId = `call_${globalThis.crypto.randomUUID().slice(0, 12)}`;
    return this.respond([functionCall("refund_order", { orderId, amount }, { callId })]);
  }

  getStreamedResponse(): AsyncIterable<never> {
    throw new Error("The scripted model does not stream; run without `stream: true`.");
  }

  private respond(output: ModelResponse["output"]): ModelResponse {
    return { usage: new Usage({ requests: 1 }), output, responseId: `scripted-${Date.now()}` };
  }
}

/** The agent definition: the paused process and the resuming one build it alike. */
export function supportAgent(options: { model?: Model; payments?: Payments } = {}) {
  const payments = options.payments ?? new Payments();
  const refundOrder = tool({
    name: "refund_order",
    description: "Refund (part of) an order to the customer's original payment method.",
    parameters: z.object({
      orderId: z.string().describe("the order, e.g. A-1001"),
      amount: z.number().positive().describe("in USD"),
    }),
    needsApproval: true,
    execute: async ({ orderId, amount }, _context, details) => {
      const idempotencyKey = details?.toolCall?.callId ?? `${orderId}:${amount}`;
      const refund = payments.refund({ orderId, amount, idempotencyKey });
      return { refunded: refund.amount, orderId: refund.orderId, currency: "USD" };
    },
  });
  return new Agent({
    name: "Support",
    instructions:
      "You help customers with their orders. Refund when the customer is owed one; if a refund is not approved, explain why.",
    model: options.model ?? new ScriptedSupportModel(),
    tools: [refundOrder],
  });
}

type ExampleOptions = {
  client?: Countersign;
  model?: Model;
  payments?: Payments;
};

/** Part one: runs the agent until it wants to refund, asks Countersign, and returns. */
export async function start(
  message = "Order A-1001 never arrived. Please refund the 250 USD I paid.",
  options: ExampleOptions = {},
) {
  const client = options.client ?? clientFromEnv();
  const result = await run(supportAgent(options), message);
  const paused = await pauseOnInterruptions(client, result, {
    summary: ({ args }) => `Refund ${String(args.amount)} USD on order ${String(args.orderId)}`,
    risks: () => ["Money leaves the company"],
    costEstimate: ({ args }) => (typeof args.amount === "number" ? args.amount : undefined),
    newRun: { metadata: { example: "openai-agents" } },
  });
  if (!paused) return { status: "finished" as const, finalOutput: result.finalOutput };
  return {
    status: "paused" as const,
    runId: paused.runId,
    batch: paused.batch,
    reviewUrl: paused.batch.reviewUrl,
  };
}

/** Part two (another process, maybe hours later): continues the run with the decisions. */
export async function resume(
  runId: string,
  options: ExampleOptions & { workerId?: string; wait?: boolean } = {},
) {
  const client = options.client ?? clientFromEnv();
  return resumeFromDecision(client, supportAgent(options), {
    runId,
    workerId: options.workerId ?? `openai-agents-example-${process.pid}`,
    wait: options.wait,
  });
}

function clientFromEnv(): Countersign {
  const apiKey = process.env.COUNTERSIGN_AGENT_KEY;
  if (!apiKey) throw new UsageError("Set COUNTERSIGN_AGENT_KEY to an agent key (cs_agent_…).");
  return new Countersign({
    baseUrl: process.env.COUNTERSIGN_URL ?? "http://127.0.0.1:3000",
    apiKey,
  });
}

function reply(toolOutput: string): string {
  try {
    const refund = JSON.parse(toolOutput) as { refunded: number; orderId: string };
    return `I refunded ${refund.refunded} USD on order ${refund.orderId}. It should reach you in 3–5 business days.`;
  } catch {
    return `I could not refund the order. ${toolOutput}`;
  }
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  const text = (output as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : JSON.stringify(output);
}

function userText(items: Exclude<ModelRequest["input"], string>): string {
  return items
    .map((item) =>
      item.type === "message" && item.role === "user" && typeof item.content === "string"
        ? item.content
        : "",
    )
    .join("\n");
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "start") {
    const started = await start(rest[0] || undefined);
    if (started.status === "finished") {
      console.log(`The agent needed no approval: ${String(started.finalOutput)}`);
      return 0;
    }
    console.log(`Run ${started.runId} is waiting for approval: ${started.reviewUrl}`);
    console.log(`Once decided: npx tsx lib/sdk/examples/openai-agents.ts resume ${started.runId}`);
    return 0;
  }
  if (command === "resume" && rest[0]) {
    const resumed = await resume(rest[0], { wait: rest.includes("--wait") });
    for (const decision of resumed.decisions) {
      console.log(
        `${decision.toolName} ${JSON.stringify(decision.args)}: ${decision.outcome}${decision.message ? ` (${decision.message})` : ""}`,
      );
    }
    if (resumed.status === "paused") {
      console.log(`The agent asked again: ${resumed.batch.reviewUrl}`);
      return 0;
    }
    console.log(`Agent: ${String(resumed.result.finalOutput)}`);
    console.log(`Run ${resumed.runId} ${resumed.run.status}.`);
    return 0;
  }
  throw new UsageError(USAGE);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2))
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      if (error instanceof UsageError) {
        console.error(error.message);
        process.exit(2);
      }
      // already_claimed, not_ready, run_terminal: the server's sentence says what happened.
      console.error(CountersignError.is(error) ? `${error.code}: ${error.message}` : error);
      process.exit(1);
    });
}
