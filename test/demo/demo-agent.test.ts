import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, batches, events, queues, runs } from "@/db/schema";
import { freshDatabase } from "../support/database";
import { runAdminCli } from "../support/admin-cli";
import { bundledEntry } from "../support/bundled-entry";
import { makeQueue, makeReviewer } from "../support/factories";
import { apiClient, type ApiClient } from "../support/http";
import { waitUntil } from "../support/polling";
import { freePort, startServer, type TestServer } from "../support/server";

// `npm run demo` as a newcomer runs it: a real child process against a real `next start` server,
// decided by a reviewer over the API while it waits.

let server: TestServer;
let databaseUrl: string;
let reviewer: ApiClient;
const children: ChildProcess[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase("demo");
  server = await startServer({ databaseUrl });
  // What the first sign-up leaves behind: the queue "General" with its admin.
  await makeQueue({ name: "General" });
  const dana = await makeReviewer({
    name: "Dana Reviewer",
    queues: [{ name: "General", role: "admin" }],
  });
  reviewer = apiClient(server.baseUrl, dana.token);
});
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
afterAll(() => server?.stop());

type Demo = {
  child: ChildProcess;
  output: () => string;
  /** resolves with the exit code (null when killed by a signal) */
  exited: Promise<number | null>;
};

const DEMO_ENTRY = "lib/demo/demo-agent.ts";
let demoBundle: string;
beforeAll(async () => {
  demoBundle = await bundledEntry(DEMO_ENTRY);
});

/**
 * The demo as a child process, started from its bundle (test/support/bundled-entry.ts), or with
 * `viaTsx` exactly as `npm run demo` starts it.
 */
