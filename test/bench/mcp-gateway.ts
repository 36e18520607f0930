import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { gatewayInFrontOf, newClient } from "@/test/mcp-gateway/gateway-process";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// `npx tsx test/bench/mcp-gateway.ts [calls]` (after `npm run build`): what the gateway adds to
// one tool call (issue 25, item 7: at most 5 ms at p50 and 15 ms at p99 for an allowed call). A
// fast upstream (test/mcp-gateway/faulty-server.mjs's `echo`) is called directly, through the
// gateway with an allow rule, and through it with a deny rule, one call at a time from one session
// on the embedded database; the table gives each one's p50 / p99 and the gateway's addition.
// Not yet part of `npm run bench` (test/bench/run.ts) nor of its floor comparison.

const CALLS = Number(process.argv[2]) || 200;
const FAST_UPSTREAM = [process.execPath, join(process.cwd(), "test/mcp-gateway/faulty-server.mjs")];

async function timeCalls(call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 20; i++) await call(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main() {
  const server = await startApiServer("bench-gateway");
  try {
    const t = await makeQuickTeam();
    const lead = await makeReviewer({ queues: [{ name: t.queue.name, role: "lead" }] });
    const leadApi = apiClient(server.baseUrl, lead.token);
    for (const rule of [
      { name: "echo allowed", effect: "allow", toolPattern: "echo" },
      { name: "hang denied", effect: "deny", toolPattern: "hang", reason: "benched" },
    ])
      await leadApi.post("/policy-rules", { queue: t.queue.name, ...rule });

    const directClient = newClient();
    await directClient.connect(
      new StdioClientTransport({ command: FAST_UPSTREAM[0]!, args: FAST_UPSTREAM.slice(1) }),
    );
    const gateway = await gatewayInFrontOf({
      countersignUrl: server.baseUrl,
      agentKey: t.agent.key,
      upstream: FAST_UPSTREAM,
    });
    const echo = (client: typeof directClient) => async () => {
      const result = (await client.callTool({
        name: "echo",
        arguments: { n: 1 },
      })) as CallToolResult;
      if (result.isError) throw new Error(JSON.stringify(result));
    };
    const direct = await timeCalls(echo(directClient));
    const allowed = await timeCalls(echo(gateway.client));
    const denied = await timeCalls(async () => {
      const result = (await gateway.client.callTool({
        name: "hang",
        arguments: {},
      })) as CallToolResult;
      if (!result.isError) throw new Error("not denied");
    });
    const row = (name: string, times: number[]) =>
      `| ${name} | ${pct(times, 50).toFixed(1)} | ${pct(times, 99).toFixed(1)} | ${(pct(times, 50) - pct(direct, 50)).toFixed(1)} | ${(pct(times, 99) - pct(direct, 99)).toFixed(1)} |`;
    console.log(`${CALLS} calls each, one at a time, one session\n`);
    console.log(
      "| call | p50 ms | p99 ms | added p50 | added p99 |\n| --- | --- | --- | --- | --- |",
    );
    console.log(row("direct (no gateway)", direct));
    console.log(row("through the gateway, allowed", allowed));
    console.log(row("through the gateway, denied", denied));
    await gateway.close();
    await directClient.close();
  } finally {
    await server.stop();
  }
}

await main();
