import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { pause, seedTeam, signIn } from "./support/fixtures";

// Everything on a card comes from an agent, and a compromised or prompt-injected agent writes
// whatever it likes. Markup, script, javascript: URLs, a megabyte string, control characters,
// bidi overrides and nesting as deep as the API takes (2,000 levels are refused), in args, summaries, risks, a plan and a reason
// (control characters in args only: texts the API stores refuse them, issue 24):
// nothing executes (no flag set, no dialog), the card stays inside the page, and the page keeps
// answering. (decisions.spec.ts covers plain markup in args; test/components the JSON view.)

const MEGABYTE = 1024 * 1024;
/** Args nested as deep as the API takes: 256 levels, the body, `calls`, the call and `args` included. */
const DEPTH = 252;
/** Right-to-left override (…) pop: shows "txt.exe" reversed, the "Trojan Source" trick. */
const BIDI = "invoice_\u202Etxt.exe\u202C and \u2067isolate\u2069 and \u200Fmark";
const CONTROL = "bell\u0007 null\u0000 escape\u001b[31mred\u001b[0m nel\u0085 del\u007f";
const MARKUP = [
  `<img src=x onerror="window.__pwned='img'">`,
  `<script>window.__pwned='script'</script>`,
  `<svg onload="window.__pwned='svg'"></svg>`,
  `<a href="javascript:window.__pwned='link'">click</a>`,
  `<iframe srcdoc="<script>parent.__pwned='frame'</script>"></iframe>`,
  `"><style>*{display:none!important}</style>`,
  `{{constructor.constructor('window.__pwned="template"')()}}`,
].join(" ");
const JAVASCRIPT_URL = "javascript:window.__pwned='url';alert(1)";

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = { [`level${depth - i}`]: value, [`sibling${i}`]: i };
  return value;
}

