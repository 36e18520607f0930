import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { baseURL, pause, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Policy rules apply in their queue (or, global ones, in every queue): each test writes its rules
// for a fresh queue and unique tool names, so the other spec files sharing the database never
// meet them.

const unique = () => randomUUID().slice(0, 8);

/** The policy page's "New rule" form. */
function newRuleForm(page: Page) {
  return page.getByRole("form", { name: "New rule" });
}

async function addRule(
  page: Page,
  rule: {
    name: string;
    effect: "allow" | "ask" | "deny";
    tool: string;
    predicate?: { path: string; op: "equals" | "starts with" | "matches glob"; value: string };
    reason?: string;
  },
) {
  const form = newRuleForm(page);
  await form.getByLabel("Name", { exact: true }).fill(rule.name);
  await form.getByLabel("Effect").selectOption(rule.effect);
  await form.getByLabel(/Tool name/).fill(rule.tool);
  if (rule.predicate) {
    await form.getByRole("button", { name: "Add argument condition" }).click();
    await form.getByLabel("Argument path 1").fill(rule.predicate.path);
    await form.getByLabel("Comparison 1").selectOption({ label: rule.predicate.op });
    await form.getByLabel("Value 1").fill(rule.predicate.value);
  }
  if (rule.reason) await form.getByLabel(/^Reason/).fill(rule.reason);
  await form.getByRole("button", { name: "Add rule" }).click();
  const row = page.getByTestId("policy-rule").filter({ hasText: rule.name });
  await expect(row).toBeVisible();
  return row;
}

/** A queue with a lead and an agent key; tool names no other spec file uses. */
async function seedQueue() {
  const queue = await makeQueue();
  const lead = await makeReviewer({
    name: "Lena Lead",
    queues: [{ name: queue.name, role: "lead" }],
  });
  const key = await makeAgentKey({ name: "Files bot", queues: [queue.name] });
  const suffix = unique();
  return {
    queue,
    lead,
    agent: apiClient(baseURL, key.key),
    leadApi: apiClient(baseURL, lead.token),
    writeTool: `write_file_${suffix}`,
    deleteTool: `delete_tree_${suffix}`,
    allowName: `Scratch writes ${suffix}`,
    denyName: `No tree deletes ${suffix}`,
  };
}

/** The two rules of these tests, written through the API (the page's own form is tested first). */
async function seedRules(seed: Awaited<ReturnType<typeof seedQueue>>) {
  for (const rule of [
    {
      name: seed.allowName,
      effect: "allow",
      toolPattern: seed.writeTool,
      argPredicates: [{ path: "path", op: "prefix", value: "/scratch/" }],
    },
    {
      name: seed.denyName,
      effect: "deny",
      toolPattern: seed.deleteTool,
      reason: "Deleting whole trees needs a ticket.",
    },
  ]) {
    const created = await seed.leadApi.post("/policy-rules", { queue: seed.queue.id, ...rule });
    expect(created.status).toBe(201);
  }
}

test("a lead writes rules in the policy page: the agent's next matching call never reaches the queue and the run's timeline names the rule; a deny rule blocks", async ({
  page,
}) => {
  const { queue, lead, agent, writeTool, deleteTool, allowName, denyName } = await seedQueue();
  await signIn(page, lead);

  await page.goto(`/policies?queue=${queue.id}`);
  await expect(page.getByRole("heading", { name: "Policies", level: 1 })).toBeVisible();
  await expect(page.getByTestId("queue-rules")).toContainText("No rules of this queue's own yet.");

  const allowRow = await addRule(page, {
    name: allowName,
    effect: "allow",
    tool: writeTool,
    predicate: { path: "path", op: "starts with", value: "/scratch/" },
  });
  await expect(allowRow.getByTestId("policy-conditions")).toHaveText(
    `When tool matches ${writeTool} and path starts with "/scratch/"`,
  );
  await expect(allowRow.getByTestId("policy-effect")).toHaveAttribute("data-effect", "allow");
  const denyRow = await addRule(page, {
    name: denyName,
    effect: "deny",
    tool: deleteTool,
    reason: "Deleting whole trees needs a ticket.",
  });
  await expect(denyRow).toContainText("Agent is told Deleting whole trees needs a ticket.");

  // The agent's next matching call is approved at once, by the rule.
  const allowed = await pause(agent, {
    calls: [{ toolCallId: "w1", toolName: writeTool, args: { path: "/scratch/notes.txt" } }],
  });
  expect(allowed.batch).toMatchObject({ status: "decided", outcome: "approved" });
  expect(allowed.batch.calls[0].decision).toMatchObject({
    outcome: "approved",
    source: "policy",
    policy: { effect: "allow", blocked: false, rule: { name: allowName } },
  });

  // A deny rule blocks, and tells the agent why.
  const denied = await pause(agent, {
    calls: [{ toolCallId: "d1", toolName: deleteTool, args: { path: "/" } }],
  });
  expect(denied.batch.calls[0]).toMatchObject({
    status: "rejected",
    decision: { source: "policy", policy: { blocked: true, rule: { name: denyName } } },
  });
  expect(denied.batch.calls[0].decision.reason).toContain("Deleting whole trees needs a ticket.");

  // What no rule settles still reaches the reviewers; the settled ones never do.
  const asked = await pause(agent, {
    calls: [{ toolCallId: "w2", toolName: writeTool, args: { path: "/etc/hosts" } }],
  });
  expect(asked.batch.status).toBe("pending");
  await page.goto(`/queue?queue=${queue.id}`);
  const card = (batchId: string) =>
    page.locator(`[data-testid="review-card"][data-batch-id="${batchId}"]`);
  await expect(card(asked.batch.id)).toBeVisible();
  await expect(card(allowed.batch.id)).toHaveCount(0);
  await expect(card(denied.batch.id)).toHaveCount(0);

  // The run's timeline shows the rule that decided.
  await page.goto(`/runs/${allowed.run.id}`);
  await expect(page.getByText(allowName).first()).toBeVisible();
});

test("try a call shows which rule would decide and why each rule did or did not match", async ({
  page,
}) => {
  const seed = await seedQueue();
  const { queue, writeTool, deleteTool, allowName, denyName } = seed;
  await seedRules(seed);
  await signIn(page, seed.lead);
  await page.goto(`/policies?queue=${queue.id}`);

  const tryBox = page.getByTestId("try-call");
  await tryBox.getByLabel("Tool name").fill(writeTool);
  await tryBox.getByLabel("Arguments (JSON)").fill("{ path: oops");
  await tryBox.getByRole("button", { name: "Try it" }).click();
  await expect(tryBox.getByLabel("Arguments (JSON)")).toHaveAttribute("aria-invalid", "true");
  await expect(tryBox.getByTestId("field-error")).toContainText("not valid JSON");
  // A path that climbs out of /scratch/ is judged where it lands.
  await tryBox.getByLabel("Arguments (JSON)").fill('{ "path": "/scratch/../etc/passwd" }');
  await tryBox.getByRole("button", { name: "Try it" }).click();
  await expect(tryBox.getByTestId("try-outcome")).toHaveAttribute("data-outcome", "review");
  await tryBox.getByLabel("Arguments (JSON)").fill('{ "path": "/scratch/notes.txt" }');
  await tryBox.getByRole("button", { name: "Try it" }).click();
  await expect(tryBox.getByTestId("try-outcome")).toHaveAttribute("data-outcome", "approved");
  await expect(tryBox.getByTestId("try-explanation")).toHaveText(`Allowed by rule '${allowName}'.`);
  const decider = tryBox.getByTestId("try-check").filter({ hasText: allowName });
  await expect(decider).toHaveAttribute("data-matched", "true");
  await expect(decider).toContainText("Decides");
  await expect(
    decider.getByTestId("try-condition").filter({ hasText: 'path starts with "/scratch/"' }),
  ).toHaveAttribute("data-held", "true");
  await expect(
    tryBox
      .getByTestId("try-check")
      .filter({ hasText: denyName })
      .getByTestId("try-condition")
      .filter({ hasText: `tool ${writeTool} matches ${deleteTool}` }),
  ).toHaveAttribute("data-held", "false");

  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, "policies", { fullPage: true });
  // On a light system the first click shows the other theme (issue 26): system → dark.
  await page.getByRole("button", { name: /^Theme/ }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await shot(page, "policies-dark", { fullPage: true });
});

test("a rule matches inside a list (paths[*]); try a call says which condition failed, on which value", async ({
  page,
}) => {
  const seed = await seedQueue();
  const deleteFiles = `delete_files_${unique()}`;
  const bareName = `Env files, bare path ${unique()}`;
  const listName = `Env files, any element ${unique()}`;
  // The rule as first written: `paths` is a list, so a glob on it never matches.
  const bare = await seed.leadApi.post("/policy-rules", {
    queue: seed.queue.id,
    name: bareName,
    effect: "deny",
    toolPattern: deleteFiles,
    argPredicates: [{ path: "paths", op: "glob", value: "*.env*" }],
  });
  expect(bare.status).toBe(201);
  await signIn(page, seed.lead);
  await page.goto(`/policies?queue=${seed.queue.id}`);
  const row = await addRule(page, {
    name: listName,
    effect: "deny",
    tool: deleteFiles,
    predicate: { path: "paths[*]", op: "matches glob", value: "*.env*" },
    reason: "Environment files hold secrets.",
  });
  await expect(row.getByTestId("policy-conditions")).toContainText(
    'paths[*] (any element) matches "*.env*"',
  );

  // The demo's own call: one of its paths is .env.staging.
  const args = { paths: ["src/checkout/legacy/", "scripts/backfill-2023.ts", ".env.staging"] };
  const tryBox = page.getByTestId("try-call");
  await tryBox.getByLabel("Tool name").fill(deleteFiles);
  await tryBox.getByLabel("Arguments (JSON)").fill(JSON.stringify(args));
  await tryBox.getByRole("button", { name: "Try it" }).click();
  await expect(tryBox.getByTestId("try-outcome")).toHaveAttribute("data-outcome", "blocked");
  await expect(tryBox.getByTestId("try-explanation")).toHaveText(`Blocked by rule '${listName}'.`);
  const listCheck = tryBox.getByTestId("try-check").filter({ hasText: listName });
  await expect(listCheck.getByTestId("try-condition").nth(1)).toHaveAttribute("data-held", "true");
  await expect(listCheck.getByTestId("try-condition").nth(1).getByTestId("try-why")).toHaveText(
    '— ".env.staging" matches "*.env*" (1 of 3)',
  );
  // The bare path's ✗ says why, and how to write it.
  const bareCheck = tryBox.getByTestId("try-check").filter({ hasText: bareName });
  await expect(bareCheck).toHaveAttribute("data-matched", "false");
  const failed = bareCheck.getByTestId("try-condition").filter({ hasText: "paths matches" });
  await expect(failed).toHaveAttribute("data-held", "false");
  await expect(failed.getByTestId("try-why")).toContainText(
    'paths is a list ("src/checkout/legacy/", "scripts/backfill-2023.ts", ".env.staging"): write paths[*] to match any element, or paths[all] to match every element',
  );
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await tryBox.scrollIntoViewIfNeeded();
  await shot(tryBox, "policies-try-list-path");

  // And the agent's real call is blocked by it, never reaching a reviewer.
  const blocked = await pause(seed.agent, {
    calls: [{ toolCallId: "d1", toolName: deleteFiles, args }],
  });
  expect(blocked.batch.calls[0]).toMatchObject({
    status: "rejected",
    decision: { source: "policy", policy: { blocked: true, rule: { name: listName } } },
  });
});

test("a lead moves, turns off, edits and removes rules in place", async ({ page }) => {
  const seed = await seedQueue();
  const { queue, agent, writeTool, allowName, denyName } = seed;
  await seedRules(seed);
  await signIn(page, seed.lead);
  await page.goto(`/policies?queue=${queue.id}`);
  const names = page.getByTestId("queue-rules").getByTestId("policy-rule-name");
  const allowRow = page.getByTestId("policy-rule").filter({ hasText: allowName });
  const denyRow = page.getByTestId("policy-rule").filter({ hasText: denyName });

  await expect(names).toHaveText([allowName, denyName]);
  await denyRow.getByRole("button", { name: `Move rule ${denyName} up` }).click();
  await expect(names).toHaveText([denyName, allowName]);

  // Turned off, the rule is skipped: the call goes to a reviewer.
  await allowRow.getByRole("button", { name: `Turn off rule ${allowName}` }).click();
  await expect(allowRow).toContainText("Off");
  const skipped = await pause(agent, {
    calls: [{ toolCallId: "w3", toolName: writeTool, args: { path: "/scratch/a.txt" } }],
  });
  expect(skipped.batch.status).toBe("pending");
  await allowRow.getByRole("button", { name: `Turn on rule ${allowName}` }).click();
  await expect(allowRow).not.toContainText("Off");

  await allowRow.getByRole("button", { name: `Edit rule ${allowName}` }).click();
  const edit = page.getByRole("form", { name: `Edit rule ${allowName}` });
  await expect(edit.getByLabel("Value 1")).toHaveValue("/scratch/");
  await edit.getByLabel("Value 1").fill("/tmp/");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(allowRow.getByTestId("policy-conditions")).toContainText('path starts with "/tmp/"');
  const edited = await pause(agent, {
    calls: [{ toolCallId: "w4", toolName: writeTool, args: { path: "/tmp/a.txt" } }],
  });
  expect(edited.batch.status).toBe("decided");

  await denyRow.getByRole("button", { name: `Remove rule ${denyName}` }).click();
  await expect(denyRow).toHaveCount(0);
  await expect(names).toHaveText([allowName]);
});

test("a reviewer who is not a lead reads the rules but cannot change them", async ({ page }) => {
  const queue = await makeQueue();
  const lead = await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] });
  const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
  const name = `Ask for prod ${unique()}`;
  const created = await apiClient(baseURL, lead.token).post("/policy-rules", {
    name,
    queue: queue.id,
    effect: "ask",
    toolPattern: `deploy_${unique()}`,
    argPredicates: [{ path: "env", op: "equals", value: "prod" }],
  });
  expect(created.status).toBe(201);

  await signIn(page, reviewer);
  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: "Policies" })
    .click();
  await expect(page).toHaveURL(new RegExp(`/policies`));
  await expect(page.getByLabel("Queue", { exact: true })).toHaveValue(queue.id);
  const row = page.getByTestId("policy-rule").filter({ hasText: name });
  await expect(row).toContainText('env is "prod"');
  await expect(row.getByTestId("policy-effect")).toHaveAttribute("data-effect", "ask");
  await expect(page.getByTestId("policies-read-only")).toBeVisible();
  await expect(row.getByRole("button")).toHaveCount(0);
  await expect(newRuleForm(page)).toHaveCount(0);
  await expect(page.getByTestId("agent-modes")).toHaveCount(0);
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
});

