import { CountersignError } from "./errors.js";
import type { ClaimCalls } from "./run-calls.js";
import type { Batch, BatchInput, ClaimGrant, RollbackAction, Run, RunEvent } from "./types.js";

// A worker's hold on a run (`POST /runs/{id}/claim`), kept alive by heartbeats every third of the
// lease until the claim ends: by pause, complete, fail, release, or being lost. Losing it
// (`claim_lost`: the lease ran out, or another worker took the run over) is reported through
// `lost`, `onLost` and `signal`, so the worker stops before doing anything more for the run.

export type ClaimState = "held" | "ended" | "lost";

export class Claim {
  readonly runId: string;
  readonly workerId: string;
  readonly leaseSecs: number;
  readonly token: string;
  leaseExpiresAt: string;
  readonly run: Run;
  /** what the run was paused with (the `checkpoint` of its last batch) */
  readonly checkpoint: unknown;
  /** the run's latest batch, settled: what the worker resumes with */
  readonly batch: Batch | null;
  /** null unless a rollback was requested: the reported actions to revert, newest first */
  readonly rollback: RollbackAction[] | null;
  /** resolves with the error once the claim is lost; never rejects, never settles otherwise */
  readonly lost: Promise<CountersignError>;
  /** aborted, with the claim_lost error as its reason, once the claim is lost: hand it to tools */
  readonly signal: AbortSignal;

  private current: ClaimState = "held";
  /** a pause or completion is in flight: a heartbeat refused meanwhile says nothing about loss */
  private ending = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastBeatSentAt = Date.now();
  private readonly controller = new AbortController();
  private readonly listeners = new Set<(error: CountersignError) => void>();
  private resolveLost!: (error: CountersignError) => void;

  constructor(
    readonly client: ClaimCalls,
    grant: ClaimGrant,
    options: { workerId: string; leaseSecs: number; heartbeat?: boolean; sentAt: number },
  ) {
    this.runId = grant.run.id;
    this.workerId = options.workerId;
    this.leaseSecs = options.leaseSecs;
    this.token = grant.claimToken;
    this.leaseExpiresAt = grant.leaseExpiresAt;
    this.run = grant.run;
    this.checkpoint = grant.checkpoint;
    this.batch = grant.batch;
    this.rollback = grant.rollback;
    this.lastBeatSentAt = options.sentAt;
    this.signal = this.controller.signal;
    this.lost = new Promise((resolve) => (this.resolveLost = resolve));
    if (options.heartbeat !== false) this.schedule();
  }

  get state(): ClaimState {
    return this.current;
  }

