import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { closeDb } from "@/db/client";
import { SERVER_ENTRY } from "../support/server";
import { SCENARIOS, stopAllServers, type ScenarioResult } from "./scenarios";

// `npm run chaos [-- --only=crash,processes,locked,disk-full,webhooks]`
//
// Runs the fault scenarios (test/chaos/scenarios.ts) against real production servers (`npm start`'s) with a
// steady load, and prints a markdown report of what was done and found (progress on stderr, the
// report on stdout). Exits 1 when an invariant failed. The Vitest suite runs the same scenarios
// small (test/chaos/chaos.test.ts).

const only = process.argv
  .slice(2)
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const names = (Object.keys(SCENARIOS) as (keyof typeof SCENARIOS)[]).filter(
  (name) => !only || only.includes(name),
);
if (only?.some((name) => !(name in SCENARIOS)))
  throw new Error(`--only takes ${Object.keys(SCENARIOS).join(",")}`);

// The Next.js build and the server that serves it (lib/http/server.ts), both from `npm run build`.
const hasBuild = () =>
  existsSync(join(process.cwd(), ".next", "BUILD_ID")) &&
  existsSync(join(process.cwd(), SERVER_ENTRY));

function ensureBuild() {
  if (hasBuild()) return;
  console.error(
    "chaos: no production build (.next/BUILD_ID, dist/server.js); running `npm run build`…",
  );
  spawnSync("npm", ["run", "build"], { stdio: ["ignore", process.stderr, process.stderr] });
  if (!hasBuild()) throw new Error("No production build: `npm run build` failed.");
}

function report(results: ScenarioResult[], totalMs: number): string {
  const lines = [
    "# Countersign chaos run",
    "",
    `${results.length} scenarios in ${(totalMs / 1000).toFixed(0)} s on ${cpus().length} cores (load average ${loadavg()[0]!.toFixed(1)}).`,
    "",
    "| scenario | result | time |",
    "| --- | --- | --- |",
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.skipped ? "skipped" : r.failures.length ? `**FAILED** (${r.failures.length})` : "passed"} | ${(r.ms / 1000).toFixed(1)} s |`,
    ),
  ];
  for (const r of results) {
    lines.push("", `## ${r.name}`, "");
    if (r.skipped) {
      lines.push(`Skipped: ${r.skipped}`);
      continue;
    }
    lines.push("| | |", "| --- | --- |", ...r.rows.map(([k, v]) => `| ${k} | ${v} |`));
    if (r.failures.length)
      lines.push(
        "",
        "Invariants that failed:",
        "",
        ...r.failures.slice(0, 20).map((f) => `- ${f}`),
      );
  }
  return lines.join("\n");
}

async function main(): Promise<number> {
  const startedAt = Date.now();
  ensureBuild();
  const results: ScenarioResult[] = [];
  for (const name of names) {
    console.error(`chaos: ${name}…`);
    const result = await SCENARIOS[name]("full");
    console.error(
      `chaos: ${name} ${result.skipped ? "skipped" : result.failures.length ? "FAILED" : "passed"} in ${(result.ms / 1000).toFixed(1)} s`,
    );
    results.push(result);
  }
  console.log(report(results, Date.now() - startedAt));
  return results.some((r) => r.failures.length > 0) ? 1 : 0;
}

const abort = (code: number) => void stopAllServers().finally(() => process.exit(code));
process.once("SIGINT", () => abort(130));
process.once("SIGTERM", () => abort(143));

main()
  .then((code) => {
    closeDb();
    process.exit(code);
  })
  .catch((error) => {
    console.error(error);
    abort(2);
  });
