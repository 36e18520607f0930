// @countersign/mcp-gateway: the countersign-mcp-gateway command, and its pieces for programs that
// start it themselves. The build bundles @countersign/sdk in (see package.json): the package needs
// only the MCP SDK at run time.

export { HELP, parseArgs } from "./args.js";
export type { GatewayOptions, ParseResult, Upstream } from "./args.js";
export { main } from "./cli.js";
// The relay and the gate, for a program that hosts gateways itself (Countersign's own hosted
// gateways, lib/mcp-gateways/hosted-sessions.ts).
export { Relay, UpstreamError } from "./relay.js";
export type { RelayFacts } from "./relay.js";
export { CountersignGate } from "./countersign-gate.js";
export type { GateSettings, SessionFacts } from "./countersign-gate.js";
