import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { refundBatch } from "@/test/support/http";
import { pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// With E2E_SHOTS set, this spec's queue-live-queue.png and queue-live-queue-dark.png are the
// README's pictures: refresh e2e/screenshots/queue.png and queue-dark.png from them.

test("a pause made through the API appears without reload; approving reaches the waiting agent", async ({
  page,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  await expect(page.getByTestId("queue-empty")).toBeVisible();
  await expect(page.getByTestId("connection")).toHaveText("Live");

  const { run, batch } = await pause(team.agent, refundBatch());
  // The agent waits the way agents do: a long-poll on the batch.
  const waiting = team.agent.get(`/batches/${batch.id}?wait=30`);

  const card = page.locator(`[data-testid="review-card"][data-batch-id="${batch.id}"]`);
  await expect(card).toBeVisible();
  await expect(card.getByText("refund_order").first()).toBeVisible();
  await shot(page, "queue-live-queue", { fullPage: true });
  await shot(card, "queue-live-card");

  await card.getByTestId("approve-button").first().click();
  const answer = await waiting;
  expect(answer.status).toBe(200);
  expect(answer.body.status).toBe("decided");
  expect(answer.body.outcome).toBe("approved");
  expect(answer.body.calls[0].decision.by.name).toBe("Dana Reviewer");
  await expect(card).toHaveAttribute("data-status", "decided");

  const agentView = await team.agent.get(`/runs/${run.id}`);
  expect(agentView.body.status).toBe("ready");
});

test("a multi-call batch shows a row per call with approve-all; plans are labelled; dark theme", async ({
  page,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const coding = await pause(team.agent, {
    timeoutSecs: 900,
    calls: [
      {
        toolCallId: "del-1",
        toolName: "delete_files",
        args: { paths: ["output/report-2025.csv", "output/cache/"] },
        summary: "Delete last year's report and the cache",
        risks: ["Files cannot be recovered"],
      },
      {
        toolCallId: "merge-1",
        toolName: "merge_pull_request",
        args: { repo: "acme/shop", number: 412, method: "squash" },
        summary: "Merge #412 (checkout fix)",
      },
    ],
  });
  const plan = await pause(team.agent, {
    kind: "plan",
    timeoutSecs: 1800,
    plan: {
      summary: "Migrate the orders table to the new schema",
      rationale: "The old schema cannot hold multi-currency refunds.",
      resources: ["db: orders", "service: billing"],
      risks: ["A long lock on orders during the copy"],
      rollback: "Restore from the snapshot taken first.",
    },
    calls: [{ toolCallId: "plan", toolName: "plan", args: {}, summary: "Approve the plan" }],
  });
  const codingCard = page.locator(`[data-batch-id="${coding.batch.id}"]`);
  await expect(codingCard.getByTestId("call-row")).toHaveCount(2);
  await expect(codingCard.getByTestId("approve-all")).toBeVisible();
  const planCard = page.locator(`[data-batch-id="${plan.batch.id}"]`);
  await expect(planCard).toContainText(/plan/i);
  await expect(planCard).toContainText("Restore from the snapshot taken first.");
  await page.setViewportSize({ width: 1280, height: 1400 });
  await shot(page, "queue-live-queue-multi", { fullPage: true });
  // The cards take the app's theme through their --cs-* variables (app/globals.css): readable in
  // the light theme and the dark one.
  const cardContrast = () =>
    new AxeBuilder({ page })
      .include('[data-testid="review-card"]')
      .withRules(["color-contrast"])
      .analyze()
      .then((result) => result.violations.flatMap((v) => v.nodes.map((n) => n.target.join(" "))));
  expect(await cardContrast()).toEqual([]);

  // On a light system the first click shows the other theme (issue 26): system → dark.
  await page.getByRole("button", { name: /^Theme/ }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await shot(page, "queue-live-queue-dark", { fullPage: true });
  expect(await cardContrast()).toEqual([]);

  await codingCard.getByTestId("approve-all").click();
  const decided = await team.agent.get(`/batches/${coding.batch.id}?wait=10`);
  expect(decided.body.outcome).toBe("approved");
  expect(decided.body.calls.map((c: { status: string }) => c.status)).toEqual([
    "approved",
    "approved",
  ]);
});

test("cards that arrive while the reviewer looks away are counted in the tab title", async ({
  page,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  await expect(page.getByTestId("connection")).toHaveText("Live");
  await expect(page).toHaveTitle("Queue · Countersign");

  // The reviewer switches to another window.
  await page.evaluate(() => {
    document.hasFocus = () => false;
  });
  const first = await pause(team.agent, refundBatch());
  await pause(team.agent, refundBatch());
  await expect(page.locator(`[data-batch-id="${first.batch.id}"]`)).toBeVisible();
  await expect(page).toHaveTitle("(2) Queue · Countersign");

  // …and comes back.
  await page.evaluate(() => {
    document.hasFocus = () => true;
    window.dispatchEvent(new Event("focus"));
  });
  await expect(page).toHaveTitle("Queue · Countersign");
});
