import AxeBuilder from "@axe-core/playwright";
import type { Locator, Page } from "@playwright/test";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import { baseURL, signIn } from "./support/fixtures";
import { shot, shotsWanted } from "./support/screenshots";
import { expect, test } from "./support/test";

// Issue 18, item 1: every reviewer page works on a phone (the "phone" project in
// playwright.config.ts runs this at 390×844): nothing scrolls sideways but a table inside its own
// box, the header's links sit behind a menu button, and axe finds nothing, in light and in dark.

// Screenshots of every page are for a person to look at (E2E_SHOTS=/some/dir, see
// support/screenshots.ts); a tall page at phone width takes seconds to capture, so a plain run
// skips them.
// Long enough to need a break on a 390 px card, in two naming styles.
const LONG_TOOL = "create_database_role_with_read_write_grants";
const CAMEL_TOOL = "rotateProductionDatabaseCredentialsForService";

const unique = () => Math.random().toString(36).slice(2, 8);

type Seed = {
  admin: TestReviewer;
  /** a reviewer of the seeded queue (other specs make more people of the same name) */
  sam: TestReviewer;
  queueId: string;
  runId: string;
  batchId: string;
};

let seed: Seed;

test.beforeAll(async () => {
  const queue = await makeQueue();
  const admin = await makeReviewer({
    name: "Ada Phone-Admin",
    queues: [{ name: queue.name, role: "admin" }],
  });
  const sam = await makeReviewer({ name: "Sam Reviewer", queues: [{ name: queue.name }] });
  const agentKey = await makeAgentKey({ name: "Phone support bot", queues: [queue.name] });
  const agent = apiClient(baseURL, agentKey.key);
  const adminApi = apiClient(baseURL, admin.token);

  // One pending card with long tool names, one decided batch for history and a run page.
  const pending = await agent.post("/runs", {
    batch: {
      calls: [
        {
          toolCallId: "call-long-1",
          toolName: LONG_TOOL,
          args: { role: "reporting_readwrite", database: "orders_production_eu_west_1" },
          summary: "Create a read-write role on the production orders database",
          risks: ["Grants write access to production data"],
        },
        {
          toolCallId: "call-long-2",
          toolName: CAMEL_TOOL,
          args: { service: "billing-api" },
        },
      ],
    },
  });
  expect(pending.status).toBe(201);
  const decided = await agent.post("/runs", { batch: refundBatch() });
  expect(decided.status).toBe(201);
  const call = decided.body.batches[0].calls[0];
  const vote = await adminApi.post(`/calls/${call.id}/decision`, {
    outcome: "reject",
    expectedRevision: call.revision,
    reason: "The order was already refunded by the payments team last Tuesday",
  });
  expect(vote.status).toBe(200);
  const rule = await adminApi.post("/routing-rules", {
    name: `Production database changes ${unique()}`,
    queue: queue.name,
    // Routing rules apply to every queue: this one must match no other spec's calls.
    toolPattern: `phone_probe_${unique()}_*`,
  });
  expect(rule.status).toBe(201);
  const policy = await adminApi.post("/policy-rules", {
    name: `Ask before touching production ${unique()}`,
    queue: queue.id,
    effect: "ask",
    toolPattern: "rotate*",
    argPredicates: [{ path: "service", op: "equals", value: "billing-api" }],
  });
  expect(policy.status).toBe(201);

  seed = {
    admin,
    sam,
    queueId: queue.id,
    runId: decided.body.id,
    batchId: pending.body.batches[0].id,
  };
});

