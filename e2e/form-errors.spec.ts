import AxeBuilder from "@axe-core/playwright";
import { type Locator, type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { makeQueue, makeReviewer } from "@/test/support/factories";
import { signIn } from "./support/fixtures";
import { shot, shotsWanted } from "./support/screenshots";

// Refused input is told on the field, in a plain sentence: the control is aria-invalid and
// described by the message, focus goes to the first one, and editing the field clears it.
// Screenshots (light and dark, desktop and phone) go to E2E_SHOTS when it is set.

/** The control shows `sentence` under it, tied to it for assistive technology. */
async function expectFieldError(control: Locator, sentence: string | RegExp) {
  await expect(control).toHaveAttribute("aria-invalid", "true");
  const id = await control.getAttribute("id");
  const message = control.page().locator(`[id="${id}-error"]`);
  await expect(message).toHaveText(sentence);
  const describedBy = (await control.getAttribute("aria-describedby")) ?? "";
  expect(describedBy.split(" ")).toContain(`${id}-error`);
  await expect(control).toHaveAccessibleDescription(
    typeof sentence === "string" ? new RegExp(escape(sentence)) : sentence,
  );
  // zod's wording never reaches the page
  await expect(message).not.toContainText(/Too small|Too big|expected|received|Invalid input/);
}

async function expectNoFieldError(control: Locator) {
  await expect(control).not.toHaveAttribute("aria-invalid", "true");
  const id = await control.getAttribute("id");
  await expect(control.page().locator(`[id="${id}-error"]`)).toHaveCount(0);
  expect((await control.getAttribute("aria-describedby")) ?? "").not.toContain(`${id}-error`);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

async function expectNoAxeViolations(page: Page) {
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
}

/** Light and dark, at the current size, when screenshots were asked for. */
async function shoot(page: Page, name: string, region?: Locator) {
  if (!shotsWanted) return;
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(region ?? page, `form-errors-${name}-${scheme}`, { animations: "disabled" });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

for (const viewport of [
  { label: "desktop", width: 1280, height: 900 },
  { label: "phone", width: 390, height: 844 },
]) {
  test.describe(`on a ${viewport.label}`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });

    test("queues: a new queue, its settings and adding a member say what is wrong on the field", async ({
      page,
    }) => {
      const home = await makeQueue();
      const admin = await makeReviewer({
        name: "Ada Forms",
        queues: [{ name: home.name, role: "admin" }],
      });
      await signIn(page, admin);
      await page.goto("/queues");

      const form = page.getByRole("region", { name: "New queue" });
      const name = form.getByLabel("Name", { exact: true });
      const approvals = form.getByLabel("Approvals needed");
      const timeout = form.getByLabel("Default timeout (seconds)");
      await approvals.fill("0");
      await timeout.fill("-5");
      await form.getByRole("button", { name: "Create queue" }).click();
      await expectFieldError(name, "Enter a name.");
      await expectFieldError(approvals, "Enter a whole number of approvals, 1 or more.");
      // -5 is a number below the limit, not "expected number, received string"
      await expectFieldError(timeout, "Enter a whole number of seconds, 1 or more.");
      // focus is on the first field to fix
      await expect(name).toBeFocused();
      await expect(form.getByTestId("form-error")).toHaveCount(0);
      await expectNoAxeViolations(page);
      await shoot(page, `new-queue-${viewport.label}`, form);

      // changing a field clears its message only
      await approvals.fill("2");
      await expectNoFieldError(approvals);
      await expectFieldError(timeout, "Enter a whole number of seconds, 1 or more.");
      await timeout.fill("1.5");
      await expectNoFieldError(timeout);
      await form.getByRole("button", { name: "Create queue" }).click();
      await expectFieldError(timeout, "Enter a whole number of seconds.");

      // a conflict belongs to no field: it is said once, above the form
      await name.fill(home.name);
      await timeout.fill("600");
      await form.getByRole("button", { name: "Create queue" }).click();
      await expect(form.getByTestId("form-error")).toContainText("exists");
      await expectNoFieldError(timeout);

      // the queue's settings
      await page.goto(`/queues/${home.id}`);
      const approvalsSetting = page.getByLabel("Approvals needed");
      const slack = page.getByLabel("Slack channel id");
      await approvalsSetting.fill("21");
      await slack.fill("#ops");
      await page.getByRole("button", { name: "Save settings" }).click();
      await expectFieldError(approvalsSetting, "Enter a whole number of approvals, 20 or less.");
      await expectFieldError(slack, /^Enter a Slack channel id, such as C0123ABCD/);
      await expect(approvalsSetting).toBeFocused();
      // the help text stays in the description beside the error
      await expect(approvalsSetting).toHaveAccessibleDescription(/From distinct reviewers/);
      await expectNoAxeViolations(page);
      await shoot(
        page,
        `queue-settings-${viewport.label}`,
        page.locator("form").filter({ has: approvalsSetting }),
      );
      await slack.fill("");
      await expectNoFieldError(slack);
      await approvalsSetting.fill("2");
      await expectNoFieldError(approvalsSetting);

      // adding a member: a malformed email, then one nobody has
      const members = page.getByRole("form", { name: "Add a member" });
      const email = members.getByLabel("Email");
      await email.fill("not-an-email");
      await members.getByRole("button", { name: "Add member" }).click();
      await expectFieldError(email, "Enter an email address, like name@example.com.");
      await expect(email).toBeFocused();
      await email.fill("nobody-here@example.com");
      await expectNoFieldError(email);
      await members.getByRole("button", { name: "Add member" }).click();
      await expectFieldError(email, /^No reviewer has this email; create their account first\.$/);
      await shoot(page, `add-member-${viewport.label}`, members);
    });

    test("routing and policies: rule forms and try-a-call say what is wrong on the field", async ({
      page,
    }) => {
      const queue = await makeQueue();
      const admin = await makeReviewer({
        name: "Ada Rules",
        queues: [{ name: queue.name, role: "admin" }],
      });
      await signIn(page, admin);

      await page.goto("/routing");
      const routing = page.getByRole("region", { name: "New rule" });
      const ruleName = routing.getByLabel("Name", { exact: true });
      const minCost = routing.getByLabel("Total cost at least");
      await minCost.fill("-5");
      await routing.getByRole("button", { name: "Add rule" }).click();
      await expectFieldError(ruleName, "Enter a name.");
      await expectFieldError(minCost, "Enter a cost, 0 or more.");
      await expect(ruleName).toBeFocused();
      await expectNoAxeViolations(page);
      await shoot(page, `routing-${viewport.label}`, routing);
      await ruleName.fill("Big spenders");
      await expectNoFieldError(ruleName);
      await expectFieldError(minCost, "Enter a cost, 0 or more.");
      // an agent nobody has is a problem of that field too
      await minCost.fill("100");
      await routing.getByLabel("Agent (name or key id)").fill("No such agent anywhere");
      await routing.getByRole("button", { name: "Add rule" }).click();
      await expectFieldError(
        routing.getByLabel("Agent (name or key id)"),
        "No agent key has that id or name.",
      );
      await expectNoFieldError(minCost);

      await page.goto(`/policies?queue=${queue.id}`);
      const policy = page.getByRole("form", { name: "New rule" });
      const costAbove = policy.getByLabel("Cost estimate above");
      const effect = policy.getByLabel("Effect");
      await policy.getByLabel("Name", { exact: true }).fill("Costly");
      await costAbove.fill("-5");
      await policy.getByRole("button", { name: "Add argument condition" }).click();
      await policy.getByRole("button", { name: "Add rule" }).click();
      await expectFieldError(effect, "Choose an effect.");
      await expectFieldError(costAbove, "Enter a cost, 0 or more.");
      const argPath = policy.getByLabel("Argument path 1");
      await expect(argPath).toHaveAttribute("aria-invalid", "true");
      await expect(effect).toBeFocused();
      await expectNoAxeViolations(page);
      await shoot(
        page,
        `policy-rule-${viewport.label}`,
        page.getByRole("region", { name: "New rule" }),
      );
      await effect.selectOption({ index: 1 });
      await expectNoFieldError(effect);
      await argPath.fill("path");
      await expectNoFieldError(argPath);
      await expectFieldError(costAbove, "Enter a cost, 0 or more.");

      const tryBox = page.getByTestId("try-call");
      const tool = tryBox.getByLabel("Tool name");
      const cost = tryBox.getByLabel("Cost estimate (optional)");
      await cost.fill("-1");
      await tryBox.getByRole("button", { name: "Try it" }).click();
      await expectFieldError(tool, "Enter a tool name.");
      await expectFieldError(cost, "Enter a cost, 0 or more.");
      await expect(tool).toBeFocused();
      await tool.fill("write_file");
      await expectNoFieldError(tool);
      const args = tryBox.getByLabel("Arguments (JSON)");
      await cost.fill("");
      await args.fill("[1, 2]");
      await tryBox.getByRole("button", { name: "Try it" }).click();
      await expectFieldError(args, /^Enter the arguments as a JSON object/);
      await expect(args).toBeFocused();
      await shoot(page, `try-call-${viewport.label}`, tryBox);
      await args.fill("{}");
      await expectNoFieldError(args);
      await tryBox.getByRole("button", { name: "Try it" }).click();
      await expect(tryBox.getByTestId("try-outcome")).toBeVisible();
    });
  });
}

// Issue 24: a control character in a stored text is refused on its field, in the shared schema's
// words (lib/text/stored-text.ts), and nothing is created.
test("a queue name with a control character is refused on the field", async ({ page }) => {
  const home = await makeQueue();
  const admin = await makeReviewer({ queues: [{ name: home.name, role: "admin" }] });
  await signIn(page, admin);
  await page.goto("/queues");

  const form = page.getByRole("region", { name: "New queue" });
  const name = form.getByLabel("Name", { exact: true });
  const wanted = `Bells ${Date.now()}`;
  await name.fill(`${wanted}\u0007`);
  await form.getByRole("button", { name: "Create queue" }).click();
  await expectFieldError(name, "Must not contain control characters.");
  await expect(name).toBeFocused();
  await expect(page.getByRole("link", { name: wanted })).toHaveCount(0);

  await name.fill(wanted);
  await expectNoFieldError(name);
  await form.getByRole("button", { name: "Create queue" }).click();
  // created: its page opens
  await expect(page.getByRole("heading", { level: 1, name: wanted })).toBeVisible();
});
