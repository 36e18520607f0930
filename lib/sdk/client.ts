import { Claim } from "./claim.js";
import { CountersignError } from "./errors.js";
import { newIdempotencyKey, Transport, type FetchLike } from "./http.js";
import type { RetryOptions } from "./retry.js";
import type {
  ClaimOptions,
  CompleteRunInput,
  Create,
  Signal,
  ToolEventInput,
} from "./run-calls.js";
import { RunSession, type RunSessionOptions } from "./run-session.js";
import type { Batch, BatchInput, ClaimGrant, CreateRunInput, Run, RunEvent } from "./types.js";
import { waitForDecision, type WaitOptions } from "./wait-for-decision.js";

// The agent's client for the Countersign API (agent key auth). One method per endpoint, plus
// waitForDecision and claims with heartbeats; `gate` and `runRollback` build on it.

export type CountersignOptions = {
  /** the app's address, e.g. `https://countersign.example.com` (an `/api/v1` suffix is fine too) */
  baseUrl: string;
  /** an agent key, `cs_agent_…` */
  apiKey: string;
  /** defaults to the global fetch; pass one for tests, proxies or old runtimes */
  fetch?: FetchLike;
  /** retries of transient failures (no answer, 408, 429, 502, 503, 504); `false` turns them off */
  retry?: RetryOptions | false;
  /** how long one attempt of an ordinary request may take (default 30 s) */
  requestTimeoutMs?: number;
};

export type { ClaimOptions, CompleteRunInput, ToolEventInput } from "./run-calls.js";

export class Countersign {
  readonly transport: Transport;
  private readonly sessions = new Map<string, RunSession>();

  constructor(options: CountersignOptions) {
    this.transport = new Transport(options);
  }

  /** `POST /runs`: starts a run, optionally paused at once with its first `batch`. */
  createRun(input: CreateRunInput = {}, options: Create = {}): Promise<Run> {
    return this.transport.request<Run>({
      method: "POST",
      path: "/runs",
      body: input,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.signal,
    });
  }

  /** `POST /runs/{id}/batches`: pauses a running run (or a claimed one: pass `claimToken`, or use Claim.pause). */
  pause(runId: string, batch: BatchInput, options: Create = {}): Promise<Batch> {
    return this.transport.request<Batch>({
      method: "POST",
      path: `/runs/${enc(runId)}/batches`,
      body: batch,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.signal,
    });
  }

  /** `GET /batches/{id}`; with `wait` (0–60 s) a pending batch is held until it settles or the wait ends. */
  getBatch(batchId: string, options: Signal & { wait?: number } = {}): Promise<Batch> {
    return this.transport.request<Batch>({
      method: "GET",
      path: `/batches/${enc(batchId)}`,
      query: { wait: options.wait },
      signal: options.signal,
      timeoutMs: options.wait ? options.wait * 1000 + 15_000 : undefined,
    });
  }

  /** `POST /batches/{id}/cancel`: withdraws a pending batch; the run is back in the agent's hands. */
  cancelBatch(batchId: string, options: Signal & { reason?: string } = {}): Promise<Batch> {
    return this.transport.request<Batch>({
      method: "POST",
      path: `/batches/${enc(batchId)}/cancel`,
      body: options.reason === undefined ? {} : { reason: options.reason },
      signal: options.signal,
      // A retry that finds the batch cancelled found the first attempt's work.
      recover: (error) =>
        error.is("not_pending") && (error.current as Batch | null)?.status === "cancelled"
          ? (error.current as Batch)
          : undefined,
    });
  }

  /** `GET /runs/{id}`: the run with its batches. */
  getRun(runId: string, options: Signal = {}): Promise<Run> {
    return this.transport.request<Run>({
      method: "GET",
      path: `/runs/${enc(runId)}`,
      signal: options.signal,
    });
  }

  /** Resolves with the batch once it is no longer pending (see WaitOptions). */
  waitForDecision(batchId: string, options: WaitOptions = {}): Promise<Batch> {
    return waitForDecision(
      { transport: this.transport, getBatch: (id, o) => this.getBatch(id, o) },
      batchId,
      options,
    );
  }