const pages = (): { name: string; path: string; ready: (page: Page) => Promise<void> }[] => {
  const h1 = async (page: Page) => {
    await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
  };
  return [
    {
      name: "queue",
      path: "/queue",
      ready: async (page) => {
        await expect(page.locator(`[data-batch-id="${seed.batchId}"]`)).toBeVisible();
        await expect(page.getByTestId("connection")).toHaveText("Live");
      },
    },
    { name: "history", path: "/history", ready: h1 },
    { name: "insights", path: "/insights", ready: h1 },
    { name: "queues", path: "/queues", ready: h1 },
    { name: "queue-settings", path: `/queues/${seed.queueId}`, ready: h1 },
    { name: "routing", path: "/routing", ready: h1 },
    { name: "policies", path: "/policies", ready: h1 },
    { name: "agents", path: "/agents", ready: h1 },
    { name: "people", path: "/people", ready: h1 },
    { name: "tokens", path: "/tokens", ready: h1 },
    { name: "notifications", path: "/notifications", ready: h1 },
    { name: "audit", path: "/audit", ready: h1 },
    { name: "settings", path: "/settings", ready: h1 },
    { name: "sso", path: "/settings/sso", ready: h1 },
    { name: "run", path: `/runs/${seed.runId}`, ready: h1 },
    {
      name: "batch",
      path: `/batches/${seed.batchId}`,
      ready: async (page) => {
        await expect(page.locator(`[data-batch-id="${seed.batchId}"]`)).toBeVisible();
      },
    },
  ];
};

/**
 * What sticks out past the screen's right edge (empty when the page fits). Measured against the
 * device's width, not window.innerWidth: a phone browser zooms a too-wide page out, and the
 * layout viewport (innerWidth) grows with it.
 */
const sidewaysOverflow = (page: Page) =>
  page.evaluate((width) => {
    if (document.documentElement.scrollWidth <= width) return [];
    const culprits: string[] = [];
    for (const element of document.querySelectorAll("body *")) {
      const right = Math.round(element.getBoundingClientRect().right + window.scrollX);
      if (right <= width) continue;
      const id = element.id ? `#${element.id}` : "";
      const classes = [...element.classList].map((c) => `.${c}`).join("");
      culprits.push(`${element.tagName.toLowerCase()}${id}${classes} → ${right}px`);
      if (culprits.length >= 8) break;
    }
    return culprits.length > 0 ? culprits : [`scrollWidth ${document.documentElement.scrollWidth}`];
  }, page.viewportSize()!.width);

test("every reviewer page fits a phone without scrolling sideways; axe is clean, light and dark", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await signIn(page, seed.admin);
  for (const { name, path, ready } of pages()) {
    await test.step(name, async () => {
      await page.goto(path);
      await ready(page);
      // One visit, both themes: the colours change, the layout must hold in each.
      for (const theme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: theme });
        expect(await sidewaysOverflow(page), `${path} scrolls sideways (${theme})`).toEqual([]);
        // The second theme changes colours only: its pass checks contrast, the first checks all.
        const builder = new AxeBuilder({ page });
        const axe = await (
          theme === "dark" ? builder.withRules(["color-contrast"]) : builder
        ).analyze();
        expect(
          axe.violations.map(
            (v) => `${path} (${theme}): ${v.id}: ${v.help} (${v.nodes[0]?.target})`,
          ),
        ).toEqual([]);
        await shot(page, `phone-${name}-${theme}`, { fullPage: true });
      }
    });
  }
});

