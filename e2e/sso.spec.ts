import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { and, eq, sql } from "drizzle-orm";
import type { Page } from "@playwright/test";
import { getDb } from "@/db/client";
import { events, queueMembers, users } from "@/db/schema";
import { invitePerson } from "@/lib/people/invite-person";
import { redeemLink } from "@/lib/people/person-links";
import { updatePerson } from "@/lib/people/update-person";
import { OPERATOR } from "@/lib/queues/queue-access";
import { makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { sessionClient } from "@/test/support/sessions";
import { startTestIdp, type IdpUser, type TestIdp } from "@/test/support/oidc-idp";
import { baseURL, signIn } from "./support/fixtures";
import { shot, shotsWanted } from "./support/screenshots";
import { expect, test } from "./support/test";

// Issue 16, item 4: single sign-on against a real OpenID Connect provider (oidc-provider) that the
// test runs on loopback. The app talks to it as to any provider: discovery, PKCE, the code
// exchange, the signed ID token. An admin configures it; people already in Countersign (matched
// by an email the provider verified) or from an allowed domain get in, their groups grant queue
// roles; everyone else is told why not on the sign-in page.

const unique = () => randomUUID().slice(0, 8);
const ALLOWED_DOMAIN = "sso-newcomers.test";

let idp: TestIdp;
let admin: TestReviewer;
let mappedQueue: { id: string; name: string };

test.beforeAll(async () => {
  idp = await startTestIdp({ redirectUri: `${baseURL}/api/auth/callback/sso` });
  const home = await makeQueue();
  mappedQueue = await makeQueue();
  admin = await makeReviewer({ name: "Ada Admin", queues: [{ name: home.name, role: "admin" }] });
  // SSO settings are saved from a signed-in session only (lib/auth/require-session.ts)
  const saved = await (
    await sessionClient(baseURL, admin.email)
  ).raw("/sso", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(settings()),
  });
  expect(saved.status, await saved.clone().text()).toBe(200);
});
test.afterAll(() => idp?.stop());

function settings() {
  return {
    enabled: true,
    displayName: "Acme SSO",
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    allowedDomains: [ALLOWED_DOMAIN],
    groupsClaim: "groups",
    groupRoles: [{ group: "payments-leads", queueId: mappedQueue.id, role: "lead" }],
  };
}

const idpUser = (email: string, overrides: Partial<IdpUser> = {}): IdpUser => ({
  sub: `sub-${unique()}`,
  email,
  email_verified: true,
  name: "Someone at Acme",
  ...overrides,
});

async function invitedId(email: string) {
  const [row] = await getDb().select({ id: users.id }).from(users).where(eq(users.email, email));
  return row?.id;
}

/** Signs in at the sign-in page through the provider, as `user`. */
async function ssoSignIn(page: Page, user: IdpUser | null, next?: string) {
  // A provider session from an earlier attempt would sign the earlier user in again.
  await page.context().clearCookies();
  idp.signInAs(user);
  await page.goto(next ? `/sign-in?next=${encodeURIComponent(next)}` : "/sign-in");
  await page.getByRole("button", { name: "Sign in with Acme SSO" }).click();
}

test("a person already in Countersign signs in with SSO; their group makes them a lead", async ({
  page,
}) => {
  const person = await makeReviewer({ name: "Sam Single" });
  await page.goto("/sign-in");
  await expect(page.getByRole("button", { name: "Sign in with Acme SSO" })).toBeVisible();
  // The password form stays.
  await expect(page.getByLabel("Password")).toBeVisible();
  await shot(page, "sso-sign-in");
  if (shotsWanted) {
    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, "sso-sign-in-dark");
    await page.emulateMedia({ colorScheme: "light" });
  }
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);

  await ssoSignIn(page, idpUser(person.email.toUpperCase(), { groups: ["payments-leads"] }));
  await page.waitForURL("**/queue");
  await expect(page.getByTestId("signed-in-as")).toContainText("Sam Single");
  const [membership] = await getDb()
    .select({ role: queueMembers.role })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, person.id), eq(queueMembers.queueId, mappedQueue.id)));
  expect(membership?.role).toBe("lead");
  // The link and the role are trust changes: both are in the audit trail.
  const trail = await getDb()
    .select({ type: events.type, data: events.data, actor: events.actorName })
    .from(events)
    .where(sql`json_extract(${events.data}, '$.userId') = ${person.id}`);
  expect(trail.map((e) => [e.type, e.actor])).toEqual([
    ["person.sso_linked", "Single sign-on"],
    ["member.added", "Single sign-on"],
  ]);

  // `next` survives the trip to the provider (and stays a path of this app).
  await ssoSignIn(page, idpUser(person.email), "/queues");
  await page.waitForURL("**/queues");
  await ssoSignIn(page, idpUser(person.email), "//evil.example/");
  await page.waitForURL("**/queue");

  // Only the redirect signs in: an ID token posted by the client is refused.
  const posted = await page.request.post("/api/auth/sign-in/social", {
    data: { provider: "sso", idToken: { token: "a.b.c" } },
  });
  expect(posted.status()).toBe(400);
});

