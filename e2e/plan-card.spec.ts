import { spawn } from "node:child_process";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Locator, Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { apiClient } from "@/test/support/http";
import { baseURL, pause, seedTeam, signIn } from "./support/fixtures";
import { shot, SIZES } from "./support/screenshots";

// A plan card has controls of its own ("Approve plan", "Reject plan", "Edit plan summary"); the
// summary a reviewer edits is what the agent receives (decision.editedArgs.summary). The demo's
// plan is approved whole, then each of its steps asks on a card of its own.

const plan = {
  summary: "Migrate the orders table to the new schema",
  rationale: "The old schema cannot hold multi-currency refunds.",
  resources: ["db: orders", "service: billing"],
  risks: ["A long lock on orders during the copy"],
  rollback: "Restore from the snapshot taken first.",
};

const cardOf = (page: Page, batchId: string) =>
  page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);

async function axeViolations(page: Page, card: Locator) {
  await expect(card).toBeVisible();
  const result = await new AxeBuilder({ page })
    .include(`[data-batch-id="${await card.getAttribute("data-batch-id")}"]`)
    .analyze();
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(", ")}`);
}

/** The card at desktop and phone widths, light and dark, each checked by axe (and pictured
 * when E2E_SHOTS is set). */
async function shootEverywhere(page: Page, card: Locator, name: string) {
  const file = name.startsWith("plan-card") ? name : `plan-card-${name}`;
  for (const [size, viewport] of SIZES) {
    await page.setViewportSize(viewport);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await card.scrollIntoViewIfNeeded();
      expect(await axeViolations(page, card), `${name} ${size} ${scheme}`).toEqual([]);
      await shot(card, `${file}-${size}-${scheme}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: "light" });
}

test("a plan card names its own controls; the edited summary is what the agent gets", async ({
  page,
}) => {
  test.setTimeout(150_000); // axe and four screenshots, three times over, on a shared machine
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { run, batch } = await pause(team.agent, { kind: "plan", timeoutSecs: 1800, plan });
  const card = cardOf(page, batch.id);

  const controls = card.getByRole("group", { name: "Decide the plan" });
  await expect(controls).toBeVisible();
  await expect(controls.getByRole("button")).toHaveText([
    "Approve plan",
    "Reject plan",
    "Edit plan summary",
  ]);
  for (const name of ["Approve plan", "Reject plan", "Edit plan summary"])
    await expect(card.getByRole("button", { name, exact: true })).toBeVisible();
  await shootEverywhere(page, card, "plan-card");

  // Reject opens a reason box that says it rejects the plan; Escape backs out of it.
  await card.getByRole("button", { name: "Reject plan", exact: true }).click();
  await expect(card.getByRole("textbox", { name: /^Reason for rejecting the plan/ })).toBeFocused();
  await page.keyboard.press("Escape");

  await card.getByRole("button", { name: "Edit plan summary", exact: true }).click();
  const editor = card.getByTestId("summary-editor");
  await expect(editor).toBeFocused();
  await expect(editor).toHaveValue(plan.summary);
  const edited = "Migrate the orders table on Sunday night, after the weekly export";
  await editor.fill(edited);
  await shootEverywhere(page, card, "plan-summary-editor");
  await card.getByRole("button", { name: "Approve the plan with the edited summary" }).click();

  // the agent's long-poll answers once the decision is made
  const answer = await team.agent.get(`/batches/${batch.id}?wait=30`);
  expect(answer.body.status).toBe("decided");
  expect(answer.body.outcome).toBe("approved");
  expect(answer.body.calls[0].decision).toMatchObject({
    outcome: "approved",
    by: { name: "Dana Reviewer" },
    editedArgs: { ...plan, summary: edited },
  });
  // the agent's view of the run: the plan approved with the reviewer's summary
  const runView = await team.agent.get(`/runs/${run.id}`);
  expect(runView.body.status).toBe("ready");
  expect(runView.body.batches[0].calls[0].decision.editedArgs.summary).toBe(edited);

  // the card shows the new summary, with the agent's own for comparison
  await expect(card).toHaveAttribute("data-status", "decided");
  const shown = card.getByTestId("edited-summary");
  await expect(shown.locator("blockquote")).toHaveText(edited);
  await expect(shown.getByTestId("proposed-summary")).toHaveText(plan.summary);
  await shootEverywhere(page, card, "plan-approved-edited");
});