test("the header menu opens and closes from the keyboard, and its links navigate", async ({
  page,
}) => {
  await signIn(page, seed.admin);
  const menuButton = page.getByRole("button", { name: "Menu" });
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(menuButton).toHaveAttribute("aria-expanded", "false");
  // Closed, the links are out of sight and out of the tab order.
  await expect(nav.getByRole("link", { name: "Routing" })).toBeHidden();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeHidden();

  await menuButton.focus();
  await page.keyboard.press("Enter");
  await expect(menuButton).toHaveAttribute("aria-expanded", "true");
  // Every link, and the reviewer's own controls, fit on the screen.
  for (const label of ["Queue", "History", "Routing", "Policies", "Audit", "SSO"]) {
    const link = nav.getByRole("link", { name: label, exact: true });
    await expect(link).toBeInViewport();
  }
  await expect(page.getByRole("button", { name: "Sign out" })).toBeInViewport();
  await shot(page, "phone-menu-open-light");
  // The current page is marked, and Tab walks from the button into the menu.
  await expect(nav.getByRole("link", { name: "Queue", exact: true })).toHaveAttribute(
    "aria-current",
    "page",
  );
  await page.keyboard.press("Tab");
  await expect(nav.getByRole("link", { name: "Queue", exact: true })).toBeFocused();

  // Escape closes it and gives focus back to the button.
  await page.keyboard.press("Escape");
  await expect(menuButton).toHaveAttribute("aria-expanded", "false");
  await expect(menuButton).toBeFocused();
  await expect(nav.getByRole("link", { name: "Routing" })).toBeHidden();

  // Space opens it too; a link followed from the keyboard navigates and closes the menu.
  await page.keyboard.press(" ");
  await expect(menuButton).toHaveAttribute("aria-expanded", "true");
  await nav.getByRole("link", { name: "Routing", exact: true }).focus();
  await page.keyboard.press("Enter");
  await page.waitForURL("**/routing");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Routing");
  await expect(menuButton).toHaveAttribute("aria-expanded", "false");
  await expect(nav.getByRole("link", { name: "Routing" })).toBeHidden();

  // A tap outside the open menu closes it.
  await menuButton.click();
  await expect(menuButton).toHaveAttribute("aria-expanded", "true");
  if (shotsWanted) {
    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, "phone-menu-open-dark");
  }
  // Below the open menu, near the bottom of the screen.
  await page.mouse.click(195, 830);
  await expect(menuButton).toHaveAttribute("aria-expanded", "false");
});

test("the queue's filters wait behind a button that counts the active ones", async ({ page }) => {
  await signIn(page, seed.admin);
  const card = page.locator(`[data-batch-id="${seed.batchId}"]`);
  await expect(card).toBeVisible();
  const toggle = page.getByRole("button", { name: /^Filters/ });
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(toggle).toHaveAccessibleName("Filters");
  await expect(page.getByLabel("Kind")).toBeHidden();
  // The first card starts within the first screen, not below a panel of menus.
  const box = await card.boundingBox();
  expect(box!.y).toBeLessThan(844 / 2);

  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await page.getByLabel("Kind").selectOption("action");
  await expect(toggle).toHaveAccessibleName("Filters, 1 active");
  // Issue 26, item 14: the header's count follows the filters and says so.
  await expect(page.getByTestId("pending-count")).toHaveText(
    /^\d+ of \d+ pending match(, \d+ set aside by you)?$/,
  );
  await page.getByLabel("Agent").selectOption("Phone support bot");
  await expect(toggle).toHaveAccessibleName("Filters, 2 active");
  await expect(card).toBeVisible();
  await shot(page, "phone-queue-filters-open", { fullPage: true });
  await toggle.click();
  await expect(page.getByLabel("Kind")).toBeHidden();
  await expect(toggle).toContainText("2");
  // Filters set from a shared link are counted before anyone opens the panel.
  await page.reload();
  await expect(page.getByRole("button", { name: "Filters, 2 active" })).toBeVisible();
});

test("history's filters also wait behind the Filters button, and the table starts on the first screen", async ({
  page,
}) => {
  await signIn(page, seed.admin);
  await page.goto("/history");
  const toggle = page.getByRole("button", { name: /^Filters/ });
  await expect(toggle).toHaveAccessibleName("Filters");
  await expect(page.getByLabel("Outcome")).toBeHidden();
  const table = page.getByRole("table").first();
  expect((await table.boundingBox())!.y).toBeLessThan(844 / 2);
  await shot(page, "phone-history-filters-folded", { fullPage: true });

  await toggle.click();
  await page.getByLabel("Outcome").selectOption("rejected");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/outcome=rejected/);
  // After the page reloads with the filter, the panel is folded again and counts it.
  await expect(page.getByRole("button", { name: "Filters, 1 active" })).toBeVisible();
  await expect(page.getByLabel("Outcome")).toBeHidden();
  await expect(table).toBeVisible();
});