/** Fails the test on any dialog (alert/confirm/prompt) or uncaught error the content causes. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on("dialog", (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

async function expectInert(page: Page, problems: string[]) {
  expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(problems).toEqual([]);
}

/** The card lies within the page's width and the page did not grow sideways. */
async function expectBounded(page: Page, card: ReturnType<Page["locator"]>) {
  const viewport = page.viewportSize()!;
  const box = (await card.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
  // Cut strings and collapsed levels keep even a megabyte of args to a few screens.
  expect(box.height).toBeLessThan(viewport.height * 6);
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
}

/** The main thread answers quickly: the content did not wedge the page. */
async function expectResponsive(page: Page) {
  const started = Date.now();
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  expect(Date.now() - started).toBeLessThan(2_000);
}

test("hostile args, summaries, risks and reasons render inert and bounded", async ({ page }) => {
  test.setTimeout(90_000);
  const problems = watch(page);
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);

  // Deeper than the cap is refused before anything walks it (issue 14, finding 6).
  const tooDeep = await team.agent.post("/runs", {
    batch: { calls: [{ toolCallId: "t", toolName: "deep", args: nested(2_000) }] },
  });
  expect(tooDeep.status).toBe(400);
  expect(tooDeep.body.error.code).toBe("invalid_request");
  // Control characters are data in args (shown as tags below), but no stored text keeps them.
  const controlSummary = await team.agent.post("/runs", {
    batch: { calls: [{ toolCallId: "t", toolName: "c", args: {}, summary: CONTROL }] },
  });
  expect(controlSummary.status).toBe(400);
  expect(controlSummary.body.error.issues[0].path).toBe("batch.calls.0.summary");

  const { run, batch } = await pause(team.agent, {
    calls: [
      {
        toolCallId: "hostile-1",
        toolName: "send_email",
        args: {
          body: MARKUP,
          link: JAVASCRIPT_URL,
          bidi: BIDI,
          control: CONTROL,
          huge: "A".repeat(MEGABYTE),
          [MARKUP]: "markup as a key",
          [BIDI]: "bidi in a key",
        },
        summary: `${MARKUP} ${BIDI}`.slice(0, 4000),
        risks: [MARKUP, JAVASCRIPT_URL, BIDI, "W".repeat(2000)],
        metadata: { note: MARKUP, url: JAVASCRIPT_URL },
      },
      {
        toolCallId: "hostile-2",
        toolName: `deep_${"x".repeat(150)}`,
        args: nested(DEPTH),
        summary: "U".repeat(4000),
      },
    ],
  });
  const card = page.locator(`[data-testid="review-card"][data-batch-id="${batch.id}"]`);
  await expect(card).toBeVisible();
  await expect(card.getByTestId("call-row")).toHaveCount(2);
  await expect(card).toContainText("<script>window.__pwned='script'</script>");
  // As text, never as elements: nothing the content names exists in the card's DOM.
  expect(
    await card
      .locator("script, img, svg:not([aria-hidden]), iframe, style, a[href^='javascript']")
      .count(),
  ).toBe(0);
  // Characters a reviewer cannot see are shown as tags, so the override cannot reorder what the
  // reviewer reads (components/review-card/reveal.ts).
  await expect(card).toContainText("invoice_⟨U+202E⟩txt.exe⟨U+202C⟩");
  await expect(card).toContainText("escape⟨U+001B⟩[31mred");
  expect(await card.textContent()).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u0000\u001b]/);
  await expectInert(page, problems);
  await expectBounded(page, card);
  await expectResponsive(page);

  // The megabyte string opens a step at a time; the deep args open a level at a time.
  const huge = card.getByRole("button", { name: /show more/ }).first();
  await huge.click();
  await expectResponsive(page);
  const deepToggle = card.getByRole("button", { name: /^▸?\s*level/ }).first();
  for (let i = 0; i < 12 && (await deepToggle.count()); i++) {
    await card.locator('[aria-expanded="false"]').filter({ hasText: /level/ }).last().click();
  }
  await expectResponsive(page);
  await expectBounded(page, card);

  // A rejection whose reason is hostile too: shown as text on the card and on the run page.
  const reason = `${MARKUP} ${BIDI}`.slice(0, 1000);
  await card.getByTestId("reject-button").first().click();
  await card.getByTestId("reject-reason").fill(reason);
  await card.getByTestId("confirm-reject").click();
  await expect(card.getByTestId("call-row").first()).toContainText("window.__pwned='img'");
  await expectInert(page, problems);

  await page.goto(`/runs/${run.id}`);
  await expect(page.getByText("send_email").first()).toBeVisible();
  expect(
    await page.locator("main script, main img, main iframe, a[href^='javascript']").count(),
  ).toBe(0);
  await expectInert(page, problems);
  await expectResponsive(page);
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
});

test("a hostile plan renders inert and bounded", async ({ page }) => {
  const problems = watch(page);
  const team = await seedTeam();
  await signIn(page, team.reviewers[0]!);
  const { batch } = await pause(team.agent, {
    kind: "plan",
    plan: {
      summary: `${MARKUP} ${BIDI}`.slice(0, 4000),
      rationale: `${MARKUP} ${"R".repeat(6000)}`.slice(0, 8000),
      resources: [JAVASCRIPT_URL, MARKUP, BIDI, "https://evil.example/"],
      risks: [MARKUP, BIDI],
      rollback: JAVASCRIPT_URL,
    },
    calls: [{ toolCallId: "plan", toolName: "plan", args: {}, summary: MARKUP }],
  });
  const card = page.locator(`[data-testid="review-card"][data-batch-id="${batch.id}"]`);
  await expect(card).toBeVisible();
  await expect(card).toContainText("window.__pwned='svg'");
  await expect(card).toContainText("invoice_⟨U+202E⟩txt.exe⟨U+202C⟩");
  expect(await card.textContent()).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u0000\u001b]/);
  expect(
    await card
      .locator("script, img, iframe, style, a[href^='javascript'], a[href^='https://evil']")
      .count(),
  ).toBe(0);
  await expectInert(page, problems);
  await expectBounded(page, card);
  await expectResponsive(page);
});
