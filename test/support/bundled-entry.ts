import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const bundles = new Map<string, Promise<string>>();

/**
 * A TypeScript entry (say `lib/admin/cli.ts`) bundled once per test process by esbuild, for plain
 * `node` to start. A cold `tsx` start transforms every file the entry imports again, 2–4 s on
 * these machines, and some test files start dozens of them; the bundle starts in about a third of
 * that. Packages stay external and the bundle lives under node_modules/.cache, so they resolve as
 * from the repository. What `npm run …` itself runs (tsx on the .ts file) stays covered by a test
 * per entry that still starts it that way.
 */
export function bundledEntry(entry: string): Promise<string> {
  let bundle = bundles.get(entry);
  if (!bundle) {
    bundle = bundleEntry(entry);
    bundles.set(entry, bundle);
  }
  return bundle;
}

async function bundleEntry(entry: string): Promise<string> {
  const dir = join(process.cwd(), "node_modules", ".cache", "countersign-tests");
  mkdirSync(dir, { recursive: true });
  // One file per process: test workers bundling at the same moment never share a half-written one.
  const outfile = join(dir, `${entry.replace(/[^a-z0-9]+/gi, "-")}.${process.pid}.mjs`);
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "warning",
  });
  process.once("exit", () => rmSync(outfile, { force: true }));
  return outfile;
}