test("tool names wrap only between their words, never inside one", async ({ page }) => {
  await signIn(page, seed.admin);
  const card = page.locator(`[data-batch-id="${seed.batchId}"]`);
  await expect(card).toBeVisible();
  for (const name of [LONG_TOOL, CAMEL_TOOL]) {
    const label = card.getByTestId("tool-name").filter({ hasText: name });
    await expect(label).toHaveCount(1);
    // Where each line ends: the text before every break must close a word.
    const breaks = await label.evaluate((element) => {
      const text = element.textContent ?? "";
      const tops: number[] = [];
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < (node.textContent ?? "").length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          tops.push(Math.round(range.getBoundingClientRect().top));
        }
      }
      const lines: string[] = [];
      let start = 0;
      for (let i = 1; i < tops.length; i++) {
        if (tops[i]! > tops[i - 1]!) {
          lines.push(text.slice(start, i));
          start = i;
        }
      }
      lines.push(text.slice(start));
      return lines;
    });
    expect(breaks.join(""), "the whole name is shown").toBe(name);
    // LONG_TOOL's words end at "_", CAMEL_TOOL's before a capital.
    for (let i = 0; i < breaks.length - 1; i++) {
      const [line, next] = [breaks[i]!, breaks[i + 1]!];
      expect(/_$/.test(line) || /^[A-Z]/.test(next), `"${line}|${next}" splits a word`).toBe(true);
    }
    // The label fits inside the card.
    const [labelBox, cardBox] = [await label.boundingBox(), await card.boundingBox()];
    expect(labelBox!.x + labelBox!.width).toBeLessThanOrEqual(cardBox!.x + cardBox!.width);
  }
  await shot(card, "phone-tool-names");
  // Issue 26, item 14: on a phone the timeout rule starts its own line without a leading "· ".
  const rule = card.locator('[class*="deadlineRule"]').first();
  await expect(rule).toBeVisible();
  expect(await rule.evaluate((element) => getComputedStyle(element, "::before").content)).toBe(
    "none",
  );
  // …and keyboard hints stay out of the way of an on-screen keyboard.
  await card.getByTestId("reject-button").first().click();
  await expect(card.getByRole("textbox").first()).toBeVisible();
  await expect(card.getByText("Ctrl+Enter (⌘+Enter) to send")).toBeHidden();
  await shot(card, "issue26-phone-reason-no-key-hint");
  await page.keyboard.press("Escape");
});

test("the run page shows approvals and the timeline before the run's details", async ({ page }) => {
  await signIn(page, seed.admin);
  await page.goto(`/runs/${seed.runId}`);
  const approvals = page.getByTestId("call-decision").first();
  await expect(approvals).toBeVisible();
  const details = page.getByRole("complementary", { name: "Run details" });
  const [approvalsBox, detailsBox] = [await approvals.boundingBox(), await details.boundingBox()];
  expect(approvalsBox!.y).toBeLessThan(detailsBox!.y);
  const timeline = page.getByTestId("timeline-event").first();
  expect((await timeline.boundingBox())!.y).toBeLessThan(detailsBox!.y);
});

