import {
  ApiProblem,
  ServerUnreachable,
  type Batch,
  type Call,
  type Claim,
  type DemoApiClient,
  type Run,
} from "./api-client";
import {
  describeDeadline,
  describeDecision,
  describePlanDecision,
  errorMessage,
  type Logger,
} from "./format";
import { TOOLS, type Scenario } from "./scenarios";

// One scripted agent run over the public API: pause with a batch → wait for the decision →
// claim → run the approved calls (a reviewer's edit wins) → report → complete.

export type ScenarioContext = {
  client: DemoApiClient;
  log: Logger;
  /** aborted on Ctrl+C: stop waiting, withdraw the card */
  stop: AbortSignal;
  /** tells this demo's runs apart from earlier ones (idempotency keys, worker ids) */
  sessionId: string;
  timeoutSecs: number;
  /** a queue to target instead of the key's default one */
  queue?: string;
  /** what to say when the API refuses the key (401) */
  unauthenticatedHelp: string;
};

export type ScenarioResult = "completed" | "failed" | "stopped";

const LONG_POLL_SECS = 30;
const LEASE_SECS = 120;
const STILL_WAITING_EVERY_MS = 5 * 60_000;
const RECONNECT_FOR_MS = 2 * 60_000;

class Stopped extends Error {}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Stopped());
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Stopped());
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export async function runScenario(
  scenario: Scenario,
  ctx: ScenarioContext,
): Promise<ScenarioResult> {
  const { log } = ctx;
  // the card waiting for a reviewer, if any: what Ctrl+C withdraws
  const paused: Paused = { current: undefined };
  try {
    paused.current = await pause(scenario, ctx);
    if (ctx.stop.aborted) throw new Stopped();
    const decided = await waitForDecision(paused.current.batch, ctx);
    // From the claim on, the demo finishes what it started (it takes milliseconds) rather than
    // leave a claimed run behind; only a plan's next step pauses the run again.
    const claim = await claimWhenReady(paused.current.run, ctx);
    paused.current = undefined;
    if (scenario.steps) return await followPlan(scenario, decided, claim, ctx, paused);
    return await resume(scenario, decided, claim, ctx);
  } catch (error) {
    if (error instanceof Stopped || ctx.stop.aborted) {
      await withdraw(paused.current, ctx);
      return "stopped";
    }
    log.error(`failed: ${explain(error, ctx)}`);
    return "failed";
  }
}

async function pause(
  scenario: Scenario,
  ctx: ScenarioContext,
): Promise<{ run: Run; batch: Batch }> {
  const body = {
    ...scenario.run,
    batch: {
      ...scenario.batch,
      ...(ctx.queue && { queue: ctx.queue }),
      timeoutSecs: ctx.timeoutSecs,
      onTimeout: "reject",
    },
  };
  // A retry with the same key and body answers the first run instead of pausing a second one.
  const idempotencyKey = `demo-${ctx.sessionId}-${scenario.name}`;
  let run: Run;
  for (let attempt = 1; ; attempt++) {
    try {
      run = await ctx.client.createRun(body, idempotencyKey);
      break;
    } catch (error) {
      const transient =
        error instanceof ServerUnreachable ||
        (error instanceof ApiProblem && (error.status >= 500 || error.status === 429));
      if (!transient || attempt === 3) throw error;
      ctx.log.error(
        `pausing failed (${errorMessage(error)}); retrying with the same Idempotency-Key, so no second card…`,
      );
      await sleep(attempt * 1000, ctx.stop);
    }
  }
  const batch = run.batches?.at(-1);
  if (!batch) throw new Error("POST /runs answered without the batch it was given");
  const steps = scenario.steps?.length ?? 0;
  const what =
    batch.kind === "plan"
      ? `plan “${scenario.batch.plan?.summary ?? "?"}”` +
        (steps ? ` (${steps} steps, each asked for on its own once the plan is approved)` : "")
      : describeCalls(batch.calls);
  ctx.log.info(`paused: ${what} — waiting for a reviewer…`);
  ctx.log.info(`  review it at ${batch.reviewUrl}  (queue “${batch.queue.name}”)`);
  ctx.log.info(
    `  deadline ${describeDeadline(batch.expiresAt)}: calls nobody decided by then are rejected (fail closed)`,
  );
  return { run, batch };
}

