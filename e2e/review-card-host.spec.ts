import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { build } from "esbuild";
import { expect, test } from "./support/test";
import { baseURL, pause, seedTeam } from "./support/fixtures";
import { shot } from "./support/screenshots";
import {
  dana,
  decided,
  decision,
  makeBatch,
  makeCall,
  makePlanBatch,
  NOW,
} from "@/test/components/review-card-fixtures";
import { refundBatch } from "@/test/support/http";
import { ensureReviewCardBuilt, REVIEW_CARD_DIST } from "@/test/support/review-card-build";

// @countersign/review-card in another product's page: the built package bundled into a host
// entry (e2e/support/review-card-host/host.jsx) and served, with shadcn/ui's theme variables
// (e2e/support/review-card-host/shadcn.css), by a server of the test's own on loopback. The page's
// Content-Security-Policy is strict (no 'unsafe-eval', no inline script or style): the card's
// schema check and live hook must work under it (e2e/support/test.ts fails on any violation).

const HOST_DIR = join(process.cwd(), "e2e/support/review-card-host");

type Host = { origin: string; setToken: (token: string) => void; close: () => Promise<void> };

async function startHost(): Promise<Host> {
  ensureReviewCardBuilt();
  const bundle = await build({
    entryPoints: [join(HOST_DIR, "host.jsx")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "warning",
  });
  const assets: Record<string, { type: string; body: string | Buffer }> = {
    "/host.js": { type: "text/javascript", body: Buffer.from(bundle.outputFiles[0]!.contents) },
    "/review-card.css": {
      type: "text/css",
      body: readFileSync(join(REVIEW_CARD_DIST, "index.css")),
    },
    "/shadcn.css": { type: "text/css", body: readFileSync(join(HOST_DIR, "shadcn.css")) },
  };
  let token = "";

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://host");
    const headers = {
      "content-security-policy": "default-src 'self'; object-src 'none'; base-uri 'none'",
    };
    if (url.pathname.startsWith("/countersign/api/v1/")) {
      return void forward(request, response, url, token);
    }
    const asset = assets[url.pathname];
    if (asset) {
      response.writeHead(200, { ...headers, "content-type": asset.type });
      return void response.end(asset.body);
    }
    if (url.pathname !== "/") {
      response.writeHead(404).end();
      return;
    }
    const config = url.searchParams.get("config") ?? "{}";
    const classes = url.searchParams.get("classes") ?? "";
    const scheme = classes.includes("dark") ? ' data-theme="dark"' : "";
    response.writeHead(200, { ...headers, "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html>
<html lang="en" class="${escapeHtml(classes)}"${scheme}><head><meta charset="utf-8">
<title>Acme support</title>
<link rel="stylesheet" href="/shadcn.css"><link rel="stylesheet" href="/review-card.css">
<script type="application/json" id="host-config">${config.replaceAll("<", "\\u003c")}</script>
<script type="module" src="/host.js"></script></head>
<body><div id="app"></div></body></html>`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    setToken: (value) => void (token = value),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// The calls the README's proxy lets through.
const CARD_CALLS =
  /^(GET batches\/[^/]+|GET runs\/[^/]+\/stream|POST (calls|batches)\/[^/]+\/decision|(POST|DELETE) batches\/[^/]+\/review-claim)$/;

/** The host's backend proxy, as the package README writes it: the reviewer's token added here. */
async function forward(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  token: string,
): Promise<void> {
  const path = url.pathname.slice("/countersign/api/v1/".length);
  if (!CARD_CALLS.test(`${request.method} ${path}`)) {
    response.writeHead(404).end();
    return;
  }
  const aborted = new AbortController();
  response.on("close", () => aborted.abort());
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  for (const name of ["accept", "content-type", "last-event-id"]) {
    const value = request.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    const upstream = await fetch(
      `${baseURL}${url.pathname.slice("/countersign".length)}${url.search}`,
      {
        method: request.method,
        headers,
        body: request.method === "POST" ? Buffer.concat(chunks) : undefined,
        signal: aborted.signal,
      },
    );
    response.writeHead(upstream.status, {
      "content-type": upstream.headers.get("content-type") ?? "application/json",
      "cache-control": "no-cache, no-transform",
    });
    const reader = upstream.body?.getReader();
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      response.write(chunk.value); // as it comes: an event stream must not wait for its end
    }
    response.end();
  } catch {
    response.destroy(); // the page left (or the server stopped): nothing to answer
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

let host: Host;
test.beforeAll(async () => {
  host = await startHost();
});
test.afterAll(async () => {
  await host?.close();
});

/** Cards in every state whose text the contrast check should see: pending, decided, a plan. */
function showcase() {
  const refund = makeCall({
    risks: ["Money leaves the company"],
    costEstimate: 25,
    inputSchema: {
      type: "object",
      properties: { orderId: { type: "string" }, amount: { type: "number", maximum: 100 } },
      required: ["orderId", "amount"],
    },
  });
  const second = makeCall({
    id: "call-2",
    toolCallId: "tc-2",
    toolName: "email_customer",
    args: { to: "ada@example.com", template: "refund-issued" },
    summary: "Tell the customer",
    actionHash: "hash-2",
  });
  const pending = makeBatch({ calls: [refund, second] });
  const settled = decided(
    decided(
      makeBatch({ id: "batch-2", calls: [{ ...refund, batchId: "batch-2" }, second] }),
      decision({ outcome: "rejected", reason: "Wrong order: the customer asked about A-2" }),
    ),
    decision({ by: { id: "u-sam", name: "Sam" } }),
    "call-2",
  );
  const plan = { ...makePlanBatch(), id: "batch-3" };
  return [pending, settled, plan];
}

async function openShowcase(page: Page, classes: string) {
  const config = JSON.stringify({ batches: showcase(), viewer: dana, now: NOW });
  const query = new URLSearchParams({ config, classes });
  await page.goto(`${host.origin}/?${query}`);
  await expect(page.getByTestId("review-card")).toHaveCount(3);
}

/** axe's color-contrast rule over the cards alone (the host's own text is not the card's). */
async function contrastViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    .include('[data-testid="review-card"]')
    .withRules(["color-contrast"])
    .analyze();
  // The rule must have looked at the cards' text, or passing proves nothing.
  expect(result.passes.flatMap((rule) => rule.nodes).length).toBeGreaterThan(20);
  return result.violations.flatMap((violation) =>
    violation.nodes.map((node) => `${node.target.join(" ")}: ${node.failureSummary}`),
  );
}

test("in a shadcn/ui page the card keeps its contrast: Tailwind 4 and 3 themes, mapped, dark", async ({
  page,
}) => {
  for (const classes of ["", "v3", "mapped", "v3 mapped"]) {
    await openShowcase(page, classes);
    expect(await contrastViolations(page), `classes "${classes}"`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: "dark" });
  for (const classes of ["", "dark mapped"]) {
    await openShowcase(page, classes);
    expect(await contrastViolations(page), `dark, classes "${classes}"`).toEqual([]);
  }
  await shot(page, "review-card-host-shadcn-dark");
  await page.emulateMedia({ colorScheme: "light" });
  await openShowcase(page, "");
  await shot(page, "review-card-host-shadcn", { fullPage: true });

  // What the card used to do, reading shadcn's --muted and --accent as text colors: the check
  // above would have failed.
  await page.evaluate(() => {
    document.documentElement.style.setProperty("--cs-muted", "var(--muted)");
    document.documentElement.style.setProperty("--cs-accent", "var(--accent)");
  });
  expect((await contrastViolations(page)).length).toBeGreaterThan(0);
});

test("the card's schema check works under a CSP without 'unsafe-eval'", async ({ page }) => {
  await openShowcase(page, "");
  const card = page.locator('[data-testid="review-card"][data-batch-id="batch-1"]');
  await card.getByRole("button", { name: "Edit refund_order" }).click();
  await card.getByTestId("args-editor").fill('{ "orderId": "A-1", "amount": 500 }');
  await expect(card.getByTestId("editor-error")).toContainText("amount must be <= 100");
  await card.getByTestId("args-editor").fill('{ "orderId": "A-1", "amount": 50 }');
  await expect(card.getByTestId("editor-error")).toHaveCount(0);
  await expect(card.getByTestId("args-diff")).toBeVisible();
});

test("useBatch keeps the card live: the host's own decision, then another reviewer's", async ({
  page,
}) => {
  const team = await seedTeam({ reviewers: ["Dana Reviewer", "Sam Reviewer"] });
  const [dana, sam] = team.reviewers;
  const base = refundBatch().calls[0]!;
  const { batch } = await pause(
    team.agent,
    refundBatch({
      calls: [
        { ...base, toolCallId: "refund" },
        { ...base, toolCallId: "notify", toolName: "email_customer", args: { to: "ada" } },
      ],
    }),
  );
  host.setToken(dana!.token);
  const config = JSON.stringify({ batchId: batch.id, viewer: { id: dana!.id, name: dana!.name } });
  await page.goto(`${host.origin}/?${new URLSearchParams({ config })}`);
  await expect(page.getByTestId("live-status")).toHaveText("live");
  const card = page.getByTestId("review-card");
  await expect(card).toHaveAttribute("data-status", "pending");

  await card.getByRole("button", { name: "Approve refund_order" }).click();
  await expect(card.locator('[data-call-id="' + batch.calls[0].id + '"]')).toHaveAttribute(
    "data-status",
    "approved",
  );

  // Sam decides elsewhere (the API, with his token): the stream brings it to Dana's page.
  const samsCall = batch.calls[1];
  const answer = await fetch(`${baseURL}/api/v1/calls/${samsCall.id}/decision`, {
    method: "POST",
    headers: { authorization: `Bearer ${sam!.token}`, "content-type": "application/json" },
    body: JSON.stringify({ outcome: "reject", expectedRevision: samsCall.revision, reason: "No" }),
  });
  expect(answer.status).toBe(200);
  await expect(card).toHaveAttribute("data-status", "decided");
  await expect(card.locator(`[data-call-id="${samsCall.id}"]`)).toHaveAttribute(
    "data-status",
    "rejected",
  );
  await expect(page.getByTestId("live-status")).toHaveText("settled");
});
