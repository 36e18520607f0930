import { expect, test } from "./support/test";
import { baseURL, PASSWORD, seedTeam } from "./support/fixtures";

// Issue 14, finding 1: `/sign-in?next=/%5C<host>/x` (and `/%09/…`) sent Chromium to the other
// host once signed in, through the form or straight away. Now both stay on the app.

const HOSTILE = [
  "/%5Cevil.example/x",
  "/%09/evil.example",
  "/%5C%09evil.example",
  "//evil.example",
];

test("signing in through the form never leaves the app, whatever next says", async ({ page }) => {
  const team = await seedTeam();
  const reviewer = team.reviewers[0]!;
  for (const next of HOSTILE) {
    await page.context().clearCookies();
    await page.goto(`/sign-in?next=${next}`);
    await page.getByLabel("Email").fill(reviewer.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL("**/queue");
    expect(new URL(page.url()).origin, next).toBe(baseURL);
  }
  // Signed in already: the server's redirect stays on the app too.
  for (const next of HOSTILE) {
    await page.goto(`/sign-in?next=${next}`);
    await page.waitForURL("**/queue");
    expect(new URL(page.url()).origin, next).toBe(baseURL);
  }
});
