import { readFile } from "node:fs/promises";
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { apiClient, type ApiClient } from "@/test/support/http";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { OPERATOR } from "@/lib/queues/queue-access";
import { baseURL, pause, seedTeam, signIn, type Team } from "./support/fixtures";
import { shot, shotEverySize } from "./support/screenshots";

// The history page: who decided what and why, filters in the URL, and the CSV export.

const call = (toolName: string, args: Record<string, unknown>, summary?: string) => ({
  toolCallId: `${toolName}-${Math.random().toString(36).slice(2, 8)}`,
  toolName,
  args,
  ...(summary && { summary }),
});

async function decide(
  reviewer: ApiClient,
  target: { id: string; revision: number },
  outcome: "approve" | "reject",
  reason?: string,
) {
  const answer = await reviewer.post(`/calls/${target.id}/decision`, {
    outcome,
    expectedRevision: target.revision,
    ...(reason && { reason }),
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** A few settled requests of every kind, decided by Dana and Sam through the API. */
async function seedHistory(team: Team, sam: ApiClient) {
  const refund = await pause(team.agent, {
    calls: [call("refund_order", { orderId: "A-1001", amount: 25 }, "Refund order A-1001")],
  });
  await decide(team.reviewerApi, refund.batch.calls[0], "approve", "Customer is a VIP");

  const plan = await pause(team.agent, {
    kind: "plan",
    plan: { summary: "Rotate the production database credentials" },
  });
  await decide(sam, plan.batch.calls[0], "approve");

  const deploy = await pause(team.agent, {
    calls: [
      call("merge_pr", { repo: "acme/api", number: 418 }),
      call("deploy_service", { service: "api", env: "production" }),
    ],
  });
  await decide(team.reviewerApi, deploy.batch.calls[0], "approve");
  await decide(team.reviewerApi, deploy.batch.calls[1], "reject", "Deploy freeze until Monday");

  const withdrawn = await pause(team.agent, { calls: [call("send_email", { to: "all@acme" })] });
  await team.agent.post(`/batches/${withdrawn.batch.id}/cancel`, { reason: "User changed mind" });

  const wipe = await pause(team.agent, {
    calls: [call("delete_files", { paths: ["/srv/data"] }, "Delete /srv/data")],
  });
  await decide(sam, wipe.batch.calls[0], "reject", '=HYPERLINK("http://x") no wiping prod');
  return { refund, plan, deploy, withdrawn, wipe };
}

test("history shows who decided what and why; filters narrow it; CSV export downloads it", async ({
  page,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const sam = apiClient(baseURL, team.reviewers[1]!.token);
  const seeded = await seedHistory(team, sam);
  await signIn(page, team.reviewers[0]!);
  await page.goto("/history");

  const table = page.getByRole("table", { name: "Decided batches, newest decision first" });
  const rows = table.getByTestId("history-row");
  await expect(rows).toHaveCount(5);
  // newest decision first: Sam's rejection of the wipe
  const newest = rows.first();
  await expect(newest).toContainText("delete_files");
  await expect(newest).toContainText("Rejected");
  await expect(newest.getByTestId("history-deciders")).toHaveText("Sam Reviewer");
  await expect(newest.getByTestId("history-reasons")).toContainText("no wiping prod");
  const mixed = rows.nth(2);
  await expect(mixed).toContainText("Mixed");
  await expect(mixed.getByTestId("history-deciders")).toHaveText("Dana Reviewer");
  await expect(mixed.getByTestId("history-reasons")).toHaveText("Deploy freeze until Monday");
  await expect(rows.nth(1)).toContainText("Withdrawn");
  await expect(rows.last()).toContainText("Customer is a VIP");

  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await shot(page, "history", { fullPage: true });

  // Filters are a GET form: they land in the URL.
  await page.getByLabel("Outcome").selectOption("rejected");
  await page.getByLabel("Decided by").selectOption({ label: "Sam Reviewer" });
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/outcome=rejected/);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("delete_files");

  // The export carries the same filters.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Export CSV" }).click(),
  ]);
  const today = new Date().toISOString().slice(0, 10);
  expect(download.suggestedFilename()).toBe(`countersign-history-${today}.csv`);
  const csv = await readFile((await download.path())!, "utf8");
  const lines = csv.trimEnd().split("\r\n");
  expect(lines[0]).toBe(
    "decidedAt,queue,agent,runId,batchId,kind,toolName,outcome,source,decidedBy,decidedById,decidedByEmail,reason,edited,args,editedArgs,callId,toolCallId,requestedAt,batchStatus,batchOutcome,planSummary,editedPlanSummary,chainSeq,chainHash",
  );
  // the header, the one row, and the signed chain head (npm run admin -- audit verify-export)
  expect(lines).toHaveLength(3);
  expect(lines[2]).toMatch(/^#chain-head,\d+,[0-9a-f]{64},/);
  expect(lines[1]).toContain(seeded.wipe.batch.id);
  expect(lines[1]).toContain(",delete_files,rejected,reviewer,Sam Reviewer,");
  // the formula is defused: a leading quote, inside an RFC 4180 quoted field
  expect(lines[1]).toContain(`"'=HYPERLINK(""http://x"") no wiping prod"`);

  // A filter nothing matches: the empty state, with a way back.
  await page.getByLabel("Tool").fill("no_such_tool");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.getByTestId("history-empty")).toContainText(
    "No decisions yet match these filters",
  );
  const emptyAxe = await new AxeBuilder({ page }).analyze();
  expect(emptyAxe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await page.getByRole("link", { name: "Clear", exact: true }).click();
  await expect(rows).toHaveCount(5);

  // Each row leads to its run.
  await rows
    .last()
    .getByRole("link", { name: /view run/i })
    .click();
  await expect(page).toHaveURL(new RegExp(`/runs/${seeded.refund.run.id}$`));
  await expect(page.getByTestId("call-decision")).toHaveText("Approved by Dana Reviewer");
});

test("history lists calls a policy blocked as decisions: a batch blocked whole and the blocked call of a mixed one, filterable and exported", async ({
  page,
}) => {
  const team = await seedTeam();
  await createPolicyRule(OPERATOR, {
    queue: team.queue.id,
    name: "No env files",
    effect: "deny",
    toolPattern: "delete_files",
    argPredicates: [{ path: "paths[*]", op: "glob", value: "*.env*" }],
    reason: "Environment files hold secrets.",
  });
  const blocked = await pause(team.agent, {
    calls: [call("delete_files", { paths: ["src/legacy/", ".env.staging"] })],
  });
  expect(blocked.batch).toMatchObject({ status: "decided", outcome: "rejected" });
  const mixed = await pause(team.agent, {
    calls: [
      call("merge_pr", { repo: "acme/api", number: 7 }),
      call("delete_files", { paths: [".env"] }),
    ],
  });
  const reviewable = mixed.batch.calls.find((c: { toolName: string }) => c.toolName === "merge_pr");
  await decide(team.reviewerApi, reviewable, "approve");

  await signIn(page, team.reviewers[0]!);
  await page.goto("/history");
  const rows = page.getByTestId("history-row");
  await expect(rows).toHaveCount(2);
  const mixedRow = page.locator(`[data-testid="history-row"][data-batch-id="${mixed.batch.id}"]`);
  await expect(mixedRow).toContainText("Mixed");
  await expect(mixedRow.getByTestId("history-call-outcomes")).toContainText(
    "delete_files Blocked by policy",
  );
  await expect(mixedRow.getByTestId("history-deciders")).toHaveText("Dana Reviewer, Policy");
  const blockedRow = page.locator(
    `[data-testid="history-row"][data-batch-id="${blocked.batch.id}"]`,
  );
  await expect(blockedRow).toContainText("Rejected");
  await expect(blockedRow.getByTestId("history-deciders")).toHaveText("Policy");
  await expect(blockedRow.getByTestId("history-reasons")).toContainText(
    "Environment files hold secrets.",
  );
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "history-blocked", { fullPage: true });

  // "Decided through" narrows to what a policy settled; the export follows the filter.
  await page.getByLabel("Decided through").selectOption({ label: "A reviewer" });
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/source=reviewer/);
  await expect(rows).toHaveCount(1);
  await page.getByLabel("Decided through").selectOption({ label: "A policy (allowed or blocked)" });
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/source=policy/);
  await expect(rows).toHaveCount(2);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Export CSV" }).click(),
  ]);
  const lines = (await readFile((await download.path())!, "utf8")).trimEnd().split("\r\n");
  // one row per call: the blocked call alone, and both calls of the mixed batch
  const rowsOf = (batchId: string) => lines.filter((line) => line.includes(batchId));
  expect(rowsOf(blocked.batch.id)).toHaveLength(1);
  expect(rowsOf(blocked.batch.id)[0]).toContain(",delete_files,rejected,policy,");
  expect(rowsOf(mixed.batch.id)).toHaveLength(2);
  expect(rowsOf(mixed.batch.id).join("\n")).toContain(",delete_files,rejected,policy,");
});

