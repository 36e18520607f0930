import { CountersignError, type Countersign } from "@countersign/sdk";
import type { OutcomeSpool, SpooledReport } from "./spool.js";

// What the tools answered, reported to Countersign after the MCP client got the answer: off the
// client's critical path. A report rides along with the session's next governed call when one
// comes within LINGER_MS (POST /runs/{id}/gated-calls takes `outcomes`: recorded in that call's
// write, one commit instead of two); otherwise it goes alone, with any others that queued up
// meanwhile (POST /runs/{id}/gated-calls/outcomes takes up to 100). A report that fails
// transiently (Countersign unreachable, 5xx, 429) stays queued and is sent again with backoff;
// the server records each call's outcome once, so a report retried after a lost answer is not a
// second one. Closing the session sends what is left (for a bounded time). With a spool
// (spool.ts, the bin's default), a report is written to a local file before it counts as queued
// and marked done once Countersign took it (or refused it for good), so reports still queued when
// the gateway process dies are sent at its next start, to the run they belong to.

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
  /** the run of a report that is not the session's (one recovered from the spool) */
  private readonly runOf = new WeakMap<Outcome, string>();

  constructor(
    private readonly client: Countersign,
    private readonly runId: () => Promise<string>,
    private readonly warn: (line: string) => void,
    private readonly spool: OutcomeSpool | null = null,
  ) {}

  /**
   * Queues a report of the session's run `runId`: written to the spool first (when there is one),
   * then it rides along with the next call, or goes alone after LINGER_MS.
   */
  add(outcome: Outcome, runId?: string): void {
    if (runId !== undefined) this.spool?.append([{ runId, outcome }]);
    this.queued.push(outcome);
    if (!this.sending && !this.timer) this.schedule(LINGER_MS);
  }

  /** Queues reports of earlier runs (recovered from the spool, already in it): sent at once, alone. */
  adopt(reports: SpooledReport[]): void {
    for (const { runId, outcome } of reports) {
      this.runOf.set(outcome, runId);
      this.alone.add(outcome);
      this.queued.push(outcome);
    }
    if (reports.length > 0 && !this.sending) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.send();
    }
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
    this.spool?.done([...done]);
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
    // One request per run: the first report's run, with the others of that run queued behind it.
    const run = this.runOf.get(this.queued[0]!);
    const taken = this.queued.filter((o) => this.runOf.get(o) === run).slice(0, MAX_PER_REQUEST);
    const sent = new Set(taken);
    this.queued = this.queued.filter((o) => !sent.has(o));
    this.sending = this.post(taken, run).finally(() => {
      this.sending = null;
      if (this.queued.length > 0 && !this.timer) this.send();
      else this.settleIdle();
    });
  }

  private async post(outcomes: Outcome[], run: string | undefined): Promise<void> {
    try {
      const runId = run ?? (await this.runId());
      await this.client.transport.request({
        method: "POST",
        path: `/runs/${encodeURIComponent(runId)}/gated-calls/outcomes`,
        // each outcome as the server takes it (a spooled one may carry more)
        body: {
          outcomes: outcomes.map(({ callId, type, result, error }) => ({
            callId,
            type,
            result,
            error,
          })),
        },
      });
      this.failures = 0;
      this.spool?.done(outcomes.map((o) => o.callId));
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
      this.spool?.done(outcomes.map((o) => o.callId));
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
