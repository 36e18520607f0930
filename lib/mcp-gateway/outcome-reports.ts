import { CountersignError, type Countersign } from "@countersign/sdk";

// What the tools answered, reported to Countersign after the MCP client got the answer: off the
// client's critical path. A report rides along with the session's next governed call when one
// comes within LINGER_MS (POST /runs/{id}/gated-calls takes `outcomes`: recorded in that call's
// write, one commit instead of two); otherwise it goes alone, with any others that queued up
// meanwhile (POST /runs/{id}/gated-calls/outcomes takes up to 100). A report that fails
// transiently (Countersign unreachable, 5xx, 429) stays queued and is sent again with backoff;
// the server records each call's outcome once, so a report retried after a lost answer is not a
// second one. Closing the session sends what is left (for a bounded time). Reports still queued
// when the gateway process dies are lost: the run then shows the call approved (and used) with
// no outcome — the decision itself is safe in Countersign.

export type Outcome = {
  callId: string;
  type: "tool.completed" | "tool.failed";
  result?: unknown;
  error?: unknown;
};

const MAX_PER_REQUEST = 100;
/** how long a report waits for the session's next call to ride along with */
export const LINGER_MS = 1000;
const BACKOFF_MIN_MS = 200;
const BACKOFF_MAX_MS = 10_000;

export class OutcomeReports {
  private queued: Outcome[] = [];
  private sending: Promise<void> | null = null;
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private idle: Array<() => void> = [];
  private readonly alone = new WeakSet<Outcome>();

  constructor(
    private readonly client: Countersign,
    private readonly runId: () => Promise<string>,
    private readonly warn: (line: string) => void,
  ) {}

  /** Queues a report: it rides along with the next call, or goes alone after LINGER_MS. */
  add(outcome: Outcome): void {
    this.queued.push(outcome);
    if (!this.sending && !this.timer) this.schedule(LINGER_MS);
  }

  get pending(): number {
    return this.queued.length;
  }

  /** Takes queued reports to send along with a call; `settle` says which the server took. */
  take(): Outcome[] {
    // A report whose ride failed goes alone from then on: were it the reason the call was
    // refused, riding again would refuse every later call.
    const riding = this.queued.filter((o) => !this.alone.has(o)).slice(0, MAX_PER_REQUEST);
    const taken = new Set(riding);
    this.queued = this.queued.filter((o) => !taken.has(o));
    return riding;
  }

  /** After a call that carried `taken`: the server took `reported` (null: the call failed). */
  settle(taken: Outcome[], reported: string[] | null): void {
    const done = new Set(reported ?? []);
    const left = taken.filter((o) => !done.has(o.callId));
    if (left.length === 0) return this.settleIdle();
    if (reported === null) for (const outcome of left) this.alone.add(outcome);
    this.queued.unshift(...left);
    if (!this.sending && !this.timer) this.schedule(LINGER_MS);
  }

  private schedule(delay: number) {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.send();
    }, delay);
    this.timer.unref?.();
  }

  private send(): void {
    if (this.sending || this.timer || this.queued.length === 0) return this.settleIdle();
    const taken = this.queued.splice(0, MAX_PER_REQUEST);
    this.sending = this.post(taken).finally(() => {
      this.sending = null;
      if (this.queued.length > 0 && !this.timer) this.send();
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
        this.schedule(Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.failures++));
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
    // Closing: sent now rather than after the linger or the backoff.
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.send();
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
