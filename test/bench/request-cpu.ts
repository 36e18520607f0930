import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { freshDatabase } from "../support/database";
import { makeTeam } from "../support/factories";
import { startServer } from "../support/server";
import { pauseBody } from "./targets";

// `npx tsx test/bench/request-cpu.ts [N]`: the production server's CPU time per request (its
// utime + stime in /proc/<pid>/stat, before and after), for N sequential pauses (POST /api/v1/runs
// with a one-call batch) and N decisions (POST /api/v1/calls/{id}/decision) over one keep-alive
// connection, after a warm-up. Needs `npm run build` first, and Linux. `--profile=DIR` writes the
// server's CPU profile there.

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at state: utime and stime are 14, 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(baseUrl: string, path: string, token: string, body: unknown): Promise<any> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      `${baseUrl}${path}`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => {
          if (response.statusCode! >= 300)
            reject(new Error(`${path} answered ${response.statusCode}: ${text}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    sent.on("error", reject);
    sent.end(payload);
  });
}

async function main() {
  const n = Number(process.argv[2]) || 400;
  const warmup = 100;
  const databaseUrl = await freshDatabase("request-cpu");
  const { agent: agentKey, reviewer } = await makeTeam();
  // `--profile=DIR`: the server runs under `node --cpu-prof` (summarize with profile-summary.ts)
  const profile = process.argv.find((a) => a.startsWith("--profile="))?.slice("--profile=".length);
  const server = await startServer({
    databaseUrl,
    nodeArgs: profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [],
  });
  try {
    const pid = server.process.pid!;
    const pending: { id: string; revision: number }[] = [];
    const pause = async (i: number) => {
      const run = await post(server.baseUrl, "/api/v1/runs", agentKey.key, pauseBody(`cpu-${i}`));
      pending.push(run.batches[0].calls[0]);
    };
    const decide = async () => {
      const call = pending.shift()!;
      await post(server.baseUrl, `/api/v1/calls/${call.id}/decision`, reviewer.token, {
        outcome: "approve",
        expectedRevision: call.revision,
      });
    };
    const measure = async (label: string, work: (i: number) => Promise<void>) => {
      const before = cpuMs(pid);
      const started = performance.now();
      for (let i = 0; i < n; i++) await work(i);
      const cpu = (cpuMs(pid) - before) / n;
      const wall = (performance.now() - started) / n;
      console.log(`${label}: ${cpu.toFixed(2)} ms server CPU, ${wall.toFixed(2)} ms wall each`);
    };
    for (let i = 0; i < warmup; i++) await pause(-1 - i);
    for (let i = 0; i < warmup; i++) await decide();
    await measure(`pause (n=${n})`, pause);
    await measure(`decision (n=${n})`, decide);
  } finally {
    agent.destroy();
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