  /** Calls `listener` once if the claim is lost (at once if it already was); returns an unsubscribe. */
  onLost(listener: (error: CountersignError) => void): () => void {
    if (this.current === "lost") {
      void this.lost.then(listener);
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Extends the lease now (the automatic beats call this). */
  async heartbeat(): Promise<string> {
    const sentAt = Date.now();
    const { leaseExpiresAt } = await this.held(() =>
      this.client.heartbeat(this.runId, this.token, this.leaseSecs),
    );
    this.lastBeatSentAt = sentAt;
    this.leaseExpiresAt = leaseExpiresAt;
    return leaseExpiresAt;
  }

  /** Reports a tool call's result; `revert` is kept for a rollback (see runRollback). */
  reportToolResult(
    toolCallId: string,
    result?: unknown,
    options: { revert?: unknown } = {},
  ): Promise<RunEvent> {
    return this.held(() =>
      this.client.reportEvent(this.runId, {
        claimToken: this.token,
        type: "tool.completed",
        toolCallId,
        result,
        revert: options.revert,
      }),
    );
  }

  reportToolFailure(toolCallId: string, error: unknown): Promise<RunEvent> {
    return this.held(() =>
      this.client.reportEvent(this.runId, {
        claimToken: this.token,
        type: "tool.failed",
        toolCallId,
        error: describeError(error),
      }),
    );
  }

  /** Reports that a reported action was undone (runRollback does this for you). */
  reportReverted(toolCallId: string, result?: unknown): Promise<RunEvent> {
    return this.held(() =>
      this.client.reportEvent(this.runId, {
        claimToken: this.token,
        type: "action.reverted",
        toolCallId,
        result,
      }),
    );
  }

  /** Pauses the run again with a new batch; the claim ends (the run waits for a decision). */
  pause(batch: BatchInput, options: { idempotencyKey?: string } = {}): Promise<Batch> {
    return this.ends(() =>
      this.client.pause(this.runId, { ...batch, claimToken: this.token }, options),
    );
  }

  /** Ends the run as `completed`; the claim ends with it. */
  complete(result?: unknown): Promise<Run> {
    return this.ends(() =>
      this.client.completeRun(this.runId, {
        claimToken: this.token,
        outcome: "completed",
        result,
      }),
    );
  }

  /** Ends the run as `failed`; the claim ends with it. */
  fail(error?: unknown): Promise<Run> {
    return this.ends(() =>
      this.client.completeRun(this.runId, {
        claimToken: this.token,
        outcome: "failed",
        error: error === undefined ? undefined : describeError(error),
      }),
    );
  }

  /**
   * Stops the heartbeats without telling the server (the API has no release): the lease runs out
   * after at most `leaseSecs`, and then another worker may claim the run.
   */
  release(): void {
    if (this.current === "held") this.current = "ended";
    clearTimeout(this.timer);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.current !== "held") return;
    this.timer = setTimeout(() => void this.beat(), (this.leaseSecs * 1000) / 3);
    // The beats keep a lease, not the process: a worker that is done may exit.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private async beat(): Promise<void> {
    if (this.current !== "held" || this.ending) return this.schedule();
    try {
      await this.heartbeat();
    } catch (error) {
      // A lost claim is reported by held(); anything else (the server unreachable) is tried
      // again next beat, unless the lease has certainly run out meanwhile.
      if (
        this.current === "held" &&
        !this.ending &&
        Date.now() - this.lastBeatSentAt > this.leaseSecs * 1000
      ) {
        this.markLost(
          new CountersignError({
            status: 0,
            code: "claim_lost",
            message: `No heartbeat reached the server for the whole lease (${this.leaseSecs} s): the claim has run out. Last error: ${(error as Error).message}`,
            cause: error,
          }),
        );
      }
    }
    this.schedule();
  }

  /** Runs a request that needs the claim; a claim_lost (or run_terminal) answer marks it lost. */
  private async held<T>(request: () => Promise<T>): Promise<T> {
    if (this.current === "lost") throw await this.lost;
    try {
      return await request();
    } catch (error) {
      if (
        !this.ending &&
        CountersignError.is(error) &&
        (error.is("claim_lost") || error.is("run_terminal"))
      ) {
        this.markLost(error);
      }
      throw error;
    }
  }

  /** Runs the request that ends the claim; beats are ignored while it is in flight. */
  private async ends<T>(request: () => Promise<T>): Promise<T> {
    if (this.current === "lost") throw await this.lost;
    this.ending = true;
    try {
      const answer = await request();
      this.current = "ended";
      clearTimeout(this.timer);
      return answer;
    } catch (error) {
      this.ending = false;
      if (CountersignError.is(error) && (error.is("claim_lost") || error.is("run_terminal"))) {
        this.markLost(error);
      }
      throw error;
    } finally {
      this.ending = false;
    }
  }

  private markLost(error: CountersignError): void {
    if (this.current !== "held") return;
    this.current = "lost";
    clearTimeout(this.timer);
    this.resolveLost(error);
    this.controller.abort(error);
    for (const listener of this.listeners) {
      try {
        listener(error);
      } catch {
        // a listener's failure is its own
      }
    }
    this.listeners.clear();
  }
}

/** An error as JSON the server can store: its name and message, not an empty `{}`. */
export function describeError(error: unknown): unknown {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return error;
}
