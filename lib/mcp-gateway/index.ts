// @countersign/mcp-gateway: the countersign-mcp-gateway command, and its pieces for programs that
// start it themselves (or serve a gateway of their own: the relay and the gate). The build
// bundles @countersign/sdk in (see package.json): the package needs only the MCP SDK at run time.

export { HELP, parseArgs, upstreamFingerprint } from "./args.js";
export type { GatewayOptions, ParseResult, Upstream } from "./args.js";
// The relay and the gate, for a program that hosts gateways itself (Countersign's own hosted
// gateways, lib/mcp-gateways/hosted-sessions.ts).
export { main, openSession } from "./cli.js";
export type { Session } from "./cli.js";
export { PROGRESS_INTERVAL_MS, Relay, UpstreamError } from "./relay.js";
export type { RelayFacts } from "./relay.js";
export {
  CallCancelled,
  CANCELLED,
  CountersignGate,
  DEFAULT_ANSWER_WITHIN_MS,
} from "./countersign-gate.js";
export type { GatedCall, GateSettings, SessionFacts, ToolGate } from "./countersign-gate.js";
export { OutcomeReports } from "./outcome-reports.js";
export type { Outcome } from "./outcome-reports.js";
export { defaultSpoolRoot, OutcomeSpool, spoolDirectory } from "./spool.js";
export type { SpooledReport } from "./spool.js";
