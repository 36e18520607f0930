// Countersign's TypeScript client for agents. Runs wherever fetch does (Node 20+, browsers,
// edge runtimes): no Next.js, React or server imports.

export { Countersign } from "./client.js";
export type {
  ClaimOptions,
  CompleteRunInput,
  CountersignOptions,
  ToolEventInput,
} from "./client.js";
export { Claim } from "./claim.js";
export type { ClaimState } from "./claim.js";
export type { ClaimCalls } from "./run-calls.js";
export { API_ERROR_CODES, CountersignError } from "./errors.js";
export type { ApiErrorCode, ClientErrorCode, ErrorCode, Issue } from "./errors.js";
export { gate } from "./gate.js";
export type { GateOptions, GateRejection } from "./gate.js";
export type { FetchLike } from "./http.js";
export { callRejectionMessage, rejectionMessage } from "./rejection.js";
export type { RejectionFacts, RejectionSource } from "./rejection.js";
export type { RetryOptions } from "./retry.js";
export { RollbackFailedError, runRollback } from "./rollback.js";
export type { Reverter, RollbackOptions } from "./rollback.js";
export { RunSession } from "./run-session.js";
export type { RunSessionOptions } from "./run-session.js";
export { SseParser } from "./sse.js";
export type { SseMessage } from "./sse.js";
export type * from "./types.js";
export type { WaitOptions } from "./wait-for-decision.js";
