import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { baseURL, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Issue 25, item 6: hosted MCP gateways managed in the app. An admin adds one (refused clearly
// for an upstream it may not reach, or a header it cannot read), sees the endpoint to give its
// agents, edits which agents may use it, and disables it, by keyboard where it matters; the
// upstream's token typed into the form is never shown again. A reviewer only reads the list.

const unique = () => randomUUID().slice(0, 8);
const UPSTREAM_TOKEN = `Bearer sk-e2e-upstream-${unique()}`;

test("an admin adds, edits and disables a hosted MCP gateway", async ({ page }) => {
  const queue = await makeQueue();
  const admin = await makeReviewer({
    name: "Ada Admin",
    queues: [{ name: queue.name, role: "admin" }],
  });
  const agentName = `Docs bot ${unique()}`;
  await makeAgentKey({ name: agentName, queues: [queue.name] });
  await signIn(page, admin);
  await page.goto("/agents");
  await page.getByRole("link", { name: "MCP gateways" }).click();
  await expect(page.getByRole("heading", { name: "MCP gateways", level: 1 })).toBeVisible();

  const name = `docs-${unique()}`;
  const form = page.getByTestId("new-gateway-form");
  await form.getByLabel(/^Name/).fill(name);
  const url = form.getByLabel(/Upstream MCP server URL/);
  await url.fill("http://10.0.0.5/mcp");
  await form.getByLabel(/Headers sent upstream/).fill(`Authorization: ${UPSTREAM_TOKEN}`);
  await form.getByLabel(agentName).check();
  await form.getByRole("button", { name: "Add gateway" }).click();
  // The SSRF refusal, under the URL, which takes the focus.
  await expect(url).toHaveAttribute("aria-invalid", "true");
  await expect(url).toBeFocused();
  await expect(form.getByTestId("field-error")).toContainText("10.0.0.5 is a private address");
  await shot(page, "mcp-gateways-refused-url", { fullPage: true });
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);

  // A header line that is not "Name: value" is refused before anything is sent.
  await url.fill("https://mcp.example.com/mcp");
  const headers = form.getByLabel(/Headers sent upstream/);
  await headers.fill("just a token");
  await form.getByRole("button", { name: "Add gateway" }).click();
  await expect(headers).toHaveAttribute("aria-invalid", "true");
  await expect(form.getByTestId("field-error")).toContainText('"Name: value"');

  await headers.fill(`Authorization: ${UPSTREAM_TOKEN}`);
  await form.getByRole("button", { name: "Add gateway" }).click();
  const status = page.getByTestId("gateways-status");
  await expect(status).toContainText(`Added ${name}`);
  const row = page.locator(`[data-testid="gateway-row"][data-gateway-name="${name}"]`);
  await expect(row.getByTestId("gateway-endpoint")).toHaveText(
    `${baseURL}/api/mcp/gateways/${name}`,
  );
  await expect(row).toContainText("Authorization");
  await expect(row).toContainText(agentName);
  await expect(row).toContainText("Enabled");
  // Written once, never shown again: not in the page, not after a reload.
  await page.reload();
  expect(await page.content()).not.toContain("sk-e2e-upstream");
  await shot(page, "mcp-gateways-added", { fullPage: true });
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);

  // Edit: no agent may use it any more; the stored header is kept (the box is left empty).
  await row.getByRole("button", { name: `Edit ${name}` }).click();
  const edit = page.getByTestId("edit-gateway-form");
  await expect(edit.getByText("Stored: Authorization.")).toBeVisible();
  await expect(edit.getByLabel(/Headers sent upstream/)).toHaveValue("");
  await edit.getByLabel(agentName).uncheck();
  await shot(page, "mcp-gateways-edit", { fullPage: true });
  await edit.getByRole("button", { name: "Save gateway" }).click();
  await expect(status).toContainText(`Saved ${name}`);
  await expect(row.locator('[data-label="Agents allowed"]')).toHaveText("none");
  await expect(row).toContainText("Authorization");

  // Disable, by keyboard: the question, then the answer.
  await row.getByRole("button", { name: `Disable ${name}` }).focus();
  await page.keyboard.press("Enter");
  await row.getByRole("button", { name: "Disable now" }).focus();
  await page.keyboard.press("Enter");
  await expect(row).toContainText("Disabled");
  await expect(status).toContainText("agents can no longer connect");
  await expect(row.getByRole("button", { name: `Enable ${name}` })).toBeVisible();
  await shot(page, "mcp-gateways-disabled", { fullPage: true });

  await page.goto("/audit");
  const audit = page.getByTestId("audit-row");
  await expect(audit.nth(0)).toContainText(`Disabled MCP gateway '${name}'`);
  await expect(audit.nth(1)).toContainText(`Changed agents of MCP gateway '${name}'`);
  await expect(audit.nth(2)).toContainText(`Added MCP gateway '${name}'`);
});

test("a reviewer sees the gateways and their endpoints, without the forms", async ({ page }) => {
  const queue = await makeQueue();
  const reviewer = await makeReviewer({ name: "Rae Reviewer", queues: [{ name: queue.name }] });
  await signIn(page, reviewer);
  await page.goto("/mcp-gateways");
  await expect(page.getByRole("heading", { name: "MCP gateways", level: 1 })).toBeVisible();
  await expect(page.getByText("Only an admin adds or changes them.")).toBeVisible();
  await expect(page.getByTestId("new-gateway-form")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Edit / })).toHaveCount(0);
});
