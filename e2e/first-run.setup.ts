import AxeBuilder from "@axe-core/playwright";
import { shot, shotsWanted } from "./support/screenshots";
import { expect, test } from "./support/test";

// Runs first, on the empty database (see playwright.config.ts): nobody is left at a login page
// with no account.
test("the first visitor is led to create the first admin, lands in the General queue", async ({
  page,
}) => {
  await page.goto("/queue");
  await expect(page).toHaveURL(/\/sign-in|\/setup/);
  await page.goto("/sign-in");
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole("heading", { name: "Create the first admin" })).toBeVisible();
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);

  // Bad entries are refused on their fields, in plain sentences, and create nothing.
  const code = page.getByLabel("Setup code");
  const email = page.getByLabel("Email");
  const password = page.getByLabel("Password");
  await code.fill("WRNG-WRNG-WRNG-WRNG");
  await page.getByLabel("Your name").fill("Ada Admin");
  await email.fill("ada@");
  await password.fill("short");
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  await expect(email).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#email-error")).toHaveText(
    "Enter an email address, like name@example.com.",
  );
  await expect(email).toHaveAttribute("aria-describedby", "email-error");
  await expect(password).toHaveAttribute("aria-invalid", "true");
  await expect(password).toHaveAccessibleDescription(/^Must be at least 8 characters\./);
  await expect(password).toHaveAttribute("aria-describedby", "password-error password-hint");
  await expect(email).toBeFocused();
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  if (shotsWanted) {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `first-run-setup-desktop-${scheme}`, { fullPage: true });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `first-run-setup-phone-${scheme}`, { fullPage: true });
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 720 });
  }
  // Editing a field clears its message, and only its.
  await email.fill("ada@example.com");
  await expect(email).not.toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#email-error")).toHaveCount(0);
  await expect(password).toHaveAttribute("aria-invalid", "true");
  await expect(page).toHaveURL(/\/setup$/);

  // A wrong setup code is told on the setup code field.
  await password.fill("a long enough password");
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  await expect(code).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#setupCode-error")).toContainText("setup code is not right");
  await expect(code).toBeFocused();
  await expect(page).toHaveURL(/\/setup$/);

  // The code the server was started with (playwright.config.ts sets SETUP_CODE).
  await page.getByLabel("Setup code").fill(process.env.E2E_SETUP_CODE!);
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  await page.waitForURL("**/queue");
  await expect(page.getByTestId("signed-in-as")).toHaveText("Ada Admin");

  // Setup is gone once an account exists.
  await page.context().clearCookies();
  await page.goto("/setup");
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);

  // A wrong password is refused with a clear message.
  await page.getByLabel("Email").fill("ada@example.com");
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.locator("form").getByRole("alert")).toContainText("do not match");
});
