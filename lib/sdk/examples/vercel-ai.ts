import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generateText, stepCountIs, tool, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { requestApprovals, type ApprovalDecision } from "../adapters/vercel-ai.js";
import { Countersign } from "../client.js";
import type { Batch } from "../types.js";

// A refund agent on the Vercel AI SDK whose `refund_order` tool needs approval: each step's
// approval requests become one Countersign card, and the agent resumes with what people decided.
// The model is the AI SDK's own mock, scripted (no network, no key): it asks to refund each order,
// then answers from the tool results it is given. Swap in a real model and nothing else changes.
//
//   COUNTERSIGN_URL=http://127.0.0.1:3000 COUNTERSIGN_AGENT_KEY=cs_agent_… \
//     npx tsx lib/sdk/examples/vercel-ai.ts

export type Order = { orderId: string; amount: number };
export type Refund = Order & { refundId: string };

export type RefundAgentOptions = {
  baseUrl: string;
  apiKey: string;
  /** the refunds the model asks for, all in its first step (default: $42 on order 1042) */
  orders?: Order[];
  /** a queue id or name the agent key may target (default: the key's default queue) */
  queue?: string;
  /** where progress goes (default: console.log) */
  log?: (line: string) => void;
  /** a client of your own (retries, fetch…); default one from baseUrl and apiKey */
  client?: Countersign;
};

export type RefundAgentOutcome = {
  runId: string;
  /** the model's final answer */
  text: string;
  /** what the refund tool really did */
  refunds: Refund[];
  batches: Batch[];
  decisions: ApprovalDecision[];
  /** every prompt the model was given, in order (what it saw of the decisions) */
  prompts: ReturnType<typeof scriptedRefundModel>["doGenerateCalls"][number]["prompt"][];
};

const SYSTEM =
  "You are a support agent. Refund orders with refund_order. When a refund is not approved, do not retry it; tell the customer why.";
const MAX_TURNS = 5;

export async function main(options: RefundAgentOptions): Promise<RefundAgentOutcome> {
  const log = options.log ?? console.log;
  const orders = options.orders ?? [{ orderId: "1042", amount: 42 }];
  const client =
    options.client ?? new Countersign({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const refunds: Refund[] = [];
  const tools = {
    refund_order: tool({
      description: "Refund an order, fully or in part. Money leaves the company.",
      inputSchema: z.object({
        orderId: z.string().describe("the order's number"),
        amount: z.number().positive().max(500).describe("in USD"),
      }),
      needsApproval: true,
      execute: async ({ orderId, amount }) => {
        const refund = { refundId: `re_${randomUUID().slice(0, 8)}`, orderId, amount };
        refunds.push(refund);
        log(`refund_order ran: refunded ${usd(amount)} on order ${orderId}`);
        return refund;
      },
    }),
  };
  const model = scriptedRefundModel(orders);
  const run = await client.startRun({ metadata: { example: "vercel-ai", orders } });
  log(`run ${run.runId} started`);
  const messages: ModelMessage[] = [
    {
      role: "user",
      content: `Please refund ${orders.map((o) => `order ${o.orderId}`).join(" and ")}.`,
    },
  ];
  const batches: Batch[] = [];
  const decisions: ApprovalDecision[] = [];
  try {
    for (let turn = 1; turn <= MAX_TURNS; turn++) {
      const result = await generateText({
        model,
        system: SYSTEM,
        tools,
        messages,
        stopWhen: stepCountIs(MAX_TURNS),
      });
      messages.push(...result.response.messages);
      const answer = await requestApprovals(client, {
        result,
        messages,
        tools,
        run,
        queue: options.queue,
        summary: (request) => {
          const order = request.input as Order;
          return `Refund ${usd(order.amount)} on order ${order.orderId}`;
        },
        risks: () => ["Money leaves the company"],
        costEstimate: (request) => (request.input as Order).amount,
        onPending: (batch) =>
          log(
            `waiting for a reviewer: ${batch.calls.length} call(s), review it at ${batch.reviewUrl}`,
          ),
      });
      if (!answer.batch) {
        await run.complete({ text: result.text, refunds });
        log(`the model answered: ${result.text}`);
        log("run completed");
        const prompts = model.doGenerateCalls.map((call) => call.prompt);
        return { runId: run.runId, text: result.text, refunds, batches, decisions, prompts };
      }
      batches.push(answer.batch);
      decisions.push(...answer.decisions);
      for (const decision of answer.decisions) log(describeDecision(decision));
      messages.push(...answer.messages);
    }
    throw new Error(`The model was still asking for approvals after ${MAX_TURNS} turns.`);
  } catch (error) {
    await run.fail(error).catch(() => {});
    throw error;
  }
}

/**
 * The AI SDK's mock model, scripted: with no tool results yet it asks to refund every order in
 * one step; once it has them, it says what happened to each (the refund, or why there was none).
 */
export function scriptedRefundModel(orders: Order[]) {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 0, text: 0, reasoning: undefined },
  };
  const suffix = randomUUID().slice(0, 8);
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      if (last?.role !== "tool") {
        return {
          content: orders.map((order) => ({
            type: "tool-call" as const,
            toolCallId: `call_${order.orderId}_${suffix}`,
            toolName: "refund_order",
            input: JSON.stringify(order),
          })),
          finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      const asked = new Map<string, Order>();
      for (const message of prompt)
        if (message.role === "assistant")
          for (const part of message.content)
            if (part.type === "tool-call") asked.set(part.toolCallId, part.input as Order);
      const lines = last.content.flatMap((part) => {
        if (part.type !== "tool-result") return [];
        const order = asked.get(part.toolCallId);
        const output = part.output;
        if (output.type === "execution-denied")
          return [`Order ${order?.orderId} was not refunded. ${output.reason ?? ""}`.trim()];
        if (output.type === "json") {
          const value = output.value as { output?: Refund } & Partial<Refund>;
          const refund = value.output ?? value; // an edited call's result wraps the tool's output
          return [`Refunded ${usd(Number(refund.amount))} on order ${refund.orderId}.`];
        }
        return [`Refunding order ${order?.orderId} failed: ${JSON.stringify(output.value)}.`];
      });
      return {
        content: [{ type: "text" as const, text: lines.join(" ") }],
        finishReason: { unified: "stop" as const, raw: "stop" },
        usage,
        warnings: [],
      };
    },
  });
}

