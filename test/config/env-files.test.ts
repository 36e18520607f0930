import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@libsql/client";
import { afterAll, expect, it } from "vitest";
import { freePort, SERVER_ENTRY } from "../support/server";

// `npm start`, `npm run admin` and `npm run demo` read .env the same way (lib/config/load-env.ts):
// here in a copy of the project made of symlinks, so the test's .env is not the developer's.
// The server takes its database, port and listen address from it; the CLI works on the same
// database. A bad setting stops the server before it does anything, naming every bad variable.

const root = process.cwd();
const project = mkdtempSync(join(tmpdir(), "countersign-dotenv-"));
for (const entry of readdirSync(root)) {
  if (entry.startsWith(".env") || entry === "data" || entry === ".git") continue;
  symlinkSync(join(root, entry), join(project, entry));
}
mkdirSync(join(project, "data"));
const databaseUrl = `file:${join(project, "data", "from-dotenv.db")}`;

/** The inherited environment without the settings the .env should provide. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production", ...extra };
  for (const name of ["DATABASE_URL", "PORT", "PUBLIC_URL", "HOSTNAME", "COUNTERSIGN_QUIET"])
    if (!(name in extra)) delete env[name];
  return env;
}

const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((child) => child.kill("SIGTERM")));

/** Runs node with `args` in `cwd`; resolves to its exit code and output, whatever the code. */
function run(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return promisify(execFile)(process.execPath, args, { cwd, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

const TSX = join(root, "node_modules", "tsx", "dist", "cli.mjs");

it("stops at start, naming every bad setting, before it opens anything; so does the CLI", async () => {
  const bad = environment({ PORT: "80a", LOG_LEVEL: "chatty", MAX_BODY_BYTES: "-1" });
  const [result, cli] = await Promise.all([
    run([join(root, SERVER_ENTRY)], root, bad),
    run([TSX, "lib/admin/cli.ts", "queue", "list"], root, bad),
  ]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("Countersign cannot start: 3 settings are not usable.");
  expect(result.stderr).toContain("  - PORT: must be a whole number");
  expect(result.stderr).toContain("  - LOG_LEVEL:");
  expect(result.stderr).toContain("  - MAX_BODY_BYTES: must be a whole number");
  expect(cli.code).toBe(1);
  expect(cli.stderr).toContain("npm run admin cannot run: 3 settings are not usable.");
  expect(cli.stderr).toContain("  - PORT: must be a whole number");
}, 30_000);

it("the server and the admin CLI read the same .env: one database, and its port", async () => {
  const port = await freePort();
  writeFileSync(
    join(project, ".env"),
    [`DATABASE_URL=${databaseUrl}`, `PORT=${port}`, "SETUP_CODE=DOTENV-TEST-CODE-1234", ""].join(
      "\n",
    ),
  );

  // The CLI, with no DATABASE_URL in its environment, works on the .env's database.
  const cli = await run(
    [TSX, "lib/admin/cli.ts", "queue", "create", "From dotenv"],
    project,
    environment(),
  );
  // the database the .env names, new (so the CLI says it made it), and nothing else on stderr
  expect(cli.stderr.split("\n")).toEqual([
    `Database: ${databaseUrl} (DATABASE_URL from a .env file)`,
    expect.stringMatching(/^Warning: .*from-dotenv\.db did not exist/),
    "",
  ]);
  expect(cli.stdout).toMatch(/^[0-9a-f-]{36}\s*$/);
  const client = createClient({ url: databaseUrl });
  const queues = await client.execute("SELECT name FROM queues");
  client.close();
  expect(queues.rows.map((row) => row.name)).toEqual(["From dotenv"]);

  // The server, with no --port and a machine name in HOSTNAME (as Docker exports it), listens on
  // the .env's port on loopback and serves the .env's database.
  const server = spawn(process.execPath, [join(root, SERVER_ENTRY)], {
    cwd: project,
    env: environment({ HOSTNAME: "3f2a9b1c7d0e" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(server);
  let output = "";
  server.stdout!.on("data", (chunk) => (output += chunk));
  server.stderr!.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + 30_000;
  // "Ready" is logged as the server listens; the database line follows once start-up work ran.
  while (!output.includes("The database is migrated.")) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`no start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(output).toContain(`on http://127.0.0.1:${port}`);
  expect(output).toContain('HOSTNAME is \\"3f2a9b1c7d0e\\", a machine name');
  expect(output).toContain(`"database":"${databaseUrl}"`);
  const health = await fetch(`http://127.0.0.1:${port}/api/health`);
  expect(health.status).toBe(200);
}, 60_000);
