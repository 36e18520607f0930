import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { baseURL, pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Approval fatigue on the insights page (issue 29, item 3): a lead sees, per reviewer and per
// tool, how many approvals came within 3 s of the card appearing, in tables sorted by any column.

const call = (toolName: string, args: Record<string, unknown>) => ({
  toolCallId: `${toolName}-${Math.random().toString(36).slice(2, 8)}`,
  toolName,
  args,
});

test("a lead sees quick approvals per reviewer and per tool, and sorts the tables", async ({
  page,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const lead = await makeReviewer({
    name: "Lee Lead",
    queues: [{ name: team.queue.name, role: "lead" }],
  });
  const sam = apiClient(baseURL, team.reviewers[1]!.token);
  const decide = async (
    who: typeof sam,
    batch: { calls: { id: string; revision: number }[] },
    outcome: "approve" | "reject",
  ) => {
    const answer = await who.post(`/calls/${batch.calls[0]!.id}/decision`, {
      outcome,
      expectedRevision: batch.calls[0]!.revision,
      ...(outcome === "reject" && { reason: "not this one" }),
    });
    expect(answer.status).toBe(200);
  };
  // Dana approves two refunds the moment they arrive (well under 3 s)
  for (const orderId of ["F-1", "F-2"]) {
    const { batch } = await pause(team.agent, { calls: [call("refund_order", { orderId })] });
    await decide(team.reviewerApi, batch, "approve");
  }
  // Sam reads first: one approval after more than 3 s, one rejection
  const slow = await pause(team.agent, { calls: [call("send_email", { to: "a@example.com" })] });
  const rejected = await pause(team.agent, { calls: [call("delete_files", { path: "/srv" })] });
  await page.waitForTimeout(3_200);
  await decide(sam, slow.batch, "approve");
  await decide(sam, rejected.batch, "reject");

  await signIn(page, lead);
  await page.goto(`/insights?queue=${team.queue.id}&period=24h`);
  const section = page.getByTestId("insights-fatigue");
  await expect(section.getByRole("heading", { name: "Approval fatigue" })).toBeVisible();
  const reviewers = section.getByTestId("fatigue-reviewers");
  // Approvals, under 3 s, % under 3 s, rejections, % approved
  await expect(reviewers.getByRole("row", { name: /Dana Reviewer/ })).toHaveText(
    /Dana Reviewer\s*2\s*2\s*100 %\s*0\s*100 %/,
  );
  await expect(reviewers.getByRole("row", { name: /Sam Reviewer/ })).toHaveText(
    /Sam Reviewer\s*1\s*0\s*0 %\s*1\s*50 %/,
  );
  const tools = section.getByTestId("fatigue-tools");
  await expect(tools.getByRole("row", { name: /refund_order/ })).toContainText("100 %");
  await expect(tools.getByRole("row", { name: /delete_files/ })).toHaveText(
    /delete_files\s*0\s*0\s*—\s*1\s*0 %/,
  );

  // sorted by the share of quick approvals, largest first; a header click sorts by its column
  const firstRow = reviewers.locator("tbody tr").first();
  await expect(firstRow).toContainText("Dana Reviewer");
  await expect(reviewers.getByRole("columnheader", { name: /% under 3 s/ })).toHaveAttribute(
    "aria-sort",
    "descending",
  );
  await reviewers.getByTestId("sort-rejected").click();
  await expect(reviewers.getByRole("columnheader", { name: /Rejections/ })).toHaveAttribute(
    "aria-sort",
    "descending",
  );
  await expect(firstRow).toContainText("Sam Reviewer");
  // and again: ascending, by keyboard
  await reviewers.getByTestId("sort-rejected").focus();
  await page.keyboard.press("Enter");
  await expect(reviewers.getByRole("columnheader", { name: /Rejections/ })).toHaveAttribute(
    "aria-sort",
    "ascending",
  );
  await expect(firstRow).toContainText("Dana Reviewer");

  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);
  await section.scrollIntoViewIfNeeded();
  await shot(page, "insights-fatigue");
  await page.emulateMedia({ colorScheme: "dark" });
  await page.reload();
  await expect(page.getByTestId("insights-fatigue")).toBeVisible();
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);
  await page.getByTestId("insights-fatigue").scrollIntoViewIfNeeded();
  await shot(page, "insights-fatigue-dark");
});
