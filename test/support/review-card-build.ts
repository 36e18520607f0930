import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

// The @countersign/review-card package's build (lib/card-package/build.ts), for the tests that
// use its output: built when missing or older than any of the card's sources.

export const REVIEW_CARD_DIR = join(process.cwd(), "components/review-card");
export const REVIEW_CARD_DIST = join(REVIEW_CARD_DIR, "dist");

function cardIsStale(): boolean {
  const built = statSync(join(REVIEW_CARD_DIST, "index.d.ts"), { throwIfNoEntry: false });
  if (!built) return true;
  return readdirSync(REVIEW_CARD_DIR, { withFileTypes: true }).some(
    (entry) =>
      entry.isFile() && statSync(join(REVIEW_CARD_DIR, entry.name)).mtimeMs > built.mtimeMs,
  );
}

export function ensureReviewCardBuilt(): void {
  if (!cardIsStale()) return;
  const tsx = createRequire(import.meta.url).resolve("tsx/cli");
  execFileSync(process.execPath, [tsx, "lib/card-package/build.ts"], { cwd: process.cwd() });
}
