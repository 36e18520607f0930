import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { refundBatch } from "@/test/support/http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { apiClient } from "@/test/support/http";
import { makeAgentKey, makeReviewer } from "@/test/support/factories";
import { baseURL, pause, seedTeam, signIn, type Team } from "./support/fixtures";
import { shot, shotEverySize, shotsWanted } from "./support/screenshots";

// The run page: the story of one run (its approvals and every event), and the rollback button.

const CHECKPOINT = { messages: ["Refund order A-1001 please", "Checking the order…"], step: 3 };

/** pause → decide → claim → tool.completed → complete, all through the public API. */
async function finishedRun(team: Team) {
  const { run, batch } = await pause(
    team.agent,
    refundBatch({ checkpoint: CHECKPOINT, timeoutSecs: 900 }),
  );
  const call = batch.calls[0];
  const decided = await team.reviewerApi.post(`/calls/${call.id}/decision`, {
    outcome: "approve",
    expectedRevision: call.revision,
    reason: "Customer is a VIP; refund approved per policy 4.2",
  });
  expect(decided.status).toBe(200);
  const claim = await team.agent.post(`/runs/${run.id}/claim`, { workerId: "worker-7" });
  expect(claim.status).toBe(200);
  const token = claim.body.claimToken;
  const reported = await team.agent.post(`/runs/${run.id}/events`, {
    claimToken: token,
    type: "tool.completed",
    toolCallId: call.toolCallId,
    result: { refundId: "re_3PqL2", amount: 25, currency: "USD" },
    revert: { action: "charge", refundId: "re_3PqL2" },
  });
  expect(reported.status).toBe(201);
  const completed = await team.agent.post(`/runs/${run.id}/complete`, {
    claimToken: token,
    outcome: "completed",
    result: { summary: "Refunded $25.00 to the customer" },
  });
  expect(completed.status).toBe(200);
  return { run, batch, call };
}

test("the run page shows the run, its decision and its timeline; axe is clean", async ({
  page,
}) => {
  const team = await seedTeam();
  const { run } = await finishedRun(team);
  await signIn(page, team.reviewers[0]!);
  await page.goto(`/runs/${run.id}`);

  await expect(page.getByRole("heading", { level: 1 })).toContainText(run.id.slice(-8));
  await expect(page.getByTestId("run-status")).toHaveText("Completed");
  await expect(page.getByTestId("run-id")).toHaveText(run.id);
  await expect(page.getByTestId("run-checkpoint")).toHaveText(
    `${Buffer.byteLength(JSON.stringify(CHECKPOINT))} B`,
  );
  // the run row forgets the worker when the run completes; the page still says who held it last
  const claim = page.getByTestId("run-claim");
  await expect(claim).toContainText("worker-7 · claim ended when the run completed");
  await expect(page.locator("dt", { hasText: "Last claimed by" })).toBeVisible();
  await expect(claim).not.toContainText("Not claimed");
  await expect(page.getByTestId("call-decision")).toHaveText("Approved by Dana Reviewer");

  const events = page.getByTestId("timeline-event");
  await expect(events).toHaveCount(7);
  expect(
    await events.evaluateAll((els) => els.map((e) => e.getAttribute("data-event-type"))),
  ).toEqual([
    "run.created",
    "batch.created",
    "call.decided",
    "batch.decided",
    "run.claimed",
    "tool.completed",
    "run.completed",
  ]);
  const decided = page.locator('[data-event-type="call.decided"]');
  await expect(decided).toContainText("Approved refund_order");
  await expect(decided).toContainText("Dana Reviewer");
  await expect(decided).toContainText("Customer is a VIP");
  await expect(page.locator('[data-event-type="run.claimed"]')).toContainText(
    "Claimed by worker worker-7",
  );
  await expect(page.locator('[data-event-type="tool.completed"]')).toContainText(
    "Ran refund_order",
  );
  // every event has a machine-readable time
  for (const time of await events.locator("time").all()) {
    await expect(time).toHaveAttribute("datetime", /^\d{4}-\d{2}-\d{2}T.*Z$/);
  }
  await page.locator('[data-event-type="tool.completed"] summary').click();
  await expect(page.locator('[data-event-type="tool.completed"] pre')).toContainText("re_3PqL2");

  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  if (shotsWanted) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, "run-page", { fullPage: true });
  }
});

test("Request rollback: a reason, a confirm step, then it is recorded and the button stays disabled", async ({
  page,
}) => {
  const team = await seedTeam();
  const { run } = await finishedRun(team);
  await signIn(page, team.reviewers[0]!);
  await page.goto(`/runs/${run.id}`);

  await page.getByRole("button", { name: "Request rollback…" }).click();
  await page.getByLabel("Reason (optional)").fill("Refunded the wrong order");
  // the confirm step can be backed out of
  await page.getByRole("button", { name: "Cancel" }).click();
  expect((await team.reviewerApi.get(`/runs/${run.id}`)).body.rollbackRequestedAt).toBeNull();

  await page.getByRole("button", { name: "Request rollback…" }).click();
  await page.getByLabel("Reason (optional)").fill("Refunded the wrong order");
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await page.getByRole("button", { name: "Confirm rollback" }).click();

  await expect(page.getByTestId("rollback-status")).toContainText("Rollback requested");
  await expect(page.getByRole("button", { name: "Rollback requested" })).toBeDisabled();
  const requested = page.locator('[data-event-type="rollback.requested"]');
  await expect(requested).toContainText("Refunded the wrong order");
  await expect(requested).toContainText("Dana Reviewer");

  if (shotsWanted) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, "run-page-rollback", { fullPage: true });
  }

  const after = await team.reviewerApi.get(`/runs/${run.id}`);
  expect(after.body.rollbackRequestedAt).toEqual(expect.any(String));
  // the finished run is ready again, for a worker to claim and revert
  expect(after.body.status).toBe("ready");
  const claim = await team.agent.post(`/runs/${run.id}/claim`, { workerId: "reverter" });
  expect(claim.body.rollback).toEqual([
    expect.objectContaining({ revert: { action: "charge", refundId: "re_3PqL2" } }),
  ]);

  // after a reload it is still shown as requested
  await page.reload();
  await expect(page.getByRole("button", { name: "Rollback requested" })).toBeDisabled();
});