function startDemo(
  args: string[],
  env: Record<string, string> = {},
  { viaTsx = false } = {},
): Demo {
  const inherited = { ...process.env };
  for (const name of ["COUNTERSIGN_AGENT_KEY", "COUNTERSIGN_URL", "PORT"]) delete inherited[name];
  const entry = viaTsx
    ? [join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs"), DEMO_ENTRY]
    : [demoBundle];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: process.cwd(),
    env: { ...inherited, DATABASE_URL: databaseUrl, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return { child, output: () => output, exited };
}

async function exitCode(demo: Demo, timeoutMs = 45_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`The demo did not exit in ${timeoutMs} ms. Output:\n${demo.output()}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([demo.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function pendingBatches(): Promise<any[]> {
  const answer = await reviewer.get("/queue?status=pending");
  expect(answer.status).toBe(200);
  return answer.body.batches;
}

/** The pending card of `runId` that asks for `toolCallId`, once it is there. */
async function pendingStep(runId: string, toolCallId: string, demo: Demo): Promise<any> {
  return waitUntil(
    async () =>
      (await pendingBatches()).find(
        (b) => b.runId === runId && b.calls.some((c: any) => c.toolCallId === toolCallId),
      ) ?? null,
    { timeoutMs: 30_000, what: `the card of ${toolCallId} (demo output:\n${demo.output()})` },
  );
}

async function decide(call: { id: string }, body: Record<string, unknown>) {
  const answer = await reviewer.post(`/calls/${call.id}/decision`, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

// Every test starts tsx child processes, which start slowly on a busy 2-core machine.
describe("npm run demo", { timeout: 90_000 }, () => {
  it("pauses three runs in General, then resumes each exactly as the reviewer decided", async () => {
    // This one starts as `npm run demo` does (tsx); the others from the bundle, to save time.
    const demo = startDemo(["--url", server.baseUrl], {}, { viaTsx: true });
    const waiting = await waitUntil(
      async () => {
        const found = await pendingBatches();
        return found.length === 3 ? found : null;
      },
      { timeoutMs: 30_000, what: `three pending cards (demo output:\n${demo.output()})` },
    );

    const byTool = (name: string) =>
      waiting.find((b) => b.calls.some((c: any) => c.toolName === name));
    const refund = byTool("refund_order");
    const coding = byTool("delete_files");
    const plan = waiting.find((b) => b.kind === "plan");
    expect(refund.agent.name).toBe("Support bot");
    expect(refund.queue.name).toBe("General");
    expect(refund.calls[0]).toMatchObject({
      args: { orderId: "1042", amount: 42, currency: "USD" },
      costEstimate: 42,
      inputSchema: { properties: { amount: { maximum: 500 } } },
    });
    expect(refund.calls[0].risks.length).toBeGreaterThan(0);
    // a long deadline: the newcomer has time to find the card
    expect(Date.parse(refund.expiresAt) - Date.now()).toBeGreaterThan(25 * 60_000);
    expect(coding.agent.name).toBe("Coding agent");
    expect(coding.calls.map((c: any) => c.toolName)).toEqual([
      "delete_files",
      "merge_pull_request",
    ]);
    expect(coding.calls[1].args).toEqual({ repo: "acme/shop", number: 128, method: "squash" });
    expect(plan).toBeDefined();
    expect(plan.plan).toMatchObject({
      summary: expect.any(String),
      rationale: expect.any(String),
      resources: expect.any(Array),
      risks: expect.any(Array),
      rollback: expect.any(String),
    });
    // the plan itself is the one thing asked (its steps come after it, each on its own card)
    expect(plan.calls.map((c: any) => c.toolName)).toEqual(["plan"]);
    expect(plan.plan.rationale).toContain("four steps");

    // each card's review link is printed while it waits
    await waitUntil(() => waiting.every((b) => demo.output().includes(b.reviewUrl)), {
      what: "the review links in the demo's output",
    });
    expect(demo.output()).toContain("waiting for a reviewer");

    // the schema the demo sent caps the amount, so an edit above it is refused
    const tooMuch = await reviewer.post(`/calls/${refund.calls[0].id}/decision`, {
      outcome: "edit",
      expectedRevision: refund.calls[0].revision,
      editedArgs: { ...refund.calls[0].args, amount: 600 },
    });
    expect(tooMuch.status).toBe(400);

    const reason = "Keep .env.staging: it is not in git.";
    await decide(refund.calls[0], {
      outcome: "edit",
      expectedRevision: refund.calls[0].revision,
      editedArgs: { ...refund.calls[0].args, amount: 30 },
    });
    await decide(coding.calls[0], {
      outcome: "reject",
      expectedRevision: coding.calls[0].revision,
      reason,
    });
    await decide(coding.calls[1], {
      outcome: "approve",
      expectedRevision: coding.calls[1].revision,
    });
    const planCall = plan.calls[0];
    const editedSummary = "Rotate the checkout-api credentials tonight, after the batch jobs.";
    const planAnswer = await decide(planCall, {
      outcome: "edit",
      expectedRevision: planCall.revision,
      editedArgs: { ...planCall.args, summary: editedSummary },
    });
    expect(planAnswer.call.decision.editedArgs.summary).toBe(editedSummary);
    // Only now does the plan's work start, and each of its four steps asks on a card of its own.
    for (const [index, tool] of [
      "create_db_role",
      "write_vault_secret",
      "restart_deployment",
      "disable_db_role",
    ].entries()) {
      const step = await pendingStep(plan.runId, `step-${index + 1}`, demo);
      expect(step.kind).toBe("action");
      expect(step.calls).toHaveLength(1);
      expect(step.calls[0].toolName).toBe(tool);
      expect(step.calls[0].summary).toContain(`Step ${index + 1} of 4`);
      await decide(step.calls[0], { outcome: "approve", expectedRevision: step.calls[0].revision });
    }

    expect(await exitCode(demo)).toBe(0);
    const output = demo.output();
    expect(output).toContain("approved by Dana Reviewer (edited: amount 42 → 30)");
    expect(output).toContain("refund_order completed: refunded $30.00 on order #1042");
    expect(output).toContain(`delete_files rejected by Dana Reviewer: “${reason}”`);
    expect(output).toContain("delete_files not run (rejected)");
    expect(output).toContain("merge_pull_request completed: merged acme/shop#128");
    expect(output).toContain(
      `plan approved by Dana Reviewer (edited summary: “${editedSummary}”) → claimed → working to “${editedSummary}”`,
    );
    for (const [n, tool] of [
      [1, "create_db_role"],
      [2, "write_vault_secret"],
      [3, "restart_deployment"],
      [4, "disable_db_role"],
    ] as const) {
      expect(output).toContain(`paused: step ${n} of 4, ${tool}`);
      expect(output).toContain(
        `step ${n} of 4 approved by Dana Reviewer → claimed → ${tool} completed`,
      );
    }
    expect(output.match(/→ run completed/g)).toHaveLength(3);
    expect(output).toContain("all 3 runs completed");

    const runIds = [refund.runId, coding.runId, plan.runId];
    for (const runId of runIds) {
      const run = await reviewer.get(`/runs/${runId}`);
      expect(run.status).toBe(200);
      expect(run.body.status, runId).toBe("completed");
    }
    const codingRun = (await reviewer.get(`/runs/${coding.runId}`)).body;
    expect(codingRun.result.notRun).toEqual([
      expect.objectContaining({ toolName: "delete_files", reason }),
    ]);

    // What the agent really did, from the event log: the edited refund (with its revert), no
    // deletion, the merge and the plan's first step — each run claimed exactly once.
    const logged = await getDb().select().from(events).where(inArray(events.runId, runIds));
    const completed = logged.filter((e) => e.type === "tool.completed");
    expect(completed.map((e) => e.data.toolCallId).sort()).toEqual([
      "merge-128",
      "refund-1042",
      "step-1",
      "step-2",
      "step-3",
      "step-4",
    ]);
    const planRun = (await reviewer.get(`/runs/${plan.runId}`)).body;
    expect(planRun.batches.map((b: any) => b.kind)).toEqual([
      "plan",
      "action",
      "action",
      "action",
      "action",
    ]);
    expect(planRun.result).toMatchObject({ approvedSummary: editedSummary, notRun: [] });
    const refunded = completed.find((e) => e.data.toolCallId === "refund-1042")!;
    expect(refunded.runId).toBe(refund.runId);
    expect(refunded.data.result).toMatchObject({ orderId: "1042", amount: 30, currency: "USD" });
    expect(refunded.data.revert).toMatchObject({ action: "reverse_refund", amount: 30 });
    expect(logged.filter((e) => e.type === "tool.failed")).toEqual([]);
    // each pause claimed exactly once: one for the refund and the coding batch, five for the
    // plan (after the plan, then after each step)
    const claims = (runId: string) =>
      logged.filter((e) => e.runId === runId && e.type === "run.claimed").length;
    expect([claims(refund.runId), claims(coding.runId), claims(plan.runId)]).toEqual([1, 1, 5]);
  });

  it("a plan's rejected step stops the plan: the later steps never ask and nothing else runs", async () => {
    const demo = startDemo(["--url", server.baseUrl, "--scenario", "plan"]);
    const plan = await waitUntil(
      async () =>
        (await pendingBatches()).find(
          (b) => b.kind === "plan" && demo.output().includes(b.reviewUrl),
        ) ?? null,
      { timeoutMs: 30_000, what: `the plan card (demo output:\n${demo.output()})` },
    );
    await decide(plan.calls[0], { outcome: "approve", expectedRevision: plan.calls[0].revision });
    const first = await pendingStep(plan.runId, "step-1", demo);
    await decide(first.calls[0], { outcome: "approve", expectedRevision: 1 });
    const second = await pendingStep(plan.runId, "step-2", demo);
    const reason = "Not before the Vault upgrade.";
    await decide(second.calls[0], { outcome: "reject", expectedRevision: 1, reason });

    expect(await exitCode(demo)).toBe(0);
    const output = demo.output();
    expect(output).toContain("plan approved by Dana Reviewer → claimed");
    expect(output).toContain(
      `step 2 of 4 rejected by Dana Reviewer: “${reason}” → claimed → write_vault_secret not run (rejected) → the plan stops: steps 3–4 not run → run completed`,
    );
    expect(output).not.toContain("step 3 of 4");
    const run = (await reviewer.get(`/runs/${plan.runId}`)).body;
    expect(run.status).toBe("completed");
    expect(run.batches).toHaveLength(3);
    expect(run.result.notRun.map((n: any) => n.toolCallId)).toEqual(["step-2", "step-3", "step-4"]);
    const ran = await getDb().select().from(events).where(eq(events.runId, plan.runId));
    expect(ran.filter((e) => e.type === "tool.completed").map((e) => e.data.toolCallId)).toEqual([
      "step-1",
    ]);
  });

  it("run twice, reuses its agent keys (rotated) so each name stays one key the admin CLI finds", async () => {
    const active = (name: string) =>
      getDb()
        .select()
        .from(agentKeys)
        .where(and(eq(agentKeys.name, name), isNull(agentKeys.revokedAt)));
    const args = ["--url", server.baseUrl, "--scenario", "support", "--scenario", "coding"];
    const before = await active("Coding agent");
    for (const round of [1, 2]) {
      // a 2 s deadline: the cards expire (fail closed) and the demo exits by itself
      const demo = startDemo([...args, "--timeout", "2"]);
      expect(await exitCode(demo), demo.output()).toBe(0);
      expect(demo.output()).toContain(
        round === 1 && before.length === 0 ? "new agent keys for" : "reused the agent keys of",
      );
      expect(demo.output()).toContain("both runs completed.");
    }
    const support = await active("Support bot");
    const coding = await active("Coding agent");
    expect([support.length, coding.length]).toEqual([1, 1]);
    if (before.length) expect(coding[0]!.id).toBe(before[0]!.id);
    const all = await getDb()
      .select()
      .from(agentKeys)
      .where(inArray(agentKeys.name, ["Support bot", "Coding agent"]));
    expect(all).toHaveLength(2);
    // rotated in place: the key kept its id and name and has a new secret
    expect(coding[0]!.previousKeyHash).not.toBeNull();

    const mode = await runAdminCli(
      databaseUrl,
      "agent",
      "mode",
      "--name",
      "Coding agent",
      "--mode",
      "ask",
    );
    expect(mode.code, mode.stderr).toBe(0);
    expect(mode.stdout).toContain("Agent 'Coding agent' is now in mode ask.");
  }, 90_000); // two demo runs and the admin CLI, each a cold tsx start

  it("says how to start Countersign when nothing answers, exits 1 and creates nothing", async () => {
    const keysBefore = (await getDb().select().from(agentKeys)).length;
    const port = await freePort();
    // through --url, and through the default http://127.0.0.1:$PORT
    const demos = [
      startDemo(["--url", `http://127.0.0.1:${port}`]),
      startDemo([], { PORT: String(port) }),
    ];
    for (const demo of demos) {
      expect(await exitCode(demo)).toBe(1);
      expect(demo.output()).toContain(
        `Countersign is not answering at http://127.0.0.1:${port} — start it with \`npm start\` first`,
      );
    }
    expect((await getDb().select().from(agentKeys)).length).toBe(keysBefore);
  });

  it("explains a refused agent key (COUNTERSIGN_AGENT_KEY) and pauses nothing", async () => {
    const runsBefore = (await getDb().select().from(runs)).length;
    const demo = startDemo(["--url", server.baseUrl], {
      COUNTERSIGN_AGENT_KEY: "cs_agent_not-a-key",
    });
    expect(await exitCode(demo)).toBe(1);
    expect(demo.output()).toContain("refused the agent key in COUNTERSIGN_AGENT_KEY (401)");
    expect(demo.output()).toContain("npm run admin -- agent create");
    expect((await getDb().select().from(runs)).length).toBe(runsBefore);
  });

  it("creates a missing queue, says nobody is in it, and on Ctrl+C withdraws its card and exits", async () => {
    const demo = startDemo([
      "--url",
      server.baseUrl,
      "--queue",
      "Night shift",
      "--scenario",
      "support",
    ]);
    await waitUntil(() => demo.output().includes("review it at"), {
      timeoutMs: 30_000,
      what: `the paused card (output:\n${demo.output()})`,
    });
    const output = demo.output();
    expect(output).toContain("created the queue “Night shift”: nobody is a member yet");
    expect(output).toContain("npm run admin -- reviewer create --email");
    expect(output).toContain('--queue "Night shift:admin"');
    expect(output).not.toContain("[coding]");
    expect(output).not.toContain("[plan]");

    const [queue] = await getDb().select().from(queues).where(eq(queues.name, "Night shift"));
    expect(queue).toBeDefined();
    const [paused] = await getDb().select().from(batches).where(eq(batches.queueId, queue!.id));
    expect(paused?.status).toBe("pending");

    demo.child.kill("SIGINT");
    expect(await exitCode(demo)).toBe(130);
    expect(demo.output()).toContain("withdrew the card and closed the run");
    const [batch] = await getDb().select().from(batches).where(eq(batches.id, paused!.id));
    expect(batch).toMatchObject({
      status: "cancelled",
      cancelReason: expect.stringContaining("Ctrl+C"),
    });
    const [run] = await getDb().select().from(runs).where(eq(runs.id, paused!.runId));
    expect(run?.status).toBe("failed");
  });

  it("at the deadline, carries on without the calls nobody decided (fail closed)", async () => {
    const demo = startDemo([
      "--url",
      server.baseUrl,
      "--queue",
      "Deadline",
      "--scenario",
      "support",
      "--timeout",
      "2",
    ]);
    expect(await exitCode(demo)).toBe(0);
    const output = demo.output();
    expect(output).toContain("calls nobody decided by then are rejected");
    expect(output).toContain(
      "rejected: nobody decided before the deadline (onTimeout: reject, fail closed) → claimed → refund_order not run (expired) → run completed",
    );
    const [queue] = await getDb().select().from(queues).where(eq(queues.name, "Deadline"));
    const [expired] = await getDb().select().from(batches).where(eq(batches.queueId, queue!.id));
    expect(expired?.status).toBe("expired");
    const [run] = await getDb().select().from(runs).where(eq(runs.id, expired!.runId));
    expect(run?.status).toBe("completed");
    const reported = await getDb().select().from(events).where(eq(events.runId, run!.id));
    expect(reported.filter((e) => e.type.startsWith("tool."))).toEqual([]);
  });

  it("prints its usage, and refuses unknown scenarios", async () => {
    const help = startDemo(["--help"]);
    const wrong = startDemo(["--scenario", "nope"]);
    expect(await exitCode(help)).toBe(0);
    expect(help.output()).toContain("--scenario NAME");
    for (const name of ["support", "coding", "plan"]) expect(help.output()).toContain(`  ${name} `);
    expect(await exitCode(wrong)).toBe(2);
    expect(wrong.output()).toContain("Unknown scenario 'nope'");
  });
});
