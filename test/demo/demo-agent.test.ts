import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { eq, inArray } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { agentKeys, batches, events, queues, runs } from "@/db/schema";
import { freshDatabase } from "../support/database";
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

function startDemo(args: string[], env: Record<string, string> = {}): Demo {
  const inherited = { ...process.env };
  for (const name of ["COUNTERSIGN_AGENT_KEY", "COUNTERSIGN_URL", "PORT"]) delete inherited[name];
  const child = spawn(
    process.execPath,
    [
      join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs"),
      "lib/demo/demo-agent.ts",
      ...args,
    ],
    {
      cwd: process.cwd(),
      env: { ...inherited, DATABASE_URL: databaseUrl, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
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

async function decide(call: { id: string }, body: Record<string, unknown>) {
  const answer = await reviewer.post(`/calls/${call.id}/decision`, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

// Every test starts tsx child processes, which start slowly on a busy 2-core machine.
describe("npm run demo", { timeout: 90_000 }, () => {
  it("pauses three runs in General, then resumes each exactly as the reviewer decided", async () => {
    const demo = startDemo(["--url", server.baseUrl]);
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
    expect(plan.calls.map((c: any) => c.toolName)).toEqual(["create_db_role"]);

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
    const planDecision = await reviewer.post(`/batches/${plan.id}/decision`, {
      outcome: "approve",
      expectedRevisions: Object.fromEntries(plan.calls.map((c: any) => [c.id, c.revision])),
    });
    expect(planDecision.status).toBe(200);

    expect(await exitCode(demo)).toBe(0);
    const output = demo.output();
    expect(output).toContain("approved by Dana Reviewer (edited: amount 42 → 30)");
    expect(output).toContain("refund_order completed: refunded $30.00 on order #1042");
    expect(output).toContain(`delete_files rejected by Dana Reviewer: “${reason}”`);
    expect(output).toContain("delete_files not run (rejected)");
    expect(output).toContain("merge_pull_request completed: merged acme/shop#128");
    expect(output).toContain("plan approved by Dana Reviewer");
    expect(output).toContain("create_db_role completed");
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
    ]);
    const refunded = completed.find((e) => e.data.toolCallId === "refund-1042")!;
    expect(refunded.runId).toBe(refund.runId);
    expect(refunded.data.result).toMatchObject({ orderId: "1042", amount: 30, currency: "USD" });
    expect(refunded.data.revert).toMatchObject({ action: "reverse_refund", amount: 30 });
    expect(logged.filter((e) => e.type === "tool.failed")).toEqual([]);
    for (const runId of runIds) {
      expect(logged.filter((e) => e.runId === runId && e.type === "run.claimed")).toHaveLength(1);
    }
  });

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