test("on a wide screen the header shows every link in its row and no Menu button", async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, seed.admin);
  await expect(page.getByRole("button", { name: "Menu" })).toBeHidden();
  const nav = page.getByRole("navigation", { name: "Main" });
  for (const label of ["Queue", "Insights", "Routing", "Notifications", "SSO"]) {
    await expect(nav.getByRole("link", { name: label, exact: true })).toBeInViewport();
  }
  await expect(page.getByRole("button", { name: "Sign out" })).toBeInViewport();
  // One line: the brand, the last link and Sign out share a row (the header wrapped at 1280 once).
  const rowOf = async (locator: Locator) => {
    const box = await locator.boundingBox();
    return box ? Math.round(box.y + box.height / 2) : NaN;
  };
  const brandRow = await rowOf(page.getByRole("link", { name: "Countersign", exact: true }));
  expect(
    Math.abs((await rowOf(nav.getByRole("link", { name: "SSO", exact: true }))) - brandRow),
  ).toBeLessThan(6);
  expect(
    Math.abs((await rowOf(page.getByRole("button", { name: "Sign out" }))) - brandRow),
  ).toBeLessThan(6);
  // The filter panel is shown as it is, with no button in front of it.
  await expect(page.getByLabel("Kind")).toBeVisible();
  await expect(page.getByRole("button", { name: /^Filters/ })).toBeHidden();
  expect(await sidewaysOverflow(page)).toEqual([]);
  for (const theme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await shot(page, `phone-desktop-queue-${theme}`);
    await page.goto(`/runs/${seed.runId}`);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await shot(page, `phone-desktop-run-${theme}`);
    await page.goto("/queue");
    await expect(page.locator(`[data-batch-id="${seed.batchId}"]`)).toBeVisible();
  }
});

// Issue 26, items 5, 8 and 9: each at a phone's width (this project) and on a 1280×800 laptop,
// in the same visit; screenshots light and dark with E2E_SHOTS.
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SIZES_26 = [
  ["phone", PHONE],
  ["desktop", DESKTOP],
] as const;

/** The main navigation's link labels, opening the phone's menu first when it is closed. */
async function navLabels(page: Page): Promise<string[]> {
  const menuButton = page.getByRole("button", { name: "Menu" });
  if ((await menuButton.isVisible()) && (await menuButton.getAttribute("aria-expanded")) !== "true")
    await menuButton.click();
  return page.getByRole("navigation", { name: "Main" }).getByRole("link").allTextContents();
}

