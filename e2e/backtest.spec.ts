import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { baseURL, pause, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Issue 29: a rule is backtested on the queue's history before it is saved (the policy form) and
// beside each rule of the list; the suggestions page offers the rules reviewers have been
// applying by hand, to create (on or off) or dismiss. Each test has its own queue and tool names.

const unique = () => randomUUID().slice(0, 8);

/** A queue whose lead approved `approvals` calls of each tool as asked, and rejected one refund. */
async function history(tools: string[], approvals = 20) {
  const queue = await makeQueue();
  const lead = await makeReviewer({
    name: "Lena Lead",
    queues: [{ name: queue.name, role: "lead" }],
  });
  const key = await makeAgentKey({ name: `Notes bot ${unique()}`, queues: [queue.name] });
  const agent = apiClient(baseURL, key.key);
  const leadApi = apiClient(baseURL, lead.token);
  const decide = async (toolName: string, args: Record<string, unknown>, outcome: string) => {
    const { batch } = await pause(agent, { calls: [{ toolCallId: "c", toolName, args }] });
    const call = batch.calls[0];
    const answer = await leadApi.post(`/calls/${call.id}/decision`, {
      outcome,
      expectedRevision: call.revision,
      ...(outcome === "reject" && { reason: "Too much money" }),
    });
    expect(answer.status).toBe(200);
  };
  for (const tool of tools)
    for (let i = 0; i < approvals; i++)
      await decide(tool, { to: `user${i}@example.com` }, "approve");
  return { queue, lead, decide };
}

test("the policy form backtests a rule before it is saved, and the rules list shows each rule's last 30 days", async ({
  page,
}) => {
  const tool = `send_note_${unique()}`;
  const refund = `refund_${unique()}`;
  const { queue, lead, decide } = await history([tool]);
  await decide(refund, { amount: 900 }, "reject");
  await signIn(page, lead);
  await page.goto(`/policies?queue=${queue.id}`);

  const form = page.getByRole("form", { name: "New rule" });
  await form.getByLabel("Name", { exact: true }).fill(`Notes ${tool}`);
  await form.getByLabel("Effect").selectOption("allow");
  await form.getByLabel(/Tool name/).fill(tool);
  await form.getByRole("button", { name: "Backtest on the last 30 days" }).click();
  await expect(form.getByTestId("backtest-summary")).toHaveText(
    "Over the last 30 days, this rule would have approved 20 cards (20 calls), overturning none.",
  );
  // nothing was saved by trying
  await expect(page.getByTestId("queue-rules")).toContainText("No rules of this queue's own yet.");

  // a rule that would allow what a reviewer rejected says whose decision it overturns, and why
  await form.getByLabel(/Tool name/).fill(refund);
  await form.getByRole("button", { name: "Backtest on the last 30 days" }).click();
  await expect(form.getByTestId("backtest-summary")).toContainText("overturning 1 decision");
  await expect(form.getByTestId("backtest-overturned")).toContainText(
    "rejected by Lena Lead — “Too much money”",
  );
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(form, "policy-backtest-preview");

  // a field the server refuses is shown on its control, as saving would show it
  await form.getByLabel(/Tool name/).fill("not a pattern!");
  await form.getByRole("button", { name: "Backtest on the last 30 days" }).click();
  await expect(form.getByLabel(/Tool name/)).toHaveAttribute("aria-invalid", "true");

  await form.getByLabel(/Tool name/).fill(tool);
  await form.getByRole("button", { name: "Add rule" }).click();
  const row = page.getByTestId("policy-rule").filter({ hasText: `Notes ${tool}` });
  await expect(row.getByTestId("rule-backtest")).toContainText(
    "would have approved 20 cards (20 calls), overturning none",
  );
  await row.getByTestId("rule-backtest").locator("summary").click();
  await expect(row.getByTestId("backtest-report")).toContainText("Approved as asked");
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "policies-backtests", { fullPage: true });
});

test("the suggestions page offers the rules reviewers apply by hand: created off, or dismissed", async ({
  page,
}) => {
  const [notes, emails] = [`send_note_${unique()}`, `send_email_${unique()}`];
  const { queue, lead } = await history([notes, emails]);
  await signIn(page, lead);
  await page.goto(`/policies?queue=${queue.id}`);
  await page.getByRole("link", { name: "Suggestions" }).click();
  await expect(page).toHaveURL(new RegExp(`/suggestions\\?queue=${queue.id}`));
  await expect(page.getByRole("heading", { name: "Policy suggestions", level: 1 })).toBeVisible();
  const suggestion = (tool: string) => page.getByTestId("suggestion").filter({ hasText: tool });
  await expect(page.getByTestId("suggestion")).toHaveCount(2);
  await expect(suggestion(notes)).toContainText(
    "approved as asked 20 times by hand, never refused",
  );
  await suggestion(notes).getByText("Backtest").click();
  await expect(suggestion(notes).getByTestId("backtest-summary")).toContainText(
    "would have approved 20 cards (20 calls), overturning none",
  );
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "policy-suggestions", { fullPage: true });

  await suggestion(notes).getByRole("button", { name: "Create, turned off" }).click();
  await expect(page.getByRole("status").filter({ hasText: "created, turned off" })).toBeVisible();
  await suggestion(emails)
    .getByRole("button", { name: /^Dismiss/ })
    .click();
  await expect(page.getByRole("status").filter({ hasText: "Dismissed" })).toBeVisible();

  // both gone on the next visit: one is a rule now (off), the other dismissed
  await page.goto(`/suggestions?queue=${queue.id}`);
  await expect(page.getByTestId("no-suggestions")).toContainText(
    "1 dismissed suggestion is hidden",
  );
  await page.goto(`/policies?queue=${queue.id}`);
  await expect(page.getByTestId("policy-rule").filter({ hasText: notes })).toContainText("Off");
});
