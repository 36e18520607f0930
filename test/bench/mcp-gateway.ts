import { closeDb } from "@/db/client";
import { GATEWAY_DEFAULTS, GATEWAY_QUICK, gatewayReport, gatewayScenario } from "./gateway";
import { stopAllChildren } from "./targets";

// `npx tsx test/bench/mcp-gateway.ts [--quick] [--embedded|--sqld] [--calls=N] [--profile=DIR]`
// (after `npm run build`): the MCP gateway's scenario of `npm run bench` (test/bench/gateway.ts)
// alone; `--profile=DIR` runs the Countersign server under `node --cpu-prof` (summarize its
// profile with test/bench/profile-summary.ts).

const args = process.argv.slice(2);
const options = { ...(args.includes("--quick") ? GATEWAY_QUICK : GATEWAY_DEFAULTS) };
const calls = args.find((a) => a.startsWith("--calls="));
if (calls) options.sequential = Number(calls.split("=")[1]);
const profileDir = args.find((a) => a.startsWith("--profile="))?.split("=")[1];
const databases = args.includes("--embedded")
  ? (["embedded"] as const)
  : args.includes("--sqld")
    ? (["sqld"] as const)
    : (["embedded", "sqld"] as const);

try {
  const result = await gatewayScenario(options, [...databases], profileDir);
  console.log(gatewayReport(result).join("\n"));
  console.log(`\n- Command: \`npx tsx test/bench/mcp-gateway.ts ${args.join(" ")}\``);
} finally {
  await stopAllChildren();
  closeDb();
}
process.exit(0);
