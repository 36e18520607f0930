import AxeBuilder from "@axe-core/playwright";
import { type Browser, type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { refundBatch } from "@/test/support/http";
import { pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// "Not now" (issue 29, item 4): `s` opens a small chooser (arrows and Enter, or 1/2/3); the card
// leaves the reviewer's queue — in every tab of theirs, through the stream — while the others
// still see it, with who set it aside and until when; Undo and "Bring back" return it.

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const ZONE = "Europe/Berlin";

test.use({ timezoneId: ZONE });
test.describe.configure({ timeout: 120_000 });

const cardOf = (page: Page, batchId: string) =>
  page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);

async function openAs(browser: Browser, reviewer: { email: string }, viewport: typeof DESKTOP) {
  const context = await browser.newContext({ timezoneId: ZONE, viewport });
  const page = await context.newPage();
  await signIn(page, reviewer);
  return { context, page };
}

async function axeClean(page: Page) {
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
}

/** 09:00 on the next calendar day in ZONE, as the browser there counts it. */
function nineTomorrow(now: number): number {
  const local = (ms: number) =>
    new Intl.DateTimeFormat("en-CA", {
      timeZone: ZONE,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    }).format(ms);
  const [y, m, d] = local(now).slice(0, 10).split("-").map(Number) as [number, number, number];
  const tomorrow = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
  for (let offset = -14 * 60; offset <= 14 * 60; offset += 15) {
    const ms = Date.UTC(y, m - 1, d + 1, 9) - offset * 60_000;
    if (local(ms) === `${tomorrow}, 09:00`) return ms;
  }
  throw new Error("no 09:00 tomorrow");
}

for (const viewport of [DESKTOP, PHONE]) {
  const size = viewport === PHONE ? "phone" : "desktop";

  test(`s sets a card aside for its reviewer only, in all their tabs; others see who and until when (${size})`, async ({
    browser,
  }) => {
    const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
    const dana = await openAs(browser, team.reviewers[0]!, viewport);
    const danaOtherTab = await dana.context.newPage();
    await danaOtherTab.goto("/queue");
    const sam = await openAs(browser, team.reviewers[1]!, viewport);
    // a day to go: "tomorrow" morning comes before the card's last fifth
    const { batch } = await pause(team.agent, refundBatch({ timeoutSecs: 2 * 24 * 3600 }));
    const other = await pause(team.agent, {
      ...refundBatch({ timeoutSecs: 3 * 24 * 3600 }),
    });
    for (const page of [dana.page, danaOtherTab, sam.page]) {
      await expect(cardOf(page, batch.id)).toBeVisible();
      await expect(cardOf(page, other.batch.id)).toBeVisible();
    }

    // s on the selected card opens the chooser, focus on its first choice
    const { page } = dana;
    await page.keyboard.press("j");
    await expect(cardOf(page, batch.id)).toBeFocused();
    await page.keyboard.press("s");
    const chooser = page.getByRole("dialog", { name: "Not now" });
    await expect(chooser).toBeVisible();
    await expect(chooser.getByRole("button", { name: /15 minutes/ })).toBeFocused();
    await expect(chooser).toContainText("refund_order");
    await axeClean(page);
    await shot(page, `set-aside-chooser-${size}`);
    // arrows move between the three choices (and wrap); Enter picks one
    await page.keyboard.press("ArrowDown");
    await expect(chooser.getByRole("button", { name: /1 hour/ })).toBeFocused();
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    await expect(chooser.getByRole("button", { name: /Tomorrow/ })).toBeFocused();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await expect(chooser).toBeHidden();

    // gone from both of Dana's tabs, listed under "Set aside by you"; the toast offers Undo
    for (const tab of [page, danaOtherTab]) {
      await expect(cardOf(tab, batch.id)).toHaveCount(0);
      await expect(cardOf(tab, other.batch.id)).toBeVisible();
      await expect(tab.getByTestId("set-aside-list")).toContainText("refund_order");
    }
    // the header counts what waits in her list, and what she set aside apart; Sam's, both cards
    for (const tab of [page, danaOtherTab]) {
      await expect(tab.getByTestId("pending-count")).toHaveText("1 pending, 1 set aside by you");
    }
    await expect(sam.page.getByTestId("pending-count")).toHaveText("2 pending");
    const toast = page.getByTestId("set-aside-toast");
    await expect(toast).toContainText(/Set aside refund_order until \d{2}:\d{2}/);
    // nothing was decided
    const seen = await team.reviewerApi.get(`/batches/${batch.id}`);
    expect(seen.body.status).toBe("pending");
    expect(seen.body.calls[0].votes).toEqual([]);
    const mark = seen.body.setAside[0];
    expect(Date.parse(mark.until) - Date.parse(mark.at)).toBe(60 * 60_000);

    // Sam still sees it, with who set it aside and until when
    const samNote = cardOf(sam.page, batch.id).getByTestId("set-aside-note");
    await expect(samNote).toHaveText(/Set aside by Dana Reviewer until \d{2}:\d{2}/);
    await axeClean(sam.page);
    await shot(sam.page, `set-aside-others-view-${size}`);
    await axeClean(page);
    await shot(page, `set-aside-list-${size}`);

    // Undo brings it back everywhere, and Sam's note goes
    await toast.getByRole("button", { name: "Undo" }).click();
    for (const tab of [page, danaOtherTab]) await expect(cardOf(tab, batch.id)).toBeVisible();
    await expect(samNote).toHaveCount(0);
    await expect(page.getByTestId("pending-count")).toHaveText("2 pending");

    // 3 picks "tomorrow": 09:00 the next day in the viewer's zone (here the browser's)
    await cardOf(page, batch.id).focus();
    await page.keyboard.press("s");
    await expect(chooser).toBeVisible();
    await page.keyboard.press("3");
    await expect(cardOf(page, batch.id)).toHaveCount(0);
    const tomorrow = (await team.reviewerApi.get(`/batches/${batch.id}`)).body.setAside[0];
    expect(Date.parse(tomorrow.until)).toBe(nineTomorrow(Date.parse(tomorrow.at)));
    await expect(cardOf(danaOtherTab, batch.id)).toHaveCount(0);

    // "Bring back" in the list, from the other tab this time
    await danaOtherTab
      .getByTestId("set-aside-list")
      .getByRole("button", { name: /Bring back/ })
      .click();
    for (const tab of [page, danaOtherTab]) await expect(cardOf(tab, batch.id)).toBeVisible();
    await expect(page.getByTestId("set-aside-list")).toHaveCount(0);

    // Escape closes the chooser and sets nothing aside; the Not now button opens it too
    await cardOf(page, batch.id).focus();
    await page.keyboard.press("s");
    await expect(chooser).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(chooser).toBeHidden();
    await expect(cardOf(page, batch.id)).toBeVisible();
    await page.getByTestId(`not-now-${other.batch.id}`).click();
    await expect(chooser).toBeVisible();
    await page.keyboard.press("1");
    await expect(cardOf(page, other.batch.id)).toHaveCount(0);
    const quarter = (await team.reviewerApi.get(`/batches/${other.batch.id}`)).body.setAside[0];
    expect(Date.parse(quarter.until) - Date.parse(quarter.at)).toBe(15 * 60_000);

    await dana.context.close();
    await sam.context.close();
  });
}
