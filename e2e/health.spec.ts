import { expect, test } from "./support/test";

test("the health endpoint reports the database is up", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.status()).toBe(200);
  expect(await response.json()).toEqual({ ok: true });
});

test("every page has an icon: /favicon.ico and the SVG icon are served, and pages link the icon", async ({
  request,
  page,
}) => {
  const ico = await request.get("/favicon.ico");
  expect(ico.status()).toBe(200);
  expect(ico.headers()["content-type"]).toMatch(/image\/(x-icon|vnd\.microsoft\.icon)/);
  // an ICO file starts with reserved 0, type 1 (icon)
  expect([...(await ico.body()).subarray(0, 4)]).toEqual([0, 0, 1, 0]);

  const failed: string[] = [];
  page.on("response", (response) => {
    if (response.status() === 404) failed.push(response.url());
  });
  await page.goto("/sign-in");
  const href = await page.locator('link[rel="icon"][type="image/svg+xml"]').getAttribute("href");
  expect(href).toMatch(/^\/icon\.svg/);
  const svg = await request.get(href!);
  expect(svg.status()).toBe(200);
  expect(await svg.text()).toContain("<svg");
  expect(failed).toEqual([]);
});
