import { expect, test } from "@playwright/test";

test("the home page explains Countersign and links to the API contract", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1, name: "Countersign" })).toBeVisible();
  await expect(page.getByText("Where AI agents ask people for permission.")).toBeVisible();

  await page.getByRole("link", { name: "OpenAPI document" }).click();
  await expect(page).toHaveURL(/\/api\/v1\/openapi\.json$/);
  await expect(page.locator("body")).toContainText('"openapi":"3.1.0"');
});

test("the health endpoint reports the database is up", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.status()).toBe(200);
  expect(await response.json()).toEqual({ ok: true });
});
