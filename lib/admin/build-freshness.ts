import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

// Whether the production build of a checkout is newer than every source it was built from: the
// decision behind `npm start`'s build-if-stale step (lib/admin/build-if-stale.ts), apart from it so
// that a test can check it on a fixture without building the app.

/** What the build reads: a change to any of these makes the build stale. */
export const BUILD_SOURCES = [
  "app",
  "components",
  "lib",
  "db",
  "proxy.ts",
  "instrumentation.ts",
  "next.config.ts",
  "tsconfig.json",
  "package.json",
  "package-lock.json",
];

/**
 * What `npm run build` makes, one file per step, each where that step writes it: the card package
 * (lib/card-package/build.ts), the SDK, Next.js, the server bundle that `npm start` runs. An output
 * listed here that the build never makes would make every start rebuild (it once named
 * dist/review-card/index.js, and each `npm start` took two minutes).
 */
export const BUILD_OUTPUTS = [
  join("components", "review-card", "dist", "index.js"),
  join("lib", "sdk", "dist", "index.js"),
  join(".next", "BUILD_ID"),
  join("dist", "server.js"),
];

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".next", "dist", ".build-lock"]);

/** The newest modification time under `path` (a file or a directory), 0 if it does not exist. */
function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  const entries = readdirSync(path, { withFileTypes: true });
  // A deleted file shows only as its directory's change; but a directory the build writes into
  // (lib/sdk gets its dist/ during the build) changes then too, so its own time is not a source's.
  const buildWritesHere = entries.some((e) => e.isDirectory() && SKIPPED_DIRECTORIES.has(e.name));
  let newest = buildWritesHere ? 0 : stat.mtimeMs;
  for (const entry of entries) {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) continue;
    newest = Math.max(newest, newestChange(join(path, entry.name)));
  }
  return newest;
}

/** True when every build output exists and none is older than the newest source change. */
export function buildIsCurrent(root: string): boolean {
  const outputs = BUILD_OUTPUTS.map((output) => join(root, output));
  if (!outputs.every((output) => existsSync(output))) return false;
  const builtAt = Math.min(...outputs.map((output) => statSync(output).mtimeMs));
  return BUILD_SOURCES.every((source) => newestChange(join(root, source)) <= builtAt);
}
