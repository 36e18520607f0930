import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "./support/test";
import { makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { baseURL, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// Issue 14: people managed in the app. An admin invites someone by a one-time link; the invitee
// opens it, sets a password and lands signed in; the admin deactivates them and their very next
// request is refused.

const unique = () => randomUUID().slice(0, 8);

test("an admin invites someone, who sets a password and is in; deactivated, they are out", async ({
  page,
  browser,
}) => {
  const queue = await makeQueue();
  const admin = await makeReviewer({
    name: "Ada Admin",
    queues: [{ name: queue.name, role: "admin" }],
  });
  await signIn(page, admin);
  await page.goto("/people");
  await expect(page.getByRole("heading", { name: "People" })).toBeVisible();

  // Issue 26, item 14: the queue defaults to a queue, not "none yet", and a refused invite is
  // told in the form in plain words (noValidate: no browser bubble stops the submit).
  await expect(page.getByLabel("Queue")).not.toHaveValue("");
  await page.getByRole("button", { name: "Make invite link" }).click();
  const refused = page.getByRole("region", { name: "Invite someone" }).getByRole("alert");
  await expect(refused).toBeVisible();
  await expect(refused).not.toContainText(/Too small|expected|received|Invalid input/);
  await shot(page, "people-invite-refused", { fullPage: true });

  const email = `ivy-${unique()}@example.com`;
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Name (shown on their decisions)").fill("Ivy Invitee");
  await page.getByLabel("Queue").selectOption({ label: queue.name });
  await page.getByLabel("Role").selectOption("reviewer");
  await page.getByRole("button", { name: "Make invite link" }).click();

  const linkBox = page.getByTestId("secret-once");
  await expect(linkBox).toContainText("The invite link of Ivy Invitee");
  const url = (await page.getByTestId("secret-value").textContent())!.trim();
  expect(url).toMatch(/\/invite\/cs_link_/);
  const row = page.getByTestId("person-row").filter({ hasText: email });
  await expect(row).toContainText("Invited");
  await expect(row).toContainText(`${queue.name} (reviewer)`);
  await shot(page, "people-invited", { fullPage: true });
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);
  await linkBox.getByRole("button", { name: "Done" }).click();

  // The invitee, in a browser of their own.
  const theirs = await browser.newContext();
  const invitee = await theirs.newPage();
  await invitee.goto(url);
  await expect(invitee.getByRole("heading", { name: "Welcome to Countersign" })).toBeVisible();
  await invitee.getByLabel("New password").fill("ivy's own password");
  await invitee.getByLabel("Repeat it").fill("ivy's own password");
  await shot(invitee, "people-invite-link", { fullPage: true });
  await invitee.getByRole("button", { name: "Set password and sign in" }).click();
  await invitee.waitForURL("**/queue");
  await expect(invitee.getByTestId("signed-in-as")).toHaveText("Ivy Invitee");

  // The link is used up.
  const again = await theirs.newPage();
  await again.goto(url);
  await expect(again.getByTestId("link-problem")).toContainText("already used");

  await page.reload();
  await expect(row).toContainText("Active");
  await row.getByRole("button", { name: "Deactivate Ivy Invitee" }).click();
  await row.getByRole("button", { name: "Deactivate now" }).click();
  await expect(row).toContainText("Deactivated");
  await expect(page.getByTestId("people-status")).toContainText("signed out everywhere");
  await shot(page, "people", { fullPage: true });

  // Their very next request is refused: the page sends them to sign in, the API answers 401.
  const cookies = await theirs.cookies();
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
  expect((await apiClient(baseURL).get("/queue", { cookie })).status).toBe(401);
  await invitee.goto("/queue");
  await invitee.waitForURL("**/sign-in**");
  await invitee.getByLabel("Email").fill(email);
  await invitee.getByLabel("Password").fill("ivy's own password");
  await invitee.getByRole("button", { name: /sign in/i }).click();
  await expect(invitee.getByRole("alert")).toBeVisible();
  expect(invitee.url()).toContain("/sign-in");
  await theirs.close();

  await page.goto("/audit");
  const audit = page.getByTestId("audit-row");
  await expect(audit.nth(0)).toContainText(`Deactivated ${email}`);
  await expect(
    page.getByTestId("audit-row").filter({ hasText: "accepted their invite" }),
  ).toHaveCount(1);
});
