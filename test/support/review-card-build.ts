import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
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

/**
 * Builds the card unless its build is current. Test files run in parallel and the build empties
 * dist/ first: a lock (a directory, created atomically) keeps one file from reading what another
 * is rebuilding.
 */
export function ensureReviewCardBuilt(): void {
  const lock = join(REVIEW_CARD_DIR, ".build-lock");
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another test file is building. A lock older than any build is a crashed run's.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 120_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${lock} is still held`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    if (!cardIsStale()) return;
    const tsx = createRequire(import.meta.url).resolve("tsx/cli");
    execFileSync(process.execPath, [tsx, "lib/card-package/build.ts"], { cwd: process.cwd() });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
