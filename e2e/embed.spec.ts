import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { apiClient, refundBatch } from "@/test/support/http";
import { makeReviewer } from "@/test/support/factories";
import { baseURL, PASSWORD, pause, seedTeam, signIn } from "./support/fixtures";
import { shot } from "./support/screenshots";

// One test frames the embed from a host the list leaves out: Chromium's refusal is expected.
test.use({ expectedCspViolations: /frame-ancestors/ });

// Another product's page framing /embed/…: served here on another loopback port, so another
// origin but the same site (127.0.0.1), where the reviewer's Lax session cookie still reaches the
// frame. The allowed one's port is in EMBED_ALLOWED_ORIGINS (playwright.config.ts).
const allowedPort = Number(process.env.E2E_EMBED_HOST_PORT);
const allowedOrigin = `http://127.0.0.1:${allowedPort}`;

type Host = { origin: string; close: () => Promise<void> };

/** A host page at `/?batch=ID` that frames the card and records every message it receives. */
async function startHost(port: number): Promise<Host> {
  const server: Server = createServer((request, response) => {
    const batchId = new URL(request.url ?? "/", "http://host").searchParams.get("batch") ?? "";
    const src = `${baseURL}/embed/batches/${encodeURIComponent(batchId)}`;
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html>
<html lang="en"><head><title>Support desk</title></head>
<body style="font-family: sans-serif; margin: 1.5rem; background: #eef1f6">
  <h1>Support desk — ticket #4312</h1>
  <p>The assistant wants to refund this order. Review it here:</p>
  <iframe id="card" title="Countersign review" src="${src}"
    style="width: 100%; max-width: 760px; height: 420px; border: 1px solid #c9ced8; background: #fff"></iframe>
  <h2>Messages from the frame</h2>
  <ol id="messages"></ol>
  <script>
    window.__messages = [];
    window.addEventListener("message", (event) => {
      window.__messages.push({ origin: event.origin, data: event.data });
      const item = document.createElement("li");
      item.textContent = event.origin + " " + JSON.stringify(event.data);
      document.getElementById("messages").append(item);
    });
  </script>
</body></html>`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${bound}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let allowedHost: Host;
test.beforeAll(async () => {
  allowedHost = await startHost(allowedPort);
});
test.afterAll(async () => {
  await allowedHost?.close();
});

const messages = (page: Page) =>
  page.evaluate(
    () => (window as unknown as { __messages: { origin: string; data: any }[] }).__messages,
  );

test("a host page frames the card, the reviewer approves in it, and the host is told", async ({
  page,
}) => {
  const team = await seedTeam();
  const { batch } = await pause(team.agent, refundBatch());
  await signIn(page, team.reviewers[0]!);

  const errors: string[] = [];
  page.on("console", (entry) => void (entry.type() === "error" && errors.push(entry.text())));
  await page.goto(`${allowedHost.origin}/?batch=${batch.id}`);
  const frame = page.frameLocator("#card");
  const card = frame.getByTestId("review-card");
  await expect(card).toHaveAttribute("data-status", "pending");
  // Chrome-less: the card alone, no app header or navigation.
  await expect(frame.getByTestId("signed-in-as")).toHaveCount(0);
  await expect(frame.getByRole("navigation")).toHaveCount(0);

  await card.getByRole("button", { name: "Approve refund_order" }).click();
  await expect(card).toHaveAttribute("data-status", "decided");
  await expect.poll(() => messages(page)).toHaveLength(1);
  const [message] = await messages(page);
  expect(message!.origin).toBe(baseURL);
  expect(message!.data).toMatchObject({
    type: "countersign:decision",
    batchId: batch.id,
    status: "decided",
    outcome: "approved",
    calls: [
      {
        id: batch.calls[0].id,
        status: "approved",
        decision: { outcome: "approved", source: "reviewer", by: { name: "Dana Reviewer" } },
      },
    ],
  });
  await expect(page.locator("#messages li")).toHaveCount(1);
  expect(errors).toEqual([]);
  await shot(page, "embed", { fullPage: true });
});

test("the host is told when someone else settles the batch", async ({ page }) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const { batch } = await pause(team.agent, refundBatch());
  await signIn(page, team.reviewers[0]!);
  await page.goto(`${allowedHost.origin}/?batch=${batch.id}`);
  const card = page.frameLocator("#card").getByTestId("review-card");
  await expect(card).toHaveAttribute("data-status", "pending");

  const sam = apiClient(baseURL, team.reviewers[1]!.token);
  const rejected = await sam.post(`/calls/${batch.calls[0].id}/decision`, {
    outcome: "reject",
    expectedRevision: 1,
    reason: "Already refunded",
  });
  expect(rejected.status).toBe(200);

  await expect(card).toHaveAttribute("data-status", "decided");
  await expect.poll(() => messages(page)).toHaveLength(1);
  const [message] = await messages(page);
  expect(message!.data).toMatchObject({
    type: "countersign:decision",
    batchId: batch.id,
    status: "decided",
    outcome: "rejected",
    calls: [
      {
        status: "rejected",
        decision: { by: { name: "Sam Reviewer" }, reason: "Already refunded" },
      },
    ],
  });
});

test("the review page keeps the same live card, inside the app's chrome", async ({ page }) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const { batch } = await pause(
    team.agent,
    refundBatch({ calls: [refundBatch().calls[0], refundBatch().calls[0]] }),
  );
  await signIn(page, team.reviewers[0]!);
  await page.goto(`/batches/${batch.id}`);
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  const card = page.getByTestId("review-card");
  await card.getByRole("button", { name: "Approve refund_order #1" }).click();
  await expect(card.getByTestId("decision-notice").first()).toContainText("Approved by you");
  // The second call, decided elsewhere, arrives over the stream.
  const sam = apiClient(baseURL, team.reviewers[1]!.token);
  const second = batch.calls[1];
  expect(
    (
      await sam.post(`/calls/${second.id}/decision`, {
        outcome: "reject",
        expectedRevision: second.revision,
        reason: "Once is enough",
      })
    ).status,
  ).toBe(200);
  await expect(card).toHaveAttribute("data-status", "decided");
  await expect(card).toContainText("Once is enough");
});

test("only configured origins may frame the embed route", async ({ page, request }) => {
  const team = await seedTeam();
  const { batch } = await pause(team.agent, refundBatch());
  await signIn(page, team.reviewers[0]!);
  const embedUrl = `${baseURL}/embed/batches/${batch.id}`;

  const embed = await page.request.get(embedUrl);
  expect(embed.status()).toBe(200);
  expect(embed.headers()["content-security-policy"]).toContain(
    `; frame-ancestors 'self' ${allowedOrigin} https://host.example`,
  );
  expect(embed.headers()["x-frame-options"]).toBeUndefined();
  // The grant is the embed route's alone.
  const queue = await page.request.get(`${baseURL}/queue`);
  expect(queue.headers()["content-security-policy"] ?? "").not.toContain(allowedOrigin);

  // A page on an origin not in the list (same site, so only the policy stands in the way).
  const stranger = await startHost(0);
  try {
    const refused = page.waitForEvent("console", (entry) =>
      entry.text().includes("frame-ancestors"),
    );
    await page.goto(`${stranger.origin}/?batch=${batch.id}`);
    // Chromium's wording: "Framing '<url>' violates the following Content Security Policy
    // directive: "frame-ancestors …". The request has been blocked." (older: "Refused to frame").
    const report = (await refused).text();
    expect(report).toContain(`'${baseURL}/'`);
    expect(report).toContain(`frame-ancestors 'self' ${allowedOrigin}`);
    await expect(page.frameLocator("#card").getByTestId("review-card")).toHaveCount(0);
  } finally {
    await stranger.close();
  }

  // Signed out, the frame goes to sign-in and comes back to this card.
  const signedOut = await request.get(embedUrl, { maxRedirects: 0 });
  expect(signedOut.status()).toBe(307);
  expect(signedOut.headers()["location"]).toBe(
    `/embed/sign-in?next=${encodeURIComponent(`/embed/batches/${batch.id}`)}`,
  );
});

