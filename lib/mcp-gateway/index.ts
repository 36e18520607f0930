// @countersign/mcp-gateway: the pieces of countersign-mcp-gateway, for programs that embed it.

export { HELP, parseArgs } from "./args.js";
export type { GatewayOptions, ParseResult, Upstream } from "./args.js";
export { main } from "./cli.js";
export { CallCancelled, CountersignGate } from "./countersign-gate.js";
export type { GatedCall, SessionFacts } from "./countersign-gate.js";
export { PROGRESS_INTERVAL_MS, Relay, UpstreamError } from "./relay.js";
export type { RelayFacts } from "./relay.js";
