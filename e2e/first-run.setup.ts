import AxeBuilder from "@axe-core/playwright";
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

  // A wrong setup code is refused with a clear message, and creates nothing.
  await page.getByLabel("Setup code").fill("WRNG-WRNG-WRNG-WRNG");
  await page.getByLabel("Your name").fill("Ada Admin");
  await page.getByLabel("Email").fill("ada@example.com");
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  // The browser's own minlength check keeps a too-short password from being sent.
  await expect(page).toHaveURL(/\/setup$/);

  await page.getByLabel("Password").fill("a long enough password");
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  await expect(page.locator("form").getByRole("alert")).toContainText("setup code is not right");
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