test("someone new from an allowed domain gets an account; anyone else is refused", async ({
  page,
}) => {
  await ssoSignIn(page, idpUser(`newcomer-${unique()}@${ALLOWED_DOMAIN}`, { name: "Nia New" }));
  await page.waitForURL("**/queue");
  await expect(page.getByTestId("signed-in-as")).toContainText("Nia New");
  const joined = await getDb()
    .select({ data: events.data })
    .from(events)
    .where(eq(events.type, "person.joined_by_sso"));
  expect(joined.map((e) => e.data.name)).toContain("Nia New");

  await ssoSignIn(page, idpUser(`stranger-${unique()}@elsewhere.test`));
  await page.waitForURL(/\/sign-in/);
  await expect(page.getByTestId("sso-error")).toContainText(
    "No Countersign account matches the email your identity provider gave",
  );
  // An allowed domain is not enough when the provider has not verified the address.
  await ssoSignIn(
    page,
    idpUser(`unverified-${unique()}@${ALLOWED_DOMAIN}`, { email_verified: false }),
  );
  await expect(page.getByTestId("sso-error")).toContainText("has not verified your email");
});

test("an unverified email, a deactivated person and a refusal at the provider are refused", async ({
  page,
}) => {
  const person = await makeReviewer({ name: "Val Unverified" });
  await ssoSignIn(page, idpUser(person.email, { email_verified: false }), "/history");
  await page.waitForURL(/\/sign-in\?next=%2Fhistory/);
  await expect(page.getByTestId("sso-error")).toContainText(
    "has not verified your email address, so it cannot sign you in to your Countersign account",
  );
  await expect(page.getByTestId("signed-in-as")).toHaveCount(0);
  await shot(page, "sso-refused");

  const leaver = await makeReviewer({ name: "Lee Leaver" });
  const leaverAtIdp = idpUser(leaver.email);
  await ssoSignIn(page, leaverAtIdp);
  await page.waitForURL("**/queue");
  await updatePerson(OPERATOR, leaver.id, { active: false });
  await ssoSignIn(page, leaverAtIdp);
  await page.waitForURL(/\/sign-in/);
  await expect(page.getByTestId("sso-error")).toContainText("This account is deactivated");
  await page.goto("/queue");
  await page.waitForURL(/\/sign-in/);

  await ssoSignIn(page, null);
  await expect(page.getByTestId("sso-error")).toContainText("cancelled at your identity provider");
});

test("an account whose password a lead set links only after that password is proven (issue 24, hole 2)", async ({
  page,
}) => {
  // A lead invites an address into their queue and redeems the invite link with a password
  // they chose: the account's password is the lead's, whoever the address belongs to.
  const home = await makeQueue();
  const lead = await makeReviewer({ queues: [{ name: home.name, role: "lead" }] });
  const email = `invited-${unique()}@corp.test`;
  const { invite } = await invitePerson(
    { kind: "reviewer", ...lead },
    { email, name: "Ines Invited", queues: [{ queueId: home.id, role: "reviewer" }] },
  );
  const password = "chosen through the link";
  await redeemLink({ token: invite!.url.split("/").pop()!, password });

  // Single sign-on alone is refused, and the page says what to do.
  const atIdp = idpUser(email, { groups: ["payments-leads"] });
  await ssoSignIn(page, atIdp);
  await page.waitForURL(/\/sign-in\?.*error=password_proof_required/);
  await expect(page.getByTestId("sso-error")).toContainText(
    "Sign in with that password once below and single sign-on is linked to it",
  );
  await expect(page.getByTestId("sso-error")).toContainText(
    "ask an admin for a password-reset link",
  );
  await shot(page, "sso-password-proof");

  // Whoever holds the password (and is the provider's user) signs in with it: the form goes on to
  // single sign-on in the same browser, and the two are linked.
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in and link single sign-on" }).click();
  await page.waitForURL("**/queue");
  await expect(page.getByTestId("signed-in-as")).toContainText("Ines Invited");
  const trail = await getDb()
    .select({ type: events.type })
    .from(events)
    .where(sql`json_extract(${events.data}, '$.userId') = ${(await invitedId(email))!}`);
  expect(trail.map((e) => e.type)).toEqual(
    expect.arrayContaining(["person.sso_password_proven", "person.sso_linked", "member.added"]),
  );

  // From now on single sign-on alone signs them in.
  await ssoSignIn(page, atIdp);
  await page.waitForURL("**/queue");
});

