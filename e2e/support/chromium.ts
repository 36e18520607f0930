import { existsSync } from "node:fs";

// Playwright cannot download its own browser on these machines: Debian's Chromium when it is
// there (or CHROMIUM_PATH), else Playwright's own. Shared by the tests and the browser benchmark.
export const chromiumPath =
  process.env.CHROMIUM_PATH || (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