test("a signed-out reviewer signs in inside the frame and lands on the card", async ({ page }) => {
  const team = await seedTeam();
  const { batch } = await pause(team.agent, refundBatch());
  await page.goto(`${allowedHost.origin}/?batch=${batch.id}`);
  const frame = page.frameLocator("#card");
  await frame.getByLabel("Email").fill(team.reviewers[0]!.email);
  await frame.getByLabel("Password").fill(PASSWORD);
  await frame.getByRole("button", { name: "Sign in", exact: true }).click();
  // The session cookie was set inside the frame: same site, so SameSite=Lax allows it.
  await expect(frame.getByTestId("review-card")).toHaveAttribute("data-batch-id", batch.id);
});

test("a reviewer outside the batch's queue gets the review page's not-found", async ({ page }) => {
  const team = await seedTeam();
  const { batch } = await pause(team.agent, refundBatch());
  const outsider = await makeReviewer({ name: "Olive Outsider" });
  await signIn(page, outsider);
  const embedded = await page.goto(`${baseURL}/embed/batches/${batch.id}`);
  expect(embedded?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  await expect(page.getByTestId("review-card")).toHaveCount(0);
  const reviewPage = await page.request.get(`${baseURL}/batches/${batch.id}`);
  expect(reviewPage.status()).toBe(404);
});
