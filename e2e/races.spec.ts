import AxeBuilder from "@axe-core/playwright";
import type { BrowserContext, Locator, Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { apiClient } from "@/test/support/http";
import { baseURL, pause, seedTeam, signIn, type Team } from "./support/fixtures";
import { shot, SIZES } from "./support/screenshots";

// Issue 26, items 1–3: every race pair answered in full on the loser's card. Dana (the winner)
// and Sam (the loser) review the same queue in two browser contexts. To make each race
// deterministic, Sam's tab is stale: it hears no stream, so his click lands after Dana's decision
// has committed while his card still shows the call open. One pair races truly at once.
// Pictures of each loser's card: E2E_SHOTS=/tmp/shots-races.

type Action = "approve" | "edit" | "reject" | "approve-all" | "reject-all" | "summary";

const WINNER = "Dana Reviewer";
const LOSER = "Sam Reviewer";
const AGO = String.raw`\d+ s ago`;

const cardOf = (page: Page, batchId: string) =>
  page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);

const plan = {
  summary: "Migrate the orders table to the new schema",
  rationale: "The old schema cannot hold multi-currency refunds.",
};

/** `n` refunds of order A-1001 (42): one race per row. */
function refunds(n: number) {
  const id = Math.random().toString(36).slice(2, 10);
  return {
    timeoutSecs: 1800,
    calls: Array.from({ length: n }, (_, index) => ({
      toolCallId: `refund-${id}-${index}`,
      toolName: "refund_order",
      args: { orderId: "A-1001", amount: 42 },
      summary: "Refund order A-1001",
    })),
  };
}

/** Two calls, so "Approve all" / "Reject all" exist; the races are on the first. */
function twoCalls() {
  const id = Math.random().toString(36).slice(2, 10);
  return {
    timeoutSecs: 1800,
    calls: [
      {
        toolCallId: `refund-${id}`,
        toolName: "refund_order",
        args: { orderId: "A-1001", amount: 42 },
        summary: "Refund order A-1001",
      },
      {
        toolCallId: `email-${id}`,
        toolName: "send_email",
        args: { to: "customer@example.com" },
        summary: "Tell the customer",
      },
    ],
  };
}

/** Starts an action: opens its form and types, without sending. The winner types other values. */
async function prepare(card: Locator, action: Action, winner = false, index = 0): Promise<void> {
  const row = card.getByTestId("call-row").nth(index);
  switch (action) {
    case "edit":
      await row.getByTestId("edit-button").click();
      await row
        .getByTestId("args-editor")
        .fill(`{ "orderId": "A-1001", "amount": ${winner ? 20 : 30} }`);
      return;
    case "summary":
      await row.getByTestId("edit-button").click();
      await row
        .getByTestId("summary-editor")
        .fill(winner ? "Migrate at noon" : "Migrate the orders table on Sunday night");
      return;
    case "reject":
      await row.getByTestId("reject-button").click();
      await row
        .getByTestId("reject-reason")
        .fill(winner ? "Customer already refunded" : "Wrong order number");
      return;
    case "reject-all":
      await card.getByTestId("reject-all").click();
      await card
        .getByTestId("reject-all-reason")
        .fill(winner ? "Duplicate request" : "Fraud ring, stop everything");
      return;
    default:
      return;
  }
}

/** Sends a prepared action. */
async function send(card: Locator, action: Action, index = 0): Promise<void> {
  const row = card.getByTestId("call-row").nth(index);
  const button = {
    approve: row.getByTestId("approve-button"),
    edit: row.getByTestId("confirm-edit"),
    summary: row.getByTestId("confirm-edit"),
    reject: row.getByTestId("confirm-reject"),
    "approve-all": card.getByTestId("approve-all"),
    "reject-all": card.getByTestId("confirm-reject-all"),
  }[action];
  await button.click();
}

async function act(card: Locator, action: Action, index = 0): Promise<void> {
  await prepare(card, action, true, index);
  await send(card, action, index);
  // committed: the winner's own card shows the call settled
  await expect(card.getByTestId("call-row").nth(index)).toHaveAttribute(
    "data-status",
    /approved|rejected/,
  );
}

