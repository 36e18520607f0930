import { asc, gt, max } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events, type EventRow } from "@/db/schema";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// One tailer per process follows the event log and fans new rows out to local subscribers
// (streams, long-polls). It reads when a local write wakes it and otherwise every `pollMs`, which
// is how a process sees events written by another process over the same database.

export type EventListener = (rows: EventRow[]) => void;

const PAGE = 500;

class EventTailer {
  private lastSeq: number | null = null;
  private readonly listeners = new Set<EventListener>();
  private reading = false;
  private readAgain = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly pollMs: number) {}

  /** The highest `seq` this tailer has dispatched (events up to it reached every listener). */
  async position(): Promise<number> {
    await this.ensureStarted();
    return this.lastSeq!;
  }

  async subscribe(listener: EventListener): Promise<() => void> {
    await this.ensureStarted();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  wake(): void {
    if (this.lastSeq === null) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    void this.read();
  }

  /**
   * Events this process just committed. When they are the very next rows of the log they are
   * dispatched as they are; otherwise (another process wrote in between, or a read is under
   * way) the log is read as after any wake-up, so order and completeness never rest on this.
   */
  offer(rows: EventRow[]): void {
    if (rows.length === 0 || this.lastSeq === null) return;
    const next =
      rows[0]!.seq === this.lastSeq + 1 && rows.every((r, i) => r.seq === rows[0]!.seq + i);
    if (this.reading || !next) return this.wake();
    this.lastSeq = rows[rows.length - 1]!.seq;
    this.dispatch(rows);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async ensureStarted(): Promise<void> {
    if (this.lastSeq !== null) return;
    const [row] = await getDb()
      .select({ last: max(events.seq) })
      .from(events);
    this.lastSeq ??= row?.last ?? 0;
    if (!this.timer) {
      this.timer = setInterval(() => this.wake(), this.pollMs);
      this.timer.unref();
    }
  }

  private async read(): Promise<void> {
    this.reading = true;
    try {
      do {
        this.readAgain = false;
        let rows: EventRow[];
        do {
          rows = await getDb()
            .select()
            .from(events)
            .where(gt(events.seq, this.lastSeq!))
            .orderBy(asc(events.seq))
            .limit(PAGE);
          if (rows.length === 0) break;
          this.lastSeq = rows[rows.length - 1]!.seq;
          this.dispatch(rows);
        } while (rows.length === PAGE);
      } while (this.readAgain);
    } catch (error) {
      log().error({ err: error }, "Reading the event log failed; retrying on the next poll");
    } finally {
      this.reading = false;
    }
  }

  private dispatch(rows: EventRow[]): void {
    for (const listener of this.listeners) {
      try {
        listener(rows);
      } catch (error) {
        log().error({ err: error }, "An event listener failed");
      }
    }
  }
}

const globalTailer = globalThis as unknown as { __countersignTailer?: EventTailer };

export function getTailer(): EventTailer {
  globalTailer.__countersignTailer ??= new EventTailer(setting("EVENT_POLL_MS"));
  return globalTailer.__countersignTailer;
}

export function wakeTailer(): void {
  globalTailer.__countersignTailer?.wake();
}

/** Events this process committed, for its streams (EventTailer.offer). */
export function offerEvents(rows: EventRow[]): void {
  globalTailer.__countersignTailer?.offer(rows);
}

export type EventWatch = {
  /** Resolves once a matching event has arrived since the last call (or at once if one did), or after `timeoutMs`. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
};

/** Watches the log for events matching `test`; events that arrive between `next` calls are kept. */
export async function watchEvents(test: (row: EventRow) => boolean): Promise<EventWatch> {
  let seen = false;
  let wakeUp: (() => void) | null = null;
  const unsubscribe = await getTailer().subscribe((rows) => {
    if (!rows.some(test)) return;
    seen = true;
    wakeUp?.();
  });
  return {
    next(timeoutMs, signal) {
      if (seen) {
        seen = false;
        return Promise.resolve(true);
      }
      return new Promise<boolean>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", finish);
          wakeUp = null;
          const arrived = seen;
          seen = false;
          resolve(arrived);
        };
        const timer = setTimeout(finish, timeoutMs);
        signal?.addEventListener("abort", finish);
        wakeUp = finish;
      });
    },
    close: unsubscribe,
  };
}
