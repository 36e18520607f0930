import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { Agent, run, Usage, type ModelRequest, type ModelResponse } from "@openai/agents";
import { functionCall } from "@openai/agents/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Countersign, CountersignError, type FetchLike } from "@/lib/sdk/index";
import { pauseOnInterruptions, resumeFromDecision } from "@/lib/sdk/adapters/openai-agents";
import {
  Payments,
  resume,
  ScriptedSupportModel,
  start,
  supportAgent,
} from "@/lib/sdk/examples/openai-agents";
import { eventsOf, runCount } from "@/test/sdk/fixtures";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// The OpenAI Agents adapter with the real @openai/agents runner and a scripted model: the example
// pauses on `refund_order`, a reviewer decides over the API, and a resumer built from nothing but
// the run id (fresh client, agent, model and payment provider) continues the run.

let server: TestServer;
let reviewer: ApiClient;
let agentApi: ApiClient;
let agentKey: string;
let agentId: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  server = await startApiServer("openai-agents");
  const team = await makeTeam();
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
  agentApi = apiClient(server.baseUrl, team.agent.key);
  agentKey = team.agent.key;
  agentId = team.agent.id;
}, 60_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await server?.stop();
});

/** A fresh SDK client, as a new process would make; `claims` collects the claim answers it got. */
function freshClient() {
  const claims: any[] = [];
  const recording: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    if (url.endsWith("/claim") && response.ok) claims.push(await response.clone().json());
    return response;
  };
  const client = new Countersign({ baseUrl: server.baseUrl, apiKey: agentKey, fetch: recording });
  return { client, claims };
}

/** Everything a resuming process builds for itself: nothing is shared with the paused one. */
function freshProcess() {
  return { ...freshClient(), payments: new Payments(), model: new ScriptedSupportModel() };
}

async function startPaused(message?: string) {
  const started = await start(message, { client: freshClient().client });
  if (started.status !== "paused") throw new Error("the agent did not pause");
  return started;
}