test("history pages with a cursor link and exports JSON", async ({ page }) => {
  const team = await seedTeam();
  const decided: string[] = [];
  for (let i = 0; i < 52; i++) {
    const { batch } = await pause(team.agent, {
      calls: [call("tag_ticket", { ticket: i, tag: "billing" })],
    });
    await decide(team.reviewerApi, batch.calls[0], "approve");
    decided.unshift(batch.id);
  }
  await signIn(page, team.reviewers[0]!);
  await page.goto("/history");
  const rows = page.getByTestId("history-row");
  await expect(rows).toHaveCount(50);
  await expect(rows.first()).toHaveAttribute("data-batch-id", decided[0]!);
  await page.getByRole("link", { name: "Load older decisions" }).click();
  await expect(page).toHaveURL(/cursor=/);
  await expect(rows).toHaveCount(2);
  expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-batch-id")))).toEqual(
    decided.slice(50),
  );
  await expect(page.getByRole("link", { name: "Load older decisions" })).toHaveCount(0);
  await page.getByRole("link", { name: "Newest decisions" }).click();
  await expect(rows).toHaveCount(50);

  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Export JSON" }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^countersign-history-\d{4}-\d{2}-\d{2}\.json$/);
  const exported = JSON.parse(await readFile((await download.path())!, "utf8")).batches;
  expect(exported.map((b: { id: string }) => b.id)).toEqual(decided);
});

