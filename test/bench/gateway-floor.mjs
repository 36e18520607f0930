// The MCP gateway's floor for the bench (test/bench/gateway.ts): the package's own Relay, as
// built in lib/mcp-gateway/dist, between stdio and the upstream command given as arguments, with
// a gate that forwards every tools/call without asking anyone. What the gateway costs without
// Countersign: the proxying itself (two JSON-RPC hops, the tools/list lookup).
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { Relay } from "../../lib/mcp-gateway/dist/index.js";

const [command, ...args] = process.argv.slice(2);
const passThrough = { call: (call, forward) => forward(call.args), close: async () => {} };
const relay = new Relay(
  new StdioServerTransport(),
  new StdioClientTransport({ command, args, stderr: "inherit" }),
  passThrough,
  { upstreamTimeoutMs: 60_000, log: (line) => process.stderr.write(`gateway-floor: ${line}\n`) },
);
await relay.start();
process.stdin.once("end", () => process.exit(0));
await relay.closed;
process.exit(0);