test("the settings page asks for the secret again when the issuer changes (issue 24, hole 5)", async ({
  page,
}) => {
  const other = await startTestIdp({ redirectUri: `${baseURL}/api/auth/callback/sso` });
  try {
    await signIn(page, admin);
    await page.goto("/settings/sso");
    await expect(page.getByTestId("sso-secret-help")).toContainText("Leave this empty to keep it");
    await page.getByLabel("Issuer URL").fill(other.issuer);
    await expect(page.getByTestId("sso-secret-help")).toContainText("Required: the issuer changed");
    await expect(page.getByLabel("Issuer URL")).toHaveAccessibleDescription(
      /retires every single sign-on link/,
    );
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByLabel("Client secret")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByLabel("Client secret")).toHaveAccessibleDescription(
      /required when the issuer changes/i,
    );
    await shot(page, "sso-secret-required");
    // Nothing was saved: the page still shows the issuer in use.
    await page.reload();
    await expect(page.getByLabel("Issuer URL")).toHaveValue(idp.issuer);
  } finally {
    await other.stop();
  }
});

test("an admin configures single sign-on; the client secret never comes back", async ({ page }) => {
  const responses: string[] = [];
  page.on("response", async (response) => {
    if (response.url().startsWith(baseURL)) responses.push(await response.text().catch(() => ""));
  });
  await signIn(page, admin);
  await page.goto("/settings/sso");
  await expect(page.getByRole("heading", { name: "Single sign-on" })).toBeVisible();
  await expect(page.getByTestId("sso-redirect-uri")).toHaveText(`${baseURL}/api/auth/callback/sso`);
  await expect(page.getByLabel("Client secret")).toHaveValue("");
  await expect(page.getByTestId("sso-secret-help")).toContainText("A secret is stored");

  // A bad issuer is refused, on its field.
  await page.getByLabel("Issuer URL").fill(`${idp.issuer}/nowhere`);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByLabel("Issuer URL")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByLabel("Issuer URL")).toHaveAccessibleDescription(/openid-configuration/);

  await page.getByLabel("Issuer URL").fill(idp.issuer);
  await page.getByLabel("Button name").fill("Acme SSO");
  await page.getByRole("button", { name: "Add mapping" }).click();
  const added = page.getByTestId("sso-mapping").last();
  await added.getByLabel("Group").fill("payments");
  await added.getByLabel("Queue").selectOption({ label: mappedQueue.name });
  await added.getByLabel("Role").selectOption("reviewer");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toContainText("Saved. The sign-in page offers");
  await page.reload();
  await expect(page.getByTestId("sso-mapping")).toHaveCount(2);
  await shot(page, "sso-settings", { fullPage: true });
  await page.emulateMedia({ colorScheme: "dark" });
  await shot(page, "sso-settings-dark", { fullPage: true });
  expect(
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations,
  ).toEqual([]);
  expect(responses.length).toBeGreaterThan(3);
  for (const body of responses) expect(body).not.toContain(idp.clientSecret);

  // Switched off: no button, and a provider's late redirect lands on the password form.
  await page.emulateMedia({ colorScheme: "light" });
  await page.getByLabel("Offer single sign-on on the sign-in page").uncheck();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toContainText("Single sign-on is off");
  await page.context().clearCookies();
  await page.goto("/api/auth/callback/sso?code=late&state=late");
  await page.waitForURL(/\/sign-in\?error=sso_off/);
  await expect(page.getByTestId("sso-error")).toContainText("Single sign-on is switched off");
  await expect(page.getByRole("button", { name: /Sign in with/ })).toHaveCount(0);
});