test("history shows each call's outcome, an edit's diff, and a plan's summary as proposed and approved", async ({
  page,
}) => {
  const team = await seedTeam();
  const deploy = await pause(team.agent, {
    calls: [
      call("merge_pr", { repo: "acme/api", number: 418 }),
      call("deploy_service", { service: "api", env: "production" }),
    ],
  });
  await decide(team.reviewerApi, deploy.batch.calls[0], "approve");
  await decide(team.reviewerApi, deploy.batch.calls[1], "reject", "Deploy freeze until Monday");

  const ticket = await pause(team.agent, {
    calls: [call("update_ticket", { ticket: 7, status: "closed", note: "Refunded" })],
  });
  const edit = await team.reviewerApi.post(`/calls/${ticket.batch.calls[0].id}/decision`, {
    outcome: "edit",
    expectedRevision: ticket.batch.calls[0].revision,
    editedArgs: { ticket: 7, status: "pending", note: "Refunded" },
    reason: "Keep it open until the customer confirms",
  });
  expect(edit.status, JSON.stringify(edit.body)).toBe(200);

  const plan = await pause(team.agent, {
    kind: "plan",
    plan: { summary: "Drop the legacy billing tables" },
  });
  const planEdit = await team.reviewerApi.post(`/calls/${plan.batch.calls[0].id}/decision`, {
    outcome: "edit",
    expectedRevision: plan.batch.calls[0].revision,
    editedArgs: { summary: "Archive the legacy billing tables, then drop them" },
  });
  expect(planEdit.status, JSON.stringify(planEdit.body)).toBe(200);

  await signIn(page, team.reviewers[0]!);
  await page.goto("/history");
  const rows = page.getByTestId("history-row");
  await expect(rows).toHaveCount(3);
  const row = (batchId: string) =>
    page.locator(`[data-testid="history-row"][data-batch-id="${batchId}"]`);

  // a mixed batch: which call was rejected
  const outcomes = row(deploy.batch.id).getByTestId("history-call-outcomes").getByRole("listitem");
  await expect(outcomes).toHaveText(["merge_pr Approved", "deploy_service Rejected"]);

  // a plan: the summary proposed, struck out, and the one approved
  const summary = row(plan.batch.id).getByTestId("history-plan-summary");
  await expect(summary).toContainText("Proposed: Drop the legacy billing tables");
  await expect(summary.getByTestId("history-plan-edited")).toHaveText(
    "Approved as: Archive the legacy billing tables, then drop them",
  );

  // an edit: who edited, and the diff behind a disclosure
  const edits = page.getByTestId("history-edit");
  await expect(edits).toHaveCount(2);
  const ticketEdit = edits.filter({ hasText: "update_ticket" });
  await expect(ticketEdit.locator("summary")).toContainText(
    "update_ticket was edited before approval by Dana Reviewer",
  );
  await expect(ticketEdit.getByTestId("args-diff")).toBeHidden();
  await ticketEdit.locator("summary").click();
  const diff = ticketEdit.getByTestId("args-diff");
  await expect(diff).toBeVisible();
  await expect(diff).toContainText('"status": "closed"');
  await expect(diff).toContainText('"status": "pending"');
  await edits.filter({ hasText: "plan" }).locator("summary").click();

  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await shotEverySize(page, "history-audit");
  // The dark check runs at phone width (where the pictures, when taken, leave the page anyway).
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: "dark" });
  const darkAxe = await new AxeBuilder({ page }).analyze();
  expect(darkAxe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
});
