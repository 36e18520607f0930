import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig, devices } from "@playwright/test";
import { CHROMIUM_ARGS, testBrowserPath } from "./e2e/support/chromium";

const port = Number(process.env.E2E_PORT) || 3100;

// One fresh database per test run. Set once in the main process; workers inherit it.
process.env.E2E_DATABASE_URL ??= `file:${join(mkdtempSync(join(tmpdir(), "countersign-e2e-")), "countersign.db")}`;
// The one-time setup code e2e/first-run.setup.ts enters (lib/auth/setup-code.ts): fixed for the run
// with SETUP_CODE, as an operator may, instead of read from the server's console.
process.env.E2E_SETUP_CODE ??= `E2E-${randomBytes(9).toString("hex").toUpperCase()}`;
// The page e2e/embed.spec.ts serves to frame the embed route: another origin on the same site.
process.env.E2E_EMBED_HOST_PORT ??= String(port + 1000);

const chromium = {
  ...devices["Desktop Chrome"],
  launchOptions: { executablePath: testBrowserPath, args: CHROMIUM_ARGS },
};

// A 390×844 phone (an iPhone 12–15's viewport) with touch, in the same Chromium.
const phone = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 1,
  isMobile: true,
  hasTouch: true,
};

export default defineConfig({
  testDir: "./e2e",
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  reporter: [["list"]],
  timeout: 30_000,
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
  },
  projects: [
    // First, on the still-empty database: the first visitor creates the first admin.
    { name: "first-run", testMatch: /first-run\.setup\.ts$/, use: { ...chromium } },
    {
      name: "chromium",
      dependencies: ["first-run"],
      testIgnore: /phone\.spec\.ts$/,
      use: { ...chromium },
    },
    // Issue 18: every page at a phone's width (e2e/phone.spec.ts), and the specs a reviewer
    // leans on most, decisions and the live queue, run again there: the whole suite twice would
    // double CI time for little more.
    {
      name: "phone",
      dependencies: ["first-run"],
      testMatch: /(phone|decisions|queue-live)\.spec\.ts$/,
      // What the screen size cannot change (offline catch-up, frame timing, inert text, scopes)
      // stays on the desktop run only, to keep this project near two minutes.
      grepInvert: /stale tab|slow frames|inert text|for this run/,
      use: { ...chromium, ...phone },
    },
  ],
  webServer: {
    // `npm start`'s server (lib/http/server.ts), as built by `npm run build`.
    command: `node dist/server.js --hostname 127.0.0.1 --port ${port}`,
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 60_000,
    env: {
      DATABASE_URL: process.env.E2E_DATABASE_URL,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      PORT: String(port),
      COUNTERSIGN_QUIET: "1",
      SETUP_CODE: process.env.E2E_SETUP_CODE,
      // Every test signs in from 127.0.0.1; the guessing limit is tested on its own.
      SIGN_IN_ATTEMPTS_PER_MINUTE: "1000",
      // Webhook receivers in tests listen on loopback, which callbackUrls may not target unless allowed.
      CALLBACK_ALLOWED_HOSTS: "127.0.0.1",
      EMBED_ALLOWED_ORIGINS: `http://127.0.0.1:${process.env.E2E_EMBED_HOST_PORT}, https://host.example`,
    },
  },
});