function describeCalls(calls: Call[]): string {
  return calls
    .map((call) => {
      const details = TOOLS[call.toolName]?.describe(call.args);
      return details ? `${call.toolName} ${details}` : call.toolName;
    })
    .join(" + ");
}

async function waitForDecision(batch: Batch, ctx: ScenarioContext): Promise<Batch> {
  let current = batch;
  let lastNote = Date.now();
  let failuresInARow = 0;
  let unreachableSince: number | null = null;
  while (current.status === "pending") {
    try {
      current = await ctx.client.waitForBatch(current.id, LONG_POLL_SECS, ctx.stop);
      failuresInARow = 0;
      if (unreachableSince !== null) {
        ctx.log.info("Countersign answers again; still waiting…");
        unreachableSince = null;
      }
    } catch (error) {
      if (ctx.stop.aborted) throw new Stopped();
      if (!(error instanceof ServerUnreachable)) throw error;
      // One failure alone is often a kept-alive connection the server had just closed: retry
      // at once, and only call the server lost when a fresh connection fails too.
      if (++failuresInARow === 1) continue;
      if (unreachableSince === null) {
        unreachableSince = Date.now();
        ctx.log.error(
          "lost Countersign; retrying every 2 s for up to 2 minutes (the paused run is safe in its database)…",
        );
      } else if (Date.now() - unreachableSince > RECONNECT_FOR_MS) {
        throw error;
      }
      await sleep(2000, ctx.stop);
    }
    if (current.status === "pending" && Date.now() - lastNote >= STILL_WAITING_EVERY_MS) {
      ctx.log.info(
        `still waiting for a reviewer; deadline ${describeDeadline(current.expiresAt)}…`,
      );
      lastNote = Date.now();
    }
  }
  if (current.status === "cancelled") throw new Error("the card was withdrawn (cancelled)");
  return current;
}

async function claimWhenReady(run: Run, ctx: ScenarioContext): Promise<Claim> {
  const workerId = `demo-${ctx.sessionId}-${process.pid}`;
  // The batch settles and the run becomes ready in one transaction, so `not_ready` here is
  // rare (another batch still open); give it a moment before giving up.
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.client.claimRun(run.id, workerId, LEASE_SECS);
    } catch (error) {
      if (error instanceof ApiProblem && error.code === "not_ready" && attempt < 20) {
        await sleep(250);
        continue;
      }
      throw new Error(`could not claim the run: ${explain(error, ctx)}`);
    }
  }
}

/**
 * Runs one approved call's tool — the reviewer's edit when there is one, never the original args —
 * and reports it on the run as completed or failed. A refusal from Countersign itself is thrown.
 */
async function runApprovedCall(
  client: ScenarioContext["client"],
  runId: string,
  claimToken: string,
  call: Batch["calls"][number],
): Promise<{ ok: true; said: string; result: unknown } | { ok: false; message: string }> {
  const tool = TOOLS[call.toolName];
  try {
    if (!tool) throw new Error(`the demo has no tool named ${call.toolName}`);
    const outcome = tool.run(call.decision?.editedArgs ?? call.args);
    await client.reportToolEvent(runId, {
      claimToken,
      type: "tool.completed",
      toolCallId: call.toolCallId,
      result: outcome.result,
      revert: outcome.revert,
    });
    return { ok: true, said: outcome.said, result: outcome.result };
  } catch (error) {
    if (error instanceof ApiProblem || error instanceof ServerUnreachable) throw error;
    await client.reportToolEvent(runId, {
      claimToken,
      type: "tool.failed",
      toolCallId: call.toolCallId,
      error: { message: errorMessage(error) },
    });
    return { ok: false, message: errorMessage(error) };
  }
}

