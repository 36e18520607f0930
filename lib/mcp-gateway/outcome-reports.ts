import { CountersignError, type Countersign } from "@countersign/sdk";

// What the tools answered, reported to Countersign after the MCP client got the answer: off the
// client's critical path. Reports queue up while one request is out and go together in the next
// (POST /runs/{id}/gated-calls/outcomes takes up to 100), so a busy session sends fewer requests
// than it makes calls. A report that fails transiently (Countersign unreachable, 5xx, 429) stays
// queued and is sent again with backoff; the server records each call's outcome once, so a
// report retried after a lost answer is not a second one. Reports still queued when the gateway
// process dies are lost: the run then shows the call approved (and used) with no outcome.

export type Outcome = {
  callId: string;
  type: "tool.completed" | "tool.failed";
  result?: unknown;
  error?: unknown;
};

const MAX_PER_REQUEST = 100;
const BACKOFF_MIN_MS = 200;
const BACKOFF_MAX_MS = 10_000;

export class OutcomeReports {
  private readonly queued: Outcome[] = [];
  private sending: Promise<void> | null = null;
  private failures = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private idle: Array<() => void> = [];

  constructor(
    private readonly client: Countersign,
    private readonly runId: () => Promise<string>,
    private readonly warn: (line: string) => void,
  ) {}

  /** Queues a report; it is sent once the caller's current work (answering the client) is done. */
  add(outcome: Outcome): void {
    this.queued.push(outcome);
    if (!this.sending && !this.retryTimer) setImmediate(() => this.send());
  }

  get pending(): number {
    return this.queued.length;
  }

  private send(): void {
    if (this.sending || this.retryTimer || this.queued.length === 0) return this.settleIdle();
    const taken = this.queued.splice(0, MAX_PER_REQUEST);
    this.sending = this.post(taken).finally(() => {
      this.sending = null;
      if (this.queued.length > 0 && !this.retryTimer) this.send();
      else this.settleIdle();
    });
  }

  private async post(outcomes: Outcome[]): Promise<void> {
    try {
      const runId = await this.runId();
      await this.client.transport.request({
        method: "POST",
        path: `/runs/${encodeURIComponent(runId)}/gated-calls/outcomes`,
        body: { outcomes },
      });
      this.failures = 0;
    } catch (error) {
      if (isTransient(error)) {
        // Back in front of the queue, in order; sent again after a pause that grows.
        this.queued.unshift(...outcomes);
        const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.failures++);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.send();
        }, delay);
        this.retryTimer.unref?.();
        if (this.failures === 1 || this.failures % 10 === 0)
          this.warn(
            `could not report ${outcomes.length} tool outcome(s) yet, retrying: ${why(error)}`,
          );
        return;
      }
      // Refused for good (a call not approved, another agent's): sending it again cannot help.
      this.warn(`a tool outcome report was refused: ${why(error)}`);
    }
  }

  private settleIdle() {
    if (this.sending || this.queued.length > 0) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }

  /**
   * Resolves once every queued report is sent (retrying meanwhile), or after `timeoutMs`:
   * then resolves with how many could not be sent.
   */
  async flush(timeoutMs: number): Promise<number> {
    if (!this.sending && this.queued.length === 0) return 0;
    if (this.retryTimer) {
      // Closing: one more try now rather than after the backoff.
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
      this.send();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.idle.push(resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
    return this.queued.length;
  }
}

function isTransient(error: unknown): boolean {
  if (!(error instanceof CountersignError)) return true;
  return error.status === 0 || error.status === 429 || error.status >= 500;
}

function why(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
