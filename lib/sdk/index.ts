// Countersign's TypeScript client for agents. Runs wherever fetch does (Node 20+, browsers,
// edge runtimes): no Next.js, React or server imports.

export { Countersign } from "./client";
export type { ClaimOptions, CompleteRunInput, CountersignOptions, ToolEventInput } from "./client";
export { Claim } from "./claim";
export type { ClaimState } from "./claim";
export { CountersignError } from "./errors";
export type { ApiErrorCode, ClientErrorCode, ErrorCode, Issue } from "./errors";
export { gate } from "./gate";
export type { GateOptions, GateRejection } from "./gate";
export type { FetchLike } from "./http";
export type { RetryOptions } from "./retry";
export { RollbackFailedError, runRollback } from "./rollback";
export type { Reverter, RollbackOptions } from "./rollback";
export { RunSession } from "./run-session";
export type { RunSessionOptions } from "./run-session";
export { SseParser } from "./sse";
export type { SseMessage } from "./sse";
export type * from "./types";
export type { WaitOptions } from "./wait-for-decision";
