import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { cardLinkUrl } from "@/lib/email/card-links";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import { baseURL, PASSWORD, pause, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Issue 16, item 1: a reviewer sets their own notification preferences per queue, with the
// keyboard, and the API reads back what the page saved. This server has no SMTP_URL: the page
// says so, and keeps the choices for when it does.

test("a reviewer chooses a digest for one queue and immediate email for another", async ({
  page,
}) => {
  const payments = await makeQueue({ name: `Payments ${Date.now()}` });
  const deploys = await makeQueue({ name: `Deploys ${Date.now()}` });
  const reviewer = await makeReviewer({
    name: "Nia Notified",
    queues: [{ name: payments.name }, { name: deploys.name }],
  });
  await signIn(page, reviewer);
  await page.getByRole("link", { name: "Notifications" }).click();
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  await expect(page.getByTestId("email-not-configured")).toContainText("SMTP_URL");

  const panel = (name: string) => page.getByRole("region", { name });
  const paymentsPanel = panel(payments.name);
  // Never saved: off, and the digest interval waits until a digest is chosen.
  await expect(paymentsPanel.getByRole("radio", { name: /Off/ })).toBeChecked();
  const minutes = paymentsPanel.getByLabel("Minutes between digests");
  await expect(minutes).toBeDisabled();

  // Keyboard only: arrow keys move within the radio group, Space toggles a box, Enter saves.
  await paymentsPanel.getByRole("radio", { name: /Off/ }).focus();
  await page.keyboard.press("ArrowUp"); // Off → Digest
  await expect(paymentsPanel.getByRole("radio", { name: /Digest/ })).toBeChecked();
  await expect(minutes).toBeEnabled();
  await minutes.fill("3");
  await paymentsPanel.getByLabel("Deadlines approaching").focus();
  await page.keyboard.press("Space");
  await minutes.focus();
  await page.keyboard.press("Enter");
  // Too short an interval: refused on the field, in words, and nothing is saved.
  await expect(minutes).toHaveAttribute("aria-invalid", "true");
  await expect(minutes).toHaveAccessibleDescription(/Enter a whole number of minutes, 5 or more\./);
  await expect(minutes).toBeFocused();
  await minutes.fill("30");
  await paymentsPanel.getByRole("button", { name: `Save ${payments.name}` }).click();
  await expect(paymentsPanel.getByRole("status")).toHaveText(`Saved for ${payments.name}.`);
  await expect(paymentsPanel.getByTestId("field-error")).toBeHidden();
  await expect(minutes).not.toHaveAttribute("aria-invalid", "true");

  const deploysPanel = panel(deploys.name);
  await deploysPanel.getByRole("radio", { name: /Immediately/ }).check();
  await deploysPanel.getByLabel("New cards").uncheck();
  await deploysPanel.getByRole("button", { name: `Save ${deploys.name}` }).click();
  await expect(deploysPanel.getByRole("status")).toHaveText(`Saved for ${deploys.name}.`);

  await expect(deploysPanel.getByRole("button", { name: `Save ${deploys.name}` })).toBeEnabled();
  await shot(page, "notifications", { fullPage: true });
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);

  // What the page saved is what the API answers, and a reload shows it.
  const { body } = await apiClient(baseURL, reviewer.token).get("/me/notification-preferences");
  const byQueue = Object.fromEntries(
    body.preferences.map((p: { queue: { id: string } }) => [p.queue.id, p]),
  );
  expect(byQueue[payments.id]).toMatchObject({
    delivery: "digest",
    digestMinutes: 30,
    events: { newCards: true, deadlines: false, escalations: true, decisions: true },
  });
  expect(byQueue[deploys.id]).toMatchObject({
    delivery: "immediate",
    events: { newCards: false, deadlines: true, escalations: true, decisions: true },
  });
  await page.reload();
  await expect(panel(payments.name).getByRole("radio", { name: /Digest/ })).toBeChecked();
  await expect(panel(payments.name).getByLabel("Minutes between digests")).toHaveValue("30");
  await expect(panel(deploys.name).getByLabel("New cards")).not.toBeChecked();
});

test("someone in no queue is told where notifications come from", async ({ page }) => {
  const loner = await makeReviewer({ name: "Lou Loner" });
  await signIn(page, loner);
  await page.goto("/notifications");
  await expect(page.getByTestId("no-queues")).toContainText("not in any queue");
});

test("a card link from an email leads through sign-in to the card, and works once", async ({
  page,
}) => {
  const queue = await makeQueue();
  const reviewer = await makeReviewer({ name: "Cleo Clicker", queues: [{ name: queue.name }] });
  const { key } = await makeAgentKey({ queues: [queue.name] });
  const { batch } = await pause(apiClient(baseURL, key), refundBatch());
  // the link an email would carry (signed with the server's key, which lives in the database)
  const link = new URL(await cardLinkUrl(reviewer.id, batch.id)).pathname;

  await page.goto(link);
  await expect(page).toHaveURL(/\/sign-in\?next=/);
  await page.getByLabel("Email").fill(reviewer.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`**/batches/${batch.id}`);
  // the card, undecided: the reviewer decides there
  await expect(page.getByRole("button", { name: /Approve/ }).first()).toBeVisible();
  const answer = await apiClient(baseURL, reviewer.token).get(`/batches/${batch.id}`);
  expect(answer.body.status).toBe("pending");

  await page.goto(link);
  await expect(page.getByRole("heading", { name: "This link was already used" })).toBeVisible();
});