  /**
   * `POST /runs/{id}/claim`: takes a `ready` run (or one whose lease ran out) for this worker.
   * 409 `already_claimed` when another worker holds it, `not_ready` while it waits for a decision.
   */
  async claim(runId: string, options: ClaimOptions): Promise<Claim> {
    const leaseSecs = options.leaseSecs ?? 60;
    const sentAt = Date.now();
    const grant = await this.transport.request<ClaimGrant>({
      method: "POST",
      path: `/runs/${enc(runId)}/claim`,
      body: { workerId: options.workerId, leaseSecs },
      signal: options.signal,
      recover: (error) => {
        if (error.is("already_claimed") && error.details.holder === options.workerId) {
          // The first attempt took the run, but its token was lost with the answer.
          throw new CountersignError({
            status: error.status,
            code: error.code,
            message: `${error.message} An earlier attempt of this claim by '${options.workerId}' probably succeeded but its answer was lost; the lease lapses at ${String(error.details.leaseExpiresAt)}, then claim again.`,
            current: error.current,
            details: error.details,
          });
        }
        return undefined;
      },
    });
    const claim = new Claim(this, grant, {
      workerId: options.workerId,
      leaseSecs,
      heartbeat: options.heartbeat,
      sentAt,
    });
    if (options.onLost) claim.onLost(options.onLost);
    return claim;
  }

  /** `POST /runs/{id}/heartbeat`: extends a lease (Claim does this by itself). */
  heartbeat(
    runId: string,
    claimToken: string,
    leaseSecs?: number,
  ): Promise<{ leaseExpiresAt: string }> {
    return this.transport.request({
      method: "POST",
      path: `/runs/${enc(runId)}/heartbeat`,
      body: { claimToken, leaseSecs },
    });
  }

  /**
   * `POST /runs/{id}/events`. Retried like the rest, so after a dropped answer an event may be
   * recorded twice (the API has no idempotency for events); runRollback tolerates that.
   */
  reportEvent(runId: string, event: ToolEventInput): Promise<RunEvent> {
    return this.transport.request<RunEvent>({
      method: "POST",
      path: `/runs/${enc(runId)}/events`,
      body: event,
    });
  }

  /** `POST /runs/{id}/complete`: ends the run (Claim.complete and Claim.fail call this). */
  completeRun(runId: string, input: CompleteRunInput): Promise<Run> {
    return this.transport.request<Run>({
      method: "POST",
      path: `/runs/${enc(runId)}/complete`,
      body: input,
      // A retry that finds the run already ended as asked found the first attempt's work.
      recover: (error) =>
        error.is("run_terminal") && (error.current as Run | null)?.status === input.outcome
          ? (error.current as Run)
          : undefined,
    });
  }

  /** `POST /runs/{id}/rollback`: the next claim's `rollback` lists the actions to revert. */
  requestRollback(runId: string, reason?: string, options: Signal = {}): Promise<Run> {
    return this.transport.request<Run>({
      method: "POST",
      path: `/runs/${enc(runId)}/rollback`,
      body: reason === undefined ? {} : { reason },
      signal: options.signal,
    });
  }

  /** Creates a run and returns a RunSession over it: the handle `gate` uses for many calls in one run. */
  async startRun(
    input: Omit<CreateRunInput, "batch"> = {},
    options: RunSessionOptions & Create = {},
  ): Promise<RunSession> {
    const run = await this.createRun(input, options);
    return this.session(run.id, options);
  }

  /** The RunSession of a run this process drives (one per run id and client). */
  session(runId: string, options: RunSessionOptions = {}): RunSession {
    let session = this.sessions.get(runId);
    if (!session || session.finished) {
      session = new RunSession(this, runId, options);
      this.sessions.set(runId, session);
    }
    return session;
  }

  /** @internal forgets a finished session */
  forget(session: RunSession): void {
    if (this.sessions.get(session.runId) === session) this.sessions.delete(session.runId);
  }
}

const enc = encodeURIComponent;
