import AxeBuilder from "@axe-core/playwright";
import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { refundBatch } from "@/test/support/http";
import { pause, seedTeam, signIn } from "./support/fixtures";

// Shared saved views (saved by one member, applied by another) and opt-in browser notifications.

const deleteBatch = () => ({
  calls: [
    {
      toolCallId: `del-${Math.random().toString(36).slice(2, 8)}`,
      toolName: "delete_files",
      args: { paths: ["output/cache/"] },
      summary: "Delete the cache",
    },
  ],
});

const cardOf = (page: Page, batchId: string) => page.locator(`[data-batch-id="${batchId}"]`);

test("a view saved by one member filters the queue of another member who applies it; axe is clean", async ({
  browser,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Second"] });
  const deletion = await pause(team.agent, deleteBatch());
  const refund = await pause(team.agent, refundBatch());
  const [dana, sam] = [await browser.newContext(), await browser.newContext()];
  const [danaPage, samPage] = [await dana.newPage(), await sam.newPage()];

  await signIn(danaPage, team.reviewers[0]!);
  await expect(cardOf(danaPage, refund.batch.id)).toBeVisible();
  await danaPage.getByLabel("Tool").selectOption("delete_files");
  await expect(cardOf(danaPage, refund.batch.id)).toBeHidden();
  await danaPage.getByRole("button", { name: "Save view…" }).click();
  const form = danaPage.getByRole("group", { name: "Save view" });
  await form.getByLabel("View name").fill("Deletions");
  await expect(form.getByLabel("For queue")).toHaveValue(team.queue.id);
  const axe = await new AxeBuilder({ page: danaPage }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await form.getByRole("button", { name: "Save", exact: true }).click();
  await expect(form).toBeHidden();
  // Saving applies the view: its queue joins the URL and the menu names it.
  await expect(danaPage).toHaveURL(new RegExp(`queue=${team.queue.id}`));
  await expect(danaPage.getByLabel("Views")).toHaveValue(/.+/);
  await expect(danaPage.getByRole("button", { name: /Delete view/ })).toBeVisible();

  // The same name again is refused inline.
  await danaPage.getByRole("button", { name: "Save view…" }).click();
  await form.getByLabel("View name").fill("Deletions");
  await form.getByRole("button", { name: "Save", exact: true }).click();
  await expect(danaPage.getByTestId("saved-views").getByRole("alert")).toContainText(
    "A view named 'Deletions' exists",
  );
  await form.getByRole("button", { name: "Cancel" }).click();

  await signIn(samPage, team.reviewers[1]!);
  await expect(cardOf(samPage, refund.batch.id)).toBeVisible();
  await expect(cardOf(samPage, deletion.batch.id)).toBeVisible();
  const views = samPage.getByLabel("Views");
  await expect(views.locator("optgroup")).toHaveAttribute("label", team.queue.name);
  await views.selectOption({ label: "Deletions" });
  await expect(samPage).toHaveURL(/tool=delete_files/);
  await expect(cardOf(samPage, deletion.batch.id)).toBeVisible();
  await expect(cardOf(samPage, refund.batch.id)).toBeHidden();
  await expect(samPage.getByTestId("queue-list")).toHaveAttribute("aria-label", "1 cards");
  // Sam did not save it and does not lead the queue: no delete control.
  await expect(samPage.getByRole("button", { name: /Delete view/ })).toHaveCount(0);

  // Dana, who saved it, deletes it.
  await danaPage.getByRole("button", { name: /Delete view/ }).click();
  await expect(
    danaPage.getByLabel("Views").locator("option", { hasText: "Deletions" }),
  ).toHaveCount(0);
  await dana.close();
  await sam.close();
});

/** Records every notification the page constructs instead of showing it (an init script). */
function recordNotifications(answer: string) {
  const made: { title: string; body?: string; onclick: (() => void) | null }[] = [];
  // Kept for the tab's session, as the browser keeps a site's permission across reloads.
  let permission = (sessionStorage.getItem("notification-permission") ??
    "default") as NotificationPermission;
  class RecordingNotification {
    onclick: (() => void) | null = null;
    static get permission() {
      return permission;
    }
    static async requestPermission() {
      permission = answer as NotificationPermission;
      sessionStorage.setItem("notification-permission", permission);
      return permission;
    }
    constructor(
      readonly title: string,
      options?: NotificationOptions,
    ) {
      made.push(Object.assign(this, { body: options?.body }));
    }
    close() {}
  }
  Object.assign(window, { Notification: RecordingNotification, __notifications: made });
}

const recorded = (page: Page) =>
  page.evaluate(() =>
    (window as unknown as { __notifications: { title: string }[] }).__notifications.map(
      (n) => n.title,
    ),
  );

test("Notify me: cards that arrive while the tab is unfocused notify; a burst is one notification", async ({
  browser,
}) => {
  const team = await seedTeam();
  const context = await browser.newContext({ permissions: ["notifications"] });
  const page = await context.newPage();
  await page.addInitScript(recordNotifications, "granted");
  await signIn(page, team.reviewers[0]!);
  await expect(page.getByTestId("connection")).toHaveText("Live");

  await page.getByLabel("Notify me").check();
  await expect(page.getByLabel("Notify me")).toBeChecked();
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);

  // Looking at the tab: no notification.
  const seen = await pause(team.agent, refundBatch());
  await expect(cardOf(page, seen.batch.id)).toBeVisible();
  await page.waitForTimeout(500);
  expect(await recorded(page)).toEqual([]);

  // The reviewer switches to another window.
  await page.evaluate(() => {
    document.hasFocus = () => false;
  });
  const { batch } = await pause(team.agent, deleteBatch());
  await expect
    .poll(() => recorded(page))
    .toEqual([`Support bot asks: delete_files — queue ${team.queue.name}`]);

  // Clicking it selects the card.
  await page.evaluate(() =>
    (
      window as unknown as { __notifications: { onclick: () => void }[] }
    ).__notifications[0]!.onclick(),
  );
  await expect(cardOf(page, batch.id)).toHaveAttribute("data-selected", "true");

  // Five at once: one "new cards" notification, not five.
  await Promise.all([1, 2, 3, 4, 5].map(() => pause(team.agent, refundBatch())));
  await expect
    .poll(async () => (await recorded(page)).slice(1))
    .toContainEqual(expect.stringMatching(/^\d new cards$/));
  expect((await recorded(page)).slice(1).length).toBeLessThan(5);

  // The choice outlives a reload.
  await page.reload();
  await expect(page.getByLabel("Notify me")).toBeChecked();
  await context.close();
});

test("Notify me says so when the browser blocks notifications", async ({ browser }) => {
  const team = await seedTeam();
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(recordNotifications, "denied");
  await signIn(page, team.reviewers[0]!);
  // click, not check: the box must stay unchecked
  await page.getByLabel("Notify me").click();
  await expect(page.getByText("blocked by the browser")).toBeVisible();
  await expect(page.getByLabel("Notify me")).not.toBeChecked();
  await context.close();
});
