import { existsSync } from "node:fs";

// Playwright cannot download its own browser on these machines: it runs Debian's Chromium (or
// CHROMIUM_PATH), else Playwright's own.
const DEBIAN_CHROMIUM = "/usr/bin/chromium";
// Debian's headless-only build of the same Chromium (`apt-get install chromium-headless-shell`),
// the kind Playwright itself runs headless: a fifth less time per spec on the 2-core machines.
const DEBIAN_HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";

/** The full browser: what the browser benchmark measures, as a reviewer's Chromium runs it. */
export const chromiumPath =
  process.env.CHROMIUM_PATH || (existsSync(DEBIAN_CHROMIUM) ? DEBIAN_CHROMIUM : undefined);

/** For the end-to-end tests: the headless shell when it is installed, else the full browser. */
export const testBrowserPath =
  process.env.CHROMIUM_PATH ||
  (existsSync(DEBIAN_HEADLESS_SHELL) ? DEBIAN_HEADLESS_SHELL : chromiumPath);

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