function describeDecision(decision: ApprovalDecision): string {
  const by = decision.decidedBy?.name ?? decision.source;
  const order = decision.input as Order;
  const what = `refund of ${usd(order.amount)} on order ${order.orderId}`;
  const said = decision.reason ? `: “${decision.reason}”` : "";
  if (!decision.approved) return `${what} not approved (${by})${said}`;
  if (decision.editedInput !== undefined)
    return `${what} approved by ${by} with an edited input ${JSON.stringify(decision.editedInput)}${said}`;
  return `${what} approved by ${by}${said}`;
}

function usd(amount: number): string {
  return `$${amount.toFixed(2)}`;
}

const SETUP = `This example needs a running Countersign app and an agent key:

  1. Start the app:         npm run build && npm start
  2. Sign in once (the first account gets the queue "General"), then make an agent key:
                            npm run admin -- agent create --name "Refund agent" --queue General
  3. Run the agent:         COUNTERSIGN_URL=http://127.0.0.1:3000 \\
                            COUNTERSIGN_AGENT_KEY=cs_agent_… \\
                            npx tsx lib/sdk/examples/vercel-ai.ts

It prints a review link: approve, edit or reject the refund there, and the agent carries on.`;

/** The command line: reads COUNTERSIGN_URL and COUNTERSIGN_AGENT_KEY; resolves with the exit code. */
export async function cli(
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = console.log,
): Promise<number> {
  const baseUrl = env.COUNTERSIGN_URL;
  const apiKey = env.COUNTERSIGN_AGENT_KEY;
  if (!baseUrl || !apiKey) {
    const missing = [!baseUrl && "COUNTERSIGN_URL", !apiKey && "COUNTERSIGN_AGENT_KEY"];
    log(`Missing ${missing.filter(Boolean).join(" and ")}.\n\n${SETUP}`);
    return 2;
  }
  try {
    await main({ baseUrl, apiKey, log });
    return 0;
  } catch (error) {
    log(`The refund agent stopped: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

function isEntryPoint(): boolean {
  try {
    const invoked = process.argv[1];
    return !!invoked && realpathSync(invoked) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) void cli().then((code) => (process.exitCode = code));
