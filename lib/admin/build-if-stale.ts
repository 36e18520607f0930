import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

// `npm start` runs this first: it builds the app (`npm run build`, a few minutes) only when there
// is no production build or a source file changed since it was made, so starting an already-built
// checkout takes seconds. `npm run build` still builds unconditionally.

const root = process.cwd();
const SOURCES = [
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
const SKIPPED_DIRECTORIES = new Set(["node_modules", ".next", "dist"]);

/** The newest modification time under `path` (a file or a directory), 0 if it does not exist. */
function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file shows only as its directory's change
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) continue;
    newest = Math.max(newest, newestChange(join(path, entry.name)));
  }
  return newest;
}

function buildIsCurrent(): boolean {
  const buildId = join(root, ".next", "BUILD_ID");
  const card = join(root, "dist", "review-card", "index.js");
  const server = join(root, "dist", "server.js"); // lib/http/server.ts, what `npm start` runs
  const outputs = [buildId, card, server];
  if (!outputs.every((output) => existsSync(output))) return false;
  const builtAt = Math.min(...outputs.map((output) => statSync(output).mtimeMs));
  return SOURCES.every((source) => newestChange(join(root, source)) <= builtAt);
}

if (buildIsCurrent()) {
  console.log("Countersign: the production build is up to date (npm run build rebuilds it).");
} else {
  console.log("Countersign: building the app (a few minutes, once per change)…");
  const built = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
  process.exit(built.status ?? 1);
}
