import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { refundBatch } from "@/test/support/http";
import { pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// The queue's status filter: "Decided" is what reviewers (or deadlines) decided; a batch the agent
// withdrew was never decided, and is listed under "Cancelled" instead.

test("Decided lists decisions, not withdrawn batches; Cancelled lists those", async ({ page }) => {
  const team = await seedTeam();
  const approved = await pause(team.agent, refundBatch());
  const call = approved.batch.calls[0];
  const decided = await team.reviewerApi.post(`/calls/${call.id}/decision`, {
    outcome: "approve",
    expectedRevision: call.revision,
  });
  expect(decided.status).toBe(200);
  const withdrawn = await pause(team.agent, refundBatch());
  expect((await team.agent.post(`/batches/${withdrawn.batch.id}/cancel`, {})).status).toBe(200);

  const card = (batchId: string) =>
    page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);
  await signIn(page, team.reviewers[0]!);

  await page.goto("/queue?status=decided");
  await expect(page.locator("#filter-status")).toHaveValue("decided");
  await expect(card(approved.batch.id)).toBeVisible();
  await expect(card(withdrawn.batch.id)).toHaveCount(0);

  await page.locator("#filter-status").selectOption({ label: "Cancelled" });
  await expect(page).toHaveURL(/status=cancelled/);
  await expect(card(withdrawn.batch.id)).toBeVisible();
  await expect(card(approved.batch.id)).toHaveCount(0);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await shot(page, "queue-status-filter-cancelled-desktop-light");

  await page.locator("#filter-status").selectOption({ label: "All" });
  await expect(card(withdrawn.batch.id)).toBeVisible();
  await expect(card(approved.batch.id)).toBeVisible();
});

test("two filter changes made in the same moment both stay", async ({ page }) => {
  const team = await seedTeam();
  await pause(team.agent, refundBatch());
  await signIn(page, team.reviewers[0]!);
  await page.goto("/queue");
  // Live means hydrated: a change made before then is React's to replay, not ours to keep.
  await expect(page.getByTestId("connection")).toHaveText("Live");

  // Both selects change before React renders again, as a fast hand or a script would.
  await page.evaluate(() => {
    const changes: [string, string][] = [
      ["filter-status", "all"],
      ["filter-kind", "action"],
    ];
    for (const [id, value] of changes) {
      const select = document.getElementById(id) as HTMLSelectElement;
      select.value = value;
      select.dispatchEvent(new Event("change", { bubbles: true }));
    }
  });
  await expect(page).toHaveURL(/status=all/);
  await expect(page).toHaveURL(/kind=action/);
  await expect(page.locator("#filter-status")).toHaveValue("all");
  await expect(page.locator("#filter-kind")).toHaveValue("action");
});