async function resume(
  scenario: Scenario,
  decided: Batch,
  claim: Claim,
  ctx: ScenarioContext,
): Promise<ScenarioResult> {
  const { client, log } = ctx;
  const batch = claim.batch ?? decided;
  const runId = claim.run.id;
  const steps: string[] = [];
  const label = batch.kind === "plan" ? "plan " : "";
  if (batch.calls.length === 1) steps.push(`${label}${describeDecision(batch.calls[0]!)}`);
  else for (const call of batch.calls) log.info(`${call.toolName} ${describeDecision(call)}`);
  steps.push("claimed");

  const ran: unknown[] = [];
  const notRun: unknown[] = [];
  let failures = 0;
  try {
    for (const call of batch.calls) {
      if (call.decision?.outcome !== "approved") {
        steps.push(`${call.toolName} not run (${call.status})`);
        notRun.push({
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          status: call.status,
          reason: call.decision?.reason ?? null,
        });
        continue;
      }
      const run = await runApprovedCall(client, runId, claim.claimToken, call);
      if (run.ok) {
        steps.push(`${call.toolName} completed: ${run.said}`);
        ran.push({ toolCallId: call.toolCallId, toolName: call.toolName, result: run.result });
      } else {
        failures++;
        steps.push(`${call.toolName} failed: ${run.message}`);
      }
    }
    const outcome = failures ? "failed" : "completed";
    await client.completeRun(runId, {
      claimToken: claim.claimToken,
      outcome,
      ...(failures
        ? { error: { message: `${failures} tool call(s) failed`, ran, notRun } }
        : { result: { scenario: scenario.name, ran, notRun } }),
    });
    steps.push(`run ${outcome}`);
    (failures ? log.error : log.info)(steps.join(" → "));
    return outcome;
  } catch (error) {
    steps.push(`failed: ${explain(error, ctx)}`);
    log.error(steps.join(" → "));
    return "failed";
  }
}

type Paused = { current: { run: Run; batch: Batch } | undefined };

/**
 * A plan's run after the plan's decision (claimed): when the plan is approved, each step pauses
 * the run again as an action batch of its own, holding the claim, and runs once approved (an
 * edit wins); a rejected or failed step stops the plan there. A rejected plan runs nothing.
 */
