import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export type CliAnswer = { code: number; stdout: string; stderr: string };

/** `npm run admin -- …args` as an operator runs it: a real child process on `databaseUrl`. */
export async function runAdminCli(databaseUrl: string, ...args: string[]): Promise<CliAnswer> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [join(process.cwd(), "node_modules", "tsx", "dist", "cli.mjs"), "lib/admin/cli.ts", ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl }, cwd: process.cwd() },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CliAnswer;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
