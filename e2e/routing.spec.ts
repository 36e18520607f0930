import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { baseURL, pause, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

test("an admin adds a routing rule in the page; the agent's next matching batch lands in that queue, and the card says why", async ({
  page,
}) => {
  const frontline = await makeQueue();
  const refunds = await makeQueue();
  const admin = await makeReviewer({
    name: "Ada Router",
    queues: [
      { name: frontline.name, role: "admin" },
      { name: refunds.name, role: "admin" },
    ],
  });
  const key = await makeAgentKey({ name: "Support bot", queues: [frontline.name] });
  const agent = apiClient(baseURL, key.key);
  await signIn(page, admin);

  await page.goto("/routing");
  const name = `Refunds ${refunds.name}`;
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("Send to queue").selectOption({ label: refunds.name });
  await page.getByLabel(/Tool name/).fill("refund_*");
  await page.getByRole("button", { name: "Add rule" }).click();
  const row = page.getByTestId("routing-rule").filter({ hasText: name });
  await expect(row).toContainText("a tool matches refund_*");
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "routing", { fullPage: true });

  const { batch } = await pause(agent, {
    calls: [{ toolCallId: "r1", toolName: "refund_order", args: { orderId: "A-7" } }],
  });
  expect(batch.queue.id).toBe(refunds.id);
  await page.goto(`/queue?queue=${refunds.id}`);
  const card = page.locator(`[data-testid="review-card"][data-batch-id="${batch.id}"]`);
  await expect(card.getByTestId("routed-by")).toContainText(name);

  // Edited in place: the new pattern decides.
  await page.goto("/routing");
  await row.getByRole("button", { name: `Edit rule ${name}` }).click();
  const form = page.getByRole("form", { name: `Edit rule ${name}` });
  await form.getByLabel(/Tool name/).fill("refund_big_*");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(row).toContainText("a tool matches refund_big_*");
  const small = await pause(agent, {
    calls: [{ toolCallId: "r3", toolName: "refund_order", args: { orderId: "A-9" } }],
  });
  expect(small.batch.queue.id).toBe(frontline.id);

  // Moved: a second rule placed above it wins.
  const other = `Big refunds ${frontline.name}`;
  await page.getByLabel("Name", { exact: true }).fill(other);
  await page.getByLabel("Send to queue").selectOption({ label: frontline.name });
  await page
    .getByLabel(/Tool name/)
    .first()
    .fill("refund_big_*");
  await page.getByRole("button", { name: "Add rule" }).click();
  const otherRow = page.getByTestId("routing-rule").filter({ hasText: other });
  await expect(otherRow).toBeVisible();
  await otherRow.getByRole("button", { name: `Move rule ${other} up` }).click();
  const names = page.getByTestId("routing-rule").locator("td:nth-child(2)");
  await expect(async () => {
    const order = await names.allTextContents();
    expect(order.indexOf(other)).toBeLessThan(order.indexOf(name));
  }).toPass();
  const big = await pause(agent, {
    calls: [{ toolCallId: "r4", toolName: "refund_big_order", args: { orderId: "A-10" } }],
  });
  expect(big.batch.routing?.name).toBe(other);
  await otherRow.getByRole("button", { name: `Remove rule ${other}` }).click();
  await expect(otherRow).toHaveCount(0);

  // Turned off: skipped.
  await row.getByRole("button", { name: `Turn off rule ${name}` }).click();
  await expect(row).toContainText("(off)");
  const skipped = await pause(agent, {
    calls: [{ toolCallId: "r5", toolName: "refund_big_order", args: { orderId: "A-11" } }],
  });
  expect(skipped.batch.queue.id).toBe(frontline.id);
  await row.getByRole("button", { name: `Turn on rule ${name}` }).click();
  await expect(row).not.toContainText("(off)");

  // Removing the rule sends the next one to the key's default queue.
  await row.getByRole("button", { name: `Remove rule ${name}` }).click();
  await expect(row).toHaveCount(0);
  const next = await pause(agent, {
    calls: [{ toolCallId: "r2", toolName: "refund_order", args: { orderId: "A-8" } }],
  });
  expect(next.batch.queue.id).toBe(frontline.id);
});

test("a reviewer who is not an admin is told routing is for admins", async ({ page }) => {
  const queue = await makeQueue();
  const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
  await signIn(page, reviewer);
  await page.goto("/routing");
  await expect(page.getByText("Only an admin manages routing rules.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Add rule" })).toHaveCount(0);
});
