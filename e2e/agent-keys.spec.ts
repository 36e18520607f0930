import { readFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { baseURL, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Issue 14: agent keys and personal tokens managed in the app. A key's secret is shown once, works
// at once, and a revoked key is refused on its very next request; signing out everywhere ends
// this browser's session too.

const unique = () => randomUUID().slice(0, 8);

test("an admin creates an agent key (its secret shown once), and revokes it", async ({ page }) => {
  const queue = await makeQueue();
  const admin = await makeReviewer({
    name: "Ada Admin",
    queues: [{ name: queue.name, role: "admin" }],
  });
  await signIn(page, admin);
  await page.goto("/agents");
  await expect(page.getByRole("heading", { name: "Agent keys" })).toBeVisible();

  const name = `Billing bot ${unique()}`;
  await page.getByLabel("Name (shown on cards)").fill(name);
  await page.getByLabel("Default queue").selectOption({ label: queue.name });
  await page.getByLabel(/Owner's email/).fill(admin.email);
  await page.getByRole("button", { name: "Create key" }).click();

  const secretBox = page.getByTestId("secret-once");
  await expect(secretBox).toBeVisible();
  const key = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(key).toMatch(/^cs_agent_/);
  const row = page.getByTestId("agent-key-row").filter({ hasText: name });
  await expect(row).toContainText("Active");
  await expect(row).toContainText(key.slice(0, 15));
  await shot(page, "agent-keys-agents-created", { fullPage: true });
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);

  // The key works at once, as the agent uses it.
  const agent = apiClient(baseURL, key);
  expect((await agent.post("/runs", {})).status).toBe(201);

  // Shown once: gone when dismissed, and nowhere on the page after a reload.
  await secretBox.getByRole("button", { name: "Done" }).click();
  await expect(secretBox).toBeHidden();
  await page.reload();
  expect(await page.content()).not.toContain(key);

  // Rotate: a new secret, shown once; the old one keeps working through its grace period.
  await row.getByRole("button", { name: `Rotate the key of ${name}` }).click();
  const rotatePanel = page.getByTestId("rotate-panel");
  await rotatePanel.getByLabel(/the old one/).selectOption({ label: "works 1 more hour" });
  await rotatePanel.getByRole("button", { name: "Rotate key" }).click();
  await expect(secretBox).toContainText(`The new key of ${name}`);
  const newKey = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(newKey).not.toBe(key);
  const rotated = apiClient(baseURL, newKey);
  expect((await rotated.post("/runs", {})).status).toBe(201);
  expect((await agent.post("/runs", {})).status).toBe(201);
  await expect(row).toContainText("Rotating");
  await secretBox.getByRole("button", { name: "Done" }).click();

  await row.getByRole("button", { name: `Revoke the key of ${name}` }).click();
  await row.getByRole("button", { name: "Revoke now" }).click();
  await expect(row).toContainText("Revoked");
  await expect(page.getByTestId("agents-status")).toContainText("Revoked the key");
  expect((await agent.post("/runs", {})).status).toBe(401);
  expect((await rotated.post("/runs", {})).status).toBe(401);
  await shot(page, "agent-keys-agents-revoked", { fullPage: true });

  await page.goto("/audit");
  const audit = page.getByTestId("audit-row");
  await expect(audit.nth(0)).toContainText(`Revoked agent key '${name}'`);
  await expect(audit.nth(1)).toContainText(`Rotated agent key '${name}'`);
  await expect(audit.nth(2)).toContainText(`Created agent key '${name}'`);
  await shot(page, "agent-keys-audit", { fullPage: true });

  // The export: the same events with their chain hashes, ending with the signed chain head.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Export JSON" }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^countersign-audit-\d{4}-\d{2}-\d{2}\.json$/);
  const exported = JSON.parse(await readFile((await download.path())!, "utf8"));
  const revoked = exported.events.find(
    (e: { type: string; data: string }) => e.type === "agent.revoked" && e.data.includes(name),
  );
  expect(revoked.hash).toMatch(/^[0-9a-f]{64}$/);
  expect(exported.chainHead.seq).toBeGreaterThanOrEqual(revoked.seq);
});

test("a reviewer makes and revokes a personal token, then signs out everywhere", async ({
  page,
}) => {
  const queue = await makeQueue();
  const reviewer = await makeReviewer({ name: "Rae Reviewer", queues: [{ name: queue.name }] });
  await signIn(page, reviewer);
  await page.goto("/tokens");
  await page.getByRole("button", { name: "Create a token" }).click();
  const token = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(token).toMatch(/^cs_rev_/);
  expect((await apiClient(baseURL, token).get("/queue")).status).toBe(200);
  await shot(page, "agent-keys-tokens", { fullPage: true });

  const row = page.getByTestId("token-row").filter({ hasText: token.slice(0, 13) });
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await row.getByRole("button", { name: "Revoke now" }).click();
  await expect(row).toContainText("Revoked");
  expect((await apiClient(baseURL, token).get("/queue")).status).toBe(401);

  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await page.getByRole("button", { name: "Sign out everywhere now" }).click();
  await page.waitForURL("**/sign-in**");
  await expect(page.getByTestId("signed-out")).toContainText("Your personal tokens still work.");
  await page.goto("/queue");
  await page.waitForURL("**/sign-in**");
  // The factory's token was not asked to be revoked: it still works.
  expect((await apiClient(baseURL, reviewer.token).get("/queue")).status).toBe(200);
});

test("an open queue tab learns its session ended when it is signed out everywhere", async ({
  page,
  context,
}) => {
  const queue = await makeQueue();
  const reviewer = await makeReviewer({ name: "Sam Signedout", queues: [{ name: queue.name }] });
  await signIn(page, reviewer);
  await page.goto("/queue");
  await expect(page.getByTestId("connection")).toHaveText("Live");

  const other = await context.newPage();
  await other.goto("/tokens");
  await other.getByRole("button", { name: "Sign out everywhere" }).click();
  await other.getByRole("button", { name: "Sign out everywhere now" }).click();
  await other.waitForURL("**/sign-in**");

  // The server ends the queue's stream within seconds (lib/auth/credential-watch.ts); the tab
  // then stops retrying and says why, instead of "Reconnecting…" forever.
  await expect(page.getByTestId("signed-out-banner")).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("connection")).toHaveText("Signed out");
  await shot(page, "agent-keys-queue-signed-out");
  await page.getByRole("link", { name: "Sign in again" }).click();
  await page.waitForURL("**/sign-in**");
});
