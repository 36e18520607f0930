import AxeBuilder from "@axe-core/playwright";
import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { apiClient, refundBatch } from "@/test/support/http";
import { baseURL, pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

const cardOf = (page: Page, batchId: string) =>
  page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);

test("two reviewers decide the same card at once: one wins, the other sees who, in place", async ({
  browser,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const [dana, sam] = [await browser.newContext(), await browser.newContext()];
  const [danaPage, samPage] = [await dana.newPage(), await sam.newPage()];
  await signIn(danaPage, team.reviewers[0]!);
  await signIn(samPage, team.reviewers[1]!);

  const { batch } = await pause(team.agent, refundBatch());
  const danaCard = cardOf(danaPage, batch.id);
  const samCard = cardOf(samPage, batch.id);
  await expect(danaCard).toBeVisible();
  await expect(samCard).toBeVisible();

  // Dana approves while Sam rejects: both clicks are in flight together.
  await samCard.getByTestId("reject-button").first().click();
  await samCard.getByTestId("reject-reason").fill("Order was already refunded");
  // If Dana's decision reaches Sam's tab before his click lands (a busy machine), his form is gone
  // and the click finds nothing: that is the other answer, his reason kept unsent (below).
  const landed = (click: Promise<void>) =>
    click.then(
      () => true,
      () => false,
    );
  const [, samClicked] = await Promise.all([
    danaCard.getByTestId("approve-button").first().click(),
    landed(samCard.getByTestId("confirm-reject").click({ timeout: 3_000 })),
  ]);

  // Both server actions are answered once neither card shows a decision in flight.
  await expect
    .poll(async () => (await team.reviewerApi.get(`/batches/${batch.id}`)).body.status)
    .toBe("decided");
  await expect(danaCard).toHaveAttribute("data-status", "decided");
  await expect(samCard).toHaveAttribute("data-status", "decided");
  const final = await team.reviewerApi.get(`/batches/${batch.id}`);
  const decision = final.body.calls[0].decision;
  const winner = decision.by.name as string;
  const loserPage = winner === "Dana Reviewer" ? samPage : danaPage;
  const loserCard = cardOf(loserPage, batch.id);
  // The loser is told who decided, on the card itself, and sees the final state. A losing click
  // that reached the server second gets a notice naming the winner; one that landed just after
  // the winner's decision reached its tab (a busy machine) finds the card already saying who.
  // (e2e/races.spec.ts pins each notice's sentence with a tab held stale.)
  if (samClicked) {
    const verb = winner === "Dana Reviewer" ? "approved" : "rejected";
    await expect(loserCard).toContainText(winner);
    const notice = loserCard.getByTestId("conflict-notice");
    if ((await notice.count()) > 0) await expect(notice).toContainText(`${winner} ${verb} it`);
    else await expect(loserCard).toContainText(`${verb} by ${winner}`, { ignoreCase: true });
  } else {
    expect(winner).toBe("Dana Reviewer");
    await expect(samCard.getByTestId("unsent-draft")).toContainText("Approved by Dana Reviewer");
  }
  await expect(loserCard).toHaveAttribute("data-status", "decided");
  // Exactly one decision was recorded.
  const votes = final.body.calls[0].votes as unknown[];
  expect(votes).toHaveLength(1);
  await shot(loserPage, "decisions-conflict", { fullPage: true });
  await dana.close();
  await sam.close();
});

test("a stale tab catches up after being offline and cannot overwrite the decision", async ({
  page,
  context,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { batch } = await pause(team.agent, refundBatch());
  const card = cardOf(page, batch.id);
  await expect(card).toBeVisible();

  await context.setOffline(true);
  await expect(page.getByTestId("connection")).not.toHaveText("Live");
  // Decided elsewhere while this tab is offline.
  const rejected = await team.reviewerApi.post(`/calls/${batch.calls[0].id}/decision`, {
    outcome: "reject",
    expectedRevision: 1,
    reason: "Decided from a script",
  });
  expect(rejected.status).toBe(200);
  await expect(card).toHaveAttribute("data-status", "pending");

  await context.setOffline(false);
  // Back online: the stream resumes from its Last-Event-ID and the card updates in place.
  await expect(card).toHaveAttribute("data-status", "decided", { timeout: 10_000 });
  await expect(card).toContainText("Decided from a script");
  await expect(card.getByTestId("approve-button")).toHaveCount(0);

  const final = await team.reviewerApi.get(`/batches/${batch.id}`);
  expect(final.body.calls[0].decision.outcome).toBe("rejected");
});

test("a tab that missed a decision is told who won when it tries to approve, and changes nothing", async ({
  page,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const { batch } = await pause(team.agent, refundBatch());
  // This tab never hears the stream: it knows only the snapshot it loaded.
  await page.route("**/api/v1/stream**", (route) => route.abort());
  await signIn(page, team.reviewers[0]!);
  const card = cardOf(page, batch.id);
  await expect(card).toBeVisible();

  const sam = apiClient(baseURL, team.reviewers[1]!.token);
  const rejected = await sam.post(`/calls/${batch.calls[0].id}/decision`, {
    outcome: "reject",
    expectedRevision: 1,
    reason: "Too large",
  });
  expect(rejected.status).toBe(200);
  await expect(card).toHaveAttribute("data-status", "pending");

  await card.getByTestId("approve-button").first().click();
  await expect(card.getByTestId("conflict-notice")).toContainText("Sam");
  await expect(card).toHaveAttribute("data-status", "decided");
  const final = await team.reviewerApi.get(`/batches/${batch.id}`);
  expect(final.body.calls[0].decision.outcome).toBe("rejected");
  expect(final.body.calls[0].votes).toHaveLength(1);
});

test("edits: invalid JSON and schema-breaking args are refused; a valid edit reaches the agent", async ({
  page,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { batch } = await pause(
    team.agent,
    refundBatch({
      calls: [
        {
          toolCallId: "edit-1",
          toolName: "refund_order",
          args: { orderId: "A-1001", amount: 400 },
          inputSchema: {
            type: "object",
            properties: { orderId: { type: "string" }, amount: { type: "number", maximum: 500 } },
            required: ["orderId", "amount"],
            additionalProperties: false,
          },
          summary: "Refund order A-1001",
        },
      ],
    }),
  );
  const waiting = team.agent.get(`/batches/${batch.id}?wait=30`);
  const card = cardOf(page, batch.id);
  await card.getByTestId("edit-button").first().click();
  const editor = card.getByTestId("args-editor");

  await editor.fill('{ "orderId": "A-1001", "amount": ');
  await expect(card.getByTestId("editor-error")).toBeVisible();
  await expect(card.getByTestId("confirm-edit")).toBeDisabled();

  await editor.fill('{ "orderId": "A-1001", "amount": 900 }');
  await expect(card.getByTestId("editor-error")).toContainText(/500|maximum/);
  await expect(card.getByTestId("confirm-edit")).toBeDisabled();

  await editor.fill('{ "orderId": "A-1001", "amount": 150 }');
  await expect(card.getByTestId("editor-error")).toHaveCount(0);
  await expect(card).toContainText("150");
  await card.getByTestId("confirm-edit").click();

  const answer = await waiting;
  expect(answer.body.status).toBe("decided");
  expect(answer.body.calls[0].args).toEqual({ orderId: "A-1001", amount: 400 });
  expect(answer.body.calls[0].decision.editedArgs).toEqual({ orderId: "A-1001", amount: 150 });
});

test("keyboard: j/k move, r rejects with a reason that reaches the agent, a approves, ? shows keys; axe is clean", async ({
  page,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const first = await pause(team.agent, refundBatch({ timeoutSecs: 600 }));
  const second = await pause(team.agent, refundBatch({ timeoutSecs: 1200 }));
  await expect(cardOf(page, second.batch.id)).toBeVisible();

  await page.keyboard.press("?");
  await expect(page.getByTestId("keyboard-help")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("keyboard-help")).toBeHidden();

  // Soonest deadline first: j selects the first card, r opens and focuses its reason.
  await page.keyboard.press("j");
  await page.keyboard.press("r");
  const reason = cardOf(page, first.batch.id).getByTestId("reject-reason");
  await expect(reason).toBeFocused();
  await page.keyboard.type("Customer already refunded by phone");
  await page.keyboard.press("Control+Enter");
  const rejected = await team.agent.get(`/batches/${first.batch.id}?wait=10`);
  expect(rejected.body.outcome).toBe("rejected");
  expect(rejected.body.calls[0].decision.reason).toBe("Customer already refunded by phone");

  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("j");
  await page.keyboard.press("a");
  const approved = await team.agent.get(`/batches/${second.batch.id}?wait=10`);
  expect(approved.body.outcome).toBe("approved");

  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
});

test("a shortcut typed before the next frame keeps its focus (slow frames, as on a busy machine)", async ({
  page,
}) => {
  // Frames arrive late: selecting a card focuses it on the next frame, after r already moved
  // focus into the reason field. The late focus must not pull it back out.
  await page.addInitScript(() => {
    const original = window.requestAnimationFrame.bind(window);
    window.requestAnimationFrame = (callback) => {
      setTimeout(() => original(callback), 300);
      return 0;
    };
  });
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { batch } = await pause(team.agent, refundBatch());
  await expect(cardOf(page, batch.id)).toBeVisible();
  await page.keyboard.press("j");
  await page.keyboard.press("r");
  const reason = cardOf(page, batch.id).getByTestId("reject-reason");
  await expect(reason).toBeFocused();
  await page.waitForTimeout(600); // past the late frame
  await expect(reason).toBeFocused();
  await page.keyboard.type("Typed straight after the shortcut");
  await expect(reason).toHaveValue("Typed straight after the shortcut");
});

test("args holding HTML or script text render as inert text", async ({ page }) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  const { batch } = await pause(
    team.agent,
    refundBatch({
      calls: [
        {
          toolCallId: "xss-1",
          toolName: "send_email",
          args: { body: hostile, subject: "<b>bold?</b>" },
          summary: `<script>window.__pwned=3</script>Summary`,
          risks: ['<a href="javascript:alert(1)">click</a>'],
        },
      ],
    }),
  );
  const card = cardOf(page, batch.id);
  await expect(card).toBeVisible();
  await expect(card).toContainText("<script>window.__pwned=3</script>Summary");
  await expect(card).toContainText("<b>bold?</b>");
  expect(await card.locator("script, img, b, a[href^='javascript']").count()).toBe(0);
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
});

test("approving 'for this run' remembers it: the same call later in the run is approved at once", async ({
  page,
}) => {
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { run, batch } = await pause(team.agent, refundBatch());
  const card = cardOf(page, batch.id);
  await card.getByTestId("scope-select").selectOption("run");
  await card.getByTestId("approve-button").click();
  const decided = await team.agent.get(`/batches/${batch.id}?wait=10`);
  expect(decided.body.calls[0].decision.scope).toBe("run");

  // The agent claims, and asks for the identical action again in the same run.
  const claim = await team.agent.post(`/runs/${run.id}/claim`, { workerId: "w1" });
  expect(claim.status).toBe(200);
  const again = await team.agent.post(`/runs/${run.id}/batches`, {
    ...refundBatch(),
    claimToken: claim.body.claimToken,
  });
  expect(again.status).toBe(201);
  expect(again.body.status).toBe("decided");
  expect(again.body.calls[0].decision.source).toBe("memory");
});
