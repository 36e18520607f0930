import { asc, eq } from "drizzle-orm";
import { streamText, tool, type ModelMessage } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { getDb } from "@/db/client";
import { events as eventLog } from "@/db/schema";
import { Countersign } from "@/lib/sdk/index";
import { requestApprovals } from "@/lib/sdk/adapters/vercel-ai";
import { cli, main, type RefundAgentOptions } from "@/lib/sdk/examples/vercel-ai";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";

// The Vercel AI SDK example end to end: the real `ai` library (its mock model, scripted) asks for
// approvals, the adapter turns them into one Countersign batch, a reviewer decides over the API
// while the agent waits, and the agent resumes with tool-approval-responses.

let server: TestServer;
let reviewer: ApiClient;
let agent: ApiClient;
let queueId: string;
let options: RefundAgentOptions;

beforeAll(async () => {
  server = await startApiServer("adapter-vercel-ai");
  const team = await makeTeam();
  queueId = team.queue.id;
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
  agent = apiClient(server.baseUrl, team.agent.key);
  options = { baseUrl: server.baseUrl, apiKey: team.agent.key, log: () => {} };
}, 60_000);
afterAll(() => server?.stop());

/** The card the agent is waiting on, as the reviewer sees it in their queue. */
async function waitingCard(): Promise<any> {
  return waitUntil(
    async () => {
      const { status, body } = await reviewer.get(`/queue?queue=${queueId}&status=pending`);
      expect(status).toBe(200);
      return body.batches[0];
    },
    { timeoutMs: 15_000, what: "the agent's card in the queue" },
  );
}

