import { execFileSync } from "node:child_process";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

// Builds the `@countersign/review-card` workspace package (components/review-card/package.json,
// whose `build` and `prepack` scripts run this) into components/review-card/dist/: index.js (ESM,
// every dependency left to the host's install: the react/react-dom peers and the JSON Schema
// validator), index.css (the card's CSS modules, class names made unique at build time: the host
// imports it once) and index.d.ts with the declarations it re-exports. It lives outside the
// package folder so the package's declarations and files hold the card alone.

const root = fileURLToPath(new URL("../..", import.meta.url));
const sourceDir = join(root, "components/review-card");
const cardOutDir = join(sourceDir, "dist");

export async function buildReviewCard(): Promise<void> {
  await rm(cardOutDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { index: join(sourceDir, "index.ts") },
    outdir: cardOutDir,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    packages: "external",
    loader: { ".module.css": "local-css" },
    // Each source file's "use client" is dropped when bundled; the bundle as a whole is one, so
    // a Next.js host can render it from a server component.
    banner: { js: '"use client";' },
    logOverride: { "module-level-directive": "silent" },
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
  });

  // The package ships the card's folder alone: an import from elsewhere in the app (a Next.js
  // module, the database) would drag the server into every host's bundle.
  const strays = Object.keys(result.metafile.inputs).filter(
    (input) => !join(root, input).startsWith(sourceDir),
  );
  if (strays.length > 0) {
    throw new Error(`The review card imports outside its folder: ${strays.join(", ")}`);
  }

  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(root, "lib/card-package/tsconfig.json")], {
    cwd: root,
    stdio: "inherit",
  });
  await addDeclarationExtensions();
}

/**
 * tsc keeps the sources' extensionless relative imports; hosts resolving with `node16`/`nodenext`
 * need `./x.js` in an ESM package's declarations, and `bundler` hosts accept it too.
 */
async function addDeclarationExtensions(): Promise<void> {
  const files = (await readdir(cardOutDir)).filter((name) => name.endsWith(".d.ts"));
  for (const name of files) {
    const path = join(cardOutDir, name);
    const text = await readFile(path, "utf8");
    await writeFile(
      path,
      text.replace(/(from\s+|import\()(["'])(\.\.?\/[^"']+?)(?<!\.js)\2/g, "$1$2$3.js$2"),
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  await buildReviewCard();
  console.log(`Built ${relative(root, cardOutDir)} in ${Date.now() - started} ms`);
}
