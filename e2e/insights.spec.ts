import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeReviewer } from "@/test/support/factories";
import { pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// The insights page of a queue's lead: headline numbers, charts with their tables, the period in
// the URL, an empty period, and a reviewer who leads nothing told the page is not for them.

const call = (toolName: string, args: Record<string, unknown>) => ({
  toolCallId: `${toolName}-${Math.random().toString(36).slice(2, 8)}`,
  toolName,
  args,
});

test("a lead sees their queue's insights, with charts and their numbers", async ({ page }) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer"] });
  const lead = await makeReviewer({
    name: "Lee Lead",
    queues: [{ name: team.queue.name, role: "lead" }],
  });
  const approved = await pause(team.agent, { calls: [call("refund_order", { orderId: "A-1" })] });
  const rejected = await pause(team.agent, { calls: [call("delete_files", { path: "/srv" })] });
  await pause(team.agent, { calls: [call("refund_order", { orderId: "A-2" })] });
  for (const [batch, outcome] of [
    [approved.batch, "approve"],
    [rejected.batch, "reject"],
  ] as const) {
    const answer = await team.reviewerApi.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome,
      expectedRevision: batch.calls[0].revision,
    });
    expect(answer.status).toBe(200);
  }

  await signIn(page, lead);
  await page.getByRole("link", { name: "Insights" }).click();
  await page.waitForURL("**/insights");
  // the lead's one queue, the default period (last 7 days)
  const totals = page.getByTestId("insights-totals");
  await expect(totals.getByText("Cards created")).toBeVisible();
  await expect(totals).toContainText("3");

  // the period and queue picker writes the URL
  await page.getByLabel("Queue", { exact: true }).selectOption(team.queue.id);
  await page.getByLabel("Period", { exact: true }).selectOption("24h");
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/period=24h/);
  expect(page.url()).toContain(`queue=${team.queue.id}`);
  await expect(page.getByLabel("Period", { exact: true })).toHaveValue("24h");

  // each chart is drawn (SVG) and its numbers are in the table beside it
  const sources = page.getByTestId("insights-sources");
  await expect(sources.getByTestId("insights-chart").locator("svg").first()).toBeVisible();
  await expect(sources.getByRole("row", { name: /Reviewers/ })).toContainText("1");
  const tools = page.getByTestId("insights-tools");
  await expect(tools.getByRole("row", { name: /refund_order/ })).toContainText("100 %");
  await expect(tools.getByRole("row", { name: /delete_files/ })).toContainText("0 %");
  await expect(page.getByTestId("insights-reviewers").getByRole("row", { name: /Dana Reviewer/ })).toBeVisible(); // prettier-ignore
  await expect(page.getByTestId("insights-activity").locator("svg").first()).toBeVisible();

  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);
  await shot(page, "insights", { fullPage: true });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.reload();
  await expect(page.getByTestId("insights-totals")).toBeVisible();
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);
  await shot(page, "insights-dark", { fullPage: true });
  await page.emulateMedia({ colorScheme: "light" });

  // a custom period with nothing in it
  await page.goto(`/insights?queue=${team.queue.id}&period=custom&from=2020-01-01&to=2020-01-07`);
  await expect(page.getByTestId("insights-empty")).toContainText("No cards in this period");
  await expect(page.getByLabel("First day (custom range)")).toHaveValue("2020-01-01");
  // a period that ends before it starts is refused on its field, not thrown
  await page.goto("/insights?period=custom&from=2020-02-01&to=2020-01-07");
  await expect(page.getByLabel("Last day (custom range)")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("field-error")).toHaveText(
    "The last day is before the first day (2020-02-01)",
  );
});

test.describe("in Pacific/Kiritimati (UTC+14), where today is mostly tomorrow in UTC", () => {
  test.use({ timezoneId: "Pacific/Kiritimati" });

  test("today's card counts under today; a custom range is its own period, refused on its field when reversed", async ({
    page,
  }) => {
    const team = await seedTeam({ reviewers: ["Dana Reviewer"] });
    const lead = await makeReviewer({
      name: "Lee Lead",
      queues: [{ name: team.queue.name, role: "lead" }],
    });
    const { batch } = await pause(team.agent, {
      calls: [call("refund_order", { orderId: "K-1" })],
    });
    const answer = await team.reviewerApi.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: batch.calls[0].revision,
    });
    expect(answer.status).toBe(200);
    const today = new Intl.DateTimeFormat("en-CA", {
      timeZone: "Pacific/Kiritimati",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    }).format(new Date(answer.body.batch.decidedAt));

    await signIn(page, lead);
    await page.goto(`/insights?queue=${team.queue.id}&period=7d`);
    await expect(page.getByTestId("insights-days-zone")).toContainText(
      "Days are calendar days in Pacific/Kiritimati",
    );
    // the last day bar is today, where the lead is, and holds the card decided today
    const days = page.getByTestId("insights-activity").locator("tbody tr");
    await expect(days).toHaveCount(7);
    await expect(days.last().locator("th")).toHaveText(today);
    await expect(days.last().locator("td").nth(1)).toHaveText("1");
    await shot(page, "insights-kiritimati", { fullPage: true });

    // Typing a day chooses the custom range: the days are never silently ignored.
    const period = page.getByLabel("Period", { exact: true });
    await expect(period).toHaveValue("7d");
    await page.getByLabel("First day (custom range)").fill("2026-02-10");
    await expect(period).toHaveValue("custom");
    await page.getByLabel("Last day (custom range)").fill("2026-02-01");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/period=custom/);
    const last = page.getByLabel("Last day (custom range)");
    await expect(last).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByTestId("field-error")).toHaveText(
      "The last day is before the first day (2026-02-10)",
    );
    await expect(page.getByTestId("insights-totals")).toHaveCount(0);
    expect(
      (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
    ).toEqual([]);
    await shot(page, "insights-reversed-range", { fullPage: true });

    // Days sent with a preset (a hand-edited URL) are refused on their field, not dropped.
    await page.goto(`/insights?queue=${team.queue.id}&period=7d&from=2026-02-01&to=2026-02-03`);
    await expect(page.getByLabel("First day (custom range)")).toHaveAttribute(
      "aria-invalid",
      "true",
    );
    await expect(page.getByTestId("field-error").first()).toHaveText(
      "Days are for a custom range: choose Custom range as the period",
    );
    // Choosing a preset again empties the days, so it shows.
    await period.selectOption("30d");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/period=30d/);
    await expect(page.getByTestId("insights-totals")).toBeVisible();
  });
});

test("a reviewer who leads no queue is told insights are not for them", async ({ page }) => {
  const team = await seedTeam({ reviewers: ["Rowan Reviewer"] });
  await signIn(page, team.reviewers[0]!);
  await page.goto("/insights");
  await expect(page.getByTestId("insights-refused")).toContainText(
    "Insights are for a queue's lead or an admin",
  );
  await expect(page.getByTestId("insights-totals")).toHaveCount(0);
});