test("an admin switches an agent's mode to deny; its next call that needs a reviewer is rejected", async ({
  page,
}) => {
  const queue = await makeQueue();
  const admin = await makeReviewer({ queues: [{ name: queue.name, role: "admin" }] });
  const agentName = `Mode bot ${unique()}`;
  const key = await makeAgentKey({ name: agentName, queues: [queue.name] });
  await signIn(page, admin);
  await page.goto(`/policies?queue=${queue.id}`);

  await expect(newRuleForm(page).getByLabel("Applies in")).toContainText("Every queue");
  const row = page.getByTestId("agent-row").filter({ hasText: agentName });
  await expect(row).toContainText(queue.name);
  const mode = row.getByLabel(`Mode of ${agentName}`);
  await expect(mode).toHaveValue("ask");
  await mode.selectOption("deny");
  await expect(page.getByTestId("agent-modes").getByRole("status")).toHaveText(
    `Saved: ${agentName} is now in mode deny.`,
  );
  await expect(row).toContainText("a call that would need a reviewer is rejected");
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  await row.scrollIntoViewIfNeeded();
  await shot(page.getByTestId("agent-modes"), "policies-agents");

  const { batch } = await pause(apiClient(baseURL, key.key), {
    calls: [{ toolCallId: "m1", toolName: `anything_${unique()}`, args: {} }],
  });
  expect(batch.calls[0]).toMatchObject({
    status: "rejected",
    decision: { source: "policy", policy: { agentMode: "deny", blocked: false, rule: null } },
  });
});