test("a failed rollback request says why, inline", async ({ page, context }) => {
  const team = await seedTeam();
  const { run } = await finishedRun(team);
  await signIn(page, team.reviewers[0]!);
  await page.goto(`/runs/${run.id}`);
  await page.getByRole("button", { name: "Request rollback…" }).click();
  // the session ends (signed out elsewhere) before the reviewer confirms
  await context.clearCookies();
  await page.getByRole("button", { name: "Confirm rollback" }).click();
  // (Next's route announcer is an empty alert too: pick ours by its text)
  await expect(page.getByRole("alert").filter({ hasText: "Sign in again" })).toBeVisible();
  expect((await team.reviewerApi.get(`/runs/${run.id}`)).body.rollbackRequestedAt).toBeNull();
});

test("a run the reviewer may not see is a friendly not-found page", async ({ page }) => {
  const mine = await seedTeam();
  const theirs = await seedTeam({ reviewers: ["Olga Other"] });
  const { run } = await pause(theirs.agent, refundBatch());
  await signIn(page, mine.reviewers[0]!);
  await page.goto(`/runs/${run.id}`);
  await expect(page.getByRole("heading", { name: "Run not found" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Go to your queue" })).toBeVisible();
  await page.goto("/runs/no-such-run");
  await expect(page.getByRole("heading", { name: "Run not found" })).toBeVisible();
});

test("a run through MCP finishes when its decision is read, and no rollback is offered that nothing would perform", async ({
  page,
}) => {
  const team = await seedTeam();
  const mcp = new Client({ name: "e2e", version: "1.0.0" });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${baseURL}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${team.agentKey}` } },
    }),
  );
  type Approval = { runId: string; batchId: string; status: string };
  const ask = async (name: string, args: Record<string, unknown>) =>
    (await mcp.callTool({ name, arguments: args })).structuredContent as Approval;
  const asked = await ask("request_approval", {
    toolName: "refund_order",
    args: { orderId: "A-1001", amount: 25 },
    summary: "Refund order A-1001",
  });
  const batch = (await team.reviewerApi.get(`/batches/${asked.batchId}`)).body;
  await team.reviewerApi.post(`/calls/${batch.calls[0].id}/decision`, {
    outcome: "approve",
    expectedRevision: batch.calls[0].revision,
  });
  expect((await team.agent.get(`/runs/${asked.runId}`)).body.status).toBe("ready");
  expect((await ask("get_approval", { batchId: asked.batchId })).status).toBe("decided");
  await mcp.close();

  await signIn(page, team.reviewers[0]!);
  await page.goto(`/runs/${asked.runId}`);
  await expect(page.getByTestId("run-status")).toHaveText("Completed");
  await expect(page.locator('[data-event-type="run.completed"]')).toContainText(
    "Run completed: its MCP client read the decision",
  );
  await expect(page.getByTestId("rollback-unavailable")).toContainText(
    "No worker can roll this back: it ran through MCP",
  );
  await expect(page.getByRole("button", { name: /Request rollback/ })).toHaveCount(0);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await shotEverySize(page, "run-page-mcp");
});

test("a revoked agent key's run offers no rollback: the page says why", async ({ page }) => {
  const team = await seedTeam();
  const lead = await makeReviewer({
    name: "Lee Lead",
    queues: [{ name: team.queue.name, role: "lead" }],
  });
  const key = await makeAgentKey({ name: "Gone bot", queues: [team.queue.name] });
  const gone = apiClient(baseURL, key.key);
  const { run, batch } = await pause(gone, refundBatch());
  await team.reviewerApi.post(`/calls/${batch.calls[0].id}/decision`, {
    outcome: "approve",
    expectedRevision: batch.calls[0].revision,
  });
  const claim = await gone.post(`/runs/${run.id}/claim`, { workerId: "w1" });
  await gone.post(`/runs/${run.id}/complete`, {
    claimToken: claim.body.claimToken,
    outcome: "completed",
  });

  await signIn(page, team.reviewers[0]!);
  await page.goto(`/runs/${run.id}`);
  // while the key works, a worker can act
  await expect(page.getByRole("button", { name: "Request rollback…" })).toBeVisible();

  const revoked = await apiClient(baseURL, lead.token).post(`/agents/${key.id}/revoke`, {});
  expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
  await page.reload();
  await expect(page.getByTestId("rollback-unavailable")).toHaveText(
    "No worker can roll this back: the agent key “Gone bot” was revoked, so no worker can claim the run. Undo its actions by hand.",
  );
  await expect(page.getByRole("button", { name: /Request rollback/ })).toHaveCount(0);
  const asked = await team.reviewerApi.post(`/runs/${run.id}/rollback`, {});
  expect(asked.status).toBe(409);
  if (shotsWanted) {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, "run-page-revoked-phone-dark", { fullPage: true });
  }
});