async function shotBothThemes(page: Page, name: string) {
  if (!shotsWanted) return;
  for (const theme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await shot(page, `${name}-${theme}`, { fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test("each role's navigation offers only what it can use; an empty queue speaks to the role", async ({
  page,
}) => {
  test.setTimeout(90_000);
  const queue = await makeQueue();
  const lead = await makeReviewer({
    name: "Lena Lead",
    queues: [{ name: queue.name, role: "lead" }],
  });
  const reviewer = await makeReviewer({ name: "Remy Reviewer", queues: [{ name: queue.name }] });
  const adminQueue = await makeQueue();
  const admin = await makeReviewer({
    name: "Adele Admin",
    queues: [{ name: adminQueue.name, role: "admin" }],
  });
  const REVIEWER_NAV = ["Queue", "History", "Queues", "Policies", "Tokens", "Notifications"];
  const LEAD_NAV = [
    "Queue",
    "History",
    "Insights",
    "Queues",
    "Policies",
    "Agents",
    "People",
    "Tokens",
    "Notifications",
  ];

  // The sign-in page tells a visitor whom to ask, not a command only the operator can run.
  await page.goto("/sign-in");
  await expect(page.getByText(/No account\?/)).toContainText("invite you");
  await expect(page.getByText(/No account\?/)).not.toContainText("npm run");

  await signIn(page, reviewer);
  for (const [size, viewport] of SIZES_26) {
    await page.setViewportSize(viewport);
    await page.goto("/queue");
    const empty = page.getByTestId("queue-empty");
    await expect(empty).toHaveAttribute("data-role", "reviewer");
    // Who to ask (their queue's lead, by name), and how cards reach them; no operator commands.
    await expect(empty.getByTestId("queue-empty-ask")).toContainText(
      `Lena Lead (lead of ${queue.name})`,
    );
    await expect(empty).toContainText(`Cards of ${queue.name} appear here`);
    await expect(empty.getByTestId("queue-empty-notify")).toContainText("Notify me");
    await expect(empty).not.toContainText("npm run");
    await expect(page.getByTestId("queue-empty-demo")).toHaveCount(0);
    // Issue 26, item 14: the shortcuts sheet's button is for a keyboard: not on a phone.
    await expect(page.getByTestId("keys-button")).toBeVisible({ visible: size === "desktop" });
    const axe = await new AxeBuilder({ page }).include('[data-testid="queue-empty"]').analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
    await shotBothThemes(page, `issue26-reviewer-queue-${size}`);
    expect(await navLabels(page)).toEqual(REVIEWER_NAV);
    await shot(page, `issue26-reviewer-nav-${size}`);
  }

  // A lead also gets the team pages; routing, audit and SSO stay an admin's.
  await page.context().clearCookies();
  await page.setViewportSize(PHONE);
  await signIn(page, lead);
  for (const [, viewport] of SIZES_26) {
    await page.setViewportSize(viewport);
    await page.goto("/queue");
    expect(await navLabels(page)).toEqual(LEAD_NAV);
  }

  // An admin sees all twelve, and an empty queue offers the demo.
  await page.context().clearCookies();
  await page.setViewportSize(PHONE);
  await signIn(page, admin);
  for (const [size, viewport] of SIZES_26) {
    await page.setViewportSize(viewport);
    await page.goto("/queue");
    await expect(page.getByTestId("queue-empty-demo")).toContainText("npm run demo");
    await shotBothThemes(page, `issue26-admin-queue-${size}`);
    expect(await navLabels(page)).toHaveLength(12);
  }

  // Issue 26, item 14: the shortcuts sheet's sentences keep their spaces.
  await page.getByTestId("keys-button").click();
  await expect(page.getByTestId("keyboard-help")).toContainText("approve at once. Turn");
  await page.getByTestId("keyboard-help").getByRole("button", { name: "Close" }).click();

  // Issue 26, item 14: on a light system the theme button's first click shows the dark theme.
  await page.emulateMedia({ colorScheme: "light" });
  await page.getByRole("button", { name: /^Theme: system/ }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.getByRole("button", { name: /^Theme: dark/ }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  await page.getByRole("button", { name: /^Theme: light/ }).click();
  await expect(page.locator("html")).not.toHaveAttribute("data-theme", /./);
});

/** The element's right edge fits the screen's width (no sideways scrolling needed to reach it). */
async function expectOnScreen(locator: Locator, width: number) {
  await expect(locator).toBeVisible();
  const box = (await locator.boundingBox())!;
  expect(box.x, `${locator} starts on screen`).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width, `${locator} ends on screen`).toBeLessThanOrEqual(width);
}

test("history, agent keys and people: rows become cards on a phone, each with its name, state and actions", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await signIn(page, seed.admin);
  for (const [size, viewport] of SIZES_26) {
    await page.setViewportSize(viewport);
    const phone = size === "phone";

    await page.goto("/history");
    const historyRow = page.getByTestId("history-row").first();
    await expectOnScreen(historyRow.getByRole("link").first(), viewport.width);
    await expectOnScreen(historyRow.locator('td[data-label="Outcome"]'), viewport.width);
    await expectOnScreen(historyRow.getByTestId("history-deciders"), viewport.width);
    // On a phone each row is a card of its own (the column names move into it); on a laptop the
    // table stays a table.
    expect(await historyRow.evaluate((row) => getComputedStyle(row).display)).toBe(
      phone ? "flex" : "table-row",
    );
    await shotBothThemes(page, `issue26-history-${size}`);

    await page.goto("/agents");
    const agentRow = page.getByTestId("agent-key-row").filter({ hasText: "Phone support bot" });
    await expectOnScreen(agentRow.getByText("Phone support bot"), viewport.width);
    await expectOnScreen(agentRow.getByText("Active"), viewport.width);
    await agentRow.getByRole("button", { name: /^Revoke the key of/ }).click();
    // The question stays beside the name it asks about: "Revoke now" and "Keep" both on screen,
    // in the same card as the agent's name.
    const revokeNow = agentRow.getByRole("button", { name: "Revoke now" });
    const keep = agentRow.getByRole("button", { name: "Keep" });
    await expectOnScreen(revokeNow, viewport.width);
    await expectOnScreen(keep, viewport.width);
    await expectOnScreen(agentRow.getByText("Phone support bot"), viewport.width);
    await shotBothThemes(page, `issue26-agents-confirm-${size}`);
    await keep.click();
    await expect(revokeNow).toHaveCount(0);

    await page.goto("/people");
    const personRow = page.locator(`[data-testid="person-row"][data-email="${seed.sam.email}"]`);
    await expectOnScreen(personRow.getByText("Sam Reviewer"), viewport.width);
    await expectOnScreen(personRow.getByText("Active"), viewport.width);
    await expectOnScreen(
      personRow.getByRole("button", { name: /^Reset the password/ }),
      viewport.width,
    );
    await personRow.getByRole("button", { name: /^Deactivate/ }).click();
    await expectOnScreen(personRow.getByRole("button", { name: "Deactivate now" }), viewport.width);
    await expectOnScreen(personRow.getByRole("button", { name: "Keep" }), viewport.width);
    await shotBothThemes(page, `issue26-people-confirm-${size}`);
    await personRow.getByRole("button", { name: "Keep" }).click();
    expect(await sidewaysOverflow(page)).toEqual([]);
  }
});

test("sign out everywhere asks first, says what it did on the sign-in page, and its checkbox is a 24 px target", async ({
  page,
}) => {
  test.setTimeout(90_000);
  const queue = await makeQueue();
  for (const [size, viewport] of SIZES_26) {
    const reviewer = await makeReviewer({ name: `Otto ${size}`, queues: [{ name: queue.name }] });
    await page.setViewportSize(viewport);
    await signIn(page, reviewer);
    await page.goto("/tokens");
    // The personal tokens' table stacks like the others: a token's state and Revoke on screen.
    const tokenRow = page.getByTestId("token-row").first();
    await expectOnScreen(tokenRow.getByText("Active"), viewport.width);
    await expectOnScreen(tokenRow.getByRole("button", { name: /^Revoke/ }), viewport.width);
    const sessions = page.locator("#sessions");
    const box = sessions.getByRole("checkbox", { name: "Also revoke all my personal tokens" });
    const size24 = (await box.boundingBox())!;
    expect(size24.width).toBeGreaterThanOrEqual(24);
    expect(size24.height).toBeGreaterThanOrEqual(24);
    const axe = await new AxeBuilder({ page }).include("#sessions").withRules(["target-size"]);
    expect((await axe.analyze()).violations.map((v) => v.id)).toEqual([]);

    // One click asks; Keep leaves everything as it was.
    await sessions.getByRole("button", { name: "Sign out everywhere" }).click();
    await expect(page.getByTestId("sign-out-everywhere-question")).toContainText(
      "this one included",
    );
    await expect(page).toHaveURL(/\/tokens$/);
    await shotBothThemes(page, `issue26-sign-out-question-${size}`);
    await sessions.getByRole("button", { name: "Keep" }).click();
    await expect(page.getByTestId("sign-out-everywhere-question")).toHaveCount(0);

    await box.check();
    await sessions.getByRole("button", { name: "Sign out everywhere" }).click();
    await expect(page.getByTestId("sign-out-everywhere-question")).toContainText(
      "every personal token of yours stops working",
    );
    await sessions.getByRole("button", { name: "Sign out everywhere now" }).click();
    await page.waitForURL("**/sign-in**");
    const said = page.getByTestId("signed-out");
    await expect(said).toContainText("You signed out everywhere: 1 session of yours ended");
    await expect(said).toContainText("1 personal token was revoked");
    for (const theme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: theme });
      const contrast = await new AxeBuilder({ page }).withRules(["color-contrast"]).analyze();
      expect(contrast.violations.map((v) => `${theme}: ${v.id}`)).toEqual([]);
    }
    await shotBothThemes(page, `issue26-signed-out-${size}`);
    expect((await apiClient(baseURL, reviewer.token).get("/queue")).status).toBe(401);
  }
});
