import { type Browser, type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { refundBatch } from "@/test/support/http";
import { pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

const cardOf = (page: Page, batchId: string) =>
  page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);

async function openAs(browser: Browser, reviewer: { email: string }) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, reviewer);
  return { context, page };
}

test("three reviewers on a 2-of-3 queue see each other's claim and votes live", async ({
  browser,
}) => {
  const team = await seedTeam({
    reviewers: ["Ana Reviewer", "Ben Reviewer", "Cleo Reviewer"],
    requiredApprovals: 2,
  });
  const [ana, ben, cleo] = [
    await openAs(browser, team.reviewers[0]!),
    await openAs(browser, team.reviewers[1]!),
    await openAs(browser, team.reviewers[2]!),
  ];
  const { batch } = await pause(team.agent, refundBatch());
  const anaCard = cardOf(ana.page, batch.id);
  const benCard = cardOf(ben.page, batch.id);
  const cleoCard = cardOf(cleo.page, batch.id);
  for (const card of [anaCard, benCard, cleoCard]) await expect(card).toBeVisible();

  // Ana says she is reviewing: the other two see it without a reload.
  await anaCard.getByTestId("claim-button").click();
  await expect(anaCard.getByTestId("claim-status")).toHaveText(/^You are reviewing \(5 min left\)/);
  await expect(anaCard.getByTestId("claim-button")).toHaveText("Stop reviewing");
  for (const card of [benCard, cleoCard]) {
    await expect(card.getByTestId("claim-status")).toHaveText(
      /^Ana Reviewer is reviewing \((5|4) min left\)/,
    );
    // the queue only marks claims (claimMode mark): others can still decide, but not claim
    await expect(card.getByTestId("claim-button")).toHaveCount(0);
    await expect(card.getByTestId("approve-button")).toBeVisible();
  }

  // Ana approves: her claim ends with her vote, and everyone sees the tally move.
  await anaCard.getByTestId("approve-button").click();
  for (const card of [anaCard, benCard, cleoCard]) {
    await expect(card.getByTestId("votes")).toContainText("1 of 2 approvals");
    await expect(card.getByTestId("claim-status")).toHaveCount(0);
    await expect(card).toHaveAttribute("data-status", "pending");
  }
  await expect(anaCard.getByTestId("approve-button")).toHaveCount(0);

  // Ben gives the second approval: the card is approved everywhere, naming both approvers.
  await benCard.getByTestId("approve-button").click();
  for (const card of [anaCard, benCard, cleoCard]) {
    await expect(card).toHaveAttribute("data-status", "decided");
    await expect(card.getByTestId("approve-button")).toHaveCount(0);
    await expect(card.getByTestId("claim-button")).toHaveCount(0);
  }
  await expect(cleoCard).toContainText("Ana Reviewer");
  await expect(cleoCard).toContainText("Ben Reviewer");
  await expect(anaCard).toContainText("Ben Reviewer");
  await expect(benCard).toContainText("Ana Reviewer");

  const final = await team.reviewerApi.get(`/batches/${batch.id}`);
  expect(final.body).toMatchObject({ status: "decided", outcome: "approved", claim: null });
  expect(
    final.body.calls[0].votes.map((v: { reviewer: { name: string } }) => v.reviewer.name),
  ).toEqual(["Ana Reviewer", "Ben Reviewer"]);

  await shot(cleo.page, "team-queue", { fullPage: true });
  for (const { context } of [ana, ben, cleo]) await context.close();
});

test("a claim shows live on the others' card and goes away when released", async ({ browser }) => {
  const team = await seedTeam({ reviewers: ["Ana Reviewer", "Ben Reviewer"] });
  const [ana, ben] = [
    await openAs(browser, team.reviewers[0]!),
    await openAs(browser, team.reviewers[1]!),
  ];
  const { batch } = await pause(team.agent, refundBatch());
  const anaCard = cardOf(ana.page, batch.id);
  const benCard = cardOf(ben.page, batch.id);
  await anaCard.getByTestId("claim-button").click();
  await expect(benCard.getByTestId("claim-status")).toContainText("Ana Reviewer is reviewing");
  await shot(ben.page, "team-queue-claimed");

  await anaCard.getByTestId("claim-button").click();
  await expect(anaCard.getByTestId("claim-button")).toHaveText("I'm reviewing this");
  await expect(benCard.getByTestId("claim-status")).toHaveCount(0);
  await expect(benCard.getByTestId("claim-button")).toBeVisible();

  // Leaving the page releases the claim (a keepalive DELETE on pagehide).
  await benCard.getByTestId("claim-button").click();
  await expect(anaCard.getByTestId("claim-status")).toContainText("Ben Reviewer is reviewing");
  await ben.page.goto("about:blank");
  await expect(anaCard.getByTestId("claim-status")).toHaveCount(0);
  for (const { context } of [ana, ben]) await context.close();
});
