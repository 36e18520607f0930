import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "@playwright/test";

// Screenshots are for a person to look at, never assertions: `E2E_SHOTS=/tmp/shots npx
// playwright test` writes every spec's pictures to /tmp/shots/<name>.png. A plain run and CI
// skip them (a full-page capture costs up to a second and a half on a slow machine, and nobody
// opens them there).

const DIR = process.env.E2E_SHOTS || undefined;

/** True when E2E_SHOTS names a directory: for work done only to take a picture (dark mode...). */
export const shotsWanted = DIR !== undefined;

let made = false;

/** Writes `${E2E_SHOTS}/${name}.png` when E2E_SHOTS is set; does nothing otherwise. */
export async function shot(
  target: Page | Locator,
  name: string,
  options: { fullPage?: boolean; animations?: "disabled" | "allow" } = {},
): Promise<void> {
  if (DIR === undefined) return;
  if (!made) {
    mkdirSync(DIR, { recursive: true });
    made = true;
  }
  const path = join(DIR, `${name}.png`);
  const { fullPage, animations } = options;
  if ("goto" in target) await target.screenshot({ path, fullPage, animations });
  else await target.screenshot({ path, animations });
}

/** The two widths every reviewer page is checked and pictured at: a laptop and a 390 px phone. */
export const SIZES = [
  ["desktop", { width: 1280, height: 900 }],
  ["phone", { width: 390, height: 844 }],
] as const;

/**
 * The whole page at desktop and phone widths, light and dark, when E2E_SHOTS is set; the sizes
 * and schemes are switched only for the pictures, so the caller sets the page back as it needs.
 */
export async function shotEverySize(page: Page, name: string): Promise<void> {
  if (!shotsWanted) return;
  for (const [size, viewport] of SIZES) {
    await page.setViewportSize(viewport);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `${name}-${size}-${scheme}`, { fullPage: true });
    }
  }
}
