import type { CountersignError } from "./errors.js";
import type { Batch, BatchInput, Run, RunEvent } from "./types.js";

// The calls a Claim and a RunSession make on the client, as interfaces the client (client.ts)
// fulfils: the claim and the session depend on these, not on the client, so client.ts can build
// them without an import circle. The inputs of those calls are declared here for the same reason.

export type Signal = { signal?: AbortSignal };
export type Create = Signal & {
  /** defaults to a fresh key per call, reused by that call's retries */
  idempotencyKey?: string;
};

export type ClaimOptions = Signal & {
  workerId: string;
  /** 5–3600 (default 60); heartbeats go every third of it */
  leaseSecs?: number;
  /** send heartbeats automatically (default true) */
  heartbeat?: boolean;
  /** called once if the claim is lost */
  onLost?: (error: CountersignError) => void;
};

export type ToolEventInput = {
  /** required once the run was claimed; a run that never paused is held by its creator */
  claimToken?: string;
  type: "tool.completed" | "tool.failed" | "action.reverted";
  toolCallId: string;
  result?: unknown;
  error?: unknown;
  revert?: unknown;
};

export type CompleteRunInput = {
  claimToken?: string;
  outcome: "completed" | "failed";
  result?: unknown;
  error?: unknown;
};

/** What a Claim calls: heartbeats, tool events, the next pause, the run's end; and reads the run. */
export interface ClaimCalls {
  getRun(runId: string, options?: Signal): Promise<Run>;
  heartbeat(
    runId: string,
    claimToken: string,
    leaseSecs?: number,
  ): Promise<{ leaseExpiresAt: string }>;
  reportEvent(runId: string, event: ToolEventInput): Promise<RunEvent>;
  pause(runId: string, batch: BatchInput, options?: Create): Promise<Batch>;
  completeRun(runId: string, input: CompleteRunInput): Promise<Run>;
}
