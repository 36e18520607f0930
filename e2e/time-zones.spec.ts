import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { APP_LOCALE } from "@/lib/time/constants";
import { formatDateTime } from "@/lib/time/format";
import { baseURL, pause, seedTeam, signIn, type Team } from "./support/fixtures";
import { shot, shotsWanted } from "./support/screenshots";

// Issue 16, item 5: every time in the viewer's zone (the browser's, or their own choice), the
// exact time with its zone on hover, costs in the call's currency, and no hydration mismatch
// between the server's rendering and the browser's.

/** Console errors a hydration mismatch causes (production React reports them minified). */
function watchHydration(page: Page): string[] {
  const problems: string[] = [];
  const note = (text: string) => {
    if (/hydrat|Minified React error #(418|423|425)/i.test(text)) problems.push(text);
  };
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") note(message.text());
  });
  page.on("pageerror", (error) => note(error.message));
  return problems;
}

const exact = (iso: string, timeZone: string) =>
  formatDateTime(iso, { timeZone, locale: APP_LOCALE });

async function seedCard(team: Team) {
  return pause(team.agent, {
    calls: [
      {
        toolCallId: `refund-${Math.random().toString(36).slice(2, 8)}`,
        toolName: "refund_order",
        args: { orderId: "A-7" },
        summary: "Refund order A-7",
        costEstimate: 1234.5,
        costCurrency: "JPY",
      },
    ],
  });
}

test.describe("in Asia/Kolkata (+05:30)", () => {
  test.use({ timezoneId: "Asia/Kolkata" });

  test("queue and history in local time, the exact time on hover; one's own zone overrides", async ({
    page,
  }) => {
    const problems = watchHydration(page);
    const team = await seedTeam({ reviewers: ["Kiran Reviewer"] });
    const { batch } = await seedCard(team);
    await signIn(page, team.reviewers[0]!);

    // The queue: the card's "asked … ago" carries the exact time, in Kolkata, in its title.
    await page.goto("/queue");
    const card = page.locator(`[data-testid="review-card"][data-batch-id="${batch.id}"]`);
    await expect(card).toContainText("est. ¥1,235");
    const asked = card.locator(`time[datetime="${batch.createdAt}"]`);
    await expect(asked).toHaveText(/ago$/);
    await expect(asked).toHaveAttribute("title", exact(batch.createdAt, "Asia/Kolkata"));
    await expect(asked).toHaveAttribute("title", /GMT\+5:30$/);
    await expect(card.getByTestId("countdown").locator("time")).toHaveAttribute(
      "title",
      exact(batch.expiresAt, "Asia/Kolkata"),
    );

    // Decided, it shows in the history in Kolkata time; the filter's days are Kolkata's.
    const decided = await team.reviewerApi.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(decided.status).toBe(200);
    const decidedAt: string = decided.body.batch.decidedAt;
    await page.goto("/history");
    const row = page.getByTestId("history-row").first();
    const when = row.locator(`time[datetime="${decidedAt}"]`);
    await expect(when).toHaveAttribute("title", exact(decidedAt, "Asia/Kolkata"));
    await expect(page.getByRole("columnheader", { name: /Decided \(Kolkata\)/ })).toBeVisible();
    await expect(page.getByTestId("filter-days-zone")).toHaveText(
      "From and To are days in Asia/Kolkata.",
    );
    await when.hover();
    await shot(page, "time-zones-history-kolkata", { fullPage: true });
    if (shotsWanted) {
      await page.emulateMedia({ colorScheme: "dark" });
      await shot(page, "time-zones-history-kolkata-dark", { fullPage: true });
      await page.emulateMedia({ colorScheme: "light" });
    }

    // Today in Kolkata holds the decision.
    const today = decidedAtLocalDay(decidedAt, "Asia/Kolkata");
    await page.getByLabel("From", { exact: true }).fill(today);
    await page.getByLabel("To", { exact: true }).fill(today);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect(page).toHaveURL(new RegExp(`from=${today}`));
    await expect(page.getByTestId("history-row").first()).toContainText("refund_order");

    // One's own zone: New York, whatever the browser says. The settings are behind one's name.
    await page.getByTestId("signed-in-as").click();
    await expect(page).toHaveURL(/\/settings$/);
    const preview = page.getByTestId("time-zone-preview");
    await expect(preview).toContainText("GMT+5:30");
    await expect(page.getByLabel("Show times in")).toHaveValue("");
    const axe = await new AxeBuilder({ page }).analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
    await page.getByLabel("Show times in").selectOption("America/New_York");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Saved" })).toHaveText(
      "Saved. Times are shown in America/New_York.",
    );
    await expect(preview).toContainText(/E[SD]T/);
    await shot(page, "time-zones-settings-time-zone", { fullPage: true });
    if (shotsWanted) {
      await page.emulateMedia({ colorScheme: "dark" });
      await shot(page, "time-zones-settings-time-zone-dark", { fullPage: true });
      await page.emulateMedia({ colorScheme: "light" });
    }

    await page.goto("/history");
    await expect(
      page.getByTestId("history-row").first().locator(`time[datetime="${decidedAt}"]`),
    ).toHaveAttribute("title", exact(decidedAt, "America/New_York"));
    await expect(page.getByTestId("filter-days-zone")).toHaveText(
      "From and To are days in America/New_York.",
    );

    // Back to following the browser.
    await page.goto("/settings");
    await page.getByLabel("Show times in").selectOption("");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(preview).toContainText("GMT+5:30");

    expect(problems, "hydration errors").toEqual([]);
  });
});

test.describe("in America/Los_Angeles", () => {
  test.use({ timezoneId: "America/Los_Angeles" });

  test("a page rendered before the server knew the browser's zone is rendered again in it", async ({
    page,
  }) => {
    const problems = watchHydration(page);
    const team = await seedTeam({ reviewers: ["Lee Reviewer"] });
    const { batch } = await seedCard(team);
    await signIn(page, team.reviewers[0]!);
    // As after travelling: the cookie still names the old zone when the next page is requested.
    await page.context().addCookies([{ name: "countersign-tz", value: "UTC", url: baseURL }]);
    await page.goto(`/batches/${batch.id}`);
    const asked = page.locator(`time[datetime="${batch.createdAt}"]`).first();
    await expect(asked).toHaveAttribute("title", exact(batch.createdAt, "America/Los_Angeles"));
    await expect(asked).toHaveAttribute("title", /P[SD]T$/);
    expect(problems, "hydration errors").toEqual([]);
  });
});

/** "2026-11-25": the calendar day `iso` falls on in `timeZone`. */
function decidedAtLocalDay(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(Date.parse(iso));
}