async function decideOnly(
  batch: { calls: { id: string; revision: number }[] },
  outcome: "approve" | "reject" | "edit",
  extra: Record<string, unknown> = {},
) {
  const call = batch.calls[0]!;
  const answer = await reviewer.post(`/calls/${call.id}/decision`, {
    outcome,
    expectedRevision: call.revision,
    ...extra,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** The tool result the model was given in its last request. */
function lastToolResult(model: ScriptedSupportModel) {
  const input = model.requests.at(-1)!.input as any[];
  return {
    call: input.find((item) => item.type === "function_call"),
    result: input.find((item) => item.type === "function_call_result"),
  };
}

describe("OpenAI Agents adapter", () => {
  it("pauses on the interruption with the run state as checkpoint; a fresh resumer runs the approved call", async () => {
    const before = await runCount(agentId);
    const paused = new Payments();
    const started = await start("Order A-1001 never arrived. Please refund the 250 USD I paid.", {
      client: freshClient().client,
      payments: paused,
    });
    expect(started.status).toBe("paused");
    if (started.status !== "paused") return;
    expect(paused.refunds).toEqual([]);
    expect(await runCount(agentId)).toBe(before + 1);

    const { batch } = started;
    expect(batch.status).toBe("pending");
    expect(started.reviewUrl).toContain(batch.id);
    const [call] = batch.calls;
    expect(call).toMatchObject({
      toolName: "refund_order",
      args: { orderId: "A-1001", amount: 250 },
      summary: "Refund 250 USD on order A-1001",
      risks: ["Money leaves the company"],
      costEstimate: 250,
      metadata: { framework: "openai-agents", agent: "Support" },
    });
    expect(call!.toolCallId).toMatch(/^call_/);
    // The tool's parameters, so a reviewer's edit is checked against them.
    expect(call!.inputSchema).toMatchObject({
      type: "object",
      required: ["orderId", "amount"],
      properties: { orderId: { type: "string" }, amount: { type: "number" } },
    });

    // The agent's own view of the run never shows the checkpoint.
    const seen = await agentApi.get(`/runs/${started.runId}`);
    expect(seen.body.status).toBe("waiting_approval");
    expect(JSON.stringify(seen.body)).not.toMatch(
      /checkpoint|openai-agents\/run-state|schemaVersion/,
    );

    await decideOnly(batch, "approve");

    const later = freshProcess();
    const resumed = await resume(started.runId, { ...later, workerId: "resumer-approve" });
    expect(resumed.status).toBe("completed");
    expect(resumed.decisions).toEqual([
      {
        toolCallId: call!.toolCallId,
        toolName: "refund_order",
        outcome: "approved",
        args: { orderId: "A-1001", amount: 250 },
      },
    ]);
    // The claim answered the checkpoint and the decided batch.
    expect(later.claims).toHaveLength(1);
    expect(later.claims[0].batch.id).toBe(batch.id);
    expect(later.claims[0].checkpoint).toMatchObject({
      format: "openai-agents/run-state",
      version: 1,
      toolCallIds: [call!.toolCallId],
      state: {
        $schemaVersion: expect.any(String),
        originalInput: expect.stringContaining("A-1001"),
      },
    });

    // The tool ran once, with the model's arguments; the model was asked once more, with its result.
    expect(later.payments.refunds).toEqual([
      { orderId: "A-1001", amount: 250, idempotencyKey: call!.toolCallId },
    ]);
    expect(later.model.requests).toHaveLength(1);
    expect(lastToolResult(later.model).result).toMatchObject({ callId: call!.toolCallId });
    expect(resumed.result.finalOutput).toBe(
      "I refunded 250 USD on order A-1001. It should reach you in 3–5 business days.",
    );

    const done = await agentApi.get(`/runs/${started.runId}`);
    expect(done.body).toMatchObject({
      status: "completed",
      result: { finalOutput: resumed.result.finalOutput },
    });
    // Another resumer finds the run finished.
    const again = await resume(started.runId, freshProcess()).catch((error: unknown) => error);
    expect(CountersignError.is(again, "run_terminal")).toBe(true);
    const reported = await eventsOf(started.runId, "tool.completed");
    expect(reported.map((e) => e.data)).toEqual([
      {
        toolCallId: call!.toolCallId,
        result: { refunded: 250, orderId: "A-1001", currency: "USD" },
      },
    ]);
  });

  it("runs an edited call with the reviewer's arguments, and the model's history shows them", async () => {
    const started = await startPaused("Please refund order B-7 (300 USD).");
    await decideOnly(started.batch, "edit", {
      editedArgs: { orderId: "B-7", amount: 120 },
      reason: "shipping is not refundable",
    });

    const later = freshProcess();
    const resumed = await resume(started.runId, later);
    expect(resumed.status).toBe("completed");
    expect(resumed.decisions).toMatchObject([
      { outcome: "edited", args: { orderId: "B-7", amount: 120 } },
    ]);
    expect(later.payments.refunds).toMatchObject([{ orderId: "B-7", amount: 120 }]);
    const { call, result } = lastToolResult(later.model);
    expect(JSON.parse(call.arguments)).toEqual({ orderId: "B-7", amount: 120 });
    expect(result.output.text).toContain('"refunded":120');
    expect(resumed.result.finalOutput).toMatch(/^I refunded 120 USD on order B-7/);
  });

  it("does not run a rejected call; the model reads the reviewer's reason instead", async () => {
    const started = await startPaused("Refund order C-3, 80 USD please.");
    await decideOnly(started.batch, "reject", { reason: "Order C-3 was already refunded." });

    const later = freshProcess();
    const resumed = await resume(started.runId, later);
    expect(resumed.status).toBe("completed");
    expect(later.payments.refunds).toEqual([]);
    const message =
      "The reviewer rejected this call: Order C-3 was already refunded. The tool was not run.";
    expect(resumed.decisions).toMatchObject([{ outcome: "rejected", message }]);
    expect(lastToolResult(later.model).result.output).toMatchObject({ text: message });
    expect(resumed.result.finalOutput).toBe(`I could not refund the order. ${message}`);

    const done = await agentApi.get(`/runs/${started.runId}`);
    expect(done.body.status).toBe("completed");
    expect(await eventsOf(started.runId, "tool.completed")).toEqual([]);
  });

  it("lets one of two racing resumers claim the run; the other gets already_claimed", async () => {
    const started = await startPaused();
    await decideOnly(started.batch, "approve");

    // The winner's model holds its answer until the loser has been refused, so the loser's claim
    // meets a held run, never a finished one.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    class HeldModel extends ScriptedSupportModel {
      override async getResponse(request: ModelRequest): Promise<ModelResponse> {
        await held;
        return super.getResponse(request);
      }
    }
    const payments = new Payments(); // one payment provider behind both workers
    const resumers = ["racer-1", "racer-2"].map((workerId) =>
      resume(started.runId, {
        client: freshClient().client,
        model: new HeldModel(),
        payments,
        workerId,
      }),
    );
    const firstSettled = await Promise.race(
      resumers.map((r, index) =>
        r.then(
          () => index,
          () => index,
        ),
      ),
    );
    release();
    const [a, b] = await Promise.allSettled(resumers);
    const outcomes = [a!, b!];
    const loser = outcomes[firstSettled]!;
    const winner = outcomes[1 - firstSettled]!;

    expect(loser.status).toBe("rejected");
    const refused = (loser as PromiseRejectedResult).reason;
    expect(CountersignError.is(refused, "already_claimed")).toBe(true);
    expect(refused.details.holder).toBe(firstSettled === 0 ? "racer-2" : "racer-1");
    expect(winner).toMatchObject({ status: "fulfilled", value: { status: "completed" } });
    expect(payments.refunds).toHaveLength(1);
  });

  it("pauses again when the continued run stops on a new approval, and waits for a decision when asked", async () => {
    const started = await startPaused("Refund order D-1, 40 USD.");
    await decideOnly(started.batch, "approve");

    // This time the model wants a second refund after the first one.
    class TwoRefundsModel extends ScriptedSupportModel {
      override async getResponse(request: ModelRequest): Promise<ModelResponse> {
        this.requests.push(request);
        return {
          usage: new Usage({ requests: 1 }),
          output: [
            functionCall("refund_order", { orderId: "D-2", amount: 15 }, { callId: "call_second" }),
          ],
        };
      }
    }
    const first = freshProcess();
    const pausedAgain = await resume(started.runId, { ...first, model: new TwoRefundsModel() });
    expect(pausedAgain.status).toBe("paused");
    if (pausedAgain.status !== "paused") return;
    expect(first.payments.refunds).toMatchObject([{ orderId: "D-1", amount: 40 }]);
    expect(pausedAgain.batch).toMatchObject({
      status: "pending",
      calls: [{ toolCallId: "call_second", args: { orderId: "D-2", amount: 15 } }],
    });
    expect((await agentApi.get(`/runs/${started.runId}`)).body.status).toBe("waiting_approval");

    // A resumer that starts before the decision waits for it.
    const second = freshProcess();
    const resuming = resume(started.runId, { ...second, wait: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await decideOnly(pausedAgain.batch, "approve");
    const resumed = await resuming;
    expect(resumed.status).toBe("completed");
    expect(second.claims[0].checkpoint.toolCallIds).toEqual(["call_second"]);
    expect(second.payments.refunds).toMatchObject([{ orderId: "D-2", amount: 15 }]);
    expect(resumed.result.finalOutput).toMatch(/^I refunded 15 USD on order D-2/);
  });

  it("leaves the run to be resumed again when the resumer fails before any tool ran", async () => {
    const started = await startPaused("Refund order F-9, 30 USD.");
    await decideOnly(started.batch, "approve");

    // A deployment whose agent lost the tool: restoring works, running the approved call cannot.
    const broken = new Agent({ name: "Support", model: new ScriptedSupportModel() });
    const failed = await resumeFromDecision(freshClient().client, broken, {
      runId: started.runId,
      workerId: "broken-worker",
    }).catch((error: unknown) => error);
    expect((failed as Error).message).toMatch(/refund_order/);

    // Not failed: still held by the broken worker, whose lease lapses without heartbeats.
    const { body: run } = await agentApi.get(`/runs/${started.runId}`);
    expect(run).toMatchObject({ status: "resuming", claim: { workerId: "broken-worker" } });
    expect(await eventsOf(started.runId, "tool.completed")).toEqual([]);
  });

  it("refuses a run state over the checkpoint limit before creating anything", async () => {
    const before = await runCount(agentId);
    const result = await run(supportAgent(), "Refund order E-1, 10 USD.");
    expect(result.interruptions).toHaveLength(1);
    const { client } = freshClient();
    const refused = await pauseOnInterruptions(client, result, { maxCheckpointBytes: 1000 }).catch(
      (error: unknown) => error,
    );
    expect(CountersignError.is(refused, "payload_too_large")).toBe(true);
    expect(await runCount(agentId)).toBe(before);
  });

  it("runs as two separate processes from the command line", async () => {
    const started = await example(["start"]);
    expect(started.code, started.output).toBe(0);
    const [, runId, reviewUrl] =
      /Run (\S+) is waiting for approval: (\S+)/.exec(started.output) ?? [];
    expect(runId, started.output).toBeTruthy();
    expect(reviewUrl).toContain(server.baseUrl);

    const { body: paused } = await agentApi.get(`/runs/${runId}`);
    await decideOnly(paused.batches[0], "approve");

    const resumed = await example(["resume", runId!]);
    expect(resumed.code, resumed.output).toBe(0);
    expect(resumed.output).toContain('refund_order {"orderId":"A-1001","amount":250}: approved');
    expect(resumed.output).toContain("Agent: I refunded 250 USD on order A-1001.");
    expect(resumed.output).toContain(`Run ${runId} completed.`);
  }, 90_000); // two processes started with tsx, each a cold start
});

/** `npx tsx lib/sdk/examples/openai-agents.ts …` against the test server. */
function example(args: string[]): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    COUNTERSIGN_URL: server.baseUrl,
    COUNTERSIGN_AGENT_KEY: agentKey,
  };
  delete env.OPENAI_API_KEY;
  const child = spawn(
    process.execPath,
    [
      join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs"),
      "lib/sdk/examples/openai-agents.ts",
      ...args,
    ],
    { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, output })));
}
