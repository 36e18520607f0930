import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { bundledEntry } from "../support/bundled-entry";

// `npm run admin` with DATABASE_URL set neither in the shell nor in .env works on the default file,
// which need not be the server's: every command names on stderr the database it opened and where
// that came from, and warns when the file did not exist before (so the command made a new, empty
// one). In a copy of the project made of symlinks, without the developer's .env or data/.

const root = process.cwd();
const project = mkdtempSync(join(tmpdir(), "countersign-admin-notice-"));
for (const entry of readdirSync(root)) {
  if (entry.startsWith(".env") || entry === "data" || entry === ".git") continue;
  symlinkSync(join(root, entry), join(project, entry));
}

async function admin(env: Record<string, string>, ...args: string[]) {
  const inherited: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!("DATABASE_URL" in env)) delete inherited.DATABASE_URL;
  return promisify(execFile)(process.execPath, [await bundledEntry("lib/admin/cli.ts"), ...args], {
    cwd: project,
    env: inherited,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

it("names the default database on stderr, and warns when it had to create it", async () => {
  const first = await admin({}, "agent", "list");
  expect(first.code).toBe(0);
  expect(first.stderr).toContain(
    "Database: file:./data/countersign.db (the default: DATABASE_URL is set neither in the environment nor in .env)",
  );
  expect(first.stderr).toContain(
    "Warning: ./data/countersign.db did not exist, so this command created a new, empty database there.",
  );
  expect(existsSync(join(project, "data", "countersign.db"))).toBe(true);

  const second = await admin({}, "agent", "list");
  expect(second.code).toBe(0);
  expect(second.stderr).toContain("Database: file:./data/countersign.db (the default");
  expect(second.stderr).not.toContain("Warning");
}, 60_000);

it("names a database given in the environment, without its credentials", async () => {
  const url = `file:${join(project, "data", "given.db")}`;
  const created = await admin({ DATABASE_URL: url }, "queue", "create", "named");
  expect(created.code).toBe(0);
  expect(created.stdout).toMatch(/^[0-9a-f-]{36}\s*$/);
  expect(created.stderr).toContain(`Database: ${url} (DATABASE_URL from the environment)`);
  const listed = await admin({ DATABASE_URL: `${url}?authToken=secret` }, "queue", "list");
  expect(listed.stderr).toBe(`Database: ${url} (DATABASE_URL from the environment)\n`);
}, 60_000);
