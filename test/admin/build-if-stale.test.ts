import { execFile } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

// `npm start` runs lib/admin/build-if-stale.ts first. Here it runs, as npm starts it, in a fixture
// checkout laid out as `npm run build` leaves one, with a fake `npm` on the PATH that only notes
// that a build was asked for: a second start of an unchanged checkout must not build again.

const run = promisify(execFile);
const script = join(process.cwd(), "lib", "admin", "build-if-stale.ts");
const tsx = join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs");

let fixture: string;
afterEach(() => rmSync(fixture, { recursive: true, force: true }));

function write(path: string, at: number, text = "{}") {
  const file = join(fixture, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  utimesSync(file, at / 1000, at / 1000);
}

/** A checkout built at `builtAt`, each step writing its output where the real build does, in order. */
function builtCheckout(builtAt: number) {
  fixture = mkdtempSync(join(tmpdir(), "countersign-build-if-stale-"));
  const before = builtAt - 60_000;
  for (const source of [
    "app/page.tsx",
    "components/review-card/index.ts",
    "lib/sdk/index.ts",
    "lib/admin/cli.ts",
    "db/schema.ts",
    "proxy.ts",
    "instrumentation.ts",
    "next.config.ts",
    "tsconfig.json",
    "package.json",
    "package-lock.json",
  ])
    write(source, before);
  for (const dir of [
    "app",
    "components",
    "components/review-card",
    "lib",
    "lib/sdk",
    "lib/admin",
    "db",
  ])
    utimesSync(join(fixture, dir), before / 1000, before / 1000);
  // npm run build: build:card, build:sdk, next build, build:server — in that order, a second apart;
  // the SDK's dist/ appears in lib/sdk after the card was built, changing that directory's time.
  write("components/review-card/dist/index.js", builtAt);
  write("lib/sdk/dist/index.js", builtAt + 1000);
  utimesSync(join(fixture, "lib/sdk"), (builtAt + 1000) / 1000, (builtAt + 1000) / 1000);
  write(".next/BUILD_ID", builtAt + 2000);
  write("dist/server.js", builtAt + 3000);
  const bin = join(fixture, ".fake-bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "npm"), `#!/bin/sh\necho "$@" > "${join(fixture, ".npm-called")}"\n`);
  chmodSync(join(bin, "npm"), 0o755);
}

async function start(): Promise<{ output: string; built: boolean }> {
  const { stdout } = await run(process.execPath, [tsx, script], {
    cwd: fixture,
    env: { ...process.env, PATH: `${join(fixture, ".fake-bin")}:${process.env.PATH}` },
  });
  return { output: stdout, built: existsSync(join(fixture, ".npm-called")) };
}

describe("npm start's build-if-stale step", () => {
  it("does not build again when nothing changed since the build", async () => {
    builtCheckout(Date.now() - 10_000);
    const second = await start();
    expect(second.output).toContain("up to date");
    expect(second.built).toBe(false);
  }, 30_000);

  it("builds when a source changed after the build", async () => {
    const builtAt = Date.now() - 10_000;
    builtCheckout(builtAt);
    write("lib/admin/cli.ts", builtAt + 5000, "{ }");
    const started = await start();
    expect(started.output).toContain("building the app");
    expect(started.built).toBe(true);
  }, 30_000);

  it("builds when an output of the build is missing", async () => {
    builtCheckout(Date.now() - 10_000);
    rmSync(join(fixture, "components/review-card/dist"), { recursive: true });
    expect((await start()).built).toBe(true);
  }, 30_000);
});