/** The sentence the loser reads, as a pattern (issue 26's wording). */
function expectedSentence(loser: Action, winner: Action, isPlan: boolean): RegExp {
  const it = isPlan ? "the plan" : "it";
  const subject = {
    approve: "Your approval was not recorded",
    reject: "Your rejection was not recorded",
    edit: "Your edit \\(amount 30\\) was not applied",
    summary: "Your summary was not applied",
    "approve-all": isPlan
      ? "Your approval of the plan was not recorded"
      : "Your approval of both calls was not recorded",
    "reject-all": isPlan
      ? "Your rejection of the plan was not recorded"
      : "Your rejection of both calls was not recorded",
  }[loser];
  const batchLoser = loser === "approve-all" || loser === "reject-all";
  const batchWinner = winner === "approve-all" || winner === "reject-all";
  const object = batchLoser ? (batchWinner ? "both" : "refund_order") : it;
  const what =
    winner === "approve" || winner === "approve-all"
      ? loser === "edit"
        ? `approved the original \\(amount 42\\)`
        : loser === "summary"
          ? "approved the plan as proposed"
          : `approved ${object}`
      : winner === "reject" || winner === "reject-all"
        ? `rejected ${object}`
        : winner === "summary"
          ? loser === "summary"
            ? "approved the plan with a different summary"
            : "approved the plan with an edited summary"
          : loser === "edit"
            ? "approved a different edit \\(amount 20\\)"
            : batchLoser
              ? "approved an edited version of refund_order \\(amount 20\\)"
              : "approved an edited version \\(amount 20\\)";
  const rest =
    batchLoser && !batchWinner ? ", so nothing else was decided and 1 call is still open" : "";
  return new RegExp(`^${subject}: ${WINNER} ${what} ${AGO}${rest}\\.$`);
}

/** What the loser typed, kept and copyable; null when there was nothing to type. */
function keptText(loser: Action): string | RegExp | null {
  return {
    approve: null,
    "approve-all": null,
    edit: /"amount": 30/,
    summary: "Migrate the orders table on Sunday night",
    reject: "Wrong order number",
    "reject-all": "Fraud ring, stop everything",
  }[loser];
}

async function expectNoEmptyNotice(card: Locator) {
  for (const notice of await card.getByTestId("decision-notice").all())
    expect((await notice.innerText()).trim()).not.toBe("");
}