async function followPlan(
  scenario: Scenario,
  decided: Batch,
  firstClaim: Claim,
  ctx: ScenarioContext,
  paused: Paused,
): Promise<ScenarioResult> {
  const { client, log } = ctx;
  const steps = scenario.steps ?? [];
  const runId = firstClaim.run.id;
  const planCall = (firstClaim.batch ?? decided).calls[0];
  const planOutcome = planCall ? `plan ${describePlanDecision(planCall)}` : "plan (no decision)";
  let claim = firstClaim;
  const ran: unknown[] = [];
  const notRun: unknown[] = [];
  const skip = (from: number, status: string) => {
    for (const step of steps.slice(from)) {
      notRun.push({ toolCallId: step.toolCallId, toolName: step.toolName, status });
    }
  };
  let failures = 0;
  const finish = async (line: string[]) => {
    const outcome = failures ? "failed" : "completed";
    const summary = {
      scenario: scenario.name,
      plan: planCall?.status ?? null,
      approvedSummary: approvedSummary(planCall) ?? null,
      ran,
      notRun,
    };
    await client.completeRun(runId, {
      claimToken: claim.claimToken,
      outcome,
      ...(failures ? { error: { message: `a step failed`, ...summary } } : { result: summary }),
    });
    line.push(`run ${outcome}`);
    (failures ? log.error : log.info)(line.join(" → "));
    return outcome;
  };

  if (planCall?.decision?.outcome !== "approved") {
    skip(0, "plan not approved");
    return await finish([planOutcome, "claimed", "no step run"]);
  }
  const summary = approvedSummary(planCall);
  log.info(`${planOutcome} → claimed → working to “${summary}”`);

  for (const [index, step] of steps.entries()) {
    const label = `step ${index + 1} of ${steps.length}`;
    const batch = await client.createBatch(
      runId,
      {
        kind: "action",
        calls: [step],
        claimToken: claim.claimToken,
        ...(ctx.queue && { queue: ctx.queue }),
        timeoutSecs: ctx.timeoutSecs,
        onTimeout: "reject",
        checkpoint: { step: index + 1, of: steps.length, plan: summary },
      },
      `demo-${ctx.sessionId}-${scenario.name}-step-${index + 1}`,
    );
    paused.current = { run: firstClaim.run, batch };
    log.info(`paused: ${label}, ${describeCalls(batch.calls)} — waiting for a reviewer…`);
    log.info(`  review it at ${batch.reviewUrl}`);
    const stepDecided = await waitForDecision(batch, ctx);
    claim = await claimWhenReady(firstClaim.run, ctx);
    paused.current = undefined;
    const call = (claim.batch ?? stepDecided).calls[0]!;
    const line = [`${label} ${describeDecision(call)}`, "claimed"];
    if (call.decision?.outcome !== "approved") {
      notRun.push({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        status: call.status,
        reason: call.decision?.reason ?? null,
      });
      skip(index + 1, "an earlier step was not approved");
      line.push(`${call.toolName} not run (${call.status})`);
      if (index + 1 < steps.length)
        line.push(`the plan stops: steps ${index + 2}–${steps.length} not run`);
      return await finish(line);
    }
    const run = await runApprovedCall(client, runId, claim.claimToken, call);
    if (!run.ok) {
      failures++;
      skip(index + 1, "an earlier step failed");
      line.push(`${call.toolName} failed: ${run.message}`, "the plan stops");
      return await finish(line);
    }
    ran.push({ toolCallId: call.toolCallId, toolName: call.toolName, result: run.result });
    line.push(`${call.toolName} completed: ${run.said}`);
    if (index + 1 === steps.length) return await finish(line);
    log.info(line.join(" → "));
  }
  return await finish(["no steps"]);
}

/** The plan's summary as approved: the reviewer's edit, else the agent's own. */
function approvedSummary(planCall: Call | undefined): string | undefined {
  const edited = planCall?.decision?.editedArgs?.summary;
  if (typeof edited === "string") return edited;
  const own = planCall?.args.summary;
  return typeof own === "string" ? own : undefined;
}

/** Ctrl+C: take the card back out of the queue and close the run, so nothing is left waiting. */
async function withdraw(paused: { run: Run; batch: Batch } | undefined, ctx: ScenarioContext) {
  if (!paused) {
    ctx.log.info("stopped before the card was created");
    return;
  }
  try {
    await ctx.client.cancelBatch(paused.batch.id, "The demo agent was stopped (Ctrl+C).");
  } catch (error) {
    if (error instanceof ApiProblem && error.code === "not_pending") {
      ctx.log.info("stopped: the card was decided meanwhile; its run stays ready to be claimed");
    } else {
      ctx.log.error(`stopped, but could not withdraw the card: ${explain(error, ctx)}`);
    }
    return;
  }
  try {
    await ctx.client.completeRun(paused.run.id, {
      outcome: "failed",
      error: { message: "The demo agent was stopped (Ctrl+C) before a decision." },
    });
    ctx.log.info("stopped: withdrew the card and closed the run as failed");
  } catch (error) {
    ctx.log.error(
      `stopped: withdrew the card, but could not close the run: ${explain(error, ctx)}`,
    );
  }
}

export function explain(error: unknown, ctx: Pick<ScenarioContext, "unauthenticatedHelp">): string {
  if (error instanceof ServerUnreachable)
    return `Countersign stopped answering at ${error.baseUrl}. Is it still running?`;
  if (error instanceof ApiProblem) {
    if (error.status === 401) return ctx.unauthenticatedHelp;
    return `${error.message} (${error.status} ${error.code})`;
  }
  return errorMessage(error);
}