async function decide(call: any, outcome: string, extra: Record<string, unknown> = {}) {
  const answer = await reviewer.post(`/calls/${call.id}/decision`, {
    outcome,
    expectedRevision: call.revision,
    ...extra,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** The run as the agent sees it, and the events logged on it, oldest first. */
async function runAndEvents(runId: string) {
  const run = await agent.get(`/runs/${runId}`);
  expect(run.status).toBe(200);
  const logged = await getDb()
    .select()
    .from(eventLog)
    .where(eq(eventLog.runId, runId))
    .orderBy(asc(eventLog.seq));
  return { run: run.body, events: logged };
}

/** The last tool message the model was given: its tool-result parts by tool call id. */
function lastToolResults(prompts: any[]): Record<string, any> {
  const last = prompts.at(-1).at(-1);
  expect(last.role).toBe("tool");
  return Object.fromEntries(
    last.content
      .filter((part: any) => part.type === "tool-result")
      .map((part: any) => [part.toolCallId, part.output]),
  );
}

describe("Vercel AI SDK adapter (lib/sdk/examples/vercel-ai.ts)", () => {
  it("an approved refund runs once, and the model answers from its result", async () => {
    const lines: string[] = [];
    const agentRun = main({ ...options, log: (line) => lines.push(line) });
    const card = await waitingCard();
    expect(card.calls).toHaveLength(1);
    const [call] = card.calls;
    expect(call).toMatchObject({
      toolName: "refund_order",
      args: { orderId: "1042", amount: 42 },
      summary: "Refund $42.00 on order 1042",
      risks: ["Money leaves the company"],
      costEstimate: 42,
      inputSchema: { type: "object", properties: { amount: { maximum: 500 } } },
      metadata: { aiSdk: { approvalId: expect.any(String) } },
    });
    expect(call.toolCallId).toMatch(/^call_1042_/);
    await waitUntil(() => lines.some((line) => line.includes(card.reviewUrl)), {
      what: "the review link in the output",
    });
    await decide(call, "approve");

    const outcome = await agentRun;
    expect(outcome.refunds).toEqual([
      { refundId: expect.any(String), orderId: "1042", amount: 42 },
    ]);
    expect(outcome.text).toBe("Refunded $42.00 on order 1042.");
    expect(outcome.decisions).toMatchObject([
      { approved: true, toolName: "refund_order", decidedBy: { name: "Dana Reviewer" } },
    ]);
    expect(outcome.batches.map((b) => b.id)).toEqual([card.id]);
    expect(outcome.prompts).toHaveLength(2);
    expect(lastToolResults(outcome.prompts)[call.toolCallId]).toEqual({
      type: "json",
      value: outcome.refunds[0],
    });

    const { run, events } = await runAndEvents(outcome.runId);
    expect(run.status).toBe("completed");
    expect(run.result.text).toBe(outcome.text);
    const reported = events.filter((e) => e.type.startsWith("tool."));
    expect(reported).toMatchObject([
      { type: "tool.completed", data: { toolCallId: call.toolCallId } },
    ]);
    expect(events.filter((e) => e.type === "run.claimed")).toHaveLength(1);
    expect(lines).toContain("run completed");
  });

  it("a rejected refund does not run, and the model reads the reviewer's reason", async () => {
    const reason = "Order 1042 was already refunded last week";
    const agentRun = main(options);
    const card = await waitingCard();
    await decide(card.calls[0], "reject", { reason });

    const outcome = await agentRun;
    expect(outcome.refunds).toEqual([]);
    const denied = lastToolResults(outcome.prompts)[card.calls[0].toolCallId];
    expect(denied).toEqual({
      type: "execution-denied",
      reason: `The reviewer rejected this call: ${reason}. The tool was not run.`,
    });
    expect(outcome.text).toContain(reason);
    expect(outcome.decisions).toMatchObject([{ approved: false, reason, source: "reviewer" }]);

    const { run, events } = await runAndEvents(outcome.runId);
    expect(run.status).toBe("completed");
    expect(events.filter((e) => e.type.startsWith("tool."))).toEqual([]);
  });

  it("two approvals in one step are one card: one approved, one rejected", async () => {
    const orders = [
      { orderId: "2001", amount: 20 },
      { orderId: "2002", amount: 480 },
    ];
    const agentRun = main({ ...options, orders });
    const card = await waitingCard();
    expect(card.calls.map((c: any) => c.args)).toEqual(orders);
    const [small, large] = card.calls;
    await decide(small, "approve");
    await decide(large, "reject", { reason: "Too large without a manager" });

    const outcome = await agentRun;
    expect(outcome.batches).toHaveLength(1);
    expect(outcome.refunds).toMatchObject([{ orderId: "2001", amount: 20 }]);
    const results = lastToolResults(outcome.prompts);
    expect(results[small.toolCallId]).toMatchObject({ type: "json" });
    expect(results[large.toolCallId]).toMatchObject({
      type: "execution-denied",
      reason: expect.stringContaining("Too large without a manager"),
    });
    expect(outcome.text).toBe(
      "Refunded $20.00 on order 2001. Order 2002 was not refunded. The reviewer rejected this call: Too large without a manager. The tool was not run.",
    );

    const { run, events } = await runAndEvents(outcome.runId);
    expect(run.status).toBe("completed");
    expect(events.filter((e) => e.type.startsWith("tool."))).toMatchObject([
      { type: "tool.completed", data: { toolCallId: small.toolCallId } },
    ]);
  });

  it("an edited approval runs the tool once, with the reviewer's input, and says so", async () => {
    const agentRun = main(options);
    const card = await waitingCard();
    const [call] = card.calls;
    // the tool's own schema travels with the card: an amount above its maximum is refused
    const tooMuch = await reviewer.post(`/calls/${call.id}/decision`, {
      outcome: "edit",
      expectedRevision: call.revision,
      editedArgs: { orderId: "1042", amount: 600 },
    });
    expect(tooMuch.status).toBe(400);
    await decide(call, "edit", { editedArgs: { orderId: "1042", amount: 30 } });

    const outcome = await agentRun;
    expect(outcome.refunds).toMatchObject([{ orderId: "1042", amount: 30 }]);
    expect(outcome.decisions).toMatchObject([
      { approved: true, input: { amount: 42 }, editedInput: { orderId: "1042", amount: 30 } },
    ]);
    const result = lastToolResults(outcome.prompts)[call.toolCallId];
    expect(result).toMatchObject({
      type: "json",
      value: { input: { amount: 30 }, output: { amount: 30 }, note: expect.any(String) },
    });
    expect(outcome.text).toBe("Refunded $30.00 on order 1042.");

    const { run, events } = await runAndEvents(outcome.runId);
    expect(run.status).toBe("completed");
    expect(events.filter((e) => e.type.startsWith("tool."))).toMatchObject([
      { type: "tool.completed", data: { toolCallId: call.toolCallId, result: { amount: 30 } } },
    ]);
  });

  it("works from stored messages and streamText results, one run across two pauses", async () => {
    const client = new Countersign({ baseUrl: server.baseUrl, apiKey: options.apiKey });
    const deleted: string[] = [];
    const tools = {
      delete_file: tool({
        inputSchema: z.object({ path: z.string() }),
        needsApproval: true,
        execute: async ({ path }) => {
          deleted.push(path);
          return { deleted: path };
        },
      }),
    };
    const finish = (unified: "tool-calls" | "stop") => ({
      type: "finish" as const,
      finishReason: { unified, raw: unified },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      },
    });
    const model = new MockLanguageModelV3({
      doStream: [
        {
          stream: convertArrayToReadableStream([
            { type: "stream-start" as const, warnings: [] },
            {
              type: "tool-call" as const,
              toolCallId: "call_tmp",
              toolName: "delete_file",
              input: JSON.stringify({ path: "tmp.txt" }),
            },
            finish("tool-calls"),
          ]),
        },
        {
          stream: convertArrayToReadableStream([
            { type: "stream-start" as const, warnings: [] },
            {
              type: "tool-call" as const,
              toolCallId: "call_log",
              toolName: "delete_file",
              input: JSON.stringify({ path: "debug.log" }),
            },
            finish("tool-calls"),
          ]),
        },
        {
          stream: convertArrayToReadableStream([
            { type: "stream-start" as const, warnings: [] },
            { type: "text-start" as const, id: "t" },
            { type: "text-delta" as const, id: "t", delta: "Deleted both." },
            { type: "text-end" as const, id: "t" },
            finish("stop"),
          ]),
        },
      ],
    });

    const run = await client.startRun({ conversationId: "conversation-7" });
    const messages: ModelMessage[] = [{ role: "user", content: "Delete tmp.txt" }];
    const first = streamText({ model, tools, messages });
    messages.push(...(await first.response).messages);
    // As a server that stored the conversation would: the pending requests are read from it.
    const answering = requestApprovals(client, { messages, tools, run });
    const card = await waitingCard();
    expect(card.runId).toBe(run.runId);
    await decide(card.calls[0], "approve", { reason: "scratch file" });
    const answer = await answering;
    expect(answer.messages).toEqual([
      {
        role: "tool",
        content: [
          {
            type: "tool-approval-response",
            approvalId: card.calls[0].metadata.aiSdk.approvalId,
            approved: true,
            reason: "Approved by Dana Reviewer: scratch file",
          },
        ],
      },
    ]);
    messages.push(...answer.messages);
    // answered requests are not pending any more
    expect((await requestApprovals(client, { messages, run })).batch).toBeNull();

    // The run pauses again (with the claim the first decision left it in), same run, second card.
    const second = streamText({ model, tools, messages });
    messages.push(...(await second.response).messages);
    expect(deleted).toEqual(["tmp.txt"]);
    const answeringAgain = requestApprovals(client, { result: second, tools, run });
    const secondCard = await waitingCard();
    expect(secondCard.runId).toBe(run.runId);
    expect(secondCard.calls.map((c: any) => c.args)).toEqual([{ path: "debug.log" }]);
    await decide(secondCard.calls[0], "approve");
    messages.push(...(await answeringAgain).messages);

    const third = streamText({ model, tools, messages });
    expect(await third.text).toBe("Deleted both.");
    expect(deleted).toEqual(["tmp.txt", "debug.log"]);
    const last = await requestApprovals(client, { result: third, run });
    expect(last.batch).toBeNull();
    await run.complete();

    const { run: ended, events } = await runAndEvents(run.runId);
    expect(ended.status).toBe("completed");
    expect(ended.batches.map((b: any) => b.id)).toEqual([card.id, secondCard.id]);
    expect(events.filter((e) => e.type.startsWith("tool."))).toMatchObject([
      { type: "tool.completed", data: { toolCallId: "call_tmp", result: { deleted: "tmp.txt" } } },
      {
        type: "tool.completed",
        data: { toolCallId: "call_log", result: { deleted: "debug.log" } },
      },
    ]);
    expect(events.filter((e) => e.type === "run.claimed")).toHaveLength(2);
  });

  it("gives up after wait.timeoutMs: the card is withdrawn and the call denied", async () => {
    const client = new Countersign({ baseUrl: server.baseUrl, apiKey: options.apiKey });
    const messages: ModelMessage[] = [
      { role: "user", content: "Refund order 9" },
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "call_9",
            toolName: "refund_order",
            input: { orderId: "9" },
          },
          { type: "tool-approval-request", approvalId: "approval_9", toolCallId: "call_9" },
        ],
      },
    ];
    const answer = await requestApprovals(client, { messages, wait: { timeoutMs: 300 } });
    expect(answer.batch?.status).toBe("cancelled");
    expect(answer.responses).toEqual([
      {
        type: "tool-approval-response",
        approvalId: "approval_9",
        approved: false,
        reason:
          "No reviewer decided in time, so the approval request was withdrawn. The tool was not run.",
      },
    ]);
    // the run it started is the caller's to carry on with, and is not left waiting
    const run = await agent.get(`/runs/${answer.run!.runId}`);
    expect(run.body.status).toBe("running");
    await answer.run!.complete();
  });

  it("the command line explains what it needs when its environment is missing", async () => {
    const lines: string[] = [];
    expect(await cli({ COUNTERSIGN_URL: server.baseUrl }, (line) => lines.push(line))).toBe(2);
    expect(lines.join("\n")).toContain("Missing COUNTERSIGN_AGENT_KEY");
    expect(lines.join("\n")).toContain("npm run admin -- agent create");
  });
});
