import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeBatch } from "@/test/components/review-card-fixtures";
import { ensureReviewCardBuilt, REVIEW_CARD_DIR } from "@/test/support/review-card-build";

// `npm pack` of @countersign/review-card (built first, as its prepack script would) installed into a fresh host
// project whose React is another 19.x minor than this repository's: what the host gets, and a
// render with the host's own React. A card bundling or pinning its own React fails here with
// "Invalid hook call" (two Reacts); one that depends on the app drags in Next, better-auth, libSQL.

const HOST_REACT = "~19.2.0";
const rootReact = JSON.parse(
  readFileSync(join(process.cwd(), "node_modules/react/package.json"), "utf8"),
) as { version: string };

let work: string;
let host: string;
let packed: { filename: string; files: { path: string }[] };

function npm(args: string[], cwd: string): string {
  return execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "countersign-card-tarball-"));
  // Built here under the tests' build lock; prepack's own rebuild would race the other test files.
  ensureReviewCardBuilt();
  const report = npm(
    ["pack", "--json", "--ignore-scripts", "--pack-destination", work],
    REVIEW_CARD_DIR,
  );
  packed = (JSON.parse(report) as (typeof packed)[])[0]!;

  host = join(work, "host");
  execFileSync("mkdir", [host]);
  writeFileSync(
    join(host, "package.json"),
    JSON.stringify({
      name: "review-card-host",
      private: true,
      type: "module",
      dependencies: {
        react: HOST_REACT,
        "react-dom": HOST_REACT,
        "@countersign/review-card": `file:../${packed.filename}`,
      },
    }),
  );
  // Offline first: the React release comes from npm's cache when an earlier run fetched it.
  npm(["install", "--prefer-offline", "--ignore-scripts"], host);
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the packed @countersign/review-card", () => {
  it("ships its build, README and CHANGELOG, and no sources", () => {
    const paths = packed.files.map((file) => file.path).sort();
    for (const shipped of [
      "package.json",
      "README.md",
      "CHANGELOG.md",
      "dist/index.js",
      "dist/index.css",
      "dist/index.d.ts",
    ]) {
      expect(paths).toContain(shipped);
    }
    expect(paths.filter((path) => !path.startsWith("dist/") && path.endsWith(".ts"))).toEqual([]);
    expect(paths.filter((path) => path.endsWith(".tsx"))).toEqual([]);
  });

  it("installs only itself and its validator beside the host's React", () => {
    const installed = (JSON.parse(npm(["ls", "--all", "--json"], host)) as LsTree).dependencies!;
    expect(Object.keys(flatten(installed)).sort()).toEqual([
      "@cfworker/json-schema",
      "@countersign/review-card",
      "react",
      "react-dom",
      "scheduler", // react-dom's own
    ]);
    const hostReact = installed.react!.version;
    expect(hostReact).toMatch(/^19\.2\./);
    // A different minor from this repository's, or the test would prove nothing.
    expect(hostReact.split(".")[1]).not.toBe(rootReact.version.split(".")[1]);
    // One React: the card resolves the host's (a nested copy would be a second React).
    expect(readdirSync(join(host, "node_modules/@countersign/review-card"))).not.toContain(
      "node_modules",
    );
  });

  it("renders with the host's React: hooks, the live hook, no 'Invalid hook call'", () => {
    writeFileSync(
      join(host, "render.mjs"),
      [
        'import { createElement, version } from "react";',
        'import { renderToString } from "react-dom/server";',
        'import { ReviewCard, useBatch } from "@countersign/review-card";',
        "const batch = JSON.parse(process.argv[2]);",
        "// A host component as the README's quick start writes it: useBatch, then the card.",
        "function Approval() {",
        '  const live = useBatch(batch.id, { baseUrl: "https://countersign.invalid" });',
        "  const onDecide = async () => ({ ok: true, batch });",
        "  return createElement(ReviewCard, {",
        "    batch: live.batch ?? batch,",
        '    viewer: { id: "u-host", name: "Host reviewer" },',
        "    onDecide,",
        "    now: () => Date.parse(batch.createdAt), // before the deadline: the buttons show",
        "  });",
        "}",
        "const errors = [];",
        "console.error = (...args) => errors.push(args.join(' '));",
        "const html = renderToString(createElement(Approval));",
        "process.stdout.write(JSON.stringify({ version, html, errors }));",
      ].join("\n"),
    );
    const output = execFileSync(process.execPath, ["render.mjs", JSON.stringify(makeBatch())], {
      cwd: host,
      encoding: "utf8",
    });
    const { version, html, errors } = JSON.parse(output) as {
      version: string;
      html: string;
      errors: string[];
    };
    expect(version).toMatch(/^19\.2\./);
    expect(errors).toEqual([]);
    expect(html).toContain('data-testid="review-card"');
    expect(html).toContain("Refund order A-1");
    expect(html).toMatch(/<button[^>]*aria-label="Approve refund_order"/);
  });
});

type LsTree = { version: string; dependencies?: Record<string, LsTree> };

/** Every package in an `npm ls --all` tree, by name. */
function flatten(tree: Record<string, LsTree>, into: Record<string, string> = {}) {
  for (const [name, node] of Object.entries(tree)) {
    into[name] = node.version;
    if (node.dependencies) flatten(node.dependencies, into);
  }
  return into;
}