async function axeClean(page: Page, card: Locator) {
  const result = await new AxeBuilder({ page })
    .include(`[data-batch-id="${await card.getAttribute("data-batch-id")}"]`)
    .analyze();
  expect(result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target)}`)).toEqual([]);
}

let team: Team;
let danaContext: BrowserContext;
let samContext: BrowserContext;
let dana: Page;
let sam: Page;
/** Tabs of each reviewer, pairwise: lane i races danaTabs[i] against samTabs[i]. */
const LANES = 2;
let danaTabs: Page[];
let samTabs: Page[];

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ browser }) => {
  team = await seedTeam({ reviewers: [WINNER, LOSER] });
  [danaContext, samContext] = [await browser.newContext(), await browser.newContext()];
  [dana, sam] = [await danaContext.newPage(), await samContext.newPage()];
  await Promise.all([signIn(dana, team.reviewers[0]!), signIn(sam, team.reviewers[1]!)]);
  danaTabs = [dana];
  samTabs = [sam];
  for (let lane = 1; lane < LANES; lane++) {
    danaTabs.push(await danaContext.newPage());
    samTabs.push(await samContext.newPage());
  }
});

test.afterAll(async () => {
  await danaContext?.close();
  await samContext?.close();
});

test("a truly simultaneous edit and approval: the loser's card says what became of theirs", async () => {
  const { batch } = await pause(team.agent, twoCalls());
  await Promise.all([dana.goto(`/batches/${batch.id}`), sam.goto(`/batches/${batch.id}`)]);
  const [danaCard, samCard] = [cardOf(dana, batch.id), cardOf(sam, batch.id)];
  await prepare(samCard, "edit");
  // refund_order's own button: once Sam's decision reaches Dana's tab it is gone, and the card's
  // first approve button is then send_email's, which her click would approve without a race
  const danaApprove = danaCard.getByTestId("call-row").first().getByTestId("approve-button");
  await expect(danaApprove).toBeVisible();
  // Both clicks at once. If Dana's decision reaches Sam's tab before his click lands, his editor
  // is gone and the click finds nothing: that is the other answer (his edit kept, unsent); the
  // same for Dana's click when Sam's decision reaches her tab first.
  const landed = (click: Promise<void>) =>
    click.then(
      () => true,
      () => false,
    );
  const [danaClicked, samClicked] = await Promise.all([
    landed(danaApprove.click({ timeout: 3_000 })),
    landed(samCard.getByTestId("confirm-edit").click({ timeout: 3_000 })),
  ]);
  await expect
    .poll(async () => (await team.reviewerApi.get(`/batches/${batch.id}`)).body.calls[0].status)
    .toBe("approved");
  const final = (await team.reviewerApi.get(`/batches/${batch.id}`)).body.calls[0];
  expect(final.votes).toHaveLength(1);
  const samWon = final.decision.by.name === LOSER;
  const [loserPage, loserCard] = samWon ? [dana, danaCard] : [sam, samCard];
  await expect(loserCard.getByTestId("call-row").first()).toHaveAttribute(
    "data-status",
    "approved",
  );
  if (samWon && danaClicked) {
    await expect(danaCard.getByTestId("race-sentence")).toHaveText(
      new RegExp(
        `^Your approval was not recorded: ${LOSER} approved an edited version \\(amount 30\\) ${AGO}\\.$`,
      ),
    );
  }
  if (!samWon) {
    // Sam's click was answered "too late" (the race sentence), or his tab heard of Dana's
    // approval first and kept his edit unsent; either way his edit stays, copyable.
    if (samClicked)
      await expect(samCard.getByTestId("race-sentence")).toHaveText(
        expectedSentence("edit", "approve", false),
      );
    else await expect(samCard.getByTestId("unsent-draft")).toBeVisible();
    await expect(samCard.getByTestId("unsent-draft-text")).toHaveValue(/"amount": 30/);
  }
  await expectNoEmptyNotice(loserCard);
  await axeClean(loserPage, loserCard);
  await shot(loserCard, "races-simultaneous-edit-vs-approve");
});

// From here on Sam's tab is stale: it never hears the stream.
test.describe("a stale tab's click lands after the other reviewer committed", () => {
  test.beforeAll(async () => {
    await samContext.route("**/stream**", (route) => route.abort());
  });

  const CALL_ACTIONS: Action[] = ["approve", "edit", "reject"];
  const BATCH_ACTIONS: Action[] = ["approve-all", "reject-all"];

  /**
   * One card of races: each race is Sam's `loser` action on a row (or the whole batch) against
   * Dana's `winner` action on the same row (or the whole batch). Row races share a card, so the
   * matrix takes fewer page loads.
   */
  type Race = { loser: Action; winner: Action; row: number };
  type Group = { name: string; batch: () => Record<string, unknown>; races: Race[]; isPlan?: true };

  const groups: Group[] = [
    // a row's action against a row's action: nine rows, nine races
    {
      name: "row-vs-row",
      batch: () => refunds(9),
      races: CALL_ACTIONS.flatMap((loser, l) =>
        CALL_ACTIONS.map((winner, w) => ({ loser, winner, row: l * 3 + w })),
      ),
    },
    // each row's action against Dana's "… all": one card each (Sam's first answer shows the
    // whole batch settled, so a second open row there would be a decision made elsewhere)
    ...BATCH_ACTIONS.flatMap((winner) =>
      CALL_ACTIONS.map((loser) => ({
        name: `${loser}-vs-${winner}`,
        batch: twoCalls,
        races: [{ loser, winner, row: 0 }],
      })),
    ),
    // Sam's "… all" against each of Dana's actions: one card each
    ...BATCH_ACTIONS.flatMap((loser) =>
      [...CALL_ACTIONS, ...BATCH_ACTIONS].map((winner) => ({
        name: `${loser}-vs-${winner}`,
        batch: twoCalls,
        races: [{ loser, winner, row: 0 }],
      })),
    ),
    // a plan: its summary edit against each plan action, and each against it
    ...(
      [
        ["summary", "approve"],
        ["summary", "reject"],
        ["summary", "summary"],
        ["approve", "summary"],
        ["reject", "summary"],
      ] as const
    ).map(([loser, winner]) => ({
      name: `plan-${loser}-vs-${winner}`,
      batch: () => ({ kind: "plan", timeoutSecs: 1800, plan }),
      races: [{ loser, winner, row: 0 }],
      isPlan: true as const,
    })),
  ];
  // At a phone's width: item 1 (a lost edit and every row race) and item 2 (batch races).
  const PHONE = new Set([
    "row-vs-row",
    "approve-all-vs-reject",
    "reject-all-vs-approve-all",
    "reject-all-vs-approve",
    "plan-summary-vs-summary",
  ]);
  const isBatch = (action: Action) => action === "approve-all" || action === "reject-all";

  for (const [sizeName, viewport] of SIZES) {
    test(`every pair at ${sizeName} width`, async () => {
      test.setTimeout(120_000);
      await Promise.all([...danaTabs, ...samTabs].map((tab) => tab.setViewportSize(viewport)));
      const chosen = groups.filter(({ name }) => sizeName === "desktop" || PHONE.has(name));
      // Every card first (one round trip each), then the races.
      const batches = await Promise.all(chosen.map((group) => pause(team.agent, group.batch())));
      // A few cards at once, each in its own pair of tabs (the same two reviewers).
      const play = async (lane: number, index: number) => {
        const group = chosen[index]!;
        const { batch } = batches[index]!;
        const [dana, sam] = [danaTabs[lane]!, samTabs[lane]!];
        const name = `races-${sizeName}-${group.name}`;
        await Promise.all([dana.goto(`/batches/${batch.id}`), sam.goto(`/batches/${batch.id}`)]);
        const [danaCard, samCard] = [cardOf(dana, batch.id), cardOf(sam, batch.id)];
        // Race by race: Sam starts (his form open, his text typed) while Dana decides and
        // commits, then Sam sends. His tab knows only the answers to his own clicks, all older
        // than Dana's decision of this row.
        for (const { loser, winner, row } of group.races) {
          const what = `${name}: ${loser} lost to ${winner} (row ${row + 1})`;
          await Promise.all([prepare(samCard, loser, false, row), act(danaCard, winner, row)]);
          await send(samCard, loser, row);
          const where = isBatch(loser)
            ? samCard.locator('[data-scope="batch"]')
            : samCard.getByTestId("call-row").nth(row);
          await expect(where.getByTestId("race-sentence"), what).toHaveText(
            expectedSentence(loser, winner, group.isPlan === true),
          );
          const kept = keptText(loser);
          const keptField = where.getByTestId("unsent-draft-text");
          if (kept === null) await expect(keptField, what).toHaveCount(0);
          else await expect(keptField, what).toHaveValue(kept);
        }
        await expectNoEmptyNotice(samCard);
        // The decisions on record are Dana's, and nothing of Sam's was written.
        const final = (await team.reviewerApi.get(`/batches/${batch.id}`)).body;
        for (const { row } of group.races)
          expect(final.calls[row].decision.by.name, name).toBe(WINNER);
        for (const call of final.calls)
          expect(
            call.votes.some((v: { reviewer: { name: string } }) => v.reviewer.name === LOSER),
            name,
          ).toBe(false);
        if (index === 0 || group.name === "reject-all-vs-approve-all") await axeClean(sam, samCard);
        await shot(samCard, name);
      };
      let next = 0;
      await Promise.all(
        danaTabs.map(async (_, lane) => {
          while (next < chosen.length) await play(lane, next++);
        }),
      );
    });
  }

  test("'Reject all' lost to the reviewer's own approval offers to reject the rest", async () => {
    await sam.setViewportSize({ width: 390, height: 844 });
    const { batch } = await pause(team.agent, twoCalls());
    await sam.goto(`/batches/${batch.id}`);
    const card = cardOf(sam, batch.id);
    await prepare(card, "reject-all");
    // Sam approved the refund himself a moment ago, in another tab.
    const samApi = apiClient(baseURL, team.reviewers[1]!.token);
    const approved = await samApi.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(approved.status).toBe(200);
    await send(card, "reject-all");
    await expect(card.getByTestId("race-sentence")).toHaveText(
      new RegExp(
        `^Your rejection of both calls was not recorded: you had already approved refund_order ${AGO}, so nothing else was decided and 1 call is still open\\.$`,
      ),
    );
    await expect(card.getByTestId("unsent-draft-text")).toHaveValue("Fraud ring, stop everything");
    const rest = card.getByTestId("decide-rest");
    await expect(rest).toHaveText("Reject the other call with this reason");
    await axeClean(sam, card);
    await shot(card, "races-phone-reject-all-lost-to-own-approval");
    await rest.click();
    await expect(card.getByTestId("conflict-notice")).toHaveCount(0);
    await expect(card).toHaveAttribute("data-status", "decided");
    const final = (await team.reviewerApi.get(`/batches/${batch.id}`)).body;
    expect(final.calls.map((c: { status: string }) => c.status)).toEqual(["approved", "rejected"]);
    expect(final.calls[1].decision.reason).toBe("Fraud ring, stop everything");
    await shot(card, "races-phone-reject-all-rest-rejected");
  });
});
