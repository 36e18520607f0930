import type { Claim } from "./claim.js";
import { describeError } from "./claim.js";
import type { ClaimCalls, ClaimOptions, Signal } from "./run-calls.js";
import { CountersignError } from "./errors.js";
import { newIdempotencyKey } from "./http.js";
import type { Batch, BatchInput, Run, RunEvent } from "./types.js";
import type { WaitOptions } from "./wait-for-decision.js";

// One run driven by this process across many pauses, as an agent loop sees it. The run's
// lifecycle decides what each step needs: a fresh run is `running` and held by its creator (no
// token); after a decision it is `ready`, and only a claim may pause it again or report on it.
// So `ask` claims the run as soon as its batch settles, and the next pause hands that claim back.

export type RunSessionOptions = {
  /** names this process in claims (default `sdk-` and a random suffix) */
  workerId?: string;
  /** the lease of the claims the session takes, in seconds (default 60; heartbeats keep it) */
  leaseSecs?: number;
};

/** What a RunSession calls on the client (client.ts): a Claim's calls, plus waiting, withdrawing,
 * claiming and forgetting. */
export interface SessionCalls extends ClaimCalls {
  waitForDecision(batchId: string, options?: WaitOptions): Promise<Batch>;
  cancelBatch(batchId: string, options?: Signal & { reason?: string }): Promise<Batch>;
  claim(runId: string, options: ClaimOptions): Promise<Claim>;
  forget(session: RunSession): void;
}

export class RunSession {
  readonly workerId: string;
  readonly leaseSecs: number;
  /** the claim held between a decision and the next pause (null while the run is unclaimed) */
  claim: Claim | null = null;
  /** the run was completed or failed through this session */
  finished = false;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: SessionCalls,
    readonly runId: string,
    options: RunSessionOptions = {},
  ) {
    this.workerId = options.workerId ?? `sdk-${newIdempotencyKey().slice(0, 8)}`;
    this.leaseSecs = options.leaseSecs ?? 60;
  }

  /**
   * Runs `work` once every earlier `exclusive` work of this session is done. A run takes one
   * pause at a time, and a pause ends the claim a running tool reports with, so gated calls
   * of one run (an agent's parallel tool calls) go one after another.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => {});
    return result;
  }

  /**
   * Pauses the run with `batch`, waits for the decision, and takes the run back (claims it, unless
   * the batch was cancelled, which hands the run back by itself). Resolves with the settled batch.
   */
  async ask(
    batch: BatchInput,
    options: WaitOptions & { idempotencyKey?: string } = {},
  ): Promise<Batch> {
    const paused = await this.pause(batch, options);
    const settled =
      paused.status === "pending" ? await this.waitOrWithdraw(paused, options) : paused;
    if (settled.status !== "cancelled") await this.takeBack(options.signal);
    return settled;
  }

  /**
   * Waits for the decision. Stopping early (`signal`, `timeoutMs`) withdraws the batch, so no one
   * decides what no one will act on; a decision that came first stands (and is used on a timeout).
   */
  private async waitOrWithdraw(paused: Batch, options: WaitOptions): Promise<Batch> {
    try {
      return await this.client.waitForDecision(paused.id, { ...options, runId: this.runId });
    } catch (error) {
      const timedOut = CountersignError.is(error, "wait_timeout");
      if (!timedOut && !options.signal?.aborted) throw error;
      const withdrawn = await this.client
        .cancelBatch(paused.id, { reason: "The agent stopped waiting for a decision." })
        .catch((refused: unknown) =>
          CountersignError.is(refused, "not_pending") ? (refused.current as Batch) : null,
        );
      if (timedOut && withdrawn && withdrawn.status !== "cancelled") return withdrawn;
      if (!timedOut) throw error;
      throw new CountersignError({
        status: 0,
        code: "wait_timeout",
        message: `${error.message} It was withdrawn.`,
        current: withdrawn ?? error.current,
      });
    }
  }

  /** Pauses the run (with the claim when holding one) without waiting. */
  async pause(
    batch: BatchInput,
    options: { idempotencyKey?: string; signal?: AbortSignal } = {},
  ): Promise<Batch> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    if (this.claim?.state === "held") return this.claim.pause(batch, { idempotencyKey });
    // Another worker may own the run now: say so rather than try without the claim.
    if (this.claim?.state === "lost") throw await this.claim.lost;
    try {
      return await this.client.pause(this.runId, batch, {
        idempotencyKey,
        signal: options.signal,
      });
    } catch (error) {
      // Ready, held by nobody (its last batch settled while no session of ours held it): take it.
      if (CountersignError.is(error, "not_ready") && (error.current as Run)?.status === "ready") {
        await this.takeBack(options.signal);
        // Another body (it carries the token) needs another key.
        return this.claim!.pause(batch, { idempotencyKey: newIdempotencyKey() });
      }
      throw error;
    }
  }

  /** Claims the run for this session (after a decision). */
  async takeBack(signal?: AbortSignal): Promise<Claim> {
    this.claim = await this.client.claim(this.runId, {
      workerId: this.workerId,
      leaseSecs: this.leaseSecs,
      signal,
    });
    return this.claim;
  }

  reportToolResult(
    toolCallId: string,
    result?: unknown,
    options: { revert?: unknown } = {},
  ): Promise<RunEvent> {
    if (this.claim?.state === "held")
      return this.claim.reportToolResult(toolCallId, result, options);
    return this.client.reportEvent(this.runId, {
      type: "tool.completed",
      toolCallId,
      result,
      revert: options.revert,
    });
  }

  reportToolFailure(toolCallId: string, error: unknown): Promise<RunEvent> {
    if (this.claim?.state === "held") return this.claim.reportToolFailure(toolCallId, error);
    return this.client.reportEvent(this.runId, {
      type: "tool.failed",
      toolCallId,
      error: describeError(error),
    });
  }

  /** Ends the run as `completed` (with the claim when holding one). */
  complete(result?: unknown): Promise<Run> {
    return this.end(() =>
      this.claim?.state === "held"
        ? this.claim.complete(result)
        : this.client.completeRun(this.runId, { outcome: "completed", result }),
    );
  }

  /** Ends the run as `failed`. */
  fail(error?: unknown): Promise<Run> {
    return this.end(() =>
      this.claim?.state === "held"
        ? this.claim.fail(error)
        : this.client.completeRun(this.runId, {
            outcome: "failed",
            error: error === undefined ? undefined : describeError(error),
          }),
    );
  }

  /** Stops heartbeating the session's claim; the lease runs out and another worker may claim. */
  release(): void {
    this.claim?.release();
  }

  private async end(request: () => Promise<Run>): Promise<Run> {
    const run = await request();
    this.finished = true;
    this.client.forget(this);
    return run;
  }
}