test("a summary being edited stays, unsent, when another reviewer decides the plan first", async ({
  page,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  await signIn(page, team.reviewers[0]!);
  const { batch } = await pause(team.agent, { kind: "plan", timeoutSecs: 1800, plan });
  const card = cardOf(page, batch.id);
  await card.getByRole("button", { name: "Edit plan summary", exact: true }).click();
  const typed = "Migrate the orders table, but only after the finance close";
  await card.getByTestId("summary-editor").fill(typed);

  const sam = await apiClient(baseURL, team.reviewers[1]!.token).post(
    `/calls/${batch.calls[0].id}/decision`,
    {
      outcome: "reject",
      expectedRevision: batch.calls[0].revision,
      reason: "Not this quarter",
    },
  );
  expect(sam.status).toBe(200);
  const draft = card.getByTestId("unsent-draft");
  await expect(draft).toContainText("Rejected by Sam Reviewer");
  await expect(draft).toContainText(
    "while you were editing the plan's summary. Yours was not sent.",
  );
  await expect(draft.getByLabel("Your unsent summary")).toHaveValue(typed);
  await expect(card.getByTestId("summary-editor")).toHaveCount(0);
});

test("a plan sent with its steps as calls: rows are steps, the plan is decided whole", async ({
  page,
}) => {
  test.setTimeout(90_000);
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { batch } = await pause(team.agent, {
    kind: "plan",
    timeoutSecs: 1800,
    plan,
    calls: [
      { toolCallId: "s1", toolName: "snapshot_db", args: { db: "orders" }, summary: "Snapshot" },
      { toolCallId: "s2", toolName: "copy_table", args: { table: "orders" }, summary: "Copy" },
    ],
  });
  const card = cardOf(page, batch.id);
  await expect(card.getByRole("button", { name: "Approve step 1: snapshot_db" })).toBeVisible();
  await expect(card.getByRole("button", { name: "Edit step 2: copy_table" })).toBeVisible();
  const whole = card.getByRole("group", { name: "Decide the whole plan" });
  await expect(whole.getByRole("button")).toHaveText([
    "Approve plan (all 2 steps)",
    "Reject plan (all 2 steps)",
  ]);
  await shootEverywhere(page, card, "plan-with-steps");
  await whole.getByRole("button", { name: "Approve plan (all 2 steps)" }).click();
  const decided = await team.agent.get(`/batches/${batch.id}?wait=10`);
  expect(decided.body.outcome).toBe("approved");
  expect(decided.body.calls.map((c: { status: string }) => c.status)).toEqual([
    "approved",
    "approved",
  ]);
});

test("the demo's plan: approved with an edited summary, then each later step asks on its own card", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const inherited = { ...process.env };
  for (const name of ["COUNTERSIGN_URL", "PORT"]) delete inherited[name];
  const demo = spawn(
    process.execPath,
    [
      join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs"),
      "lib/demo/demo-agent.ts",
      "--url",
      baseURL,
      "--scenario",
      "plan",
    ],
    {
      cwd: process.cwd(),
      env: { ...inherited, COUNTERSIGN_AGENT_KEY: team.agentKey, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  demo.stdout.on("data", (chunk) => (output += chunk));
  demo.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => demo.once("exit", resolve));
  try {
    const found = page.locator('[data-testid="review-card"][data-status="pending"]', {
      has: page.getByRole("group", { name: "Decide the plan" }),
    });
    await expect(found).toBeVisible({ timeout: 30_000 });
    const planCard = cardOf(page, (await found.getAttribute("data-batch-id"))!);
    await expect(planCard).toContainText("each asked for on its own once this plan is approved");
    await planCard.getByRole("button", { name: "Edit plan summary", exact: true }).click();
    const edited = "Rotate the checkout-api credentials tonight, after the batch jobs.";
    await planCard.getByTestId("summary-editor").fill(edited);
    await page.keyboard.press("Control+Enter");
    await expect(planCard).toHaveAttribute("data-status", "decided");

    for (const [index, tool] of [
      "create_db_role",
      "write_vault_secret",
      "restart_deployment",
      "disable_db_role",
    ].entries()) {
      // each step arrives live, as a card of its own, after the one before ran
      const step = page.locator('[data-testid="review-card"][data-status="pending"]', {
        hasText: `Step ${index + 1} of 4`,
      });
      await expect(step).toBeVisible({ timeout: 30_000 });
      await expect(step.getByRole("button", { name: `Approve ${tool}` })).toBeVisible();
      if (index === 1) await shootEverywhere(page, step, "demo-plan-step-2");
      await step.getByRole("button", { name: `Approve ${tool}` }).click();
      await expect(step).toHaveCount(0);
    }
    expect(
      await Promise.race([exited, new Promise((r) => setTimeout(() => r("timeout"), 30_000))]),
    ).toBe(0);
    expect(output).toContain(`(edited summary: “${edited}”) → claimed → working to “${edited}”`);
    expect(output).toContain(
      "step 4 of 4 approved by Dana Reviewer → claimed → disable_db_role completed",
    );
    expect(output).toContain("→ run completed");
  } finally {
    if (demo.exitCode === null) demo.kill("SIGKILL");
  }
});
