import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { bundledEntry } from "./bundled-entry";

const run = promisify(execFile);

export type CliAnswer = { code: number; stdout: string; stderr: string };

const ENTRY = "lib/admin/cli.ts";

/**
 * `npm run admin -- …args` as an operator runs it: a real child process on `databaseUrl`, started
 * from the CLI's bundle (test/support/bundled-entry.ts) to save a cold tsx start each time.
 */
export async function runAdminCli(databaseUrl: string, ...args: string[]): Promise<CliAnswer> {
  return runCli(databaseUrl, [await bundledEntry(ENTRY)], args);
}

/** The same, through tsx on the TypeScript entry, as `npm run admin` starts it. */
export async function runAdminCliViaTsx(
  databaseUrl: string,
  ...args: string[]
): Promise<CliAnswer> {
  return runCli(
    databaseUrl,
    [join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs"), ENTRY],
    args,
  );
}

async function runCli(databaseUrl: string, command: string[], args: string[]): Promise<CliAnswer> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...command, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      cwd: process.cwd(),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CliAnswer;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
